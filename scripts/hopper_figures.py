#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Figures of chapters 11 (TMA), 12 (warp specialization), 13 (persistent clusters) and 14 (3xTF32
on Hopper), drawn from the chapters' own sources.

Each source is read as its default build compiles it: #if / #ifdef / #elif / #else resolved
against the defaults of its SGEMM_ switches. What is read, never copied here: the default
`#define SGEMM_TILE a, b, c`, matched to the template parameters of the struct `using MainTile =
<Struct><SGEMM_TILE>;` names; every `static constexpr int kName = <expression>;` of that struct,
evaluated in order (so kConsumerRegisters is the source's own arithmetic), and its static_asserts;
whether the launcher rounds A before the GEMM (tma_readable's round_tf32 argument); the arrival
counts of the `mbarrier_init` calls and which mbarrier operations the code makes; the body of
make_fragment_plan, run for every lane; 11's main loop, as the operations of its prologue and of
its `step` lambda (issue, prepare, multiply, wgmma_wait, __syncthreads), played out in that order;
12's producer (thread 0 alone issues) and its consumers' hand-back (wgmma_wait<N>, then an arrival
on the empty mbarrier of tile t - N); and the swizzle and out-of-bounds fill common/tma.h asks the
copy engine for. From 13: the same struct evaluated for each of the launcher's tiles (`using
SmallTile = <Struct><values>;`, SoloTile, ShortTile; a parameter an alias leaves out takes its
default), the full mbarrier's expect_tx bytes, the multicast's mask, the consumers' arrival on
every rank's empty mbarrier, the walk of the units (cluster c takes c, c + clusters, ...), the
launcher's `schedule.<field> = ...` expressions and the body of Schedule::unit, run for every unit;
the tile and K slices are those of the launcher's with_tile and split_k_of, copied here
(launcher_tile, plan_clocks; common/split_k.h's plan in tensor_core_figures.py) and held to the
source: the statements of its model, the rates tile_rate's static_assert quotes, and with_tile
itself, run on shapes that take each of its branches.
From 14: the struct evaluated for `using PairTile = <Struct><SGEMM_TILE, SGEMM_CLUSTER>;`,
kSplittingWarps and the split mbarrier's arrivals, SGEMM_SPLIT_A's rule (kSplitWide,
kSplitNarrow and split_narrow's bound on N), the full mbarrier's expect_tx for the pass and for
the producer's split, the step lambda's wgmma (operands and scale-d, evaluated per k-step) and
the promote condition of `after`, evaluated for every K tile.
No GPU is needed; 13's figures assume the clusters the GPU holds at once (--clusters, default 66:
the H100's 132 SMs in pairs; as many unpaired blocks as paired ones) and, for the launcher's
model, the H100's data sheet (132 SMs at 1980 MHz, HBM3 at 2619 MHz on 5120 bits).
Every figure carries what it was drawn from (a PNG text chunk, as figures.py's figures do), so the
host test sees a committed figure that no longer matches its source (out_of_date()).

  11_tma/figures/tma.png                   one stage's copies: the tensor maps' boxes, the 128-byte
                                           swizzle the copy engine writes, the chunks one warp's
                                           B^T fragment loads read (all 32 banks per half-warp),
                                           zeros past the matrix
  11_tma/figures/mbarrier.png              the stages and their full mbarriers over time: expect_tx
                                           and copies, bytes landing, phases and parities, the
                                           threads' waits, wgmma groups in flight
  12_warp_specialization/figures/roles.png the producer and consumer warpgroups, the full and
                                           empty mbarriers between them, the ring of stages, the
                                           register split
  12_warp_specialization/figures/pipeline.png
                                           the roles over time: how producer, consumers and
                                           tensor cores overlap
  13_persistent_clusters/figures/schedule.png
                                           which cluster computes which tile of 4096^3, in which
                                           round: the grouped order beside row after row, and the
                                           rows of A and columns of B each one's first round reads
  13_persistent_clusters/figures/multicast.png
                                           one stage in the two blocks of a cluster: A's box in two
                                           shares, each multicast into both; the full mbarrier's
                                           bytes, the empty one's arrivals from both blocks
  13_persistent_clusters/figures/split_k.png
                                           two small-C shapes: the three tiles the launcher's
                                           model weighs, each with its K slices and units over
                                           the blocks, the model's clocks, the one it picks
  14_3xtf32_hopper/figures/split.png       one stage [A big | A small | B's boxes] and who writes
                                           each part (the pass, or TMA and the producer's idle
                                           warps); one consumer warpgroup's K tiles: three wgmma
                                           per k-step into the partial sums, commit, promotion

Usage: python3 scripts/hopper_figures.py [--out DIR] [--root DIR] [--clusters N]
Exit codes: 0 written, 2 bad usage (a source that cannot be read, matplotlib missing).
"""

import hashlib
import operator
import re
import sys
import textwrap
from pathlib import Path

from chapters import EXIT_USAGE, REPO, ArgumentParser, pyplot
from figures import UsageError, stamp, stamped, strip_comments, template_struct
from tensor_core_figures import H100_SMS, ceil_div, plan_cost, plan_split_k, tiles_of

BANKS = 32
SCRIPT = "scripts/hopper_figures.py"
TMA_SOURCE = Path("11_tma") / "tma.cu"
WS_SOURCE = Path("12_warp_specialization") / "warp_specialization.cu"
CLUSTER_SOURCE = Path("13_persistent_clusters") / "persistent_clusters.cu"
SPLIT_SOURCE = Path("14_3xtf32_hopper") / "3xtf32_hopper.cu"
TMA_HEADER = Path("common") / "tma.h"


# ---- reading the sources ---------------------------------------------------------------------

class Unknown(Exception):
    """An expression names something the reader does not know (a runtime value): skipped."""


TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)"
                   r"|(\|\||&&|<<|>>|==|!=|<=|>=|[-+*/%^&|<>?:(),!]))")
BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7,
          ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def c_divide(a, b, op):
    """C's integer / and %: the quotient truncated toward zero."""
    if b == 0:
        raise Unknown("division by zero")
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    return q if op == "/" else a - q * b


def evaluate(expression, names, otherwise=None):
    """The value of a C++ integer constant expression: literals, names (T:: and sgemm:: dropped),
    + - * / % << >> ^ & |, comparisons, && || !, ?:, ceil_div(a, b), static_cast<int>(x) and
    sizeof(float); a literal's u / l suffixes are dropped. A name not in `names` is `otherwise`
    (the preprocessor's 0) or, when that is None, raises Unknown, as does anything else. A name's
    value may be a float (13's model clocks, which with_tile compares and adds): + - * and the
    comparisons take it as C++ takes a double, / and % and the bit operators do not."""
    text = re.sub(r"\b(?:T|sgemm)::", "", expression)
    text = re.sub(r"\bsizeof\s*\(\s*(?:float|u?int32_t)\s*\)", "4", text)
    text = re.sub(r"\bstatic_cast\s*<\s*int\s*>", "", text)
    text = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", text)
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise Unknown(f"cannot read {text[pos:]!r}")
        number, name, op = match.groups()
        tokens.append(int(number) if number else name if name else op)
        pos = match.end()
    at, skipped = [0], [0]

    def peek():
        return tokens[at[0]] if at[0] < len(tokens) else None

    def take(expected=None):
        token = peek()
        if token is None or (expected is not None and token != expected):
            raise Unknown(f"expected {expected!r} in {expression!r}")
        at[0] += 1
        return token

    def primary():
        token = take()
        if isinstance(token, int):
            return token
        if token == "(":
            value = ternary()
            take(")")
            return value
        if token == "-":
            return -primary()
        if token == "!":
            return int(not primary())
        if token == "ceil_div":
            take("(")
            a = ternary()
            take(",")
            b = ternary()
            take(")")
            return c_divide(a + b - 1, b, "/")
        if isinstance(token, str) and token in names:
            return names[token]
        if isinstance(token, str) and token[0].isalpha() and otherwise is not None:
            return otherwise
        raise Unknown(f"{token!r} in {expression!r}")

    def binary(level):
        left = primary()
        while isinstance(peek(), str) and BINARY.get(peek(), 0) >= level:
            op = take()
            # C++ does not evaluate what && and || short-circuit: no division by zero there.
            skip = op in ("&&", "||") and bool(left) == (op == "||")
            skipped[0] += skip
            right = binary(BINARY[op] + 1)
            skipped[0] -= skip
            if op in ("/", "%"):
                left = 0 if skipped[0] and right == 0 else c_divide(left, right, op)
            else:
                left = {"||": lambda a, b: int(bool(a) or bool(b)),
                        "&&": lambda a, b: int(bool(a) and bool(b)),
                        "|": int.__or__, "^": int.__xor__, "&": int.__and__,
                        "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
                        "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b),
                        "<=": lambda a, b: int(a <= b), ">=": lambda a, b: int(a >= b),
                        "<<": int.__lshift__, ">>": int.__rshift__,
                        "+": operator.add, "-": operator.sub, "*": operator.mul}[op](left, right)
        return left

    def ternary():
        condition = binary(1)
        if peek() != "?":
            return condition
        take("?")
        yes = ternary()
        take(":")
        no = ternary()
        return yes if condition else no

    value = ternary()
    if peek() is not None:
        raise Unknown(f"trailing {peek()!r} in {expression!r}")
    return value


def read_source(source):
    try:
        return strip_comments(Path(source).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{source}: cannot read: {error}") from None


def preprocess(source):
    """(the code a default build of `source` compiles, {macro: its text}): comments dropped,
    #if / #ifdef / #ifndef / #elif / #else / #endif resolved against the #defines met so far
    (the SGEMM_ switch defaults; a name never defined is 0, as for the preprocessor), directives
    dropped. Included headers are not read: the chapters' switches are their own."""
    text = read_source(source).replace("\\\n", " ")
    defines, out, stack, active = {}, [], [], True

    def holds(condition):
        condition = re.sub(r"\bdefined\s*(?:\(\s*(\w+)\s*\)|(\w+))",
                           lambda m: str(int((m.group(1) or m.group(2)) in defines)), condition)
        names = {n: int(v) for n, v in defines.items() if re.fullmatch(r"-?\d+", v)}
        try:
            return bool(evaluate(condition, names, otherwise=0))
        except Unknown:
            raise UsageError(f"{source}: cannot evaluate `#if {condition.strip()}`") from None

    for line in text.splitlines():
        directive = re.match(r"\s*#\s*(\w+)\s*(.*?)\s*$", line)
        if not directive:
            if active:
                out.append(line)
            continue
        name, rest = directive.groups()
        if name in ("if", "ifdef", "ifndef"):
            word = rest.split()[0] if rest.split() else ""
            taken = active and (holds(rest) if name == "if" else
                                (word in defines) == (name == "ifdef"))
            stack.append([active, taken])
            active = taken
        elif name in ("elif", "else", "endif"):
            if not stack:
                raise UsageError(f"{source}: #{name} without #if")
            parent, taken = stack[-1]
            if name == "endif":
                stack.pop()
                active = parent
            else:
                active = parent and not taken and (name == "else" or holds(rest))
                stack[-1][1] = taken or active
        elif active and name == "define":
            macro = re.match(r"(\w+)(\([^)]*\))?\s*(.*)$", rest)
            if macro and not macro.group(2):
                defines[macro.group(1)] = macro.group(3).strip()
        elif active and name == "undef":
            defines.pop(rest.strip(), None)
    if stack:
        raise UsageError(f"{source}: #if without #endif")
    return "\n".join(out), defines


def braced(text, at):
    """The text inside the braces that open at or after text[at], and where it ends."""
    start = text.index("{", at)
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i], i + 1
    raise ValueError("unbalanced braces")


def struct_constants(struct, params, values, macros, source, label):
    """{name: value}: the integer `macros`, the template `params` taking `values`, then every
    `static constexpr int kName = ...;` of the struct's body (struct.group(2)), evaluated in
    order. Raises UsageError (one line, naming `label`) when a static_assert of the struct that
    the reader can evaluate fails."""
    k = dict(macros)
    k.update(zip(params, values))
    body = struct.group(2)
    for name, expression in re.findall(r"static\s+constexpr\s+int\s+(k\w+)\s*=\s*([^;]+);",
                                       body):
        try:
            k[name] = evaluate(expression, k)
        except Unknown:
            pass  # a constant no figure draws and the reader cannot evaluate
    for condition, message in re.findall(r"static_assert\s*\((.*?),\s*\"([^\"]*)\"\s*\)\s*;",
                                         body, flags=re.S):
        try:
            holds = evaluate(condition, k)
        except Unknown:
            continue
        if not holds:
            raise UsageError(f"{source}: {label}: {message}")
    return k


def alias_struct(text, source, defines, user):
    """The template struct an alias names and the values it gives it: `using <user> =
    <Struct><arguments>;` (MainTile's <SGEMM_TILE>, 13's <SGEMM_TILE, 1> and <64, 2, 9, 1>,
    14's PairTile <SGEMM_TILE, SGEMM_CLUSTER>), read by struct_values. Returns (parameter names,
    the struct's match, the values)."""
    alias = re.search(r"\busing\s+" + user + r"\s*=\s*(\w+)\s*<([^;<>]*)>\s*;", text)
    if not alias:
        raise UsageError(f"{source}: no `using {user} = <Struct><...>;` says what {user}'s "
                         "template values are")
    given = "SGEMM_TILE has" if user == "MainTile" else f"{user} gives"
    return struct_values(text, source, defines, alias.group(1), alias.group(2), user, given)


def struct_values(text, source, defines, name, arguments, user, given):
    """The template struct `name` and the values `arguments` (the text between its angle
    brackets) give it: each argument a number or an integer macro, SGEMM_TILE its list. The
    parameters left out take their defaults (13's `int kCluster_ = SGEMM_CLUSTER`), evaluated
    with the integer macros; figures.template_struct checks the count (`given` says who gives the
    values) and names the parameters. Returns (parameter names, the struct's match, the
    values)."""
    values = []
    for arg in arguments.split(","):
        arg = defines.get(arg.strip(), arg.strip())
        try:
            values += [int(v) for v in arg.split(",")]
        except ValueError:
            raise UsageError(f"{source}: {user}'s template argument {arg} is not a list of "
                             "integers") from None
    head = re.search(r"template\s*<([^>]*)>\s*struct\s+" + re.escape(name) + r"\s*\{", text)
    params = [p.strip() for p in head.group(1).split(",")] if head else []
    macros = {n: int(v) for n, v in defines.items() if re.fullmatch(r"-?\d+", v)}
    for param in params[len(values):]:
        parameter, _, default = param.partition("=")
        if not default.strip():
            break  # template_struct says the count is short
        try:
            values.append(evaluate(default, macros))
        except Unknown:
            raise UsageError(f"{source}: cannot evaluate the default of {name}'s template "
                             f"parameter {parameter.split()[-1]}: {default.strip()}") from None
    names, struct = template_struct(text, source, name, len(values), given)
    return names, struct, values


def read_kernel(source, required, rounded_before=True, user="MainTile"):
    """What a Hopper chapter's figures draw from its source, as a default build compiles it:
    {"tile": the SGEMM_TILE text, "k": {name: value} of the struct's constants, the other
    constexprs (int or bool) and the integer macros (the SGEMM_ switch defaults), "macros": the
    integer macros alone, "struct": the tile struct's match and "params" its template
    parameters, "arrivals": {mbarrier: arrivals per phase}, "barrier_ops": the mbarrier
    operations, "wgmma": (m, n, k), "plan": make_fragment_plan's (parameters, statements),
    "defines": every #define's text, "text": the compiled code}; the struct is the one `using
    MainTile = <Struct><SGEMM_TILE>;` names, or with another `user`, `using <user> =
    <Struct><SGEMM_TILE, ...>;` (alias_struct: either may leave out parameters that have
    defaults). Raises UsageError (one line) when a value in `required` cannot be found, a
    static_assert of the struct fails for the default tile, or, with `rounded_before`, the
    launcher does not round A before the GEMM (what 11's and 12's figures draw)."""
    text, defines = preprocess(source)
    tile = defines.get("SGEMM_TILE")
    if tile is None:
        raise UsageError(f"{source}: no `#define SGEMM_TILE` default")
    if user == "MainTile":
        try:
            values = [int(v) for v in tile.split(",")]
        except ValueError:
            raise UsageError(f"{source}: SGEMM_TILE is not a list of integers: {tile}") from None
    params, struct, values = alias_struct(text, source, defines, user)
    macros = {n: int(v) for n, v in defines.items() if re.fullmatch(r"-?\d+", v)}
    k = struct_constants(struct, params, values, macros, source, f"SGEMM_TILE {tile}")
    outside = text[:struct.start()] + text[struct.end():]
    for name, expression in re.findall(r"(?<!static )\bconstexpr\s+(?:int|bool)\s+(k\w+)\s*="
                                       r"\s*([^;]+);", outside):
        try:
            k.setdefault(name, evaluate(expression, k))
        except Unknown:
            pass
    arrivals = {}
    for barrier, expression in re.findall(r"mbarrier_init\s*\(\s*&(\w+)\s*\[\s*\w+\s*\]\s*,"
                                          r"\s*([^;]+?)\)\s*;", text):
        try:
            arrivals[barrier] = evaluate(expression, k)
        except Unknown:
            raise UsageError(f"{source}: cannot evaluate the arrival count of {barrier}: "
                             f"{expression.strip()}") from None
    shape = re.search(r"\bwgmma_m(\d+)n(\d+)k(\d+)_tf32\s*\(", text)
    if shape:
        wgmma = tuple(map(int, shape.groups()))
    else:
        # common/wgmma.h's wgmma_tf32<kN>: m64 n<kN> k8, kN the struct's own expression.
        generic = re.search(r"\bwgmma_tf32\s*<\s*([^>]+?)\s*>\s*\(", text)
        try:
            wgmma = (64, evaluate(generic.group(1), k), 8) if generic else None
        except Unknown:
            wgmma = None
        shape = wgmma
    plan = re.search(r"\bmake_fragment_plan\s*\(([^)]*)\)\s*\{(.*?)\n\}", text, flags=re.S)
    missing = [n for n in required if n not in k]
    if not shape:
        missing.append("the wgmma it issues (sgemm::wgmma_m<m>n<n>k<k>_tf32 or wgmma_tf32<n>)")
    if not plan:
        missing.append("make_fragment_plan")
    if "full" not in arrivals:
        missing.append("mbarrier_init(&full[s], ...)")
    if missing:
        raise UsageError(f"{source}: cannot find {', '.join(missing)}")
    # A as the launcher hands it to TMA: tma_readable(A, rows, cols, round_tf32, ...).
    readable = re.search(r"\btma_readable\s*\(\s*A\s*,[^,]+,[^,]+,\s*([^,]+?)\s*,", text)
    try:
        rounded = bool(readable) and bool(evaluate(readable.group(1), k))
    except Unknown:
        rounded = False
    if rounded_before and not rounded:
        raise UsageError(f"{source}: the figures draw A rounded to TF32 by a pass before the "
                         "GEMM (tma_readable(A, ..., round_tf32 = true, ...)); the default "
                         "build does not")
    statements = [s.strip() for s in plan.group(2).split(";") if s.strip()]
    return {"source": source, "tile": tile, "k": k, "macros": macros, "defines": defines,
            "struct": struct, "params": params, "arrivals": arrivals,
            "barrier_ops": sorted(set(re.findall(r"\bmbarrier_(wait|arrive_expect_tx|arrive)"
                                                 r"\s*\(\s*&(\w+)", text))),
            "wgmma": wgmma,
            "plan": ([p.split()[-1] for p in plan.group(1).split(",")], statements),
            "text": text}


def lambda_body(kernel, name):
    """The body of the kernel's `auto <name> = [...](...) {...}` and where it ends."""
    found = re.search(r"\bauto\s+" + name + r"\s*=\s*\[[^\]]*\]\s*\([^)]*\)", kernel["text"])
    if not found:
        raise UsageError(f"{kernel['source']}: no lambda `auto {name} = [&](...) {{...}}`")
    return braced(kernel["text"], found.end())


TMA_FIELDS = ("kBlockM", "kBlockN", "kBlockK", "kStages", "kThreads", "kWarpgroups", "kBoxN",
              "kBoxesB", "kSizeA", "kSizeBoxB", "kStageBytes", "kKSteps", "kRowBlocks")
WS_FIELDS = ("kBlockM", "kConsumers", "kBlockN", "kBlockK", "kStages", "kThreads", "kBoxN",
             "kBoxesB", "kSizeA", "kSizeBoxB", "kStageBytes", "kKSteps", "kRowBlocks",
             "kLaunchRegisters", "kProducerRegisters", "kConsumerRegisters")
# The mbarrier operations each chapter's figures draw, and no others.
TMA_OPS = [("arrive_expect_tx", "full"), ("wait", "full")]
WS_OPS = [("arrive", "empty"), ("arrive_expect_tx", "full"), ("wait", "empty"), ("wait", "full")]


def check_ops(kernel, ops):
    """UsageError unless the kernel initializes exactly the mbarriers `ops` names and makes
    exactly those operations on them: a barrier the figures do not draw is a design they do
    not draw."""
    barriers = sorted({bar for _, bar in ops})
    if kernel["barrier_ops"] != sorted(ops) or sorted(kernel["arrivals"]) != barriers:
        have = ", ".join(f"{op} {bar}" for op, bar in kernel["barrier_ops"])
        raise UsageError(f"{kernel['source']}: the figures draw the mbarriers "
                         f"{', '.join(barriers)} and the operations "
                         f"{', '.join(f'{op} {bar}' for op, bar in sorted(ops))}; the default "
                         f"build inits {', '.join(sorted(kernel['arrivals']))} and has {have}")


def tma_kernel(root):
    """Chapter 11 as its default build compiles it (read_kernel), checked to be what the figures
    draw: box rows of 128 bytes, full mbarriers only, and a `prepare` that only waits (A comes
    rounded; no pass over the stage, no fence.proxy.async)."""
    kernel = read_kernel(root / TMA_SOURCE, TMA_FIELDS)
    k = kernel["k"]
    if k["kBlockK"] * 4 != 128 or k["kBoxN"] * 4 != 128:
        raise UsageError(f"{kernel['source']}: the figures draw box rows of 128 bytes "
                         "(kBlockK = kBoxN = 32)")
    check_ops(kernel, TMA_OPS)
    prepare, _ = lambda_body(kernel, "prepare")
    if re.search(r"\b(?:round_operand|fence_proxy_async)\s*\(", prepare):
        raise UsageError(f"{kernel['source']}: `prepare` rounds A in shared memory; the figures "
                         "draw a prepare that only waits for the tile's bytes")
    return kernel


def ws_kernel(root):
    """Chapter 12 as its default build compiles it (read_kernel), checked to be what the figures
    draw: full (one arrival and the bytes) and empty (one arrival per consumer warp) mbarriers,
    thread 0 alone issuing the copies, and each consumer handing back the stage of tile t - N
    right after wgmma.wait_group N ("hand_back": N, at most kStages - 1)."""
    kernel = read_kernel(root / WS_SOURCE, WS_FIELDS)
    k, source, text = kernel["k"], kernel["source"], kernel["text"]
    check_ops(kernel, WS_OPS)
    want = {"full": 1, "empty": 4 * k["kConsumers"]}
    if {bar: kernel["arrivals"].get(bar) for bar in want} != want:
        raise UsageError(f"{source}: the figures draw mbarrier arrivals {want} (the producer's "
                         "thread 0; one per consumer warp), the source inits "
                         f"{kernel['arrivals']}")
    if not re.search(r"\bif\s*\(\s*tid\s*!=\s*0\s*\)\s*return\s*;", text):
        raise UsageError(f"{source}: the figures draw a producer whose thread 0 alone issues "
                         "(`if (tid != 0) return;`)")
    step, _ = lambda_body(kernel, "step")
    back = re.search(r"\bwgmma_wait\s*<\s*(\w+)\s*>\s*\(\s*\)\s*;\s*if\s*\([^;{]*?\)\s*"
                     r"(?:sgemm::)?mbarrier_arrive\s*\(\s*&empty\s*\[\s*\(\s*tile\s*-\s*(\w+)\s*"
                     r"\)", step)
    try:
        n, d = (evaluate(x, k) for x in back.groups()) if back else (None, None)
    except Unknown:
        n = d = None
    if n is None or n != d or not 0 < n < k["kStages"]:
        raise UsageError(f"{source}: the figures draw consumers that hand back the stage of "
                         "tile t - N right after wgmma_wait<N>() (0 < N < kStages), as "
                         "`wgmma_wait<N>(); if (...) mbarrier_arrive(&empty[(tile - N) % "
                         "kStages]);`")
    kernel["hand_back"] = n
    kernel["split"] = bool(re.search(r"\bsetmaxnreg_dec\s*<\s*(?:T::)?kProducerRegisters\s*>",
                                     text) and
                           re.search(r"\bsetmaxnreg_inc\s*<\s*(?:T::)?kConsumerRegisters\s*>",
                                     text))
    return kernel


# ---- chapter 13: the tile pair, the multicast, the schedule ----------------------------------

CLUSTER_FIELDS = ("kBlockM", "kConsumers", "kBlockN", "kBlockK", "kStages", "kThreads",
                  "kCluster", "kGroupRows", "kBoxRowsA", "kBoxN", "kBoxesB", "kSizeA",
                  "kSizeBoxB", "kStageBytes")
# The constants each of 13's figures draws (and is stamped with).
SCHEDULE_DRAWS = ("kBlockM", "kBlockN", "kCluster", "kGroupRows")
MULTICAST_DRAWS = tuple(n for n in CLUSTER_FIELDS if n != "kGroupRows")
SPLIT_DRAWS = ("kBlockM", "kBlockN", "kBlockK", "kStages", "kCluster")
# What the launcher puts in the Schedule the kernel walks, and what Schedule::unit returns.
SCHEDULE_FIELDS = ("tiles_m", "pairs_n", "splits", "k_slice", "group_rows")
UNIT_FIELDS = ("tile_m", "pair_n", "slice")


def call_args(text, name, source, first=r""):
    """The arguments (texts) of the first call `name(...)` in text whose first argument matches
    `first` (from its start), split at the call's top-level commas."""
    for found in re.finditer(r"\b" + name + r"\s*\(", text):
        args, depth, start = [], 0, found.end()
        for i in range(found.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 1 and text[i] == ",":
                args.append(text[start:i].strip())
                start = i + 1
            elif depth == 0:
                args.append(text[start:i].strip())
                break
        if depth == 0 and re.match(first, args[0]):
            return args
    raise UsageError(f"{source}: no call {name}({first or '...'}, ...)")


def cluster_kernel(root):
    """Chapter 13 as its default build compiles it (read_kernel, A's rounding not drawn), checked
    to be what its figures draw: persistent clusters of 2 blocks, each block's producer copying
    kBoxRowsA = kBlockM / 2 of A's rows into both blocks (tma_load_2d_multicast, mask of both
    ranks) and its own B boxes; full (one arrival and kStageBytes, both halves of A and the own B)
    and empty (one arrival per consumer warp of every block: lane r of each warp arrives on rank
    r's) mbarriers; cluster c walking units c, c + clusters, ... . Adds "unit" (Schedule::unit's
    parameter, the Unit's name and statements), "assign" (the launcher's `schedule.<field> =
    ...` expressions), "tiles" ({alias: its constants} for LAUNCHER_TILES, the same struct
    evaluated for each alias's values), "model" (read_model: the launcher's model and rules,
    checked against their copies here), "expect_tx" and "mask"."""
    kernel = read_kernel(root / CLUSTER_SOURCE, CLUSTER_FIELDS, rounded_before=False)
    k, source, text = kernel["k"], kernel["source"], kernel["text"]
    if (k["kCluster"] != 2 or not k.get("SGEMM_MULTICAST")
            or k["kBoxRowsA"] * k["kCluster"] != k["kBlockM"]):
        raise UsageError(f"{source}: the figures draw clusters of 2 blocks sharing A's box by "
                         "multicast (SGEMM_CLUSTER 2, SGEMM_MULTICAST 1, kBoxRowsA = kBlockM / "
                         f"kCluster); the default build has kCluster = {k['kCluster']}, "
                         f"kBoxRowsA = {k['kBoxRowsA']}")
    if not k.get("SGEMM_PERSISTENT"):
        raise UsageError(f"{source}: the figures draw persistent clusters (SGEMM_PERSISTENT 1)")
    want = {"full": 1, "empty": 4 * k["kConsumers"] * k["kCluster"]}
    if {bar: kernel["arrivals"].get(bar) for bar in want} != want:
        raise UsageError(f"{source}: the figures draw mbarrier arrivals {want} (the producer's "
                         "thread 0; one per consumer warp of each block of the cluster), the "
                         f"source inits {kernel['arrivals']}")
    expect = call_args(text, r"(?:sgemm::)?mbarrier_arrive_expect_tx", source,
                       r"&\s*full\s*\[")
    multicast = call_args(text, r"(?:sgemm::)?tma_load_2d_multicast", source)
    try:
        kernel["expect_tx"] = evaluate(expect[1], k)
        kernel["mask"] = evaluate(multicast[-1], k)
    except (Unknown, IndexError) as error:
        raise UsageError(f"{source}: cannot read the expect_tx bytes or the multicast mask "
                         f"({error})") from None
    shares = k["kCluster"] * k["kBoxRowsA"] * k["kBlockK"] * 4
    own_b = k["kBoxesB"] * k["kSizeBoxB"] * 4
    if kernel["expect_tx"] != k["kStageBytes"] or shares + own_b != k["kStageBytes"]:
        raise UsageError(f"{source}: the figures draw a full mbarrier expecting kStageBytes = "
                         f"both shares of A ({shares} B) + the block's B boxes ({own_b} B); the "
                         f"source expects {kernel['expect_tx']} of kStageBytes = "
                         f"{k['kStageBytes']}")
    if kernel["mask"] != (1 << k["kCluster"]) - 1:
        raise UsageError(f"{source}: the figures draw A's shares multicast to every block of the "
                         f"cluster (mask {(1 << k['kCluster']) - 1}), the source's mask is "
                         f"{kernel['mask']}")
    if not re.search(r"\bif\s*\(\s*lane\s*<\s*(?:T::)?kCluster\s*\)\s*(?:sgemm::)?"
                     r"mbarrier_arrive_cluster\s*\(\s*&empty\s*\[[^\]]*\]\s*,\s*lane\s*\)", text):
        raise UsageError(f"{source}: the figures draw consumer warps whose lane r arrives on "
                         "rank r's empty mbarrier (`if (lane < T::kCluster) "
                         "sgemm::mbarrier_arrive_cluster(&empty[stage], lane);`)")
    walk = (r"\bfirst_unit\s*=\s*blockIdx\.x\s*/\s*(?:T::)?kCluster\s*;",
            r"\bunit_step\s*=\s*gridDim\.x\s*/\s*(?:T::)?kCluster\s*;",
            r"for\s*\(\s*int\s+u\s*=\s*first_unit\s*;\s*u\s*<\s*units\s*;\s*u\s*\+=\s*unit_step"
            r"\s*\)")
    if not all(re.search(pattern, text) for pattern in walk):
        raise UsageError(f"{source}: the figures draw cluster c walking units c, c + clusters, "
                         "... (`for (int u = first_unit; u < units; u += unit_step)`, first_unit "
                         "= blockIdx.x / T::kCluster, unit_step = gridDim.x / T::kCluster)")
    schedule = re.search(r"\bstruct\s+Schedule\s*\{", text)
    unit = schedule and re.search(r"\bUnit\s+unit\s*\(\s*int\s+(\w+)\s*\)\s*const\s*\{", text)
    if not unit:
        raise UsageError(f"{source}: no `struct Schedule` with `Unit unit(int u) const {{...}}`")
    body, _ = braced(text, unit.end() - 1)
    statements = [s.strip() for s in body.split(";") if s.strip()]
    var = next((m.group(1) for m in (re.fullmatch(r"(?:Schedule::)?Unit\s+(\w+)", s)
                                     for s in statements) if m), None)
    if var is None:
        raise UsageError(f"{source}: Schedule::unit declares no `Unit w;`")
    kernel["unit"] = (unit.group(1), var, statements)
    schedule_unit(kernel, dict.fromkeys(SCHEDULE_FIELDS, 1), 0)  # runs, or one line says why
    kernel["assign"] = dict(re.findall(r"\bschedule\.(\w+)\s*=\s*([^;]+);", text))
    missing = [f for f in SCHEDULE_FIELDS if f not in kernel["assign"]]
    if missing:
        raise UsageError(f"{source}: the launcher sets no schedule.{', schedule.'.join(missing)}")
    kernel["tiles"] = {"MainTile": k}
    for name in LAUNCHER_TILES[1:]:
        params, struct, values = alias_struct(text, source, kernel["defines"], name)
        if struct.group(0) != kernel["struct"].group(0):
            raise UsageError(f"{source}: {name} is not MainTile's struct: the launcher's tiles "
                             f"are {', '.join(LAUNCHER_TILES)}, one struct")
        kernel["tiles"][name] = struct_constants(struct, params, values, kernel["macros"], source,
                                                 f"{name} {', '.join(map(str, values))}")
    read_model(kernel)
    return kernel


def grouped_unit(tiles_m, pairs_n, group_rows, u):
    """Where unit u goes in the chapter's order, written from its description (the reference the
    test holds the source's Schedule::unit to): K slice after K slice; inside one, groups of
    group_rows tile rows (the last group may be shorter); inside a group, pair column after pair
    column, its rows top to bottom. (tile_m, pair_n, slice)."""
    per_slice = tiles_m * pairs_n
    slice_, r = divmod(u, per_slice)
    group, inside = divmod(r, group_rows * pairs_n)
    first = group * group_rows
    rows = min(group_rows, tiles_m - first)
    pair_n, row = divmod(inside, rows)
    return first + row, pair_n, slice_


def schedule_unit(kernel, fields, u):
    """{tile_m, pair_n, slice} of unit u: the source's Schedule::unit, statement by statement,
    with `fields` (SCHEDULE_FIELDS) as the Schedule's members."""
    param, var, statements = kernel["unit"]
    names = dict(fields, **{param: u})
    unit = {}
    for statement in statements:
        local = re.fullmatch(r"(?:const\s+)?int\s+(\w+)\s*=\s*(.+)", statement, flags=re.S)
        field = re.fullmatch(var + r"\.(\w+)\s*=\s*(.+)", statement, flags=re.S)
        try:
            if local:
                names[local.group(1)] = evaluate(local.group(2), names)
            elif field:
                unit[field.group(1)] = evaluate(field.group(2), names)
            elif not re.fullmatch(r"(?:Schedule::)?Unit\s+" + var + r"|return\s+" + var,
                                  statement):
                raise Unknown(statement)
        except Unknown as error:
            raise UsageError(f"{kernel['source']}: Schedule::unit: cannot run `{statement}` "
                             f"({error})") from None
    if set(unit) != set(UNIT_FIELDS):
        raise UsageError(f"{kernel['source']}: Schedule::unit sets {sorted(unit)}, not "
                         f"{', '.join(UNIT_FIELDS)}")
    return unit


# The launcher's tiles (with_tile picks one), the three its model weighs, and the H100 SXM's data
# sheet where plan_clocks asks the device (cudaDevAttrMemoryClockRate, GlobalMemoryBusWidth and
# ClockRate): HBM3 at 2619 MHz, double data rate, on a 5120-bit bus (3352.32 GB/s), SMs at
# 1980 MHz. The H100 holds one block of any of the tiles per SM: RESIDENT_CLUSTERS pairs of the
# paired tiles, twice as many unpaired blocks.
LAUNCHER_TILES = ("MainTile", "SmallTile", "SoloTile", "ShortTile")
MODEL_TILES = ("MainTile", "SmallTile", "ShortTile")
H100_MEMORY_MHZ, H100_BUS_BITS, H100_SM_MHZ = 2619, 5120, 1980
DRAM_BYTES_PER_CLOCK = 2.0 * H100_MEMORY_MHZ * (H100_BUS_BITS // 8) / H100_SM_MHZ
# What the figures' copy of the model (tile_rate, tile_split, plan_clocks) takes the source to
# say, each statement as normalized() writes it: a source that says otherwise is refused.
MODEL_STATEMENTS = (
    ("spec_of", "return{T::kBlockM,T::kBlockN,T::kBlockK,T::kStages,"
                "resident_clusters<T>()*T::kCluster};"),
    ("split_k_of", "if(!SGEMM_SPLIT_K)return sgemm::SplitK{1,p.k};"),
    ("split_k_of", "return sgemm::plan_split_k(sgemm::tiles_of(p,spec),spec.slots,p.k,"
                   "spec.block_k,spec.stages);"),
    ("tile_rate", "return std::min(kTensorFlopPerClock,kSharedBytesPerClock*flop/bytes);"),
    ("plan_clocks", "const sgemm::SplitK split=split_k_of<T>(p);"),
    ("plan_clocks", "const double rate=tile_rate<T>();"),
    ("plan_clocks", "const double macs=sgemm::plan_cost(sgemm::tiles_of(p,spec),"
                    "sgemm::sm_count(),T::kBlockM,T::kBlockN,split);"),
    ("plan_clocks", "return sgemm::dram_bandwidth_bytes(1e3*mem_khz,bus_bits)/(1e3*sm_khz);"),
    ("plan_clocks", "const double c_bytes=(split.splits>1?2.0*split.splits+1:1.0)*p.m*p.n*4;"),
    ("plan_clocks", "return 2*macs/rate+c_bytes/dram_bytes_per_clock;"),
)
# Shapes on which read_model runs the source's with_tile against launcher_tile: M and N on both
# sides of each rule's bound (64 and 128 rows, 128 columns), between and past them, K short and
# long, so that each rule and each of the model's three answers is taken (1024 x 1024 x 65536:
# the big tile; 512 x 4096 x 4096: the 128-row one; 1024^3: the 64-row one), besides the shapes
# the figures draw.
PROBE_SHAPES = tuple((m, n, k) for m in (16, 64, 65, 128, 129, 200, 256, 257, 512, 1024, 4096)
                     for n in (64, 128, 129, 256, 1024, 4096) for k in (1024, 4096, 65536))


def normalized(code):
    """C++ with one space between words and none around punctuation: what MODEL_STATEMENTS
    compare, whatever the formatting."""
    return re.sub(r"\s*([^\w\s])\s*", r"\1", re.sub(r"\s+", " ", code)).strip()


def function_body(text, name, source):
    """The body of the function `name` (its definition: `name(...) {`, not a call `name<T>(`)."""
    found = re.search(r"\b" + name + r"\s*\([^;{}()]*\)\s*\{", text)
    if not found:
        raise UsageError(f"{source}: no function {name}")
    return braced(text, found.end() - 1)[0]


def read_model(kernel):
    """The launcher's choice of tile, read and checked: kernel["model"] = {"flop_per_clock",
    "shared_bytes_per_clock" (kTensorFlopPerClock, kSharedBytesPerClock), "with_tile" (its
    body)}. Raises UsageError (one line) where the source no longer says what the copies here
    compute: the default switches the copy of with_tile assumes (SGEMM_NARROW, SGEMM_SHORT_ROWS,
    SGEMM_PLAN_MODEL 1), a statement of MODEL_STATEMENTS, a rate tile_rate's static_assert quotes
    (each tile it names, an alias or the struct's instance, against tile_rate here), or the tile
    the source's with_tile picks for one of PROBE_SHAPES and the figures' shapes (source_tile
    against launcher_tile)."""
    k, source, text = kernel["k"], kernel["source"], kernel["text"]
    off = [s for s in ("SGEMM_NARROW", "SGEMM_SHORT_ROWS", "SGEMM_PLAN_MODEL") if not k.get(s)]
    if off:
        raise UsageError(f"{source}: the figures draw the launcher's default choice of tile "
                         f"(SGEMM_NARROW, SGEMM_SHORT_ROWS and SGEMM_PLAN_MODEL 1); the default "
                         f"build has {', '.join(off)} 0")
    constants = dict(re.findall(r"\bconstexpr\s+double\s+(k\w+)\s*=\s*(\d+(?:\.\d*)?)\s*;", text))
    if not {"kTensorFlopPerClock", "kSharedBytesPerClock"} <= set(constants):
        raise UsageError(f"{source}: no `constexpr double kTensorFlopPerClock = ...;` and "
                         "`kSharedBytesPerClock = ...;` (the launcher's model)")
    bodies = {}
    for function, statement in MODEL_STATEMENTS:
        if function not in bodies:
            bodies[function] = normalized(function_body(text, function, source))
        if statement not in bodies[function]:
            raise UsageError(f"{source}: {function} no longer says `{statement}`: the figures' "
                             f"copy of the launcher's model ({SCRIPT}) needs the same change")
    assertion = re.search(r"static_assert\s*\(([^;]*\btile_rate\s*<[^;]*)\)\s*;", text)
    rates = re.findall(r"\btile_rate\s*<\s*(\w+(?:\s*<[^<>]*>)?)\s*>\s*\(\s*\)\s*\)?\s*==\s*"
                       r"(\d+)", assertion.group(1) if assertion else "")
    if not rates:
        raise UsageError(f"{source}: no static_assert quotes tile_rate<T>() (`tile_rate<T>() == "
                         "<FLOP per clock>`), which the figures' copy of tile_rate is held to")
    kernel["model"] = {"flop_per_clock": float(constants["kTensorFlopPerClock"]),
                       "shared_bytes_per_clock": float(constants["kSharedBytesPerClock"]),
                       "with_tile": function_body(text, "with_tile", source)}
    for tile, value in rates:
        struct = re.fullmatch(r"(\w+)\s*<(.*)>", tile)
        if struct:  # an instance of the struct, as the static_assert names it
            params, match, values = struct_values(text, source, kernel["defines"],
                                                  struct.group(1), struct.group(2), tile,
                                                  f"{tile} gives")
            quoted = struct_constants(match, params, values, kernel["macros"], source, tile)
        elif tile in kernel["tiles"]:
            quoted = kernel["tiles"][tile]
        else:
            raise UsageError(f"{source}: tile_rate's static_assert quotes {tile}, not a tile "
                             f"the figures know ({', '.join(LAUNCHER_TILES)})")
        ours = tile_rate(quoted, kernel["model"])
        if int(ours) != int(value):
            raise UsageError(f"{source}: tile_rate's static_assert quotes {tile} at {value} "
                             f"FLOP per clock, the figures' copy of tile_rate computes {int(ours)}")
    for m, n, k_dim in PROBE_SHAPES + SPLIT_SHAPES_13 + (SCHEDULE_PROBLEM,):
        want = launcher_tile(kernel, m, n, k_dim, RESIDENT_CLUSTERS)[0]
        got = source_tile(kernel, m, n, k_dim, RESIDENT_CLUSTERS)
        if got != want:
            raise UsageError(f"{source}: with_tile picks {got} for {m} x {n} x {k_dim}, the "
                             f"figures' copy of its rules (launcher_tile) {want}: the copy "
                             "needs the source's change")


def resident_clusters(k, clusters):
    """Clusters of tile k the GPU runs at once when it runs `clusters` pairs (one block per SM):
    the chapter's resident_clusters<T>()."""
    return 2 * clusters // k["kCluster"]


def tile_spec(k, clusters):
    """common/split_k.h's TileSpec of a tile (tensor_core_figures' dict), as the chapter's spec_of
    makes it: its slots are the blocks of its resident clusters."""
    return {"block_m": k["kBlockM"], "block_n": k["kBlockN"], "block_k": k["kBlockK"],
            "stages": k["kStages"], "slots": resident_clusters(k, clusters) * k["kCluster"]}


def tile_rate(k, model):
    """The chapter's tile_rate<T>(): FLOP per SM clock of tile k's K steps, at most the tensor
    cores' and at most as fast as shared memory moves a K step's bytes (each consumer's wgmma
    reads its A^T rows, its fragment loads its B^T columns, TMA writes a quarter stage)."""
    flop = 2.0 * k["kBlockM"] * k["kBlockN"] * k["kWgmmaK"]
    moved = (k["kConsumers"] * (k["kBlockM"] + k["kWgmmaM"]) * k["kWgmmaK"] * 4
             + k["kStageBytes"] // k["kKSteps"])
    return min(model["flop_per_clock"], model["shared_bytes_per_clock"] * flop / moved)


def tile_split(k, m, n, k_dim, clusters, split_k=True):
    """The chapter's split_k_of<T>(p): (splits, k_slice) of common/split_k.h's plan_split_k,
    or one slice with SGEMM_SPLIT_K 0 (`split_k` false)."""
    spec = tile_spec(k, clusters)
    if not split_k:
        return 1, k_dim
    return plan_split_k(tiles_of(m, n, spec), spec["slots"], k_dim, spec["block_k"],
                        spec["stages"])


def plan_clocks(kernel, name, m, n, k_dim, clusters, split_k=True):
    """The chapter's plan_clocks<T>(p) for tile `name`, with its parts: {"split", "macs" (the
    busiest SM's multiply-adds, sgemm::plan_cost over the H100's SMs), "rate" (tile_rate),
    "compute" (2 x macs / rate), "c_bytes" (C once, or with K slices each slice written and read
    back and C written), "dram" (c_bytes / DRAM_BYTES_PER_CLOCK), "clocks" (their sum)}."""
    k = kernel["tiles"][name]
    split = tile_split(k, m, n, k_dim, clusters, split_k)
    macs = plan_cost(tiles_of(m, n, tile_spec(k, clusters)), H100_SMS, k["kBlockM"],
                     k["kBlockN"], split)
    rate = tile_rate(k, kernel["model"])
    c_bytes = (2 * split[0] + 1 if split[0] > 1 else 1) * m * n * 4
    parts = {"split": split, "macs": macs, "rate": rate, "compute": 2 * macs / rate,
             "c_bytes": c_bytes, "dram": c_bytes / DRAM_BYTES_PER_CLOCK}
    parts["clocks"] = parts["compute"] + parts["dram"]
    return parts


def launcher_tile(kernel, m, n, k_dim, clusters, split_k=None):
    """The chapter's with_tile with its default switches, copied (read_model holds the source's
    to it): (the tile it picks, why in a few words, {tile: plan_clocks} of MODEL_TILES where its
    model decides, else None). `split_k` defaults to the source's SGEMM_SPLIT_K."""
    if split_k is None:
        split_k = bool(kernel["k"].get("SGEMM_SPLIT_K"))
    main, small, short = (kernel["tiles"][t] for t in MODEL_TILES)
    one_column = n <= main["kBlockN"]
    if m <= short["kBlockM"]:
        return "ShortTile", f"M = {m} <= {short['kBlockM']}: the {short['kBlockM']}-row tile", None
    if one_column and m <= small["kBlockM"]:
        return ("ShortTile", f"M = {m} <= {small['kBlockM']} and N = {n} <= {main['kBlockN']}: "
                f"the {short['kBlockM']}-row tile", None)
    if one_column:
        return ("SoloTile", f"N = {n} <= {main['kBlockN']}: one column of tiles, unpaired big "
                "tiles", None)
    if m <= small["kBlockM"]:
        return "SmallTile", f"M = {m} <= {small['kBlockM']}: the {small['kBlockM']}-row tile", None
    big = tiles_of(m, n, tile_spec(main, clusters))
    if big >= H100_SMS:
        return "MainTile", f"{big} big tiles >= {H100_SMS} SMs: the big tile", None
    model = {t: plan_clocks(kernel, t, m, n, k_dim, clusters, split_k) for t in MODEL_TILES}
    clocks = {t: parts["clocks"] for t, parts in model.items()}
    if clocks["ShortTile"] < clocks["MainTile"] and clocks["ShortTile"] < clocks["SmallTile"]:
        pick = "ShortTile"
    else:
        pick = "SmallTile" if clocks["SmallTile"] < clocks["MainTile"] else "MainTile"
    return pick, (f"M = {m} > {small['kBlockM']}, N = {n} > {main['kBlockN']}, {big} big tiles < "
                  f"{H100_SMS} SMs: the model's least clocks"), model


# with_tile's calls, as names source_tile gives values (a tile's constant X::kName too).
WITH_TILE_CALLS = ((r"\bplan_clocks\s*<\s*(\w+)\s*>\s*\(\s*p\s*\)", r"clocks__\1"),
                   (r"\b(?:sgemm::)?tiles_of\s*\(\s*p\s*,\s*spec_of\s*<\s*(\w+)\s*>\s*\(\s*\)"
                    r"\s*\)", r"tiles__\1"),
                   (r"\b(?:sgemm::)?sm_count\s*\(\s*\)", "sms"),
                   (r"\bf\s*\(\s*(\w+)\s*\{\s*\}\s*\)", r"pick__\1"),
                   (r"\b(\w+)::(k\w+)", r"\1__\2"),
                   (r"\bp\.(\w+)", r"p_\1"))


def closing(text, at):
    """Where the bracket opening at text[at] is closed: the index after it."""
    depth = 0
    for i in range(at, len(text)):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise Unknown(f"no end to {text[at:at + 40]!r}")


def statement_end(text, at):
    """Where the statement starting at text[at] ends: after its block's braces, or after its
    `;` outside brackets."""
    if text[at] == "{":
        return closing(text, at)
    depth = 0
    for i in range(at, len(text)):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(text[i], 0)
        if depth == 0 and text[i] == ";":
            return i + 1
    raise Unknown(f"no end to {text[at:at + 40]!r}")


def run_block(text, names):
    """Runs C++ statements: `if (c) <statement or block>`, `<type> x = e;` and `return e;`.
    The value returned, or None when the block ends without a return."""
    at = 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        branch = re.match(r"if\s*\(", text[at:])
        if branch:
            close = closing(text, at + branch.end() - 1)
            start = close + len(text[close:]) - len(text[close:].lstrip())
            end = statement_end(text, start)
            if evaluate(text[at + branch.end():close - 1], names):
                inner = text[start + 1:end - 1] if text[start] == "{" else text[start:end]
                value = run_block(inner, names)
                if value is not None:
                    return value
            at = end
            continue
        end = statement_end(text, at)
        statement = text[at:end - 1].strip()
        declared = re.fullmatch(r"(?:const\s+)?(?:bool|int|double|auto)\s+(\w+)\s*=\s*(.+)",
                                statement, flags=re.S)
        returned = re.fullmatch(r"return\s+(.+)", statement, flags=re.S)
        if declared:
            names[declared.group(1)] = evaluate(declared.group(2), names)
        elif returned:
            return evaluate(returned.group(1), names)
        else:
            raise Unknown(f"`{statement}` is no declaration, if or return")
        at = end
    return None


def source_tile(kernel, m, n, k_dim, clusters):
    """The tile the source's with_tile picks for m x n x k: its statements run, with the integer
    macros, the tiles' constants, plan_clocks<T>(p) the figures' copy of the model, sgemm::tiles_of
    and sm_count() the H100's."""
    names = dict(kernel["macros"], p_m=m, p_n=n, p_k=k_dim, sms=H100_SMS)
    split_k = bool(kernel["k"].get("SGEMM_SPLIT_K"))
    for code, (name, k) in enumerate(kernel["tiles"].items()):
        names.update({f"{name}__{c}": v for c, v in k.items()})
        names[f"pick__{name}"] = code
        names[f"tiles__{name}"] = tiles_of(m, n, tile_spec(k, clusters))
        if name in MODEL_TILES:
            names[f"clocks__{name}"] = plan_clocks(kernel, name, m, n, k_dim, clusters,
                                                   split_k)["clocks"]
    body = kernel["model"]["with_tile"]
    for pattern, replacement in WITH_TILE_CALLS:
        body = re.sub(pattern, replacement, body)
    try:
        picked = run_block(body, names)
    except Unknown as error:
        raise UsageError(f"{kernel['source']}: with_tile, run for {m} x {n} x {k_dim}: "
                         f"{error}") from None
    return next((name for code, name in enumerate(kernel["tiles"]) if code == picked),
                f"no tile ({picked})")


def cluster_launch(kernel, m, n, k_dim, clusters, split_k=None, group_rows=None, tile=None):
    """What the chapter's launcher does for m x n x k when the GPU runs `clusters` pairs (one
    block per SM; the H100's H100_SMS SMs): the tile of launcher_tile (or `tile`, one of
    LAUNCHER_TILES), its K slices (split_k_of; SGEMM_SPLIT_K is `split_k`, by default the
    source's), the Schedule (the launcher's own expressions; `group_rows` replaces its
    group_rows), the clusters launched (a persistent launch: at most the resident ones) and the
    walk: [(u, cluster, round, tile_m, pair_n, slice)], cluster c taking units c, c + launched,
    ... . Returns {"name", "why", "model" (launcher_tile's), "tile" (the tile's constants),
    "splits", "k_slice", "fields", "units", "resident", "launched", "rounds", "walk"}."""
    if split_k is None:
        split_k = bool(kernel["k"].get("SGEMM_SPLIT_K"))
    name, why, model = launcher_tile(kernel, m, n, k_dim, clusters, split_k)
    if tile is not None:
        name = tile
    k = kernel["tiles"][name]
    splits, k_slice = tile_split(k, m, n, k_dim, clusters, split_k)
    names = dict(k, p_m=m, p_n=n, p_k=k_dim, split_splits=splits, split_k_slice=k_slice)
    fields = {}
    for field in SCHEDULE_FIELDS:
        expression = re.sub(r"\b(p|split)\.(\w+)", r"\1_\2", kernel["assign"][field])
        try:
            fields[field] = evaluate(expression, names)
        except Unknown as error:
            raise UsageError(f"{kernel['source']}: cannot evaluate schedule.{field} = "
                             f"{kernel['assign'][field].strip()} ({error})") from None
    if group_rows is not None:
        fields["group_rows"] = group_rows
    units = fields["tiles_m"] * fields["pairs_n"] * fields["splits"]
    resident = resident_clusters(k, clusters)
    launched = min(units, resident)
    walk = []
    for u in range(units):
        w = schedule_unit(kernel, fields, u)
        walk.append((u, u % launched, u // launched, w["tile_m"], w["pair_n"], w["slice"]))
    return {"name": name, "why": why, "model": model, "tile": k, "splits": splits,
            "k_slice": k_slice, "fields": fields, "units": units, "resident": resident,
            "launched": launched, "rounds": ceil_div(units, launched), "walk": walk}


def round_reach(launch, n, round_=0):
    """(tile rows of A, tile columns of B) that the units of one round read: sorted lists."""
    cluster, bn = launch["tile"]["kCluster"], launch["tile"]["kBlockN"]
    rows, cols = set(), set()
    for _, _, r, tile_m, pair_n, _ in launch["walk"]:
        if r == round_:
            rows.add(tile_m)
            cols.update(c for c in range(pair_n * cluster, (pair_n + 1) * cluster)
                        if c * bn < n)
    return sorted(rows), sorted(cols)


# One operation of 11's main loop: thread 0's issue of a tile's copies (or a loop of them from
# tile 0), the wait for a tile's bytes (prepare), its fragments and wgmma (multiply),
# wgmma.wait_group, __syncthreads.
LOOP_OP = re.compile(
    r"for\s*\(\s*int\s+(?P<var>\w+)\s*=\s*0\s*;\s*(?P=var)\s*<\s*(?P<count>[^;]+?)\s*&&\s*"
    r"(?P=var)\s*<\s*num_tiles\s*;[^)]*\)\s*issue\s*\(\s*(?P=var)\s*\)"
    r"|\b(?P<call>issue|prepare|multiply)\s*\(\s*(?P<arg>[^,()]+?)\s*[,)]"
    r"|\bwgmma_wait\s*<\s*(?P<wait>[^>]+?)\s*>\s*\(\s*\)"
    r"|\b(?P<barrier>__syncthreads)\s*\(\s*\)")


def loop_ops(kernel):
    """11's main loop as the default build compiles it: (prologue, step), each a list of
    (operation, argument): ("issue_first", n) issues tiles 0 .. n - 1; ("issue" | "prepare" |
    "multiply", d) acts on tile + d (the step's tile; 0 in the prologue); ("wait", n) is
    wgmma.wait_group n; ("barrier", None). Lambda definitions are skipped; a guard `tile + d <
    num_tiles` is implied (the schedule skips tiles past the last)."""
    text, k = kernel["text"], kernel["k"]
    step = re.search(r"\bauto\s+step\s*=\s*\[[^\]]*\]\s*\([^)]*\)", text)
    start = re.search(r"\bfloat\s+acc\s*\[", text)
    if not step or not start or start.start() > step.start():
        raise UsageError(f"{kernel['source']}: no `float acc[...]` followed by `auto step = "
                         "[&](int tile, ...) {...}` (the main loop the figure draws)")
    body, _ = braced(text, step.end())
    before = text[start.start():step.start()]
    while True:  # drop the lambdas defined before step: their bodies run where they are called
        lam = re.search(r"\bauto\s+\w+\s*=\s*\[[^\]]*\]\s*\([^)]*\)\s*\{", before)
        if not lam:
            break
        _, end = braced(before, lam.end() - 1)
        before = before[:lam.start()] + before[end:]

    def ops(part):
        out = []
        for m in LOOP_OP.finditer(part):
            try:
                if m.group("count"):
                    out.append(("issue_first", evaluate(m.group("count"), k)))
                elif m.group("call"):
                    out.append((m.group("call"), evaluate(m.group("arg"), dict(k, tile=0))))
                elif m.group("wait"):
                    out.append(("wait", evaluate(m.group("wait"), k)))
                else:
                    out.append(("barrier", None))
            except Unknown as error:
                raise UsageError(f"{kernel['source']}: cannot read `{m.group(0)}` of the main "
                                 f"loop ({error})") from None
        return out

    prologue = ops(before)
    firsts = [i for i, (op, _) in enumerate(prologue) if op == "issue_first"]
    if not firsts:
        raise UsageError(f"{kernel['source']}: no prologue `for (int s = 0; s < N && s < "
                         "num_tiles; ++s) issue(s);` before the main loop")
    return prologue[firsts[0]:], ops(body)


def fragment_plan(kernel, group, warp, g, t):
    """{lo, hi, col} of lane (g, t) of warp `warp` in (consumer) warpgroup `group`: the source's
    make_fragment_plan, statement by statement. lo and hi are float offsets into the stage's B
    (its boxes, one after another); col is the column of C (in the block) of the lane's pair."""
    params, statements = kernel["plan"]
    names = dict(kernel["k"], **dict(zip(params, (group, warp, g, t))))
    plan = {}
    for statement in statements:
        local = re.fullmatch(r"(?:const\s+)?int\s+(\w+)\s*=\s*(.+)", statement, flags=re.S)
        field = re.fullmatch(r"plan\.(\w+)\s*=\s*(.+)", statement, flags=re.S)
        try:
            if local:
                names[local.group(1)] = evaluate(local.group(2), names)
            elif field:
                plan[field.group(1)] = evaluate(field.group(2), names)
            elif not re.fullmatch(r"FragmentPlan\s+plan|return\s+plan", statement):
                raise Unknown(statement)
        except Unknown as error:
            raise UsageError(f"{kernel['source']}: make_fragment_plan: cannot run "
                             f"`{statement}` ({error})") from None
    if set(plan) != {"lo", "hi", "col"}:
        raise UsageError(f"{kernel['source']}: make_fragment_plan sets {sorted(plan)}, not "
                         "lo, hi and col")
    return plan


def plan_statement(kernel, name):
    """The text of make_fragment_plan's `const int <name> = ...` (drawn into the figure)."""
    for statement in kernel["plan"][1]:
        match = re.fullmatch(r"(?:const\s+)?int\s+" + name + r"\s*=\s*(.+)", statement, re.S)
        if match:
            return f"{name} = " + " ".join(match.group(1).split())
    raise UsageError(f"{kernel['source']}: make_fragment_plan has no `const int {name}`")


def word_of(kernel, offset):
    """Where float `offset` of a stage's B lies: (box, row, bank, column of C in the block). The
    stage starts on 1024 bytes and sA is a whole number of 128-byte rows, so the bank is the
    float's place in its 128-byte box row; its column undoes the swizzle (p = c ^ (row % 8))."""
    k = kernel["k"]
    box, within = divmod(offset, k["kSizeBoxB"])
    row, word = divmod(within, k["kBoxN"])
    bank = (k["kSizeA"] + offset) % BANKS
    chunk = swizzled(row, word // 4)
    return box, row, bank, k["kBoxN"] * box + 4 * chunk + word % 4


def swizzled(row, chunk):
    """The 128-byte swizzle: 16-byte chunk `chunk` of box row `row` lands at this position (and,
    the pattern being its own inverse, position `chunk` holds this chunk)."""
    return chunk ^ (row % 8)


def warp_loads(kernel, group, warp, k_step=0, plan=None):
    """[(lane, load, row, bank, column)] of the 8-byte B^T loads of one warp in one k-step
    (load 0 = lo, at k t; 1 = hi, at k t + 4): each lane reads 2 floats, so 2 banks. `plan`
    replaces make_fragment_plan (the figure's counterexample)."""
    k = kernel["k"]
    out = []
    for lane in range(32):
        g, t = lane // 4, lane % 4
        p = (plan or fragment_plan)(kernel, group, warp, g, t)
        for load, key in enumerate(("lo", "hi")):
            for e in range(2):
                box, row, bank, col = word_of(kernel, p[key] + 8 * k_step * k["kBoxN"] + e)
                out.append((lane, load, row, bank, col))
    return out


def half_warp_banks(loads, load, half):
    """Words per bank of one half-warp's 8-byte load: an LDS.64 of a warp is served a half-warp
    at a time, so 16 lanes x 8 bytes = 128 bytes, one word per bank when conflict-free."""
    hits = [0] * BANKS
    for lane, which, _, bank, _ in loads:
        if which == load and lane // 16 == half:
            hits[bank] += 1
    return hits


def in_order_plan(kernel, group, warp, g, t):
    """The counterexample of tma.png: the warp's 16 columns in order (chunks q = h + 4 (warp % 2)
    of box 2 group + warp / 2), loaded without regard to the swizzle's rows."""
    k = kernel["k"]
    h = g // 2
    q = h + 4 * (warp % 2)
    box = 2 * group + warp // 2
    base = box * k["kSizeBoxB"] + 2 * (g % 2)
    return {"lo": base + t * k["kBoxN"] + 4 * swizzled(t, q),
            "hi": base + (t + 4) * k["kBoxN"] + 4 * swizzled(t + 4, q),
            "col": k["kBoxN"] * box + 4 * q + 2 * (g % 2)}


def header_modes(root):
    """(swizzle, out-of-bounds fill) of common/tma.h's tensor maps: the figures draw the 128-byte
    swizzle and zeros past the matrix, so anything else is a usage error."""
    text = read_source(root / TMA_HEADER)
    swizzle = re.search(r"\bCU_TENSOR_MAP_SWIZZLE_(\w+)", text)
    fill = re.search(r"\bCU_TENSOR_MAP_FLOAT_OOB_FILL_(\w+)", text)
    if not swizzle or swizzle.group(1) != "128B":
        raise UsageError(f"{root / TMA_HEADER}: the figures draw CU_TENSOR_MAP_SWIZZLE_128B, the "
                         f"header asks for {swizzle.group(0) if swizzle else 'no swizzle'}")
    if not fill or fill.group(1) != "NONE":
        raise UsageError(f"{root / TMA_HEADER}: the figures draw zeros past the matrix "
                         "(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), the header asks for "
                         f"{fill.group(0) if fill else 'nothing'}")
    return swizzle.group(1), fill.group(1)


# ---- chapter 14: 3xTF32 on the persistent clusters ---------------------------------------------

SPLIT_FIELDS = ("kBlockM", "kConsumers", "kBlockN", "kBlockK", "kStages", "kKSteps", "kRowBlocks",
                "kCluster", "kBoxRowsA", "kBoxN", "kBoxesB", "kSizeA", "kSizeBoxB", "kStageBytes",
                "kPromoteTiles")
SPLIT_OPS = [("arrive", "empty"), ("arrive", "split"), ("arrive_expect_tx", "full"),
             ("wait", "empty"), ("wait", "full"), ("wait", "split")]
WGMMA_CALL = re.compile(r"\b(?:wgmma_m\d+n\d+k\d+_tf32|wgmma_tf32\s*<[^>]*>)\s*\(\s*\w+\s*\[[^\]]*\]\s*,\s*(\w+)"
                        r"\s*\[[^\]]*\](?:\s*\[[^\]]*\])*\s*,\s*(desc_\w+)\s*\+\s*\w+\s*"
                        r"(?:,\s*([^;]+?))?\)\s*;")


def split_kernel(root):
    """Chapter 14 as its default build compiles it (read_kernel on `using PairTile =
    SplitTile<SGEMM_TILE, SGEMM_CLUSTER>;`), checked to be what split.png draws: SGEMM_SPLIT_A's
    rule (the pass where C has several columns of tiles, the producer's idle warps where N <=
    the bound of split_narrow); full, split (one arrival per splitting warp) and empty
    mbarriers. Adds "splitting" (kSplittingWarps), "narrow" (split_narrow's bound on N),
    "expect_tx" ({where: the full mbarrier's bytes}, the source's expression evaluated for each
    kSplit), "products" (the step lambda's wgmma in order: (register operand, shared-memory
    part, scale-d expression or None)) and "promote" (after's condition, the K tiles of a unit
    on which it promotes: a function of kt and k_tiles)."""
    kernel = read_kernel(root / SPLIT_SOURCE, SPLIT_FIELDS, rounded_before=False,
                         user="PairTile")
    k, source, text = kernel["k"], kernel["source"], kernel["text"]
    enum = re.search(r"\benum\s+SplitWhere\s*\{([^}]*)\}", text)
    where = {n: int(v)
             for n, v in re.findall(r"(\w+)\s*=\s*(\d+)", enum.group(1) if enum else "")}
    k.update(where)
    for name in ("kSplitWide", "kSplitNarrow"):
        found = re.search(r"\bconstexpr\s+int\s+" + name + r"\s*=\s*([^;]+);", text)
        try:
            k[name] = evaluate(found.group(1), k) if found else None
        except Unknown:
            k[name] = None
    if (where.get("kSplitPass") is None or k["kSplitWide"] != where["kSplitPass"]
            or k["kSplitNarrow"] != where.get("kSplitProducer")):
        raise UsageError(f"{source}: the figure draws SGEMM_SPLIT_A 3's rule (kSplitWide = "
                         "kSplitPass, kSplitNarrow = kSplitProducer); the default build has "
                         f"kSplitWide = {k['kSplitWide']}, kSplitNarrow = {k['kSplitNarrow']}")
    check_ops(kernel, SPLIT_OPS)
    if "kSplittingWarps" not in k:
        raise UsageError(f"{source}: cannot find constexpr int kSplittingWarps")
    want = {"full": 1, "split": k["kSplittingWarps"],
            "empty": 4 * k["kConsumers"] * k["kCluster"]}
    if kernel["arrivals"] != want:
        raise UsageError(f"{source}: the figure draws mbarrier arrivals {want} (the producer's "
                         "thread 0; one per splitting warp; one per consumer warp of each block "
                         f"of the cluster), the source inits {kernel['arrivals']}")
    kernel["splitting"] = k["kSplittingWarps"]
    narrow = re.search(r"\bbool\s+split_narrow\s*\([^)]*\)\s*\{\s*return\s+p\.n\s*<=\s*"
                       r"(?:PairTile::)?(\w+)\s*;\s*\}", text)
    if not narrow or narrow.group(1) not in k:
        raise UsageError(f"{source}: the figure draws split_narrow as `return p.n <= "
                         "PairTile::<constant>;`")
    kernel["narrow"] = k[narrow.group(1)]
    expect = call_args(text, r"(?:sgemm::)?mbarrier_arrive_expect_tx", source, r"&\s*full\s*\[")
    kernel["expect_tx"] = {}
    for label, mode in (("pass", "kSplitPass"), ("producer", "kSplitProducer")):
        try:
            kernel["expect_tx"][label] = evaluate(expect[1], dict(k, kSplit=k[mode]))
        except Unknown as error:
            raise UsageError(f"{source}: cannot evaluate the expect_tx bytes ({error})") from None
    step, _ = lambda_body(kernel, "step")
    kernel["products"] = [(reg, part, scale.strip() if scale else None)
                          for reg, part, scale in WGMMA_CALL.findall(step)]
    parts = {("small", "desc_big"), ("big", "desc_small"), ("big", "desc_big")}
    if (len(kernel["products"]) != 3 or {p[:2] for p in kernel["products"]} != parts
            or not re.search(r"\bwgmma_commit\s*\(", step)):
        raise UsageError(f"{source}: the figure draws three wgmma per k-step (small, big B^T x "
                         "big, small A: desc_big, desc_small) and one commit per K tile; the "
                         f"step lambda has {kernel['products']}")
    after, _ = lambda_body(kernel, "after")
    promote = re.search(r"\bconst\s+bool\s+promote\s*=\s*([^;]+);", after)
    waits = re.findall(r"\bwgmma_wait\s*<\s*(\d+)\s*>", after)
    if not promote or waits != ["0", "1"]:
        raise UsageError(f"{source}: the figure draws `after` as `const bool promote = ...;` "
                         "then wgmma_wait<0>() (promotion) or wgmma_wait<1>()")
    condition = promote.group(1).replace("place.k_tiles", "k_tiles")

    def promotes(kt, k_tiles):
        try:
            return bool(evaluate(condition, dict(k, kt=kt, k_tiles=k_tiles)))
        except Unknown as error:
            raise UsageError(f"{source}: cannot evaluate after's promote ({error})") from None

    promotes(0, 1)  # runs, or one line says why
    kernel["promote"] = promotes
    return kernel


# ---- what each figure is drawn from ----------------------------------------------------------

def digest(data):
    """16 hex digits of SHA-256: enough to tell two contents apart, short enough to read."""
    return hashlib.sha256(repr(data).encode()).hexdigest()[:16]


def fields_text(kernel, names):
    return ", ".join(f"{n} = {kernel['k'][n]}" for n in names if n in kernel["k"])


def ops_text(ops):
    """loop_ops' operations as one short line: issue(+2) wait<1> ..."""
    return " ".join(f"{op}<{arg}>" if op == "wait" else op if arg is None else
                    f"{op}({arg})" if op == "issue_first" else f"{op}(+{arg})"
                    for op, arg in ops)


def launch_digest(launch, tiles=True):
    """What a drawing of the launch shows: its plan and its walk (without where each unit's tiles
    lie, when `tiles` is false: split_k.png draws only the clusters' units and their slices). The
    tile is named by whether it is SmallTile, as when the launcher had two tiles: the stamps of
    the figures that draw the big tile stay as they were."""
    walk = launch["walk"] if tiles else [(c, r, z) for _, c, r, _, _, z in launch["walk"]]
    return digest([launch["name"] == "SmallTile", launch["splits"], launch["k_slice"],
                   launch["launched"], walk])


def signatures(root, clusters=None):
    """{(chapter, figure): the line stamped into it}: what each figure is drawn from in root,
    chapter 13's with `clusters` resident clusters (default RESIDENT_CLUSTERS)."""
    clusters = clusters or RESIDENT_CLUSTERS
    tma, ws, cl = tma_kernel(root), ws_kernel(root), cluster_kernel(root)
    sp = split_kernel(root)
    modes = header_modes(root)
    plans = [fragment_plan(tma, wg, w, lane // 4, lane % 4)
             for wg in range(tma["k"]["kWarpgroups"]) for w in range(4) for lane in range(32)]
    prologue, step = loop_ops(tma)
    ws_text = (f"12_warp_specialization: {fields_text(ws, WS_FIELDS)}; arrivals "
               f"{ws['arrivals']}; hand back after wgmma_wait<{ws['hand_back']}>; setmaxnreg "
               f"{ws['split']}; A rounded before the GEMM")
    return {
        FIGURES[0]: (f"11_tma: {fields_text(tma, TMA_FIELDS)}; swizzle {modes[0]}, "
                     f"out-of-bounds fill {modes[1]}; fragment plan sha256 {digest(plans)}; edge "
                     f"example {EDGE_EXAMPLE}; A rounded before the GEMM"),
        FIGURES[1]: (f"11_tma: {fields_text(tma, TMA_FIELDS)}; full arrivals "
                     f"{tma['arrivals']['full']}; prologue {ops_text(prologue)}; step "
                     f"{ops_text(step)}; schematic durations sha256 "
                     f"{digest(sorted(TMA_DURATIONS.items()))}"),
        FIGURES[2]: ws_text,
        FIGURES[3]: (f"{ws_text}; schematic durations sha256 "
                     f"{digest(sorted(WS_DURATIONS.items()))}"),
        FIGURES[4]: (f"13_persistent_clusters: {fields_text(cl, SCHEDULE_DRAWS)}; {clusters} "
                     f"resident clusters assumed; {'x'.join(map(str, SCHEDULE_PROBLEM))}, "
                     "grouped and row after row: walks sha256 "
                     + digest([launch_digest(cluster_launch(cl, *SCHEDULE_PROBLEM, clusters,
                                                            group_rows=rows))
                               for rows in (None, 1)])),
        FIGURES[5]: (f"13_persistent_clusters: {fields_text(cl, MULTICAST_DRAWS)}; arrivals "
                     f"{ {bar: cl['arrivals'][bar] for bar in ('full', 'empty')} }; expect_tx "
                     f"{cl['expect_tx']}; multicast mask {cl['mask']}"),
        FIGURES[6]: ("13_persistent_clusters: "
                     + "; ".join(f"{t} {fields_text({'k': cl['tiles'][t]}, SPLIT_DRAWS)}"
                                 for t in MODEL_TILES)
                     + f"; {model_text(cl)}; {clusters} resident clusters of {H100_SMS} SMs "
                     f"assumed; shapes {SPLIT_SHAPES_13}: plans sha256 "
                     + digest([(pick, why, [(launch_digest(launch, tiles=False), parts)
                                            for launch, parts in launches])
                               for pick, why, launches in split_k_plans(cl, clusters)])),
        FIGURES[7]: (f"14_3xtf32_hopper: {fields_text(sp, SPLIT_FIELDS)}; kSplittingWarps "
                     f"{sp['splitting']}; arrivals {sp['arrivals']}; expect_tx "
                     f"{sp['expect_tx']}; split by the producer where N <= {sp['narrow']}; "
                     f"wgmma {sp['products']}; timeline of {split_tiles(sp)} K tiles sha256 "
                     + digest([split_schedule(sp, split_tiles(sp)),
                               sorted(SPLIT_DURATIONS.items())])),
    }


FIGURES = (("11_tma", "tma.png"), ("11_tma", "mbarrier.png"),
           ("12_warp_specialization", "roles.png"), ("12_warp_specialization", "pipeline.png"),
           ("13_persistent_clusters", "schedule.png"), ("13_persistent_clusters", "multicast.png"),
           ("13_persistent_clusters", "split_k.png"), ("14_3xtf32_hopper", "split.png"))


def out_of_date(root):
    """One line for each figure under root/<chapter>/figures/ whose stamp is not what root's
    sources say now (a source changed without a redraw, or a figure never stamped)."""
    stale = []
    for (chapter, name), want in signatures(root).items():
        png = root / chapter / "figures" / name
        if not png.is_file() or stamped(png) != want:
            stale.append(f"{chapter}/figures/{name} is out of date: run python3 {SCRIPT}")
    return stale


# ---- the schedules the timelines draw ----------------------------------------------------------

# Durations of mbarrier.png and 12's pipeline.png, in arbitrary units: schematic, chosen to be
# legible, not measured (each chapter's README gives the measured effect of each part). Only the
# order, the waits and the overlap are the kernels'.
TMA_DURATIONS = {
    "pass": 3.6,         # the pass over A before the GEMM (drawn before the kernel starts)
    "issue": 0.5,        # thread 0: arrive.expect_tx and the stage's copies
    "latency": 5.5,      # from the issue until the last byte has landed
    "barrier": 0.4,      # __syncthreads
    "fragments": 1.6,    # B^T fragment loads and their rounding, the descriptors
    "wgmma_issue": 0.8,  # wgmma.fence, kKSteps x kRowBlocks wgmma, commit_group
    "group": 3.2,        # the tensor cores on one committed group (one K tile)
}
WS_DURATIONS = {
    "issue": 0.4,        # thread 0: arrive.expect_tx and the stage's copies
    "latency": 6.0,      # from the issue until the copies' last byte has landed
    "fragments": 1.0,    # a consumer's B^T fragment loads and descriptors
    "wgmma_issue": 0.5,  # wgmma.fence, kKSteps x kRowBlocks wgmma, commit_group
    "group": 2.0,        # the tensor cores on one consumer's group (one K tile, 64 columns)
}
EDGE_EXAMPLE = {"K": 40, "N": 120}  # tma.png's inset: the last K tile of a matrix this size


def tma_schedule(prologue, step, stages, tiles, d=None):
    """11's main loop (loop_ops: the prologue, then step for every tile) played out with the
    schematic durations d, every thread in step (one timeline), the tensor cores running the
    committed groups in order. Raises UsageError where the operations' order would break the
    kernel, whatever the durations: a tile waited for before its copies are issued, multiplied
    before its bytes are waited for, or a stage refilled before a __syncthreads has followed the
    wgmma.wait_group that retired the last group reading it.
    Returns {"copies": {tile: (stage, issued, landed)}, "phases": [(kind, tile, start, end)] in
    order, kind one of issue, wait (for the stage's full mbarrier), wgmma_wait, barrier,
    fragments, wgmma_issue; "groups": {tile: (start, end)}, "ahead": how far issue runs ahead of
    the step's tile, "in_flight": the step's wgmma.wait_group, "end"}."""
    d = dict(TMA_DURATIONS, **(d or {}))
    copies, groups, phases = {}, {}, []
    waited, retired, safe = set(), set(), set()
    state = {"now": 0.0}

    def phase(kind, tile, length=None, until=None):
        start = state["now"]
        end = start + length if length is not None else max(start, until)
        phases.append((kind, tile, start, end))
        state["now"] = end

    def issue(tile):
        if tile >= tiles:
            return
        previous = tile - stages
        if tile in copies:
            raise UsageError(f"11's main loop issues the copies of tile {tile} twice")
        if previous >= 0 and previous not in safe:
            raise UsageError(f"11's main loop refills stage {tile % stages} with tile {tile} "
                             f"before a __syncthreads follows the retirement of tile "
                             f"{previous}'s wgmma")
        copies[tile] = (tile % stages, state["now"], state["now"] + d["issue"] + d["latency"])
        phase("issue", tile, d["issue"])

    def run(op, arg, tile):
        target = tile + (arg or 0)
        if op == "issue_first":
            for t in range(min(arg, tiles)):
                issue(t)
        elif op == "issue":
            issue(target)
        elif op == "prepare" and target < tiles:
            if target not in copies:
                raise UsageError(f"11's main loop waits for tile {target} before issuing it")
            phase("wait", target, until=copies[target][2])
            waited.add(target)
        elif op == "multiply" and target < tiles:
            if target not in waited:
                raise UsageError(f"11's main loop multiplies tile {target} before waiting for "
                                 "its bytes")
            phase("fragments", target, d["fragments"])
            phase("wgmma_issue", target, d["wgmma_issue"])
            last = max(groups.values(), key=lambda g: g[1], default=(0.0, 0.0))[1]
            start = max(state["now"], last)
            groups[target] = (start, start + d["group"])
        elif op == "wait":
            committed = sorted(groups)
            done = committed[:len(committed) - arg] if arg else committed
            phase("wgmma_wait", tile, until=max([state["now"]] + [groups[t][1] for t in done]))
            retired.update(done)
        elif op == "barrier":
            phase("barrier", tile, d["barrier"])
            safe.update(retired)

    for op, arg in prologue:
        run(op, arg, 0)
    for tile in range(tiles):
        for op, arg in step:
            run(op, arg, tile)
    missing = [t for t in range(tiles) if t not in groups]
    if missing:
        raise UsageError(f"11's main loop never multiplies tile {missing[0]}")
    ahead = [arg for op, arg in step if op == "issue"]
    waits = [arg for op, arg in step if op == "wait"]
    return {"copies": copies, "phases": phases, "groups": groups,
            "ahead": ahead[0] if ahead else 0, "in_flight": min(waits) if waits else 0,
            "end": max(state["now"], max(g[1] for g in groups.values()))}


def ws_schedule(stages, consumers, tiles, hand_back=1, d=None):
    """12's roles played out with the schematic durations d, each on its own, meeting only at the
    mbarriers as the kernel's do:
    - the producer's thread 0 waits on empty[stage] for tiles >= stages, then issues the stage's
      copies; full completes when their bytes have landed;
    - each consumer waits on full, loads fragments, issues its group, waits until at most
      `hand_back` groups of its own are in flight (wgmma.wait_group) and arrives on the empty
      mbarrier of tile t - hand_back, whose group has now retired; empty completes with the last
      consumer's arrival (the last `hand_back` tiles are never handed back);
    - the tensor cores run the groups one after another, in the order they were issued.
    Returns {"producer": [{phase: (start, end)}], "consumers": [[{phase: (start, end)}]],
    "landed": {tile: full completes}, "arrived": {(consumer, tile): its warps arrive on empty},
    "empty": {tile: empty completes}, "groups": {(consumer, tile): (start, end)}, "end"}."""
    d = dict(WS_DURATIONS, **(d or {}))
    producer, steps = [], [[] for _ in range(consumers)]
    landed, arrived, empty, groups = {}, {}, {}, {}
    p_now = core_free = 0.0
    c_now = [0.0] * consumers
    for tile in range(tiles):
        phases = {}
        if tile >= stages:
            phases["wait"] = (p_now, max(p_now, empty[tile - stages]))
            p_now = phases["wait"][1]
        phases["issue"] = (p_now, p_now + d["issue"])
        p_now += d["issue"]
        landed[tile] = p_now + d["latency"]
        producer.append(phases)
        now_steps = []
        for c in range(consumers):
            wait = (c_now[c], max(c_now[c], landed[tile]))
            fragments = (wait[1], wait[1] + d["fragments"])
            issue = (fragments[1], fragments[1] + d["wgmma_issue"])
            now_steps.append({"wait": wait, "fragments": fragments, "wgmma_issue": issue})
            c_now[c] = issue[1]
        for c in sorted(range(consumers), key=lambda c: (c_now[c], c)):
            start = max(c_now[c], core_free)
            groups[(c, tile)] = (start, start + d["group"])
            core_free = start + d["group"]
        for c in range(consumers):
            retired = groups.get((c, tile - hand_back))
            phases = now_steps[c]
            phases["wgmma_wait"] = (c_now[c], max(c_now[c], retired[1] if retired else 0.0))
            c_now[c] = phases["wgmma_wait"][1]
            if retired:
                arrived[(c, tile - hand_back)] = c_now[c]
            steps[c].append(phases)
        if tile >= hand_back:
            empty[tile - hand_back] = max(arrived[(c, tile - hand_back)]
                                          for c in range(consumers))
    end = max(max(c_now), max(g[1] for g in groups.values()))
    return {"producer": producer, "consumers": steps, "landed": landed, "arrived": arrived,
            "empty": empty, "groups": groups, "end": end}


# ---- drawing helpers ---------------------------------------------------------------------------

GREY = "#57606a"
LIGHT = "#eaeef2"
# Okabe-Ito, colour-blind safe (plot.py's palette), and one grey: 8 colours for 8 chunks.
CHUNK_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
                 "#999999"]
# The phases of the timelines, one colour each across the two chapters.
PHASE_COLOURS = {"wait": "#d0d7de", "wgmma_wait": "#cf222e", "barrier": "#1f2328",
                 "issue": "#0072B2", "fragments": "#009E73", "wgmma_issue": "#CC79A7",
                 "pass": "#E69F00"}

def save_png(plt, fig, out, note):
    """A 256-colour PNG (a third of matplotlib's RGBA for a flat diagram), with the line that says
    what the figure was drawn from at the bottom left."""
    import io
    from PIL import Image
    fig.text(0.01, 0.008, note + f", drawn by {SCRIPT}", fontsize=7, color=GREY)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=110, format="png")
    plt.close(fig)
    buffer.seek(0)
    Image.open(buffer).convert("RGB").quantize(256).save(out, optimize=True)

class Timeline:
    """Bars on one axis of a timeline; a bar's label is the first of its labels that fits."""

    def __init__(self, fig, ax, start, end, fontsize=7.5):
        ax.set_xlim(start, end)
        width = fig.get_figwidth() * ax.get_position().width
        self.ax, self.fontsize, self.per_inch = ax, fontsize, (end - start) / width

    def fits(self, label, x0, x1):
        # A character of DejaVu Sans is about 0.6 em wide: 0.0075 inch per point of size.
        return (len(label) + 1) * 0.0075 * self.fontsize * self.per_inch < x1 - x0

    def bar(self, row, x0, x1, labels=(), low=0.18, high=0.82, **style):
        """A bar with the first of `labels` that fits ("" fits anywhere: no label)."""
        from matplotlib.patches import Rectangle
        if x1 <= x0:
            return
        self.ax.add_patch(Rectangle((x0, row + low), x1 - x0, high - low, **style))
        label = next((label for label in labels if self.fits(label, x0, x1)), "")
        if label:
            self.ax.text((x0 + x1) / 2, row + (low + high) / 2, label, ha="center", va="center",
                         fontsize=self.fontsize,
                         bbox=dict(facecolor="white", edgecolor="none", pad=0.3, alpha=0.8))


# ---- 11_tma/figures/tma.png --------------------------------------------------------------------

def draw_tma(plt, kernel, out):
    """One stage's copies: the boxes the tensor maps describe, the swizzle the copy engine writes,
    the chunks one warp's B^T loads read, zeros past the matrix."""
    from matplotlib.patches import Rectangle
    k = kernel["k"]
    bm, bn, bk, box_n, boxes = k["kBlockM"], k["kBlockN"], k["kBlockK"], k["kBoxN"], k["kBoxesB"]
    stage_bytes = k["kStageBytes"]
    fig = plt.figure(figsize=(14, 12.6))
    grid = fig.add_gridspec(3, 3, height_ratios=[1.25, 1.05, 0.62], width_ratios=[1.25, 1, 1],
                            hspace=0.5, wspace=0.3, left=0.07, right=0.98, top=0.9,
                            bottom=0.055)

    # (1) The boxes, to scale in elements, and the stage they fill.
    ax = fig.add_subplot(grid[0, :2])
    ax.set_aspect("equal")
    ax.axis("off")
    ax.add_patch(Rectangle((0, 0), bk, bm, facecolor="#0969da", alpha=0.25, edgecolor="black"))
    for r in range(0, bm, 8):
        ax.plot([0, bk], [r, r], color="white", lw=0.3)
    ax.text(bk / 2, -6, f"A box\n{bm} x {bk}", ha="center", va="bottom", fontsize=9)
    ax.text(bk + 6, bm / 2, f"rows block_row ..\nblock_row + {bm - 1}\nof A, k0 .. k0 + {bk - 1}"
            f"\n\n{bm} rows x 128 B\n= {bm * bk * 4 // 1024} KiB\n\ntma_load_2d(sA,\n  map_a,"
            "\n  block_row, k0)", va="center", fontsize=8.5)
    x_b = bk + 114
    for j in range(boxes):
        x = x_b + j * (box_n + 4)
        ax.add_patch(Rectangle((x, 0), box_n, bk, facecolor=CHUNK_COLOURS[j], alpha=0.45,
                               edgecolor="black"))
        ax.text(x + box_n / 2, bk / 2, f"box {j}\nn {box_n * j}-\n{box_n * (j + 1) - 1}",
                ha="center", va="center", fontsize=7.5)
    ax.text(x_b, -6, f"B: kBoxesB = {boxes} boxes of {bk} k x {box_n} columns\n(under the "
            "128-byte swizzle a box row is at most 128 B)", va="bottom", fontsize=9)
    ax.text(x_b, bk + 6, f"k0 .. k0 + {bk - 1} of B, {boxes} x {bk} rows x 128 B = "
            f"{boxes * bk * box_n * 4 // 1024} KiB;\nbox j: tma_load_2d(sB + j x "
            f"{bk * box_n}, map_b, k0, block_col + {box_n} j)", va="top", fontsize=8.5)
    # The stage in shared memory, in bytes (scaled to the width of B's drawing).
    y, width = 130, 300
    scale = width / stage_bytes
    parts = [("sA", bm * bk * 4)] + [(f"B{j}", bk * box_n * 4) for j in range(boxes)]
    x = x_b
    for j, (name, size) in enumerate(parts):
        colour = "#0969da" if j == 0 else CHUNK_COLOURS[j - 1]
        ax.add_patch(Rectangle((x, y), size * scale, 24, facecolor=colour, alpha=0.35 if j == 0
                               else 0.45, edgecolor="black"))
        ax.text(x + size * scale / 2, y + 12, f"{name}: {size // 1024} KiB" if j == 0 else name,
                ha="center", va="center", fontsize=8)
        x += size * scale
    ax.text(x_b, y - 6, "One stage in shared memory, 1024-byte aligned (where the swizzle\n"
            "pattern starts); the next stage follows:", va="bottom", fontsize=9)
    ax.text(x_b, y + 32, f"{stage_bytes} B = kStageBytes. Thread 0 issues\n"
            f"mbarrier.arrive.expect_tx(full[stage], {stage_bytes}), then the {1 + boxes} "
            "copies;\neach counts its bytes on full[stage] as they land (complete_tx).",
            va="top", fontsize=8.5)
    ax.text(x_b, y + 82, "A arrives already rounded to TF32: before the GEMM, a pass over A\n"
            "(tma_readable: copy_to_tma_rows<true>) writes the copy map_a reads,\nso no "
            "thread writes a stage: no rounding pass in shared memory, no\n"
            "fence.proxy.async. B is rounded in registers as its fragments load.", va="top",
            fontsize=8.5, bbox=dict(facecolor=LIGHT, edgecolor=GREY, boxstyle="round,pad=0.4"))
    ax.set_xlim(-4, x_b + width + 4)
    ax.set_ylim(bm + 4, -34)
    ax.set_anchor("W")
    ax.set_title(f"(1) What one stage's copies bring: the tensor maps' boxes (to scale),\n"
                 f"{1 + boxes} cp.async.bulk.tensor issued by one thread", fontsize=10,
                 loc="left")

    # (2) The swizzle, as the copy engine writes every 128-byte box row.
    ax = fig.add_subplot(grid[0, 2])
    for r in range(8):
        for p in range(8):
            c = swizzled(r, p)  # position p holds chunk p ^ r: the pattern is its own inverse
            ax.add_patch(Rectangle((p, r), 1, 1, facecolor=CHUNK_COLOURS[c], alpha=0.75,
                                   edgecolor="white", lw=1.2))
            ax.text(p + 0.5, r + 0.5, f"c{c}", ha="center", va="center", fontsize=8)
    ax.set_xlim(0, 8)
    ax.set_ylim(8, 0)
    ax.set_aspect("equal")
    ax.set_xticks([p + 0.5 for p in range(8)], [f"{p}\n{4 * p}-{4 * p + 3}" for p in range(8)],
                  fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(8)], [str(r) for r in range(8)], fontsize=7.5)
    ax.tick_params(length=0)
    ax.set_xlabel("position p in the 128-byte row, its banks", fontsize=8.5)
    ax.set_ylabel("box row r (mod 8)", fontsize=8.5)
    ax.set_title("(2) The 128-byte swizzle (A's box and B's):\n16-byte chunk c of row r lands "
                 "at p = c ^ (r % 8);\nchunk c holds k (A) or n (B) 4c .. 4c + 3", fontsize=10,
                 loc="left")

    # (3) One warp's B^T fragment loads in its box, k-step 0: box rows 0-7 against the banks.
    group, warp = 0, 0
    loads = warp_loads(kernel, group, warp)
    other = warp_loads(kernel, group, warp + 1)
    box = fragment_plan(kernel, group, warp, 0, 0)["lo"] // k["kSizeBoxB"]
    ax = fig.add_subplot(grid[1, :])
    cmap = [plt.get_cmap("Blues"), plt.get_cmap("Oranges")]
    for lane, load, row, bank, col in other:
        ax.add_patch(Rectangle((bank, row), 1, 1, facecolor=LIGHT, edgecolor="white", lw=0.8))
        ax.text(bank + 0.5, row + 0.5, f"w{warp + 1}\nn{col - box_n * box}", ha="center",
                va="center", fontsize=6.5, color=GREY)
    for lane, load, row, bank, col in loads:
        shade = cmap[lane // 16](0.3 + 0.45 * ((lane % 16) // 4) / 3)
        ax.add_patch(Rectangle((bank, row), 1, 1, facecolor=shade, edgecolor="white", lw=0.8))
        ax.text(bank + 0.5, row + 0.5, f"{lane}\nn{col - box_n * box}", ha="center",
                va="center", fontsize=6.5)
    for p in range(1, 8):
        ax.axvline(4 * p, color="black", lw=1.2)
    ax.axhline(4, color="black", lw=1.2)
    ax.set_xlim(0, BANKS)
    ax.set_ylim(8, 0)
    ax.set_aspect("equal")
    ax.set_xticks([b + 0.5 for b in range(BANKS)], [str(b) for b in range(BANKS)], fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(8)],
                  [f"k {r}: {'lo' if r < 4 else 'hi'}, t = {r % 4}" for r in range(8)],
                  fontsize=7.5)
    ax.tick_params(length=0)
    ax.set_xlabel("bank = float of the 128-byte box row (thick lines: 16-byte chunk positions)",
                  fontsize=8.5)
    ax.set_title(f"(3) Warp {warp} of warpgroup {group}, k-step 0: the floats its B^T fragment "
                 f"loads (LDS.64) read in box {box} (cells: lane, column n of the box; "
                 f"grey: warp {warp + 1}, the same box).\nmake_fragment_plan: "
                 f"{plan_statement(kernel, 'h')}, {plan_statement(kernel, 'q')}, "
                 f"{plan_statement(kernel, 'box')}.\nLane (g, t) reads n = 4q + 2 (g % 2) and "
                 "n + 1 in rows t (lo) and t + 4 (hi), where chunk q lies at q ^ t. Blue: lanes "
                 "0-15, orange: lanes 16-31;\neach half-warp's load (16 lanes x 8 bytes) finds "
                 "its 32 floats in 32 different banks.", fontsize=10, loc="left")

    # (4) Banks of half-warp 0's first load: the plan against the same columns in order.
    for col, (plan, name) in enumerate(((None, "the kernel's plan"),
                                        (in_order_plan, "the same 16 columns in order,\n"
                                         "chunks q = h + 4 (w % 2)"))):
        ax = fig.add_subplot(grid[2, col])
        hits = half_warp_banks(warp_loads(kernel, group, warp, plan=plan), 0, 0)
        ways = max(hits)
        ax.bar(range(BANKS), hits, color=["#2da44e" if h == 1 else "#cf222e" if h else LIGHT
                                          for h in hits])
        ax.set_ylim(0, 2.6)
        ax.set_yticks([0, 1, 2])
        ax.set_xticks(range(0, BANKS, 4))
        ax.tick_params(labelsize=7.5)
        ax.set_xlabel("bank", fontsize=8.5)
        ax.set_ylabel("words", fontsize=8.5)
        verdict = ("all 32 banks once:\nconflict-free" if ways == 1 else
                   f"{sum(1 for h in hits if h)} banks, {ways} words each:\n{ways}-way "
                   "conflict")
        ax.set_title(f"(4{'ab'[col]}) Lanes 0-15, load lo, {name}:\n{verdict}", fontsize=10,
                     loc="left")

    # (5) An edge tile: the copy engine writes zeros past the matrix.
    ax = fig.add_subplot(grid[2, 2])
    kk, nn = EDGE_EXAMPLE["K"], EDGE_EXAMPLE["N"]
    k0 = (kk - 1) // bk * bk
    j = min(boxes - 1, (nn - 1) % bn // box_n)
    n0 = j * box_n
    for r in range(bk):
        for c in range(box_n):
            inside = k0 + r < kk and n0 + c < nn
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor=CHUNK_COLOURS[j] if inside else
                                   "white", alpha=0.45 if inside else 1, edgecolor="none",
                                   hatch=None if inside else "////"))
    ax.add_patch(Rectangle((0, 0), box_n, bk, fill=False, edgecolor="black"))
    ax.set_xlim(0, box_n)
    ax.set_ylim(bk, 0)
    ax.set_aspect("equal")
    ax.set_xticks([0, nn - n0, box_n], [str(n0), str(nn), str(n0 + box_n)], fontsize=7.5)
    ax.set_yticks([0, kk - k0, bk], [str(k0), str(kk), str(k0 + bk)], fontsize=7.5)
    ax.set_xlabel("column n of B", fontsize=8.5)
    ax.set_ylabel("k", fontsize=8.5)
    ax.set_anchor("W")
    ax.set_title(f"(5) Past the matrix, e.g. K = {kk}, N = {nn}:\nbox {j} of the last K "
                 "tile. Hatched:\nk >= K or n >= N, written as zeros,\ncounted in the bytes "
                 "like the rest", fontsize=10, loc="left")

    fig.suptitle(f"11_tma, SGEMM_TILE {kernel['tile']}: the copy engine brings each stage as "
                 "swizzled boxes,\nand a warp's register operand is read from them with "
                 "every bank once per half-warp", fontsize=11.5, x=0.01, ha="left",
                 fontweight="bold")
    save_png(plt, fig, out, "11_tma default SGEMM_TILE, make_fragment_plan and common/tma.h's "
             "tensor maps")


# ---- 11_tma/figures/mbarrier.png ---------------------------------------------------------------

PARITY_COLOURS = ("#ddf4ff", "#fff1c2")  # a full mbarrier's phase in progress: parity 0, 1


def draw_mbarrier(plt, kernel, out):
    """The stages and their full mbarriers over time, the threads' steps, the tensor cores; the
    pass over A before the GEMM at the start."""
    from matplotlib.patches import FancyBboxPatch, Patch, Polygon
    from plot import COLOURS
    k = kernel["k"]
    stages, boxes, stage_bytes = k["kStages"], k["kBoxesB"], k["kStageBytes"]
    prologue, step = loop_ops(kernel)
    tiles = 2 * stages + 2  # every stage's full mbarrier completes phases of parity 0, 1, 0
    plan = tma_schedule(prologue, step, stages, tiles)
    copies, groups, phases = plan["copies"], plan["groups"], plan["phases"]
    ahead, in_flight = plan["ahead"], plan["in_flight"]
    before = TMA_DURATIONS["pass"]
    height = 5.4 + 0.75 * stages
    fig, (ax, ax_t) = plt.subplots(2, 1, figsize=(16, height), sharex=True,
                                   gridspec_kw=dict(height_ratios=[stages, 2.1]))
    fig.subplots_adjust(left=0.075, right=0.99, top=1 - 0.55 / height, bottom=2.05 / height,
                        hspace=0.1)
    top = Timeline(fig, ax, -before - 0.5, plan["end"] + 0.3)
    low = Timeline(fig, ax_t, -before - 0.5, plan["end"] + 0.3)

    # (0) Before the kernel: the pass over A that rounds it, a kernel of its own.
    ax.add_patch(FancyBboxPatch((-before - 0.3, 0.12), before - 0.1, stages - 0.24,
                                boxstyle="round,pad=0.05", facecolor=PHASE_COLOURS["pass"],
                                alpha=0.35, edgecolor="#1f2328"))
    ax.text(-before / 2 - 0.25, stages / 2, "before the\nGEMM, a\npass over A\nrounds it\n"
            "to TF32:\ncopy_to_\ntma_rows\n<true>", ha="center", va="center", fontsize=8)
    for axis in (ax, ax_t):
        axis.axvline(0, color="#1f2328", lw=1.2)
    ax_t.text(0.1, 1.93, "the GEMM kernel starts", fontsize=7.5, va="bottom")

    # (1) Each stage: its full mbarrier's phases (band), the copies in flight with their bytes
    # landing, the reads (fragments and wgmma) until the group that reads it is done.
    waits = {t: (s0, s1) for kind, t, s0, s1 in phases if kind == "wait"}
    for s in range(stages):
        start = 0.0
        for n, t in enumerate(range(s, tiles, stages)):
            landed = copies[t][2]
            top.bar(s, start, landed, [f"full[{s}]: phase {n} (parity {n % 2})",
                                       f"phase {n}, parity {n % 2}", f"parity {n % 2}"],
                    low=0.02, high=0.24, facecolor=PARITY_COLOURS[n % 2], edgecolor="#8c959f",
                    lw=0.6)
            ax.plot([landed], [s + 0.13], marker="D", color="#1f2328", ms=4.5)
            start = landed
        n = len(range(s, tiles, stages))
        top.bar(s, start, plan["end"] + 0.3, [f"phase {n} (parity {n % 2})", ""], low=0.02,
                high=0.24, facecolor=PARITY_COLOURS[n % 2], edgecolor="#8c959f", lw=0.6)
    for t, (s, issued, landed) in copies.items():
        c = COLOURS[t % len(COLOURS)]
        top.bar(s, issued, landed, [f"tile {t}: {1 + boxes} copies in flight", f"copies {t}",
                                    str(t)],
                low=0.32, high=0.94, facecolor="white", edgecolor=c, hatch="////", lw=1.1)
        ramp = issued + 0.45 * (landed - issued)  # schematic: the bytes land over the end
        ax.add_patch(Polygon([(ramp, s + 0.94), (landed, s + 0.94), (landed, s + 0.32)],
                             closed=True, facecolor=c, alpha=0.55, edgecolor="none"))
        top.bar(s, waits[t][1], groups[t][1], [f"read {t}: fragments, wgmma", f"read {t}",
                                               str(t)],
                low=0.32, high=0.94, facecolor=c, edgecolor="#1f2328", lw=0.8)
    ax.set_ylim(stages, 0)
    ax.set_yticks([s + 0.5 for s in range(stages)], [f"stage {s}" for s in range(stages)])
    ax.grid(False)
    ax.set_title(f"11_tma, SGEMM_TILE {kernel['tile']}: {stages} stages, each with a full "
                 f"mbarrier; copies issued {ahead} tiles ahead, wgmma.wait_group {in_flight}; "
                 "A rounded before the GEMM", loc="left", fontsize=11, fontweight="bold")

    # (2) Every thread of the block (they move in step, one __syncthreads per tile) and the
    # tensor cores. Thread 0 alone issues; the others go on to their fragments.
    names = {"issue": f"thread 0: arrive.expect_tx(full[s], {stage_bytes}), {1 + boxes} "
                      "copies", "wait": "wait(full[s], parity): the tile's bytes have landed",
             "wgmma_wait": "wgmma.wait_group: at most {n} group{s} in flight".format(
                 n=in_flight, s="" if in_flight == 1 else "s"),
             "barrier": "__syncthreads", "fragments": "B^T fragments (LDS.64, rounded), "
             "descriptors", "wgmma_issue": "wgmma.fence, {} wgmma, commit_group".format(
                 k["kKSteps"] * k["kRowBlocks"])}
    for kind, t, x0, x1 in phases:
        low.bar(0, x0, x1, [f"wait p{(t // stages) % 2}" if kind == "wait" else ""], low=0.2,
                high=0.8, facecolor=PHASE_COLOURS[kind], edgecolor="white", lw=0.4)
    for t, (x0, _) in waits.items():
        ax_t.text(x0, 0.16, f"tile {t}: p{(t // stages) % 2}", ha="left", va="bottom",
                  fontsize=7.5)
    for t, (g0, g1) in groups.items():
        low.bar(1, g0, g1, [f"wgmma group {t}", f"group {t}", str(t)],
                facecolor=COLOURS[t % len(COLOURS)], edgecolor="#1f2328", lw=0.8)
    for kind, t, x0, x1 in phases:
        if kind == "barrier":
            for axis in (ax, ax_t):
                axis.axvline(x1, color=GREY, lw=0.7, ls=":")
    ax_t.set_ylim(2, 0)
    ax_t.set_yticks([0.5, 1.5], ["all threads", "tensor cores"])
    ax_t.set_xticks([])
    ax_t.set_xlabel("time (schematic durations, not measured)", fontsize=8.5)
    ax_t.grid(False)
    handles = [Patch(facecolor=PHASE_COLOURS[kind], label=names[kind]) for kind in names]
    handles += [Patch(facecolor=PARITY_COLOURS[0], edgecolor="#8c959f",
                      label="full[s] phase in progress, parity 0"),
                Patch(facecolor=PARITY_COLOURS[1], edgecolor="#8c959f", label="... parity 1"),
                Patch(facecolor="white", edgecolor=GREY, hatch="////",
                      label="copies in flight; filled: bytes landing (complete_tx)")]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.07, 1.95 / height), ncol=3,
               fontsize=7.5, frameon=False)
    order = ", ".join({"issue": "thread 0 issues tile t + {a}", "prepare": "wait for tile t + {a}",
                       "multiply": "fragments and wgmma of tile t + {a}",
                       "wait": "wgmma.wait_group {a}", "barrier": "__syncthreads"}[op].format(
                           a=arg).replace(" + 0", "") for op, arg in step)
    fig.text(0.01, 0.22 / height, textwrap.fill(
        f"Tile t goes to stage t % {stages}. Thread 0 arrives on full[s] with the stage's "
        f"{stage_bytes} bytes (arrive.expect_tx), then issues its copies; the phase completes "
        "(diamond) when the copy engine has counted every byte, and the next phase's parity "
        "flips (0, 1, 0, ...). The n-th use of a stage waits for parity n % 2, so tile t waits "
        f"with parity (t / {stages}) % 2 (p0, p1 above the threads). Each step: {order}. The "
        "dotted lines are the __syncthreads after which a stage whose last group has retired "
        "may be refilled. A was rounded to TF32 before the kernel started, so a tile goes from "
        "its copies to the wgmma untouched. Durations are schematic, chosen to be legible; the "
        "order, the waits and the overlap are the kernel's.", 230), fontsize=8, va="bottom")
    save_png(plt, fig, out, "11_tma default SGEMM_TILE and main loop")


# ---- 12_warp_specialization/figures/roles.png ----------------------------------------------------

ROLE_COLOURS = {"producer": "#dbeafe", "consumers": "#d8f3e3", "engine": "#eaeef2",
                "barrier": "#ffffff"}


def ws_roles(kernel):
    """The nodes of roles.png's cycle, in the order a stage goes round: [(key, kind, text)], kind
    "producer" | "consumers" | "barrier", the edges [(from, to, label)] (into a barrier an
    arrival, out of one a wait), and the copy engine's text."""
    k, arrivals, back = kernel["k"], kernel["arrivals"], kernel["hand_back"]
    stages, consumers, boxes = k["kStages"], k["kConsumers"], k["kBoxesB"]
    launch, split = k["kLaunchRegisters"], kernel["split"]
    groups = f"warpgroups 1-{consumers}" if consumers > 1 else "warpgroup 1"
    producer = ("producer: warpgroup 0 (128 threads)\n"
                + (f"setmaxnreg.dec {k['kProducerRegisters']}: {launch} -> "
                   f"{k['kProducerRegisters']} registers each;\n" if split else "")
                + f"threads 1-127 return. Thread 0, per tile t:\nwait empty[s] (t >= {stages}), "
                f"arrive.expect_tx\n(full[s], {k['kStageBytes']} B), {1 + boxes} TMA copies: "
                f"A's box, B's {boxes}")
    consumer = (f"consumers: {groups}, {k['kBlockN'] // consumers} columns of C each\n"
                + (f"setmaxnreg.inc {k['kConsumerRegisters']}; " if split else "")
                + f"per tile t: wait full[s];\nB^T fragments (LDS.64), "
                f"{k['kKSteps'] * k['kRowBlocks']} wgmma, commit;\nwgmma.wait_group {back}, then "
                f"lane 0 of each warp\narrives on empty of tile t - {back}'s stage")
    nodes = [("P", "producer", producer),
             ("full", "barrier", f"full[s]\n{arrivals['full']} arrival\n+ {k['kStageBytes']} B"),
             ("C", "consumers", consumer),
             ("empty", "barrier", f"empty[s]\n{arrivals['empty']} arrivals\n(4 warps x "
                                  f"{consumers})")]
    edges = [("P", "full", "arrive.expect_tx"),
             ("full", "C", f"wait, parity (t / {stages}) % 2"),
             ("C", "empty", "arrive (x 4 per consumer)"),
             ("empty", "P", f"wait, parity (t / {stages} - 1) % 2")]
    engine = (f"TMA copy engine: A's box and B's {boxes},\nswizzled; counts {k['kStageBytes']} B."
              "\nA is TF32 already: a pass over A\nbefore the GEMM rounded it")
    return nodes, edges, engine


def register_split(kernel):
    """[(label, [(part, threads, registers each)])] of roles.png's register bars: setmaxnreg's
    split, and what every thread keeps without it (the source's kLaunchRegisters)."""
    k = kernel["k"]
    even = k["kLaunchRegisters"]
    split = [("producer", 128, k["kProducerRegisters"])]
    split += [(f"consumer {c}", 128, k["kConsumerRegisters"]) for c in range(k["kConsumers"])]
    plain = [("producer", 128, even)] + [(f"consumer {c}", 128, even)
                                         for c in range(k["kConsumers"])]
    return [(f"setmaxnreg.dec {k['kProducerRegisters']} / .inc {k['kConsumerRegisters']}", split),
            (f"at launch, and without setmaxnreg:\n65536 / {k['kThreads']} threads in steps of "
             f"8: {even} each", plain)]


def border(patch, x, y):
    """Where the line from the centre of a box (a FancyBboxPatch) towards (x, y) leaves it."""
    box = patch.get_bbox()
    pad = patch.get_boxstyle().pad
    cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
    hw, hh = (box.x1 - box.x0) / 2 + pad, (box.y1 - box.y0) / 2 + pad
    dx, dy = x - cx, y - cy
    scale = min(hw / abs(dx) if dx else float("inf"), hh / abs(dy) if dy else float("inf"))
    return cx + scale * dx, cy + scale * dy


def draw_roles(plt, kernel, out):
    """Who does what in chapter 12: the roles and the mbarriers between them (a cycle a stage
    goes round), the ring of stages, the register split."""
    import math
    from matplotlib.patches import FancyBboxPatch, Rectangle
    k, stages = kernel["k"], kernel["k"]["kStages"]
    nodes, edges, engine = ws_roles(kernel)
    fig = plt.figure(figsize=(14, 10.6))
    grid = fig.add_gridspec(1, 2, width_ratios=[2.05, 1], wspace=0.04, left=0.02, right=0.985,
                            top=0.845, bottom=0.3)

    # (1) The cycle: producer -> full -> consumers -> empty -> producer.
    ax = fig.add_subplot(grid[0, 0])
    ax.set_xlim(0, 12.3)
    ax.set_ylim(-0.4, 8.0)
    ax.axis("off")
    # Where the nodes sit, in the order a stage goes round: a loop, clockwise from the producer.
    places = [(2.45, 3.7), (6.15, 6.35), (9.7, 3.7), (6.15, 1.05)]
    middle = (6.15, 3.7)
    patches, centres = {}, {}
    for (key, kind, text), (x, y) in zip(nodes, places):
        lines = text.split("\n")
        w = 0.118 * max(len(line) for line in lines) if kind != "barrier" else 2.0
        h = 0.27 * len(lines) + 0.2
        x = min(max(x, w / 2 + 0.1), 12.2 - w / 2)
        patch = FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.06",
                               facecolor=ROLE_COLOURS[kind], edgecolor="#1f2328",
                               lw=1.6 if kind == "barrier" else 1.0)
        ax.add_patch(patch)
        first, rest = lines[0], "\n".join(lines[1:])
        ax.text(x, y + h / 2 - 0.14, first, ha="center", va="top", fontsize=8.5,
                fontweight="bold")
        ax.text(x, y + h / 2 - 0.42, rest, ha="center", va="top", fontsize=8,
                linespacing=1.25)
        patches[key], centres[key] = patch, (x, y)
    for a, b, label in edges:
        (x0, y0), (x1, y1) = centres[a], centres[b]
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops=dict(arrowstyle="-|>,head_length=0.6,head_width=0.3", lw=1.4,
                                    color="#1f2328", ls="-" if b in ("full", "empty")
                                    else "--", patchA=patches[a], patchB=patches[b],
                                    connectionstyle="arc3,rad=-0.12", shrinkA=4, shrinkB=4))
        # The label sits beside the middle of the arrow's visible part (between the two
        # boxes), away from the loop's centre unless that leaves the drawing.
        (ax0, ay0), (ax1, ay1) = border(patches[a], x1, y1), border(patches[b], x0, y0)
        mx, my = (ax0 + ax1) / 2, (ay0 + ay1) / 2
        length = math.hypot(x1 - x0, y1 - y0) or 1
        nx, ny = (y1 - y0) / length, (x0 - x1) / length
        if nx * (mx - middle[0]) + ny * (my - middle[1]) < 0:
            nx, ny = -nx, -ny
        half = 0.057 * len(label)
        for side in (1, -1):
            lx = mx + side * nx * (0.3 + half * abs(nx))
            ly = my + side * ny * 0.3
            if half < lx < 12.3 - half:
                break
        ax.text(lx, ly, label, ha="center", va="center", fontsize=8, style="italic",
                bbox=dict(facecolor="white", edgecolor="none", pad=0.5))
    ex, ey = centres["full"][0] + 3.9, centres["full"][1] + 0.35
    eh = 0.27 * len(engine.split("\n")) + 0.1
    engine_box = FancyBboxPatch((ex - 1.75, ey - eh / 2), 3.5, eh, boxstyle="round,pad=0.06",
                                facecolor=ROLE_COLOURS["engine"], edgecolor=GREY)
    ax.add_patch(engine_box)
    ax.text(ex, ey, engine, ha="center", va="center", fontsize=8)
    ax.annotate("", xy=centres["full"], xytext=(ex, ey),
                arrowprops=dict(arrowstyle="-|>", color=GREY, lw=1.2, patchA=engine_box,
                                patchB=patches["full"], shrinkA=3, shrinkB=4))
    ax.text((centres["full"][0] + ex) / 2 + 0.15, ey + eh / 2 + 0.15, "complete_tx (bytes)",
            ha="center", va="bottom", fontsize=8, style="italic", color=GREY)
    ax.set_title("(1) The roles and the mbarriers between them, for the stage s = t % "
                 f"{stages} of tile t.\nSolid arrow: arrives on the mbarrier; dashed: waits "
                 "for its phase; each mbarrier's phase completes\nwhen its arrivals (and bytes) "
                 "are all in, and the stage moves on round the cycle.", fontsize=10,
                 loc="left")

    # (2) The ring: stage s holds tiles s, s + kStages, ...; its two mbarriers.
    ax = fig.add_subplot(grid[0, 1])
    ax.set_xlim(0, 6)
    ax.set_ylim(0, 1.25 * stages + 1.2)
    ax.axis("off")
    barriers = ("full", "empty")
    size_a, size_b = k["kSizeA"] * 4, k["kBlockN"] * k["kBlockK"] * 4
    for s in range(stages):
        y = 1.25 * (stages - 1 - s) + 0.9
        ax.text(0.05, y + 0.72, f"stage {s}: tiles {s}, {s + stages}, {s + 2 * stages}, ...",
                fontsize=8.5, fontweight="bold")
        width = 4.6
        wa = width * size_a / (size_a + size_b)
        ax.add_patch(Rectangle((0.1, y + 0.25), wa, 0.35, facecolor="#0969da", alpha=0.3,
                               edgecolor="black"))
        ax.text(0.1 + wa / 2, y + 0.425, f"A {size_a // 1024} KiB", ha="center", va="center",
                fontsize=7.5)
        ax.add_patch(Rectangle((0.1 + wa, y + 0.25), width - wa, 0.35, facecolor="#E69F00",
                               alpha=0.4, edgecolor="black"))
        ax.text(0.1 + wa + (width - wa) / 2, y + 0.425, f"B {size_b // 1024} KiB", ha="center",
                va="center", fontsize=7.5)
        for i, name in enumerate(barriers):
            ax.add_patch(FancyBboxPatch((0.1 + 1.55 * i, y - 0.18), 1.35, 0.3,
                                        boxstyle="round,pad=0.03", facecolor="white",
                                        edgecolor="#1f2328", lw=1.2))
            ax.text(0.1 + 1.55 * i + 0.675, y - 0.03, f"{name}[{s}]", ha="center",
                    va="center", fontsize=7.5)
    ax.annotate("", xy=(5.25, 1.25 * (stages - 1) + 1.3), xytext=(5.25, 1.0),
                arrowprops=dict(arrowstyle="-|>", lw=1.2, color=GREY,
                                connectionstyle="arc3,rad=0.35"))
    ax.text(5.55, 0.625 * stages + 0.9, f"tile t + {stages}\nreuses\nstage\nt % {stages}",
            ha="center", va="center", fontsize=7.5, color=GREY)
    ax.set_title(f"(2) The ring: {stages} stages of {k['kStageBytes'] // 1024} KiB\n"
                 "(+1 KiB to align them to 1024 bytes)", fontsize=10, loc="left")

    # (3) Registers: the split setmaxnreg makes, and the even share without it.
    ax = fig.add_subplot(fig.add_gridspec(1, 1, left=0.2, right=0.985, top=0.2, bottom=0.065)[0])
    bars = register_split(kernel)
    colours = ["#0072B2", "#009E73", "#56B4E9", "#CC79A7"]
    for row, (label, parts) in enumerate(bars):
        x = 0
        for i, (part, threads, each) in enumerate(parts):
            total = threads * each
            ax.barh(row, total, left=x, color=colours[i % len(colours)], alpha=0.55,
                    edgecolor="black", height=0.6)
            narrow = total < 65536 * 0.12
            ax.text(x + total / 2, row, f"{part}\n{threads} x {each}\n= {total}" if narrow else
                    f"{part}: {threads} x {each} = {total}", ha="center", va="center",
                    fontsize=7 if narrow else 8)
            x += total
        if x < 65536:
            ax.barh(row, 65536 - x, left=x, color="white", edgecolor=GREY, hatch="//",
                    height=0.6)
    ax.set_yticks(range(len(bars)), [label for label, _ in bars], fontsize=8.5)
    ax.set_ylim(len(bars) - 0.4, -0.6)
    ax.set_xlim(0, 65536)
    ax.set_xticks(range(0, 65537, 8192))
    ax.tick_params(labelsize=8)
    ax.set_xlabel("registers of the SM (65536; hatched: left unused)", fontsize=8.5)
    m, n, _ = kernel["wgmma"]
    acc = k["kRowBlocks"] * m * n // 128
    frags = 2 * k["kKSteps"] * 4
    ax.set_title(f"(3) Registers per thread: a consumer thread holds {acc} accumulators "
                 f"({k['kRowBlocks']} row blocks x {m * n // 128}) and {frags} fragment "
                 f"registers;\nsetmaxnreg leaves the producer {k['kProducerRegisters']} and gives "
                 f"each consumer {k['kConsumerRegisters']}. The default build "
                 + ("uses it" if kernel["split"] else "keeps the even share")
                 + f" (SGEMM_REGISTER_SPLIT {k.get('SGEMM_REGISTER_SPLIT', '?')}).", fontsize=10,
                 loc="left")

    fig.suptitle(f"12_warp_specialization, SGEMM_TILE {kernel['tile']}: {k['kThreads']} "
                 f"threads; warpgroup 0 produces (its thread 0 issues the TMA copies), "
                 f"{k['kConsumers']} consumer\nwarpgroup{'s' if k['kConsumers'] > 1 else ''} "
                 "multiply; they meet only at mbarriers. A arrives rounded to TF32 (a pass "
                 "before the GEMM, as in 11)", fontsize=11.5, x=0.01, ha="left",
                 fontweight="bold")
    save_png(plt, fig, out, "12_warp_specialization default SGEMM_TILE and switches, mbarrier_init "
             "counts")


# ---- 12_warp_specialization/figures/pipeline.png ----------------------------------------------

def draw_ws_pipeline(plt, kernel, out):
    """Chapter 12's roles over time: the stages of the ring, then the producer, each consumer
    warpgroup and the tensor cores, meeting only at the mbarriers."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from plot import COLOURS
    k, back = kernel["k"], kernel["hand_back"]
    stages, consumers, boxes = k["kStages"], k["kConsumers"], k["kBoxesB"]
    tiles = 2 * stages + 2
    plan = ws_schedule(stages, consumers, tiles, back)
    producer, steps, groups, end = plan["producer"], plan["consumers"], plan["groups"], plan["end"]
    rows = ["producer"] + [f"consumer {c}" for c in range(consumers)] + ["tensor cores"]
    height = 4.6 + 0.62 * stages + 0.62 * len(rows)
    fig, (ax, ax_r) = plt.subplots(2, 1, figsize=(16, height), sharex=True,
                                   gridspec_kw=dict(height_ratios=[stages, len(rows)]))
    fig.subplots_adjust(left=0.1, right=0.99, top=1 - 0.55 / height, bottom=2.1 / height,
                        hspace=0.1)
    top = Timeline(fig, ax, -0.3, end + 0.3)
    low = Timeline(fig, ax_r, -0.3, end + 0.3)
    parity = {t: (t // stages) % 2 for t in range(tiles)}

    # (1) The ring: each tile's life in its stage, full and empty completing.
    markers = {"full": ("D", "#1f2328"), "empty": ("s", "#cf222e"), "arrive": ("v", "#cf222e")}
    for t in range(tiles):
        s, c = t % stages, COLOURS[t % len(COLOURS)]
        top.bar(s, producer[t]["issue"][0], plan["landed"][t],
                [f"tile {t}: copies in flight", f"copies {t}", str(t)],
                facecolor="white", edgecolor=c, hatch="////", lw=1.1)
        stop = plan["empty"].get(t, max(groups[(i, t)][1] for i in range(consumers)))
        top.bar(s, plan["landed"][t], stop, [f"read {t}: fragments, wgmma", f"read {t}", str(t)],
                facecolor=c, edgecolor="#1f2328", lw=0.8)
        events = [("full", plan["landed"][t])]
        if t in plan["empty"]:
            events.append(("empty", plan["empty"][t]))
        for name, x in events:
            ax.plot([x], [s + 0.1], marker=markers[name][0], color=markers[name][1], ms=5,
                    clip_on=False)
    ax.set_ylim(stages, 0)
    ax.set_yticks([s + 0.5 for s in range(stages)], [f"stage {s}" for s in range(stages)])
    ax.grid(False)
    ax.set_title(f"12_warp_specialization, SGEMM_TILE {kernel['tile']}: a ring of {stages} "
                 f"stages, one producer thread, {consumers} consumer warpgroups",
                 loc="left", fontsize=11, fontweight="bold")

    # (2) The roles, one row each, and the tensor cores.
    names = {"wait": "wait on an mbarrier (p: the parity)",
             "issue": f"thread 0: arrive.expect_tx(full[s], {k['kStageBytes']} B), {1 + boxes} "
                      "copies",
             "fragments": "B^T fragments (LDS.64, rounded), descriptors",
             "wgmma_issue": f"wgmma.fence, {k['kKSteps'] * k['kRowBlocks']} wgmma, commit_group",
             "wgmma_wait": f"wgmma.wait_group {back}"}
    for t, phases in enumerate(producer):
        for kind, (x0, x1) in phases.items():
            label = f"empty p{(t // stages - 1) % 2}" if kind == "wait" else ""
            low.bar(0, x0, x1, [label], facecolor=PHASE_COLOURS[kind], edgecolor="white",
                    lw=0.4)
    for c in range(consumers):
        for t, phases in enumerate(steps[c]):
            for kind, (x0, x1) in phases.items():
                label = {"wait": f"full p{parity[t]}", "fragments": str(t)}.get(kind, "")
                low.bar(1 + c, x0, x1, [label], facecolor=PHASE_COLOURS[kind],
                        edgecolor="white", lw=0.4)
        for (i, t), x in plan["arrived"].items():
            if i == c:
                ax_r.plot([x], [1 + c + 0.12], marker=markers["arrive"][0],
                          color=markers["arrive"][1], ms=5)
    for (c, t), (g0, g1) in groups.items():
        low.bar(len(rows) - 1, g0, g1, [f"c{c}: {t}", str(t)],
                facecolor=COLOURS[t % len(COLOURS)], edgecolor="#1f2328", lw=0.8,
                hatch="" if c == 0 else "..")
    ax_r.set_ylim(len(rows), 0)
    labels = ["producer\n(warpgroup 0,\nthread 0)"] + [f"consumer {c}\n(warpgroup {c + 1})"
                                                       for c in range(consumers)]
    ax_r.set_yticks([r + 0.5 for r in range(len(rows))], labels + ["tensor cores"])
    ax_r.set_xticks([])
    ax_r.set_xlabel("time (schematic durations, not measured)", fontsize=8.5)
    ax_r.grid(False)
    handles = [Patch(facecolor=PHASE_COLOURS[kind], label=names[kind]) for kind in names]
    handles += [Line2D([], [], ls="", marker=markers["arrive"][0], color=markers["arrive"][1],
                       label=f"lane 0 of each of the consumer's 4 warps arrives on empty of tile "
                             f"t - {back}"),
                Line2D([], [], ls="", marker=markers["full"][0], color=markers["full"][1],
                       label="full[s] completes (1 arrival + the bytes)"),
                Line2D([], [], ls="", marker=markers["empty"][0], color=markers["empty"][1],
                       label=f"empty[s] completes ({kernel['arrivals']['empty']} arrivals)"),
                Patch(facecolor="white", edgecolor=GREY, hatch="////", label="copies in flight")]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.09, 1.95 / height), ncol=3,
               fontsize=7.5, frameon=False)
    fig.text(0.01, 0.22 / height, textwrap.fill(
        f"Tile t uses stage t % {stages}; its n-th use waits with parity n % 2. The producer "
        f"issues the first {stages} tiles at once, then refills a stage once empty[s] has "
        f"completed: every consumer warp has arrived after wgmma.wait_group {back} showed that "
        "the tile's wgmma are done (the stage of the last "
        + ("tile" if back == 1 else f"{back} tiles") + " is never handed back). Consumer 1's "
        "groups are dotted "
        "on the tensor cores, which run the groups one after another. Nothing but the mbarriers "
        "orders the roles: in steady state the copies of the next tiles fly while the consumers "
        "multiply, and one consumer loads its fragments while the other's group runs. A was "
        "rounded to TF32 by a pass before the GEMM. Durations are schematic, chosen to be "
        "legible; the order, the waits and the overlap are the kernel's.", 230), fontsize=8,
        va="bottom")
    save_png(plt, fig, out, "12_warp_specialization default SGEMM_TILE and switches")


# ---- 13_persistent_clusters/figures/schedule.png ------------------------------------------------

# The problem schedule.png draws, and the resident clusters every chapter 13 figure assumes: the
# H100's 132 SMs in clusters of 2 (cudaOccupancyMaxActiveClusters reports 66 for the big tile;
# --clusters draws another count).
SCHEDULE_PROBLEM = (4096, 4096, 4096)
RESIDENT_CLUSTERS = H100_SMS // 2
# Rounds 0, 1, ...: Okabe-Ito (plot.py's palette), drawn half transparent so labels stay legible.
ROUND_COLOURS = ["#56B4E9", "#E69F00", "#009E73", "#CC79A7", "#F0E442", "#0072B2", "#D55E00",
                 "#999999"]


def mib(count_bytes):
    return f"{count_bytes / 2 ** 20:g} MiB"


def draw_schedule_panel(ax, launch, m, n, k_dim, title):
    """C's tiles, each pair of a unit outlined and labelled with its cluster, coloured by round;
    beside C, the tile rows of A and tile columns of B that round 0 reads."""
    from matplotlib.patches import Rectangle
    tile = launch["tile"]
    bm, bn, cluster = tile["kBlockM"], tile["kBlockN"], tile["kCluster"]
    tiles_m, tiles_n = ceil_div(m, bm), ceil_div(n, bn)
    strip, gap = 0.045 * max(m, n), 0.015 * max(m, n)
    rows, cols = round_reach(launch, n)
    first = ROUND_COLOURS[0]
    for r in range(tiles_m):  # A's tile rows, at the left
        ax.add_patch(Rectangle((-gap - strip, r * bm), strip, bm, facecolor=first if r in rows
                               else "white", alpha=0.8 if r in rows else 1, edgecolor=GREY,
                               lw=0.5))
    for c in range(tiles_n):  # B's tile columns, on top
        ax.add_patch(Rectangle((c * bn, -gap - strip), bn, strip, facecolor=first
                               if c in cols else "white", alpha=0.8 if c in cols else 1,
                               edgecolor=GREY, lw=0.5))
    ax.text(-gap - strip / 2, -gap - strip / 2, "B \u2192\nA \u2193", ha="center", va="center",
            fontsize=7.5, color=GREY)
    for _, c, r, tile_m, pair_n, _ in launch["walk"]:
        x0, y0 = pair_n * cluster * bn, tile_m * bm
        width = min(cluster * bn, n - x0)
        ax.add_patch(Rectangle((x0, y0), width, bm, facecolor=ROUND_COLOURS[r % 8], alpha=0.5,
                               edgecolor="none"))
        for rank in range(1, cluster):  # the tiles of the pair's blocks
            if rank * bn < width:
                ax.plot([x0 + rank * bn] * 2, [y0, y0 + bm], color=GREY, lw=0.5, ls=":")
        ax.add_patch(Rectangle((x0, y0), width, bm, facecolor="none", edgecolor="#1f2328",
                               lw=2.0 if r == 0 else 0.9))
        ax.text(x0 + width / 2, y0 + bm / 2, str(c), ha="center", va="center", fontsize=8,
                fontweight="bold" if r == 0 else "normal")
    ax.set_xlim(-gap - strip - 0.01 * n, n + 0.01 * n)
    ax.set_ylim(m + 0.01 * m, -gap - strip - 0.01 * m)
    ax.set_aspect("equal")
    ax.set_xticks([c * bn for c in range(0, tiles_n + 1, 4)])
    ax.set_yticks([r * bm for r in range(0, tiles_m + 1, 2)])
    ax.tick_params(labelsize=7, top=True, labeltop=True, bottom=False, labelbottom=False)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    read = launch["units"] and min(launch["launched"], launch["units"])
    ax.set_title(f"{title}\nround 0: {read} clusters read {len(rows)} of {tiles_m} tile rows "
                 f"of A ({mib(len(rows) * bm * k_dim * 4)}) and {len(cols)} of {tiles_n} tile "
                 f"columns of B ({mib(len(cols) * k_dim * bn * 4)})", fontsize=9.5, loc="left")
    return rows, cols


def draw_schedule(plt, kernel, clusters, out):
    """Which cluster computes which tile, when: the chapter's grouped order beside row after
    row, for SCHEDULE_PROBLEM on `clusters` resident clusters."""
    from matplotlib.patches import Patch
    m, n, k_dim = SCHEDULE_PROBLEM
    grouped = cluster_launch(kernel, m, n, k_dim, clusters)
    rows_first = cluster_launch(kernel, m, n, k_dim, clusters, group_rows=1)
    if grouped["splits"] > 1:
        raise UsageError(f"--clusters {clusters}: {m} x {n} x {k_dim} would be cut into K "
                         "slices; schedule.png draws one pass over K")
    tile, fields = grouped["tile"], grouped["fields"]
    bm, bn, cluster = tile["kBlockM"], tile["kBlockN"], tile["kCluster"]
    group = fields["group_rows"]
    fig, axes = plt.subplots(1, 2, figsize=(16, 10.2))
    fig.subplots_adjust(left=0.03, right=0.99, top=0.8, bottom=0.15, wspace=0.08)
    draw_schedule_panel(axes[0], grouped, m, n, k_dim,
                        f"(1) The chapter's order (SGEMM_GROUP_ROWS {group}): groups of {group} "
                        "tile rows, pair column after pair column")
    draw_schedule_panel(axes[1], rows_first, m, n, k_dim,
                        "(2) Row after row (SGEMM_GROUP_ROWS 1)")
    units, launched, rounds = grouped["units"], grouped["launched"], grouped["rounds"]
    handles = [Patch(facecolor=ROUND_COLOURS[r % 8], alpha=0.5, edgecolor="#1f2328",
                     lw=2.0 if r == 0 else 0.9,
                     label=f"round {r}: units {r * launched}-{min(units, (r + 1) * launched) - 1}")
               for r in range(min(rounds, 8))]
    fig.legend(handles=handles, loc="lower center", ncol=min(rounds, 8), fontsize=8.5,
               frameon=False, bbox_to_anchor=(0.5, 0.105))
    per_unit = bm * k_dim * 4 + cluster * k_dim * bn * 4
    fig.suptitle(f"13_persistent_clusters: which cluster computes which tile, when. C = {m} x {n} "
                 f"(K = {k_dim}) in {ceil_div(m, bm)} x {ceil_div(n, bn)} tiles of {bm} x {bn}; "
                 f"a unit is {cluster} tiles side by side (one\ncluster: rank 0 left, rank 1 "
                 f"right, dotted between them), {units} units on {launched} resident clusters "
                 f"(assumed: {H100_SMS} SMs / {cluster}) in {rounds} rounds. Cluster c takes "
                 f"units c, c + {launched}, ...:\nthe label is the cluster, the colour the "
                 "round (the unit's place in its cluster's list)", fontsize=11.5, x=0.01,
                 ha="left", fontweight="bold")
    fig.text(0.01, 0.03, textwrap.fill(
        "Beside each C, filled: the tile rows of A (left) and tile columns of B (top) that "
        f"round 0's units read over the whole K. Each unit copies {mib(per_unit)} from L2 "
        f"({bm} rows of A once for both blocks, by multicast, and {cluster} x {bn} columns of "
        f"B), so round 0 copies {mib(per_unit * min(launched, units))}; the fewer distinct rows "
        "and columns among them, the more of it the clusters running at once share in L2 "
        "rather than fetch from DRAM. Round 0's units start together; later rounds drift "
        "apart, each cluster taking its next unit when its last one is done. The order is "
        "Schedule::unit's, run for every unit.", 200), fontsize=8.5, va="bottom")
    save_png(plt, fig, out, f"13_persistent_clusters default SGEMM_TILE and switches, "
             f"Schedule::unit, {clusters} resident clusters assumed")


# ---- 13_persistent_clusters/figures/multicast.png -----------------------------------------------

RANK_COLOURS = ("#0072B2", "#D55E00")  # rank 0, rank 1: who copies what, whose arrival


def draw_multicast(plt, kernel, out):
    """One stage of the ring in both blocks of a cluster: A's box in two shares, each copied by
    one block's producer into both blocks; each block's own B boxes; the full mbarrier counting
    the bytes, the empty one counting the consumer warps of both blocks."""
    from matplotlib.patches import FancyBboxPatch, Rectangle
    k = kernel["k"]
    bm, bn, bk, stages = k["kBlockM"], k["kBlockN"], k["kBlockK"], k["kStages"]
    share_rows, boxes, box_n = k["kBoxRowsA"], k["kBoxesB"], k["kBoxN"]
    cluster, consumers = k["kCluster"], k["kConsumers"]
    warps = 4 * consumers
    share = share_rows * bk * 4
    box_bytes = k["kSizeBoxB"] * 4
    stage_bytes, empty = k["kStageBytes"], kernel["arrivals"]["empty"]
    fig = plt.figure(figsize=(16, 11.2))
    ax = fig.add_axes([0.005, 0.1, 0.99, 0.8])
    ax.set_xlim(0, 16)
    ax.set_ylim(0, 10)
    ax.axis("off")
    # Where things sit (inches): the stage (A's shares, then B's boxes) spans x0 .. x0 + width
    # in both blocks; L2 lies between the blocks, each share of A under/over the same part of
    # both stages, each block's B boxes under/over the B part of its own.
    x0, width = 4.4, 6.6
    wa = width * share / stage_bytes
    wb = width - cluster * wa
    band = (4.45, 5.55)
    stage_y = {0: (6.25, 6.85), 1: (3.15, 3.75)}
    block_y = {0: (6.0, 9.9), 1: (0.1, 4.0)}
    boxes_y = {0: (7.25, 9.3), 1: (0.7, 2.75)}
    producer_x, full_w, empty_x = (0.35, 3.55), 3.3, 12.6

    def box(x, y, w, h, title, body, face, edge="#1f2328", lw=1.0):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.04", facecolor=face,
                                    edgecolor=edge, lw=lw))
        ax.text(x + 0.1, y + h - 0.1, title, ha="left", va="top", fontsize=8.5,
                fontweight="bold")
        ax.text(x + 0.1, y + h - 0.38, body, ha="left", va="top", fontsize=8, linespacing=1.3)

    def arrow(start, end, colour, label=None, lw=1.6, offset=(0, 0)):
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle="-|>,head_length=0.5,head_width=0.25", lw=lw,
                                    color=colour, shrinkA=1, shrinkB=1))
        if label:
            ax.text((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1],
                    label, ha="center", va="center", fontsize=7.5, style="italic",
                    color=colour)

    # L2: A's box in its shares, each block's B boxes.
    ax.text(0.3, band[1] + 0.2, f"L2: one K tile (k0 .. k0 + {bk - 1}) of the unit",
            fontsize=9, fontweight="bold", va="bottom")
    ax.text(0.3, band[1] - 0.05, textwrap.fill(
        f"A's box: {bm} rows x {bk}, which both blocks' tiles need, in {cluster} shares of "
        f"{share_rows} rows. B: {boxes} boxes of {bk} x {box_n} ({box_bytes // 1024} KiB each) "
        f"per block, its own {bn} columns, copied by its producer into its own stage only.",
        50), fontsize=8, va="top", linespacing=1.3)
    for rank in range(cluster):
        x = x0 + rank * wa
        ax.add_patch(Rectangle((x, band[0]), wa, band[1] - band[0], facecolor=RANK_COLOURS[rank],
                               alpha=0.25, edgecolor=RANK_COLOURS[rank], lw=1.5))
        ax.text(x + wa / 2, (band[0] + band[1]) / 2,
                f"A rows {rank * share_rows}-{(rank + 1) * share_rows - 1}\n{share // 1024} KiB, "
                f"copied by rank {rank}", ha="center", va="center", fontsize=8)
        for dest in range(cluster):  # the multicast: one read, a copy into each block
            up = dest == 0
            arrow((x + wa / 2, band[1] if up else band[0]),
                  (x + wa / 2, stage_y[dest][0] if up else stage_y[dest][1]), RANK_COLOURS[rank])
    ax.text(0.3, 4.15, f"Arrows up and down from a share of A: one TMA multicast (mask "
            f"{kernel['mask']:#b}),\nread from L2 once, written into both blocks' stage s",
            ha="left", va="bottom", fontsize=7.5, style="italic")
    bw = (wb - 0.1) / cluster
    for rank in range(cluster):
        x = x0 + cluster * wa + rank * (bw + 0.1)
        for j in range(boxes):
            ax.add_patch(Rectangle((x + j * bw / boxes, band[0] + 0.15), bw / boxes, 0.5,
                                   facecolor="#E69F00", alpha=0.35, edgecolor="black", lw=0.6))
        ax.text(x + bw / 2, band[0] + 0.8, f"rank {rank}'s B", ha="center", va="bottom",
                fontsize=7.5)
        up = rank == 0
        arrow((x + bw / 2, band[1] if up else band[0] + 0.15),
              (x + bw / 2, stage_y[rank][0] if up else stage_y[rank][1]), RANK_COLOURS[rank])

    for rank in range(cluster):
        colour, other = RANK_COLOURS[rank], 1 - rank
        y0, y1 = block_y[rank]
        ax.add_patch(FancyBboxPatch((0.15, y0), 15.7, y1 - y0, boxstyle="round,pad=0.02",
                                    facecolor="none", edgecolor=colour, lw=2.2))
        ax.text(0.3, y1 - 0.12 if rank == 0 else y0 + 0.12,
                f"block rank {rank} (one SM): C's tile in tile row tile_m, tile column "
                f"{cluster} pair_n + {rank} (columns ({cluster} pair_n + {rank}) x {bn} .. "
                f"+ {bn - 1})", ha="left", va="top" if rank == 0 else "bottom", fontsize=9.5,
                fontweight="bold", color=colour)
        # The stage: A's shares (each coloured by its copier), then this block's B boxes.
        sy0, sy1 = stage_y[rank]
        for r in range(cluster):
            ax.add_patch(Rectangle((x0 + r * wa, sy0), wa, sy1 - sy0, facecolor=RANK_COLOURS[r],
                                   alpha=0.25, edgecolor="black"))
            ax.text(x0 + r * wa + wa / 2, (sy0 + sy1) / 2, f"sA rows {r * share_rows}-"
                    f"{(r + 1) * share_rows - 1}", ha="center", va="center", fontsize=7.5)
        for j in range(boxes):
            ax.add_patch(Rectangle((x0 + cluster * wa + j * wb / boxes, sy0), wb / boxes,
                                   sy1 - sy0, facecolor="#E69F00", alpha=0.35,
                                   edgecolor="black"))
            ax.text(x0 + cluster * wa + (j + 0.5) * wb / boxes, (sy0 + sy1) / 2, f"B{j}",
                    ha="center", va="center", fontsize=7.5)
        ax.text(x0 - 0.1, (sy0 + sy1) / 2, f"stage s (of {stages}):\n{stage_bytes} B",
                ha="right", va="center", fontsize=8)
        by0, by1 = boxes_y[rank]
        h, mid = by1 - by0, (by0 + by1) / 2
        box(producer_x[0], by0, producer_x[1] - producer_x[0], h,
            "producer (warpgroup 0, thread 0)",
            f"per K tile, into stage s:\nwait empty[s] (after the first\n  pass round the ring)\n"
            f"arrive.expect_tx(full[s], {stage_bytes})\nA rows {rank * share_rows}-"
            f"{(rank + 1) * share_rows - 1}: multicast to\n  both blocks\n{boxes} B boxes: into "
            "this block", "#dbeafe", colour, 1.5)
        box(x0, by0, full_w, h, "full[s]",
            f"1 arrival: this block's producer's\n+ {stage_bytes} B landing (complete_tx):\n"
            + "".join(f"  {share} B  A rows {r * share_rows}-{(r + 1) * share_rows - 1} "
                      f"(rank {r})\n" for r in range(cluster))
            + f"  {boxes} x {box_bytes} B  its own B\n= {stage_bytes} B = kStageBytes",
            "white", lw=1.6)
        box(x0 + full_w + 0.2, by0, width - full_w - 0.2, h, "consumers",
            f"warpgroups 1-{consumers}, {warps} warps:\nwait full[s] (this block's),\nwgmma on "
            "the stage; then each\nwarp hands it back to both\nproducers: lane r arrives "
            "on\nrank r's empty[s] (mapa +\nremote mbarrier.arrive)", "#d8f3e3")
        box(empty_x, by0, 15.7 - empty_x, h, "empty[s]",
            f"{empty} arrivals per phase:\n4 warps x {consumers} consumers x {cluster} blocks:\n"
            f"{warps} from this block's warps,\n{warps} from rank {other}'s (remote).\nIts "
            f"producer waits for all {empty}:\nits multicast writes into the\nother block's "
            "stage s too", "white", lw=1.6)
        arrow((producer_x[1] + 0.06, mid), (x0 - 0.06, mid), colour, "arrive.\nexpect_tx",
              offset=(0, 0.3))
        arrow((x0 + full_w / 2, sy1 if rank == 0 else sy0),
              (x0 + full_w / 2, by0 if rank == 0 else by1), "#1f2328", "complete_tx",
              offset=(0.6, 0))
        arrow((x0 + width + 0.06, mid), (empty_x - 0.06, mid), colour, f"x {warps}",
              offset=(0, 0.2))
    # The other block's consumer warps arrive on this block's empty: remote arrivals.
    for rank in range(cluster):
        other = 1 - rank
        arrow((x0 + width - 0.2, boxes_y[rank][0] if rank == 0 else boxes_y[rank][1]),
              (empty_x + 1.2, boxes_y[other][1] if other == 1 else boxes_y[other][0]),
              RANK_COLOURS[rank])
    ax.text(empty_x + 1.45, (band[0] + band[1]) / 2, f"remote arrivals:\nx {warps} from each "
            "block's\nconsumer warps on the\nother block's empty[s]", ha="left", va="center",
            fontsize=7.5, style="italic")

    fig.suptitle(f"13_persistent_clusters, SGEMM_TILE {kernel['tile']}: one stage of the ring "
                 f"in the {cluster} blocks of a cluster. Their tiles lie side by side, so both "
                 f"need the same {bm} rows of A:\neach block's producer copies a share of "
                 f"{share_rows} rows into both blocks at once (TMA multicast), and its own B "
                 "boxes into its own stage", fontsize=11.5, x=0.01, ha="left",
                 fontweight="bold")
    fig.text(0.01, 0.025, textwrap.fill(
        f"Per K tile, a block's full[s] completes when its producer has arrived (arrive.expect_tx "
        f"of kStageBytes = {stage_bytes}) and {stage_bytes} bytes have landed, {share} of them "
        "copied by the other block. Its empty[s] completes when every consumer warp of the "
        f"cluster has arrived ({empty}): the other block's producer writes into this stage "
        "too, so a producer may refill stage s only once both blocks are done with it. L2 "
        f"gives out A's box once per pair: {cluster} x {share} B per K tile instead of "
        f"{cluster} x {cluster * share} B.", 210), fontsize=8.5, va="bottom")
    save_png(plt, fig, out, "13_persistent_clusters default SGEMM_TILE and switches, "
             "mbarrier_init counts, expect_tx bytes, multicast mask")


# ---- 13_persistent_clusters/figures/split_k.png -------------------------------------------------

# The small-C shapes split_k.png draws, (m, n, k): below one wave of big tiles the launcher's model
# picks the big tile with K slices for the first, the 64-row tile without slices for the second.
SPLIT_SHAPES_13 = ((1024, 1024, 65536), (1024, 1024, 1024))
PICKED = "#1a7f37"  # the frame of the tile the launcher picks


def split_panel(ax, launch, parts, m, n, k_dim, x_max, picked):
    """One block (SM) a row, its units as bars as long as the model's clocks (a tile x its K
    slice at the tile's rate), coloured by K slice; the busiest SM (plan_cost) dashed, then C's
    DRAM bytes hatched: plan_clocks' two terms."""
    tile, fields = launch["tile"], launch["fields"]
    bm, bn, cluster = tile["kBlockM"], tile["kBlockN"], tile["kCluster"]
    k_slice, splits, rate = launch["k_slice"], launch["splits"], parts["rate"]
    slots = launch["resident"] * cluster
    done = [0.0] * slots
    for _, c, _, _, pair_n, slice_ in launch["walk"]:
        depth = min(k_dim, (slice_ + 1) * k_slice) - slice_ * k_slice
        for rank in range(cluster):
            if (pair_n * cluster + rank) * bn >= n:
                continue  # a block whose tile lies past N multiplies nothing
            block = c * cluster + rank
            clocks = 2 * bm * bn * depth / rate
            ax.barh(block, clocks, left=done[block], height=0.8,
                    color=ROUND_COLOURS[slice_ % 8], alpha=0.75, lw=0)
            done[block] += clocks
    ax.axvline(parts["compute"], color="#1f2328", lw=0.9, ls="--")
    ax.axvspan(parts["compute"], parts["clocks"], ymin=0.25, facecolor=LIGHT, edgecolor=GREY,
               hatch="///", lw=0.5)
    spare = slots // 3  # room under the blocks for the model's sum
    ax.set_xlim(0, x_max)
    ax.xaxis.set_major_formatter("{x:,.0f}")
    ax.set_ylim(slots + spare, -0.5)
    ax.set_yticks(range(0, slots, 22))
    ax.tick_params(labelsize=7.5)
    ax.set_ylabel(f"block (one per SM, {slots})", fontsize=8.5)
    ax.set_xlabel("SM clocks, the launcher's model", fontsize=8.5)
    factor = 2 * splits + 1 if splits > 1 else 1
    ax.text(0.98, 0.03, f"plan_clocks: 2 x {parts['macs'] / 1e6:,.0f} M multiply-adds / "
            f"{rate:,.0f} FLOP per clock\n+ {factor} x {mib(m * n * 4)} of C / "
            f"{DRAM_BYTES_PER_CLOCK:,.0f} bytes per clock\n= {parts['compute']:,.0f} + "
            f"{parts['dram']:,.0f} = {parts['clocks']:,.0f} clocks"
            + ("\nthe least: the launcher's pick" if picked else ""),
            transform=ax.transAxes, ha="right", va="bottom", fontsize=8.5,
            fontweight="bold" if picked else "normal",
            bbox=dict(facecolor="white", edgecolor=PICKED if picked else GREY, pad=4))
    if picked:
        for side in ax.spines.values():
            side.set_edgecolor(PICKED)
            side.set_linewidth(2.5)
    rounds = launch["rounds"]
    ax.set_title(f"{launch['name']}, {bm} x {bn}, {'pairs' if cluster > 1 else 'unpaired'}: "
                 + (f"{splits} K slices of {k_slice}" if splits > 1 else "K not split")
                 + f"\n{launch['units']} units = {fields['tiles_m']} tile rows x "
                 f"{fields['pairs_n']} {'pair' if cluster > 1 else 'tile'} columns x {splits} "
                 f"slice{'s' if splits > 1 else ''} on {launch['launched']} of "
                 f"{launch['resident']} clusters, {rounds} round{'s' if rounds > 1 else ''}",
                 fontsize=9, loc="left", color=PICKED if picked else "#1f2328")


def split_k_plans(kernel, clusters):
    """For each of SPLIT_SHAPES_13: (the launcher's pick, why, [(the launch of each of
    MODEL_TILES, its plan_clocks)])."""
    split_k = bool(kernel["k"].get("SGEMM_SPLIT_K"))
    plans = []
    for m, n, k_dim in SPLIT_SHAPES_13:
        pick, why, _ = launcher_tile(kernel, m, n, k_dim, clusters)
        plans.append((pick, why, [(cluster_launch(kernel, m, n, k_dim, clusters, tile=name),
                                   plan_clocks(kernel, name, m, n, k_dim, clusters, split_k))
                                  for name in MODEL_TILES]))
    return plans


def model_text(kernel):
    model = kernel["model"]
    return (f"model {model['flop_per_clock']:g} FLOP and {model['shared_bytes_per_clock']:g} "
            f"shared-memory bytes per SM clock, DRAM {DRAM_BYTES_PER_CLOCK:.2f} bytes per SM "
            f"clock (H100: {H100_MEMORY_MHZ} MHz x {H100_BUS_BITS} bits, SMs at {H100_SM_MHZ} "
            "MHz)")


def draw_split_k(plt, kernel, clusters, out):
    """For each of SPLIT_SHAPES_13, the three tiles the launcher's model weighs, each with its K
    slices and units over the blocks, as long as the model says; the one it picks framed."""
    from matplotlib.patches import Patch
    tiles = kernel["tiles"]
    main, small, short = (tiles[t] for t in MODEL_TILES)
    plans = split_k_plans(kernel, clusters)
    fig, axes = plt.subplots(len(plans), len(MODEL_TILES),
                             figsize=(19, 6 * len(plans) + 2.2), squeeze=False)
    fig.subplots_adjust(left=0.04, right=0.99, top=0.86, bottom=0.16, hspace=0.55, wspace=0.12)
    most = 1
    for row, ((m, n, k_dim), (pick, why, launches)) in enumerate(zip(SPLIT_SHAPES_13, plans)):
        x_max = 1.03 * max(parts["clocks"] for _, parts in launches)
        for col, (launch, parts) in enumerate(launches):
            most = max(most, launch["splits"])
            split_panel(axes[row][col], launch, parts, m, n, k_dim, x_max,
                        launch["name"] == pick)
        top = axes[row][0].get_position().y1
        chosen = cluster_launch(kernel, m, n, k_dim, clusters)
        fig.text(0.01, top + 0.048, f"{m} x {n} x {k_dim}: {why} -> {pick}"
                 + (f", {chosen['splits']} K slices" if chosen["splits"] > 1 else
                    ", K not split"), fontsize=11, fontweight="bold", ha="left")
    handles = [Patch(facecolor=ROUND_COLOURS[s % 8], alpha=0.75, label=f"K slice {s}")
               for s in range(min(most, 8))]
    handles.append(Patch(facecolor=LIGHT, edgecolor=GREY, hatch="///",
                         label="C's bytes through DRAM"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8.5,
               frameon=False, bbox_to_anchor=(0.5, 0.105))
    model = kernel["model"]
    rates = ", ".join(f"{tile_rate(tiles[t], model):,.0f}" for t in MODEL_TILES)
    sizes = ", ".join(f"{tiles[t]['kBlockM']} x {tiles[t]['kBlockN']}" for t in MODEL_TILES)
    gbs = DRAM_BYTES_PER_CLOCK * H100_SM_MHZ / 1e3
    fig.suptitle(f"13_persistent_clusters: C too small to fill the GPU. Where the big tiles are "
                 f"fewer than the {H100_SMS} SMs, the launcher (with_tile) weighs three tiles, "
                 "each with its K slices (common/split_k.h),\nby its model of SM clocks "
                 f"(plan_clocks), and takes the least; {clusters} resident pairs assumed "
                 f"({H100_SMS} SMs: {2 * clusters} blocks of any of the tiles, paired or not)",
                 fontsize=11.5, x=0.01, ha="left", fontweight="bold")
    fig.text(0.01, 0.025, textwrap.fill(
        f"Before the model, with_tile's rules: M <= {short['kBlockM']}, or M <= "
        f"{small['kBlockM']} with N <= {main['kBlockN']}: the {short['kBlockM']}-row tile, "
        f"unpaired; N <= {main['kBlockN']}: the big tile, unpaired; M <= {small['kBlockM']}: the "
        f"{small['kBlockM']}-row tile; at least {H100_SMS} big tiles: the big tile. Each row of "
        "bars is a block (one SM), each bar one of its units (a tile x its K slice) as long as "
        "the model says: the unit's multiply-adds x 2 at the tile's rate, "
        f"{rates} FLOP per clock for the {sizes} tiles (the tensor cores' "
        f"{model['flop_per_clock']:g}, or less where shared memory, "
        f"{model['shared_bytes_per_clock']:g} bytes per clock, moves a K step's operands more "
        "slowly). Dashed: the busiest SM (sgemm::plan_cost); hatched: C's bytes through DRAM at "
        f"the H100's {gbs:,.2f} GB/s, C written once or, with K slices, each slice written and "
        "read back and C written ((2 x slices + 1) x M x N x 4 bytes). The model is the "
        "launcher's, from the data sheet: nothing here is measured. The slices' partial tiles "
        "are added by reduce_split_k_slices (not drawn). Drawn from a Python copy of with_tile, "
        "plan_clocks and common/split_k.h, held to the source, Schedule::unit and the "
        "launcher's own expressions.", 215), fontsize=8.5, va="bottom")
    save_png(plt, fig, out, f"13_persistent_clusters default SGEMM_TILE, switches and tiles "
             f"({', '.join(MODEL_TILES)}), {clusters} resident clusters assumed")


# ---- 14_3xtf32_hopper/figures/split.png --------------------------------------------------------

# Durations of split.png's timeline, in arbitrary units: schematic, chosen to be legible, not
# measured (README.md measures promotion's cost). Only the order and the waits are the kernel's.
SPLIT_DURATIONS = {
    "ready": 0.5,      # the wait on full (the pass) or split (the producer's warps)
    "fragments": 1.2,  # B^T's fragments loaded and split into big and small
    "issue": 0.1,      # one wgmma issued
    "commit": 0.15,    # wgmma.commit_group
    "wgmma": 0.45,     # one wgmma on the tensor cores
    "add": 1.6,        # promotion: 64 FP32 adds per row block
}
PRODUCT_COLOURS = {("small", "desc_big"): "#56B4E9", ("big", "desc_small"): "#009E73",
                   ("big", "desc_big"): "#0072B2"}
PRODUCT_NAMES = {("small", "desc_big"): "small B^T x big A", ("big", "desc_small"):
                 "big B^T x small A", ("big", "desc_big"): "big B^T x big A"}


def split_tiles(kernel):
    """The K tiles split.png's timeline draws: two promotions' worth, at least 3."""
    return max(3, 2 * kernel["k"]["kPromoteTiles"])


def split_schedule(kernel, tiles, d=None):
    """One consumer warpgroup over a unit of `tiles` K tiles, played out as the kernel orders it:
    per K tile the wait, B^T's fragments, kKSteps x kRowBlocks x the step lambda's wgmma (the
    source's scale-d expression evaluated for each), commit; then after's promote (evaluated
    for each kt): wgmma_wait<0> and the FP32 add, or wgmma_wait<1>. {"warpgroup": [(kind, x0,
    x1, kt)], "tensor": [(product, x0, x1, kt, scale_d)], "promoted": [kt], "end": x}."""
    d = dict(SPLIT_DURATIONS, **(d or {}))
    k = kernel["k"]
    wg, tensor, promoted = [], [], []
    t = tc_free = 0.0
    fresh, previous_end = True, None
    for kt in range(tiles):
        for kind in ("ready", "fragments"):
            wg.append((kind, t, t + d[kind], kt))
            t += d[kind]
        for s in range(k["kKSteps"]):
            for _ in range(k["kRowBlocks"]):
                for reg, part, scale in kernel["products"]:
                    wg.append(("issue", t, t + d["issue"], kt))
                    t += d["issue"]
                    try:
                        scale_d = evaluate(scale, dict(k, fresh=int(fresh), s=s)) if scale else 1
                    except Unknown as error:
                        raise UsageError(f"{kernel['source']}: cannot evaluate scale-d "
                                         f"({error})") from None
                    start = max(t, tc_free)
                    tc_free = start + d["wgmma"]
                    tensor.append(((reg, part), start, tc_free, kt, scale_d))
        wg.append(("commit", t, t + d["commit"], kt))
        t += d["commit"]
        if kernel["promote"](kt, tiles):
            end = max(t, tc_free)
            wg.append(("wait0", t, end, kt))
            wg.append(("add", end, end + d["add"], kt))
            t = end + d["add"]
            promoted.append(kt)
            fresh, previous_end = True, None
        else:
            end = max(t, previous_end) if previous_end is not None else t
            if end > t:
                wg.append(("wait1", t, end, kt))
            t = end
            fresh, previous_end = False, tc_free
    return {"warpgroup": wg, "tensor": tensor, "promoted": promoted, "end": max(t, tc_free)}


def draw_split(plt, kernel, out):
    """Left: one stage of the ring [A big | A small | B's boxes] and who writes each part, by the
    pass (N > the bound) or the producer's idle warps (N <= it). Right: one consumer warpgroup's
    K tiles: three wgmma per k-step into the partial sums, commit, promotion."""
    from matplotlib.patches import FancyBboxPatch, Rectangle
    k = kernel["k"]
    bm, bn, bk, stages = k["kBlockM"], k["kBlockN"], k["kBlockK"], k["kStages"]
    boxes, box_n, share_rows, cluster = k["kBoxesB"], k["kBoxN"], k["kBoxRowsA"], k["kCluster"]
    part_bytes, box_bytes, stage_bytes = k["kSizeA"] * 4, k["kSizeBoxB"] * 4, k["kStageBytes"]
    narrow, warps, expect = kernel["narrow"], kernel["splitting"], kernel["expect_tx"]

    def kib(count_bytes):
        return f"{count_bytes / 1024:g} KiB"

    fig = plt.figure(figsize=(17, 8.4))
    fig.suptitle(f"Chapter 14: 3xTF32 on the persistent clusters: one stage of the ring and "
                 f"one consumer warpgroup's K tiles (BM x BN x BK = {bm} x {bn} x {bk})",
                 fontsize=12, x=0.01, ha="left")
    ax = fig.add_axes([0.005, 0.08, 0.45, 0.84])
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 12)
    ax.axis("off")
    x0, width = 0.4, 9.2
    scale = width / stage_bytes
    xa, xs, xb = x0, x0 + part_bytes * scale, x0 + 2 * part_bytes * scale
    faces = {"big": "#cfe8ff", "small": "#d8f3e3", "raw": "#fff1c2", "B": LIGHT}

    def stage(y, big_face, big_label):
        h = 0.8
        cells = [(xa, part_bytes, big_face, big_label),
                 (xs, part_bytes, faces["small"], f"A small\n{bm} x {bk}, {kib(part_bytes)}")]
        cells += [(xb + j * box_bytes * scale, box_bytes, faces["B"], f"B box {j}\n{bk} x {box_n}")
                  for j in range(boxes)]
        for x, size, face, label in cells:
            ax.add_patch(Rectangle((x, y), size * scale, h, facecolor=face, edgecolor="#1f2328",
                                   lw=1.0))
            ax.text(x + size * scale / 2, y + h / 2, label, ha="center", va="center",
                    fontsize=7.5, linespacing=1.2)
        for offset in (0, part_bytes, 2 * part_bytes, stage_bytes):
            ax.text(x0 + offset * scale, y - 0.08, kib(offset) if offset else "0", ha="center",
                    va="top", fontsize=7, color=GREY)
        return y, y + h

    def arrow(start, end, colour, label=None, offset=(0.0, 0.0)):
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle="-|>,head_length=0.5,head_width=0.25", lw=1.5,
                                    color=colour, shrinkA=1, shrinkB=1))
        if label:
            ax.text((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1],
                    label, ha="left", va="center", fontsize=7.5, style="italic", color=colour)

    def source(x, y, w, text):
        ax.add_patch(FancyBboxPatch((x, y), w, 0.55, boxstyle="round,pad=0.03", facecolor="white",
                                    edgecolor=GREY, lw=0.8))
        ax.text(x + w / 2, y + 0.27, text, ha="center", va="center", fontsize=7.5)

    copy = "#0072B2"
    ax.text(0.1, 11.85, f"One stage of the ring ({stages} stages of {kib(stage_bytes)}, "
            "kStageBytes):\nA's big part, A's small part (the same swizzled layout), B's boxes",
            fontsize=9, fontweight="bold", va="top", linespacing=1.3)
    share = (f"each A part in {cluster} shares of {share_rows} rows, one per block of the pair, "
             "multicast into both" if share_rows * cluster == bm and cluster > 1 else "")
    # The pass: TMA brings both parts.
    ax.text(0.1, 10.85, f"N > {narrow}: the pass (split_to_tma_rows) wrote A's two parts before "
            "the GEMM", fontsize=8.5, fontweight="bold", va="top")
    low, high = stage(8.1, faces["big"], f"A big\n{bm} x {bk}, {kib(part_bytes)}")
    top = 9.75
    source(xa + 0.1, top, xs - xa - 0.2, "global: A big")
    source(xs + 0.1, top, xb - xs - 0.2, "global: A small")
    source(xb + 0.1, top, x0 + width - xb - 0.2, "global: B")
    for x in ((xa + xs) / 2, (xs + xb) / 2, (xb + x0 + width) / 2):
        arrow((x, top), (x, high), copy)
    ax.text((xa + xs) / 2 + 0.08, (top + high) / 2, "TMA", fontsize=7.5, style="italic",
            color=copy, va="center")
    ax.text(0.1, low - 0.45, textwrap.fill(
        f"The full mbarrier expects {expect['pass']} bytes (the whole stage) from thread 0's one "
        f"arrival; the consumers wait on full. {share.capitalize()}.", 95), fontsize=7.8,
        va="top", linespacing=1.3)
    # The producer's idle warps: TMA brings raw A into the big part, the warps split it there.
    ax.text(0.1, 5.9, f"N <= {narrow}: the producer's {warps} idle warps split A in shared memory",
            fontsize=8.5, fontweight="bold", va="top")
    low, high = stage(2.9, faces["raw"], f"raw A -> A big\n{bm} x {bk}, {kib(part_bytes)}")
    top = 4.55
    source(xa + 0.1, top, xs - xa - 0.2, "global: A (raw)")
    source(xb + 0.1, top, x0 + width - xb - 0.2, "global: B")
    arrow(((xa + xs) / 2, top), ((xa + xs) / 2, high), copy)
    arrow(((xb + x0 + width) / 2, top), ((xb + x0 + width) / 2, high), copy)
    ax.text((xa + xs) / 2 + 0.08, (top + high) / 2, "TMA", fontsize=7.5, style="italic",
            color=copy, va="center")
    split_colour = "#D55E00"
    ax.add_patch(FancyBboxPatch((xa + 0.1, 0.75), xs - xa + 1.2, 1.05, boxstyle="round,pad=0.03",
                                facecolor="#fde2d4", edgecolor=split_colour, lw=1.2))
    ax.text(xa + 0.2, 1.72, textwrap.fill(
        f"producer warps 1-{warps} (kSplittingWarps = {warps}): split_stage_a, "
        f"fence.proxy.async, lane 0 of each arrives on split ({kernel['arrivals']['split']} "
        "arrivals); the consumers wait on split", 52), fontsize=7.5, va="top", linespacing=1.25)
    arrow((xa + 0.6, 1.8), (xa + 0.6, low), split_colour)
    ax.text(xa + 0.7, 2.35, "big over raw A", fontsize=7.5, style="italic", color=split_colour,
            va="center")
    arrow((xs + 0.8, 1.8), (xs + 0.8, low), split_colour)
    ax.text(xs + 0.9, 2.35, "small beside it", fontsize=7.5, style="italic", color=split_colour,
            va="center")
    ax.text(xb + 0.2, 1.72, textwrap.fill(
        f"The full mbarrier expects {expect['producer']} bytes: no small part comes by TMA.",
        40), fontsize=7.5, va="top", linespacing=1.25)

    # Right: the timeline of one consumer warpgroup.
    tiles = split_tiles(kernel)
    plan = split_schedule(kernel, tiles)
    tl_ax = fig.add_axes([0.5, 0.4, 0.485, 0.46])
    timeline = Timeline(fig, tl_ax, 0, plan["end"] * 1.01, fontsize=7)
    tl_ax.set_ylim(2.1, -0.6)
    tl_ax.set_yticks([0.5, 1.5])
    tl_ax.set_yticklabels(["consumer\nwarpgroup", "tensor cores\n(its wgmma)"], fontsize=8.5)
    tl_ax.set_xticks([])
    for spine in ("top", "right"):
        tl_ax.spines[spine].set_visible(False)
    tl_ax.set_title(f"One consumer warpgroup over a unit of {tiles} K tiles: per K tile "
                    f"{k['kKSteps']} k-steps x {len(kernel['products'])} wgmma"
                    + (f" x {k['kRowBlocks']} row blocks" if k["kRowBlocks"] > 1 else "")
                    + " into the partial sums;\npromotion every "
                    + (f"{k['kPromoteTiles']} K tiles" if k["kPromoteTiles"] != 1 else "K tile")
                    + f" (kPromoteTiles = {k['kPromoteTiles']}) and at the unit's end",
                    fontsize=9, loc="left")
    styles = {"ready": (PHASE_COLOURS["wait"], ("wait full/split", "wait", "")),
              "fragments": (PHASE_COLOURS["fragments"], ("B^T: load, split", "B^T", "")),
              "issue": (PHASE_COLOURS["wgmma_issue"], ("",)),
              "commit": ("#1f2328", ("",)),
              "wait0": (PHASE_COLOURS["wgmma_wait"], ("wait<0>", "")),
              "wait1": ("#f4a3a8", ("wait<1>", "")),
              "add": ("#E69F00", ("acc += part (FP32)", "acc += part", "+", ""))}
    for kind, x0_, x1_, _ in plan["warpgroup"]:
        face, labels = styles[kind]
        timeline.bar(0, x0_, x1_, labels, facecolor=face, edgecolor="none")
    for product, x0_, x1_, kt, scale_d in plan["tensor"]:
        timeline.bar(1, x0_, x1_, ("d=0", "") if not scale_d else ("",),
                     facecolor=PRODUCT_COLOURS[product], edgecolor="white", lw=0.5,
                     hatch="//" if not scale_d else None)
    for kt in range(tiles):
        xs_ = [x for _, x, _, t in plan["warpgroup"] if t == kt]
        tl_ax.text(min(xs_), -0.15, f"K tile {kt} (stage {kt % stages})", fontsize=7.5,
                   va="bottom", color=GREY)
        tl_ax.axvline(min(xs_), color=GREY, lw=0.5, ls=":")
    legend = fig.add_axes([0.5, 0.13, 0.485, 0.2])
    legend.axis("off")
    legend.set_xlim(0, 10)
    legend.set_ylim(0, 5)
    entries = [(PRODUCT_COLOURS[p[:2]], None, f"wgmma: {PRODUCT_NAMES[p[:2]]}")
               for p in kernel["products"]]
    entries += [(PHASE_COLOURS["wait"], None, "wait on full (the pass) or split (the producer)"),
                (PRODUCT_COLOURS[kernel["products"][0][:2]], "//",
                 "scale-d = 0: starts the partial sums afresh"),
                (PHASE_COLOURS["wgmma_issue"], None, "issue one wgmma (B^T from registers, A "
                 "from shared memory)"), ("#1f2328", None, "wgmma.commit_group"),
                (PHASE_COLOURS["wgmma_wait"], None, "wgmma_wait<0>: every wgmma done"),
                ("#f4a3a8", None, "wgmma_wait<1>: the previous K tile's done"),
                ("#E69F00", None, "promotion: the partial sums join the FP32 totals")]
    for i, (face, hatch, text) in enumerate(entries):
        x, y = (0.1 if i < 6 else 5.1), 4.6 - (i % 6) * 0.85
        legend.add_patch(Rectangle((x, y - 0.3), 0.35, 0.6, facecolor=face, hatch=hatch,
                                   edgecolor="white"))
        legend.text(x + 0.5, y, text, fontsize=7.5, va="center")
    fig.text(0.5, 0.03, textwrap.fill(
        "Bar lengths are schematic, not measured; the order and the waits are the kernel's: the "
        "step lambda's three wgmma per k-step (the small products first; the first one's "
        f"scale-d is `{kernel['products'][0][2]}`), one commit per K tile, then after(): on a "
        "promoting K tile wgmma_wait<0> and the FP32 add (the tensor cores idle meanwhile), else "
        "wgmma_wait<1> and the previous K tile's stage handed back. After a promotion the next "
        "wgmma starts the partial sums with scale-d = 0 instead of zeroing 64 registers.", 125),
        fontsize=8, va="bottom")
    save_png(plt, fig, out, "14_3xtf32_hopper default SGEMM_TILE and switches (PairTile)")


def main(argv):
    parser = ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="write into OUT/<chapter>/ instead of <chapter>/figures/")
    parser.add_argument("--root", type=Path, default=REPO,
                        help="the tree whose chapter sources are read (default: this repository)")
    parser.add_argument("--clusters", type=int, default=RESIDENT_CLUSTERS,
                        help="clusters of 2 the GPU holds at once (and twice as many unpaired "
                        f"blocks), for chapter 13's figures (default {RESIDENT_CLUSTERS}: the "
                        f"H100's {H100_SMS} SMs; the committed figures use the default)")
    args = parser.parse_args(argv)
    if args.clusters < 1:
        parser.error("--clusters must be at least 1")
    plt = pyplot(SCRIPT)
    if plt is None:
        return EXIT_USAGE
    root = args.root
    try:
        tma, ws, cl = tma_kernel(root), ws_kernel(root), cluster_kernel(root)
        sp = split_kernel(root)
        signs = signatures(root, args.clusters)
        dirs = {}
        for chapter, _ in FIGURES:
            d = Path(args.out) / chapter if args.out else root / chapter / "figures"
            d.mkdir(parents=True, exist_ok=True)
            dirs[chapter] = d
    except (UsageError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    jobs = {FIGURES[0]: lambda p: draw_tma(plt, tma, p),
            FIGURES[1]: lambda p: draw_mbarrier(plt, tma, p),
            FIGURES[2]: lambda p: draw_roles(plt, ws, p),
            FIGURES[3]: lambda p: draw_ws_pipeline(plt, ws, p),
            FIGURES[4]: lambda p: draw_schedule(plt, cl, args.clusters, p),
            FIGURES[5]: lambda p: draw_multicast(plt, cl, p),
            FIGURES[6]: lambda p: draw_split_k(plt, cl, args.clusters, p),
            FIGURES[7]: lambda p: draw_split(plt, sp, p)}
    for (chapter, name), draw in jobs.items():
        path = dirs[chapter] / name
        try:
            draw(path)
            stamp(path, signs[(chapter, name)])
        except (UsageError, OSError) as error:
            print(f"error: {path.name}: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
