#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Chapter 07's last, partial round (07_any_shape/README.md, "The model"), drawn from the
launcher's own model.

The launcher predicts, for every tile and K split, the time of the busiest SM (predict_seconds in
07_any_shape/any_shape.cu). When that SM's blocks make more than one round, the model times the
last, partial round at its own occupancy. The figure shows that arithmetic on the README's two
examples: 777 x 333 x 16383 on the 64 x 128 tile with 20 K slices (a round of 4 and a round of 2)
against 10 slices (one round of 3), and 3840^3 on the plan the launcher takes there (more than two
rounds, the rule applied), beside what the model said, and picked, when it applied the rule only
within two rounds (SGEMM_PARTIAL_ROUND=2, the rule before the constants were measured).

What is read, never copied here: from 07_any_shape/any_shape.cu, the tiles (each `using <Alias> =
Tile<...>;`, Tile's constants evaluated as the compiler does, kMinBlocksPerSm included), the
fields and rows of kTileModels (shares, odd_rows_share among them) and kOccupancyRate, which tile
each blocks_per_sm[i] measures (device()), the model's constants (kFillK, kLaunchSeconds,
kDramShare, kL2Share, kKeepMargin, kSliceAlign, kMaxWorkspaceBytes, kMaxPaddedBytes) and the
SGEMM_ switch defaults; from common/split_k.h, kMaxSplits (plan_for tries every split count up to
it). From the results folder's shapes.json (the H100 run of the shape suite): the device the
launcher read there (SMs, FP32 lanes, clock, DRAM bandwidth, L2 size).
The model itself (predict_seconds, plan_for and their helpers, the split-K slices' size among
them) is copied below in Python, and held to the source: each copied function's
body must be, statement for statement, the one the copy was written from (MIRRORED); where it is
not, the script refuses with one line naming the function and the first statement that differs.
It is the only Python copy of the model: scripts/shapes.py (its plan column, --waves and the
sawtooth's prediction) and scripts/calibrate_07.py plan with it (read_model, device_of, predict,
plan_for, sm_rate).
Blocks per SM: the launcher asks cudaOccupancyMaxActiveBlocksPerMultiprocessor; the figure takes
the launch bounds' kMinBlocksPerSm, which is what the H100 reports because the compiled kernels use
the register budget those bounds leave (README.md, "Parameters and limits": every tile's blocks per
SM limited by registers), checked against the H100's shared memory and threads per SM.

Every figure carries what it was drawn from (a PNG text chunk, as figures.py's and
hopper_figures.py's do), so the host test sees a committed figure that no longer matches the
source or the device record (out_of_date()).

Usage: python3 scripts/rounds_figure.py [--root DIR] [--results FILE] [--out FILE] [--check]
  --root     the tree whose 07_any_shape/any_shape.cu is read (default: this repository)
  --results  shapes.json with the device record (default: ROOT/docs/results/
             nvidia-h100-80gb-hbm3/shapes.json)
  --out      where the PNG goes (default: ROOT/07_any_shape/figures/two_rounds.png)
  --check    draw nothing: exit 1 when the figure at --out is not what the source and the device
             record give now
Exit codes: 0 written (with --check: up to date), 1 (--check only) out of date, 2 bad usage (a
source or results file that cannot be read, a source the copy of the model no longer matches, an
--out that cannot be written, matplotlib missing).
"""

import argparse
import hashlib
import json
import math
import re
import sys
import textwrap
from pathlib import Path

from chapters import EXIT_PASS, EXIT_USAGE, EXIT_WRONG, REPO, ArgumentParser, pyplot
from figures import (SPLIT_HEADER, UsageError, read_max_splits, stamp, stamped,
                     strip_comments)
from hopper_figures import (Unknown, alias_struct, braced, evaluate, function_body, normalized,
                            struct_constants)

SCRIPT = "scripts/rounds_figure.py"
SOURCE = Path("07_any_shape") / "any_shape.cu"
RESULTS = Path("docs") / "results" / "nvidia-h100-80gb-hbm3" / "shapes.json"
FIGURE = Path("07_any_shape") / "figures" / "two_rounds.png"
# Bump when the drawing changes without its inputs: the stamp then tells the old figure apart.
DRAWING = 1

# The README's examples: a shape whose busiest SM holds two rounds, on the tile and the two K
# splits it compares, and a size of the sawtooth where it holds more.
EXAMPLE = (777, 333, 16383)
EXAMPLE_TILE = (64, 128)
EXAMPLE_SPLITS = (20, 10)
SAWTOOTH = (3840, 3840, 3840)
BETA = 0.0  # the suite's beta (the harness's default): C is not read by the split-K reduction

# The H100 (CUDA C++ Programming Guide, compute capability 9.0): shared memory per SM, the part
# of it the driver reserves per block, and resident threads per SM. Used only to check that the
# blocks the launch bounds ask for fit beside each other, with the source's kSmemBytes and
# kThreads.
H100_SHARED_PER_SM = 228 * 1024
H100_SHARED_RESERVED_PER_BLOCK = 1024
H100_THREADS_PER_SM = 2048

# The source's functions that the Python copy below mirrors, as normalized() writes their bodies
# (one space between words, none around punctuation, comments dropped). A source that says
# otherwise is refused: the copy (predict, plan_for, slice_of, padded_ld, padded_bytes,
# workspace_for, slice_floats) needs the same change first.
MIRRORED = (
    (SOURCE, "predict_seconds",
     "const TileModel&t=kTileModels[tile];"
     "const double blocks=static_cast<double>(ceil_div(p.m,t.block_m))*ceil_div(p.n,t.block_n)"
     "*splits;"
     "const double per_sm=std::ceil(blocks/d.sms);"
     "const double full=d.blocks_per_sm[tile];"
     "const double share=splits>1?t.split_peak_share:t.peak_share;"
     "const double rows=p.n%2==1&&!pad?t.odd_rows_share:1.0;"
     "const double column=ceil_div(p.n,t.block_n)>1?1.0"
     ":p.k%32==0?t.column_share:t.column_share_unaligned;"
     "const auto rate=[&](double resident){return d.fma_per_s_per_sm*share*rows*column*"
     "occupancy_rate(tile,static_cast<int>(std::min(resident,full)),d.blocks_per_sm[tile]);};"
     "const double block=t.block_m*t.block_n*(static_cast<double>(k_slice)+kFillK);"
     "const double rest=std::fmod(per_sm,full);"
     "double seconds=per_sm*block/rate(per_sm);"
     "if(rest>0&&per_sm>full&&"
     "(SGEMM_PARTIAL_ROUND==1||(SGEMM_PARTIAL_ROUND==2&&per_sm<=2*full))){"
     "seconds=(per_sm-rest)*block/rate(full)+rest*block/rate(rest);}"
     "if(splits>1)seconds+=split_k_seconds(p,d,splits);"
     "if(pad){const double bytes=4.0*p.k*(static_cast<double>(p.n)+padded_ld(p.n));"
     "seconds+=kLaunchSeconds+bytes/(d.dram_bytes_per_s*kDramShare);}"
     "return seconds;"),
    (SOURCE, "split_k_seconds",
     "const double elements=static_cast<double>(p.m)*p.n;"
     "const double bytes=4.0*elements*(splits+1.0+(p.beta!=0.0f?1.0:0.0));"
     "const bool in_l2=4.0*elements*splits<=d.l2_bytes;"
     "return kLaunchSeconds+bytes/(d.dram_bytes_per_s*(in_l2?kL2Share:kDramShare));"),
    (SOURCE, "plan_for",
     "const Device&d=device();"
     "if(SGEMM_FORCED_PLAN&&forced_plan().valid){const ForcedPlan&f=forced_plan();"
     "const int k_slice=slice_for(p,f.splits);const int splits=ceil_div(p.k,k_slice);"
     "if(f.tile<kNumTiles){return Plan{f.tile,splits,k_slice,f.pad==1,"
     "predict_seconds(p,d,f.tile,splits,k_slice,f.pad==1)};}"
     "if(is_thin(p)){Plan thin;thin.thin=thin_kind(p);"
     "thin.splits=splits;thin.k_slice=k_slice;thin.seconds=thin_seconds(p,d,thin.thin,splits);"
     "return thin;}}"
     "if(SGEMM_THIN&&is_thin(p))return thin_plan(p,d,workspace_available);"
     "Plan best;best.seconds=-1;"
     "static_assert(SGEMM_TILE_COUNT>=1&&SGEMM_TILE_COUNT<=kNumTiles,\"1 to kNumTiles tiles\");"
     "const bool can_pad=SGEMM_PADDED_B&&p.n%2==1&&padded_bytes(p)<=kMaxPaddedBytes;"
     "for(const bool pad:{false,true}){if(pad&&!can_pad)break;"
     "for(int tile=0;tile<SGEMM_TILE_COUNT;++tile){int last_splits=0;"
     "for(int wanted=1;wanted<=sgemm::kMaxSplits;++wanted){"
     "const int k_slice=slice_for(p,wanted);"
     "const int splits=ceil_div(p.k,k_slice);"
     "if(splits==last_splits)continue;last_splits=splits;"
     "if((splits>1&&!SGEMM_SPLIT_K)||workspace_for(p,splits,false)>kMaxWorkspaceBytes||"
     "workspace_for(p,splits,pad)>workspace_available){break;}"
     "const double seconds=predict_seconds(p,d,tile,splits,k_slice,pad);"
     "if(best.seconds<0||seconds<best.seconds){best=Plan{tile,splits,k_slice,pad,seconds};}}}}"
     "const Plan base{0,1,p.k,false,predict_seconds(p,d,0,1,p.k,false)};"
     "return best.seconds*(1.0+kKeepMargin)>base.seconds?base:best;"),
    (SOURCE, "is_thin", "return p.m<=kThinMax||p.n<=(SGEMM_WIDE_FEW_COLS?kFewColsMax:kThinMax);"),
    (SOURCE, "thin_kind", "return p.m<=kThinMax&&p.m<=p.n?1:2;"),
    (SOURCE, "occupancy_rate",
     "const double rate=r<full&&r<kMaxBlocksPerSm?kOccupancyRate[tile][r-1]:0.0;"
     "return rate>0.0?rate:1.0;"),
    (SOURCE, "slice_for",
     "const int64_t aligned=int64_t{ceil_div(ceil_div(p.k,wanted),kSliceAlign)}*kSliceAlign;"
     "return static_cast<int>(std::min<int64_t>(aligned,p.k));"),
    (SOURCE, "padded_ld", "return(n+3)/4*4;"),
    (SOURCE, "padded_bytes", "return static_cast<size_t>(p.k)*padded_ld(p.n)*sizeof(float);"),
    (SOURCE, "workspace_for",
     "return(splits>1?static_cast<size_t>(splits)*slice_floats(p)*sizeof(float):0)+"
     "(pad?padded_bytes(p):0);"),
    (SOURCE, "slice_floats", "return static_cast<int64_t>(p.m)*padded_ld(p.n);"),
    # The harness allocates what workspace_bytes asks for, so plan_for has all it wants.
    (SOURCE, "workspace_bytes",
     "const Plan plan=plan_for(p,SIZE_MAX);return workspace_for(p,plan.splits,plan.pad);"),
    # blocks_per_sm: the occupancy of the unsplit kernel, whose launch bounds CHECKED ask for
    # kMinBlocksPerSm blocks.
    (SOURCE, "prepare_tile",
     "allow_shared_memory<T,4>();allow_shared_memory<T,2>();"
     "allow_shared_memory<TileFor<T,1>,1>();"
     "allow_shared_memory<T,4,1>();int blocks=0;"
     "CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks,sgemm_any_shape<T,4,4>,"
     "T::kThreads,T::kSmemBytes));return blocks>0?blocks:1;"),
)
# Statements the source must hold elsewhere: what device() reads (the device record's fields are
# the same quantities: fp32_lanes_per_sm, sm_clock_mhz, dram_bandwidth_gbs from the same
# dram_bandwidth_bytes, l2_bytes), and the launch bounds that give kMinBlocksPerSm blocks per SM.
CHECKED = (
    ("device", "CUDA_CHECK(cudaDeviceGetAttribute(&d.sms,cudaDevAttrMultiProcessorCount,index));"),
    ("device", "d.fma_per_s_per_sm=(lanes>0?lanes:128)*sm_khz*1e3;"),
    ("device", "d.dram_bytes_per_s=sgemm::dram_bandwidth_bytes(mem_khz*1e3,bus_bits);"),
    ("device", "d.l2_bytes=l2;"),
    (None, "__global__ void __launch_bounds__(T::kThreads,T::kMinBlocksPerSm)sgemm_any_shape("),
)
CONSTANTS = ("kNumTiles", "kMaxBlocksPerSm", "kFillK", "kLaunchSeconds", "kDramShare", "kL2Share",
             "kKeepMargin", "kSliceAlign", "kMaxWorkspaceBytes", "kMaxPaddedBytes", "kThinMax",
             "kFewColsMax")
SWITCHES = ("SGEMM_TILE_COUNT", "SGEMM_SPLIT_K", "SGEMM_PADDED_B", "SGEMM_THIN", "SGEMM_WIDE_FEW_COLS",
            "SGEMM_FORCED_PLAN", "SGEMM_PARTIAL_ROUND")
DEVICE_FIELDS = ("sms", "fp32_lanes_per_sm", "sm_clock_mhz", "dram_bandwidth_gbs", "l2_bytes")


# ---- reading the source ------------------------------------------------------------------------

def read_text(path):
    try:
        return strip_comments(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read: {error.strerror or error}") from None


def statements(code):
    """A normalized body cut after each `;`, `{` and `}`: what check_mirrored compares."""
    return re.findall(r"[^;{}]*[;{}]", code)


def check_mirrored(texts):
    """Raises UsageError (one line) at the first function of MIRRORED whose body is not the one
    the copy was written from, naming the first statement that differs."""
    for path, name, want in MIRRORED:
        got = normalized(function_body(texts[path], name, path))
        if got == want:
            continue
        ours, theirs = statements(want), statements(got)
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                  min(len(ours), len(theirs)))
        said = theirs[at] if at < len(theirs) else "(the body ends)"
        raise UsageError(f"{path}: {name} now says `{said}` where {SCRIPT}'s copy of the "
                         f"launcher's model says `{ours[at] if at < len(ours) else '(the end)'}`"
                         ": the copy needs the same change")


def number(text, what):
    """A C++ floating literal (`2e-6`, `0.95`) as a float; anything else is refused."""
    text = text.strip()
    if not re.fullmatch(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", text):
        raise UsageError(f"{SOURCE}: {what} is `{text}`, not a number the figure can read")
    return float(text)


def integer(text, names, what):
    """An integer constant expression (size_t{256} << 20, LargeTile::kThreads / 32)."""
    code = re.sub(r"\bsize_t\s*\{\s*(\d+)\s*\}", r"\1", text)
    code = re.sub(r"\b(\w+)::(k\w+)\b", r"\1__\2", code)
    try:
        return evaluate(code, names)
    except Unknown as error:
        raise UsageError(f"{SOURCE}: cannot evaluate {what} (`{text.strip()}`): {error}") from None


def read_constants(text, split_header):
    """{name: value} of CONSTANTS (the namespace's `constexpr int|double|size_t kName = ...;`) and
    kMaxSplits (split_header's `inline constexpr int kMaxSplits = ...;`)."""
    found = {name: (kind, value) for kind, name, value in re.findall(
        r"^constexpr\s+(int|double|size_t)\s+(k\w+)\s*=\s*([^;]+);", text, flags=re.M)}
    missing = [name for name in CONSTANTS if name not in found]
    if missing:
        raise UsageError(f"{SOURCE}: no `constexpr ... {missing[0]} = ...;` (the launcher's "
                         "model)")
    constants = {}
    for name in CONSTANTS:
        kind, value = found[name]
        constants[name] = (number(value, name) if kind == "double" else
                           integer(value, constants, name))
    constants["kMaxSplits"] = read_max_splits(split_header)
    return constants


def read_tiles(text, defines):
    """The model's tiles in kTileModels' order: [{alias, the TileModel fields, threads, smem,
    blocks_per_sm}]. Each row must be the tile device() measures blocks_per_sm[i] of."""
    struct = re.search(r"\bstruct\s+TileModel\s*\{", text)
    if not struct:
        raise UsageError(f"{SOURCE}: no struct TileModel (the launcher's model)")
    fields = [(kind, name.strip()) for kind, names in
              re.findall(r"\b(int|double)\s+([^;()]+);", braced(text, struct.start())[0])
              for name in names.split(",")]
    table = re.search(r"\bTileModel\s+kTileModels\s*\[[^\]]*\]\s*=\s*\{", text)
    if not table:
        raise UsageError(f"{SOURCE}: no `constexpr TileModel kTileModels[...] = {{...}};`")
    rows = re.findall(r"\{([^{}]*)\}", braced(text, table.end() - 1)[0])
    measured = re.findall(r"\bd\.blocks_per_sm\s*\[\s*(\d+)\s*\]\s*=\s*prepare_tile\s*<\s*(\w+)"
                          r"\s*>\s*\(\s*\)\s*;", function_body(text, "device", SOURCE))
    aliases = {int(i): alias for i, alias in measured}
    if sorted(aliases) != list(range(len(rows))):
        raise UsageError(f"{SOURCE}: device() sets blocks_per_sm[{', '.join(map(str, aliases))}]"
                         f" by prepare_tile<Tile>(), kTileModels has {len(rows)} rows")
    names, tiles = {}, []
    for alias in aliases.values():
        params, match, values = alias_struct(text, SOURCE, defines, alias)
        k = struct_constants(match, params, values, {}, SOURCE, alias)
        names.update({f"{alias}__{c}": v for c, v in k.items()})
    for i, row in enumerate(rows):
        values = [v.strip() for v in row.split(",")]
        if len(values) != len(fields):
            raise UsageError(f"{SOURCE}: kTileModels[{i}] has {len(values)} values, TileModel "
                             f"{len(fields)} fields")
        alias = aliases[i]
        if not all(alias + "::" in v for (kind, _), v in zip(fields, values) if kind == "int"):
            raise UsageError(f"{SOURCE}: kTileModels[{i}] is not {alias}, the tile of "
                             f"blocks_per_sm[{i}] (device())")
        tile = {"alias": alias}
        for (kind, name), value in zip(fields, values):
            tile[name] = (integer(value, names, f"kTileModels[{i}].{name}") if kind == "int"
                          else number(value, f"kTileModels[{i}].{name}"))
        for field in ("block_m", "block_n", "peak_share", "split_peak_share", "column_share",
                      "column_share_unaligned", "odd_rows_share"):
            if field not in tile:
                raise UsageError(f"{SOURCE}: TileModel has no field {field}")
        tile["threads"] = names[f"{alias}__kThreads"]
        tile["smem"] = names[f"{alias}__kSmemBytes"]
        tile["blocks_per_sm"] = names[f"{alias}__kMinBlocksPerSm"]
        if (names[f"{alias}__kBlockM"], names[f"{alias}__kBlockN"]) != (tile["block_m"],
                                                                        tile["block_n"]):
            raise UsageError(f"{SOURCE}: kTileModels[{i}] is {tile['block_m']} x "
                             f"{tile['block_n']}, {alias} is {names[f'{alias}__kBlockM']} x "
                             f"{names[f'{alias}__kBlockN']}")
        fits = min(H100_THREADS_PER_SM // tile["threads"], H100_SHARED_PER_SM //
                   (tile["smem"] + H100_SHARED_RESERVED_PER_BLOCK))
        if fits < tile["blocks_per_sm"]:
            raise UsageError(f"{SOURCE}: {alias}'s launch bounds ask for "
                             f"{tile['blocks_per_sm']} blocks per SM, the H100 holds {fits} "
                             f"({tile['smem']} bytes of shared memory, {tile['threads']} threads "
                             "each): the occupancy the figure assumes is wrong")
        tiles.append(tile)
    return tiles


def read_model(root):
    """What the figure draws from root's sources: {"tiles", "constants", "switches", "text"}.
    Raises UsageError (one line) where a source cannot be read or says what the copy does not."""
    root = Path(root)
    texts = {path: read_text(root / path) for path in (SOURCE, SPLIT_HEADER)}
    text = texts[SOURCE]
    check_mirrored(texts)
    for function, statement in CHECKED:
        code = normalized(function_body(text, function, SOURCE) if function else text)
        if statement not in code:
            raise UsageError(f"{SOURCE}: {function or 'the source'} no longer says "
                             f"`{statement}`, which the figure's copy of the model assumes")
    defines = dict(re.findall(r"^\s*#define\s+(SGEMM_\w+)\s+(\d+)\s*$", text, flags=re.M))
    missing = [s for s in SWITCHES if s not in defines]
    if missing:
        raise UsageError(f"{SOURCE}: no `#define {missing[0]} <number>` (its default)")
    switches = {s: int(defines[s]) for s in SWITCHES}
    if switches["SGEMM_PARTIAL_ROUND"] != 1:
        raise UsageError(f"{SOURCE}: SGEMM_PARTIAL_ROUND defaults to "
                         f"{switches['SGEMM_PARTIAL_ROUND']}: the figure's copy is the model's "
                         "rule, 1")
    if switches["SGEMM_FORCED_PLAN"]:
        raise UsageError(f"{SOURCE}: SGEMM_FORCED_PLAN defaults to 1: the chapter's plans are "
                         "the model's, never forced")
    constants = read_constants(text, texts[SPLIT_HEADER])
    tiles = read_tiles(text, defines)
    table = re.search(r"^constexpr\s+double\s+kOccupancyRate\s*\[[^\]]*\]\s*\[[^\]]*\]\s*=\s*\{",
                      text, flags=re.M)
    if not table:
        raise UsageError(f"{SOURCE}: no `constexpr double kOccupancyRate[...][...] = {{...}};`")
    rows = re.findall(r"\{([^{}]*)\}", braced(text, table.end() - 1)[0])
    if len(rows) != len(tiles):
        raise UsageError(f"{SOURCE}: kOccupancyRate has {len(rows)} rows, kTileModels "
                         f"{len(tiles)}")
    for i, (tile, row) in enumerate(zip(tiles, rows)):
        tile["occupancy_rate"] = [number(v, f"kOccupancyRate[{i}]") for v in row.split(",")
                                  if v.strip()]
        if len(tile["occupancy_rate"]) >= constants["kMaxBlocksPerSm"]:
            raise UsageError(f"{SOURCE}: kOccupancyRate[{i}] has more than kMaxBlocksPerSm - 1 "
                             "entries")
    if not 1 <= switches["SGEMM_TILE_COUNT"] <= constants["kNumTiles"] == len(tiles):
        raise UsageError(f"{SOURCE}: SGEMM_TILE_COUNT {switches['SGEMM_TILE_COUNT']}, kNumTiles "
                         f"{constants['kNumTiles']}, {len(tiles)} rows in kTileModels")
    return {"tiles": tiles, "constants": constants, "switches": switches}


def read_device(path):
    """The device record of a shapes.json, as device_of() gives it."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read: {error.strerror or error}") from None
    except ValueError as error:
        raise UsageError(f"{path}: not JSON: {error}") from None
    device = document.get("device") if isinstance(document, dict) else None
    if not isinstance(device, dict):
        raise UsageError(f"{path}: no device record (a shapes.py result has one)")
    return device_of(device, path)


def device_of(device, where="the device record"):
    """A shapes.py device record ({sms, fp32_lanes_per_sm, sm_clock_mhz, dram_bandwidth_gbs,
    l2_bytes, name}) as the model reads it: {name, sms, fma_per_s_per_sm, dram_bytes_per_s,
    l2_bytes, record}, computed as the launcher's device() computes them from the same
    attributes."""
    bad = [f for f in DEVICE_FIELDS if not isinstance(device.get(f), (int, float))
           or isinstance(device.get(f), bool) or not device[f] > 0]
    if bad:
        raise UsageError(f"{where}: the device record has no positive {bad[0]}")
    return {"name": str(device.get("name", "the GPU")), "sms": int(device["sms"]),
            # device(): lanes * sm_khz * 1e3, the clock in kHz as the attribute gives it.
            "fma_per_s_per_sm": device["fp32_lanes_per_sm"] * (device["sm_clock_mhz"] * 1e3)
            * 1e3,
            "dram_bytes_per_s": device["dram_bandwidth_gbs"] * 1e9,
            "l2_bytes": float(device["l2_bytes"]),
            "record": {f: device[f] for f in DEVICE_FIELDS}}


# ---- the launcher's model, copied (MIRRORED holds the source to it) ---------------------------

def ceil_div(a, b):
    return -(-a // b)


# When the model times the last round at its own occupancy: as the source does ("source"), never
# (the model before the rule: every block at the occupancy of the busiest SM's count), or after
# any number of rounds (the general form the README says was capped).
RULES = {
    "source": lambda rest, per_sm, full: rest > 0 and per_sm > full,
    "one occupancy": lambda rest, per_sm, full: False,
    "two rounds": lambda rest, per_sm, full: rest > 0 and full < per_sm <= 2 * full,
}


def slice_floats(m, n):
    return m * padded_ld(n)


def padded_ld(n):
    return (n + 3) // 4 * 4


def padded_bytes(k, n):
    return k * padded_ld(n) * 4


def workspace_for(m, n, k, splits, pad):
    return (splits * slice_floats(m, n) * 4 if splits > 1 else 0) + (padded_bytes(k, n)
                                                                     if pad else 0)


def occupancy_rate(tile, r, full):
    """occupancy_rate of the source for a tile record (its "occupancy_rate" row)."""
    rates = tile["occupancy_rate"]
    rate = rates[r - 1] if r < full and r - 1 < len(rates) else 0.0
    return rate if rate > 0.0 else 1.0


def slice_of(model, k, wanted):
    """plan_for's k per slice for `wanted` slices: whole K tiles, at most K."""
    align = model["constants"]["kSliceAlign"]
    return min(ceil_div(ceil_div(k, wanted), align) * align, k)


def split_k_seconds(constants, device, m, n, splits, beta=BETA):
    """split_k_seconds of the source: the reduction's launch and bytes (slices read, C written,
    and read when beta != 0), from L2 while the slices fit there."""
    elements = float(m) * n
    moved = 4.0 * elements * (splits + 1.0 + (1.0 if beta != 0.0 else 0.0))
    in_l2 = 4.0 * elements * splits <= device["l2_bytes"]
    return constants["kLaunchSeconds"] + moved / (
        device["dram_bytes_per_s"] * (constants["kL2Share"] if in_l2 else constants["kDramShare"]))


def column_share(model, tile, n, k):
    """predict_seconds's `column`: 1, unless the grid is one column of tiles (N <= block_n) and
    every block streams its own rows of A; then the tile's measured column share, the unaligned
    one when A's rows do not start on 128-byte lines (K % 32 != 0)."""
    t = model["tiles"][tile]
    if ceil_div(n, t["block_n"]) > 1:
        return 1.0
    return t["column_share"] if k % 32 == 0 else t["column_share_unaligned"]


def sm_rate(model, device, tile, resident, split, odd_rows=False, column=1.0):
    """predict_seconds's rate: the multiply-adds per second of one SM running `resident` blocks
    of the tile (the split kernel's share when `split`; the tile's odd_rows_share of it with
    `odd_rows`, N odd and B not padded; `column`, column_share()'s factor)."""
    t = model["tiles"][tile]
    full = t["blocks_per_sm"]
    return (device["fma_per_s_per_sm"] * (t["split_peak_share"] if split else t["peak_share"])
            * (t["odd_rows_share"] if odd_rows else 1.0) * column
            * occupancy_rate(t, int(min(resident, full)), int(full)))


def predict(model, device, shape, tile, splits, k_slice, pad=False, rule="source"):
    """predict_seconds, with its parts: {"seconds", "blocks", "per_sm", "full", "rest",
    "applied" (the last round timed at its own occupancy), "rounds" [(blocks, occupancy factor,
    seconds)], "compute", "reduce", "pad", "rate" (the SM's rate at full occupancy), "block" (a
    block's multiply-adds, fill included), "share", "rows", "column" (column_share()'s factor)}."""
    m, n, k = shape
    t, c = model["tiles"][tile], model["constants"]
    blocks = float(ceil_div(m, t["block_m"])) * ceil_div(n, t["block_n"]) * splits
    per_sm = float(math.ceil(blocks / device["sms"]))
    full = float(t["blocks_per_sm"])
    share = t["split_peak_share"] if splits > 1 else t["peak_share"]
    odd = n % 2 == 1 and not pad  # B's rows copied 4 bytes at a time
    rows = t["odd_rows_share"] if odd else 1.0
    column = column_share(model, tile, n, k)

    def factor(resident):
        return occupancy_rate(t, int(min(resident, full)), int(full))

    def rate(resident):
        return sm_rate(model, device, tile, resident, splits > 1, odd, column)

    block = t["block_m"] * t["block_n"] * (float(k_slice) + c["kFillK"])
    rest = math.fmod(per_sm, full)
    applied = RULES[rule](rest, per_sm, full)
    if applied:
        compute = (per_sm - rest) * block / rate(full) + rest * block / rate(rest)
    else:
        compute = per_sm * block / rate(per_sm)
    # The rounds the drawing shows: `full` blocks at a time, the last one `rest`. Unless the rule
    # applies, every block is counted at the rate of the busiest SM's count.
    whole = int(per_sm // full) if per_sm > full else 0
    counted = full if applied or per_sm > full else per_sm
    rounds = [(full, factor(full), full * block / rate(counted))] * whole
    last = rest if per_sm > full else per_sm
    if last:
        at = last if applied or per_sm <= full else full
        rounds.append((last, factor(at), last * block / rate(at)))
    reduce = split_k_seconds(c, device, m, n, splits) if splits > 1 else 0.0
    padding = 0.0
    if pad:
        padding = c["kLaunchSeconds"] + 4.0 * k * (float(n) + padded_ld(n)) / (
            device["dram_bytes_per_s"] * c["kDramShare"])
    return {"seconds": compute + reduce + padding, "blocks": int(blocks), "per_sm": int(per_sm),
            "full": int(full), "rest": int(rest), "applied": applied, "rounds": rounds,
            "compute": compute, "reduce": reduce, "pad": padding, "rate": rate(full),
            "block": block, "share": share, "rows": rows, "column": column}


def thin_columns(model):
    """The widest C the few-columns kernels take (is_thin)."""
    c = model["constants"]
    return c["kFewColsMax"] if model["switches"]["SGEMM_WIDE_FEW_COLS"] else c["kThinMax"]


def is_thin(model, m, n):
    """is_thin(p): M <= kThinMax or N <= thin_columns: a thin kernel streams A or B."""
    return m <= model["constants"]["kThinMax"] or n <= thin_columns(model)


def thin_kind(model, m, n):
    """thin_kind(p) for a thin shape: 1 few rows (B streamed), 2 few columns (A streamed)."""
    return 1 if m <= model["constants"]["kThinMax"] and m <= n else 2


def plan_for(model, device, shape, rule="source", tiles=None, split=True, pad=True):
    """plan_for(p, SIZE_MAX), as workspace_bytes calls it: {"tile", "splits", "k_slice", "pad",
    "seconds"}; with another `rule`, what the model would take under it. `tiles` (the indices
    tried; default every tile the switches allow), `split=False` (K never cut) and `pad=False`
    (B never padded) ask what the model would take with less to choose from; chapter 06's plan
    is kept against a clearly faster one only when tile 0 is among `tiles`."""
    m, n, k = shape
    c, s = model["constants"], model["switches"]
    tiles = range(s["SGEMM_TILE_COUNT"]) if tiles is None else tiles
    if s["SGEMM_THIN"] and is_thin(model, m, n):
        # thin_plan's kernels and their model are not the tiles' rounds this figure draws
        raise UsageError(f"{m} x {n} x {k} is thin (M <= {c['kThinMax']} or N <= "
                         f"{thin_columns(model)}): the launcher streams it with a thin kernel, "
                         "not the tiles the figure draws")
    can_pad = pad and bool(s["SGEMM_PADDED_B"]) and n % 2 == 1 and padded_bytes(k, n) <= c[
        "kMaxPaddedBytes"]
    best = None
    for pad in (False, True):
        if pad and not can_pad:
            break
        for tile in tiles:
            last = 0
            for wanted in (range(1, c["kMaxSplits"] + 1) if split else [1]):
                k_slice = slice_of(model, k, wanted)
                splits = ceil_div(k, k_slice)
                if splits == last:
                    continue
                last = splits
                if (splits > 1 and not s["SGEMM_SPLIT_K"]) or workspace_for(
                        m, n, k, splits, False) > c["kMaxWorkspaceBytes"]:
                    break
                seconds = predict(model, device, shape, tile, splits, k_slice, pad, rule)[
                    "seconds"]
                if best is None or seconds < best["seconds"]:
                    best = {"tile": tile, "splits": splits, "k_slice": k_slice, "pad": pad,
                            "seconds": seconds}
    if 0 not in tiles:
        return best
    base = {"tile": 0, "splits": 1, "k_slice": k, "pad": False,
            "seconds": predict(model, device, shape, 0, 1, k, False, rule)["seconds"]}
    return base if best["seconds"] * (1.0 + c["kKeepMargin"]) > base["seconds"] else best


# ---- what the figure shows ---------------------------------------------------------------------

def tile_index(model, size):
    found = [i for i, t in enumerate(model["tiles"]) if (t["block_m"], t["block_n"]) == size]
    if not found:
        raise UsageError(f"{SOURCE}: no {size[0]} x {size[1]} tile in kTileModels (the README's "
                         "example of the partial round)")
    return found[0]


def plan_name(model, plan):
    t = model["tiles"][plan["tile"]]
    return (f"{t['block_m']} × {t['block_n']}"
            + (f", {plan['splits']} slices" if plan["splits"] > 1 else ", K not split")
            + (", B padded" if plan["pad"] else ""))


def cases(model, device):
    """The figure's panels: [{"title", "shape", "plan", "parts", "other" (the same plan under
    the other reading of the last round), "note"}] and the verdicts."""
    tile = tile_index(model, EXAMPLE_TILE)
    for wanted in EXAMPLE_SPLITS:
        if wanted > model["constants"]["kMaxSplits"]:
            raise UsageError(f"{SPLIT_HEADER}: kMaxSplits is below {wanted} (the README's example "
                             "compares 20 and 10 slices)")
    panels = []
    for wanted in EXAMPLE_SPLITS:
        k_slice = slice_of(model, EXAMPLE[2], wanted)
        plan = {"tile": tile, "splits": ceil_div(EXAMPLE[2], k_slice), "k_slice": k_slice,
                "pad": False}
        panels.append({"shape": EXAMPLE, "plan": plan,
                       "parts": predict(model, device, EXAMPLE, tile, plan["splits"], k_slice),
                       "other": predict(model, device, EXAMPLE, tile, plan["splits"], k_slice,
                                        rule="one occupancy")})
    picked = plan_for(model, device, SAWTOOTH)
    panels.append({"shape": SAWTOOTH, "plan": picked,
                   "parts": predict(model, device, SAWTOOTH, picked["tile"], picked["splits"],
                                    picked["k_slice"], picked["pad"]),
                   "other": predict(model, device, SAWTOOTH, picked["tile"], picked["splits"],
                                    picked["k_slice"], picked["pad"], rule="two rounds")})
    picks = {(shape, rule): plan_for(model, device, shape, rule)
             for shape in (EXAMPLE, SAWTOOTH) for rule in RULES}
    return panels, picks


def rounded(data):
    """data with every float to 9 significant digits: a last-bit difference between two machines'
    pow() is no change of the figure."""
    if isinstance(data, float):
        return float(f"{data:.9g}")
    if isinstance(data, dict):
        return {key: rounded(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [rounded(value) for value in data]
    return data


def digest(data):
    """16 hex digits of SHA-256 of the rounded data: what the stamp carries of the arithmetic."""
    return hashlib.sha256(repr(rounded(data)).encode()).hexdigest()[:16]


def signature(model, device):
    """The line stamped into the figure: what it is drawn from."""
    tiles = "; ".join(f"{t['alias']} {t['block_m']}x{t['block_n']} share {t['peak_share']}/"
                      f"{t['split_peak_share']} odd {t['odd_rows_share']} "
                      f"rates {t['occupancy_rate']} "
                      f"{t['blocks_per_sm']} per SM" for t in model["tiles"])
    constants = ", ".join(f"{n} = {v}" for n, v in model["constants"].items())
    switches = ", ".join(f"{n} = {v}" for n, v in model["switches"].items())
    record = ", ".join(f"{n} = {v}" for n, v in device["record"].items())
    panels, picks = cases(model, device)
    return (f"07_any_shape: {tiles}; {constants}; {switches}; device {record}; drawing "
            f"{DRAWING}; panels sha256 "
            + digest([[p["plan"], p["parts"], p["other"]] for p in panels]
                     + sorted((str(key), value) for key, value in picks.items())))


def out_of_date(root, results=None, figure=None):
    """One line when the figure (default root/FIGURE) is not what root's source and the device
    record (default root/RESULTS) give now (a source changed without a redraw, or never
    stamped); [] when it is."""
    root = Path(root)
    figure = Path(figure) if figure else root / FIGURE
    want = signature(read_model(root), read_device(Path(results) if results else root / RESULTS))
    if figure.is_file() and stamped(figure) == want:
        return []
    return [f"{figure} is out of date: run python3 {SCRIPT}"]


# ---- drawing -----------------------------------------------------------------------------------

FULL_RATE = "#0072B2"   # blocks timed at the full-occupancy rate
OWN_RATE = "#E69F00"    # blocks timed at their own, lower occupancy
REDUCE = "#8C959F"      # split-K's second launch
IDLE = "#eaeef2"
INK = "#1f2328"
GREY = "#57606a"


def us(seconds):
    return f"{seconds * 1e6:,.1f} µs"


def fmt(value, digits=2):
    """At most `digits` decimals, no trailing zeros: 0.25, 1, 0.697."""
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def round_label(model, tile, blocks, factor, seconds, index):
    """Three lines: the round, its blocks and their occupancy factor, its time."""
    full = model["tiles"][tile]["blocks_per_sm"]
    rate = (f"× rate({blocks} of {full}) = {factor:.2f}" if factor < 1 else "× 1 (full rate)")
    return f"round {index}: {blocks} block{'s' if blocks > 1 else ''}\n{rate}\n{us(seconds)}"


def panel_title(model, device, panel, picked):
    (m, n, k), plan, parts = panel["shape"], panel["plan"], panel["parts"]
    t = model["tiles"][plan["tile"]]
    shape = f"{m}³" if m == n == k else f"{m} × {n} × {k}"
    cut = (f"{plan['splits']} slices of {plan['k_slice']} k" if plan["splits"] > 1
           else "K not split")
    counts = f"{ceil_div(m, t['block_m'])} × {ceil_div(n, t['block_n'])}" + (
        f" × {plan['splits']}" if plan["splits"] > 1 else "")
    sizes = [str(int(r[0])) for r in parts["rounds"]]
    if parts["applied"]:
        how = (f"{len(sizes)} rounds ({', then '.join(sizes)}): the last one is timed at its own "
               "occupancy")
    elif len(sizes) == 1:
        how = "one round"
    else:
        how = (f"{len(sizes)} rounds ({', '.join(sizes)}): every block counted at one "
               "occupancy")
    first = (f"{shape} on {t['block_m']} × {t['block_n']}, {cut}"
             + (": the launcher's plan" if picked else ""))
    second = (f"{counts} = {parts['blocks']} blocks, {parts['blocks'] / device['sms']:.2f} per "
              f"SM; the busiest SM runs {parts['per_sm']} in {how}")
    split = "split-K " if plan["splits"] > 1 else ""
    odd = f" × {fmt(parts['rows'])} (N odd)" if parts["rows"] != 1 else ""
    third = (f"a block: {t['block_m']} × {t['block_n']} × ({plan['k_slice']} + "
             f"{model['constants']['kFillK']}) multiply-adds; the SM: {device['lanes']} lanes × "
             f"{fmt(device['clock_mhz'], 0)} MHz × {fmt(parts['share'], 3)} ({split}share)"
             f"{odd} = {parts['rate'] / 1e9:.1f} G multiply-adds/s with "
             f"{t['blocks_per_sm']} blocks, × the measured rate with r < {t['blocks_per_sm']} "
             "(kOccupancyRate)")
    return first, second + "\n" + third


def draw_panel(ax, model, panel, x_max, other_label):
    """The busiest SM's block slots over the model's time: its rounds, split-K's reduction, the
    model's time, and (dashed) the last round and the total under the other reading."""
    from matplotlib.patches import Rectangle
    plan, parts, other = panel["plan"], panel["parts"], panel["other"]
    full = parts["full"]
    t0 = 0.0
    scale = 1e6
    for index, (blocks, factor, seconds) in enumerate(parts["rounds"], 1):
        blocks = int(blocks)
        colour = FULL_RATE if factor >= 1 else OWN_RATE
        for slot in range(full):
            style = (dict(facecolor=colour, edgecolor="white", linewidth=1.2) if slot < blocks
                     else dict(facecolor=IDLE, edgecolor="white", linewidth=1.2, hatch="//"))
            ax.add_patch(Rectangle((t0 * scale, slot), seconds * scale, 1, **style))
        ax.text((t0 + seconds / 2) * scale, blocks / 2,
                round_label(model, plan["tile"], blocks, factor, seconds, index),
                ha="center", va="center", fontsize=7.5, linespacing=1.2,
                color="white" if colour == FULL_RATE else INK,
                bbox=dict(facecolor=colour, edgecolor="none", pad=1.5))
        t0 += seconds
    changed = other["seconds"] != parts["seconds"]
    if changed:
        last_blocks, _, last_seconds = parts["rounds"][-1]
        ax.add_patch(Rectangle(((t0 - last_seconds) * scale, 0), other["rounds"][-1][2] * scale,
                               int(last_blocks), fill=False, edgecolor=INK,
                               linestyle=(0, (4, 2)), linewidth=1.3))
    if parts["reduce"]:
        ax.add_patch(Rectangle((t0 * scale, 0), parts["reduce"] * scale, full,
                               facecolor=REDUCE, edgecolor="white"))
        ax.annotate(f"adding the {plan['splits']} slices:\n{us(parts['reduce'])}",
                    ((t0 + parts["reduce"]) * scale, full / 2), xytext=(8, 0),
                    textcoords="offset points", va="center", fontsize=7.5, color=GREY)
    ax.axvline(parts["seconds"] * scale, color=INK, linewidth=1.4)
    ax.annotate(f"model: {us(parts['seconds'])}", (parts["seconds"] * scale, -0.12),
                xytext=(4, 0), textcoords="offset points", ha="left", va="bottom",
                fontsize=8.5, fontweight="bold")
    if changed:
        ax.axvline(other["seconds"] * scale, color=INK, linewidth=1.0, linestyle=(0, (4, 2)))
        # Beside the dashed line, on the side away from the model's line.
        after = other["seconds"] > parts["seconds"]
        ax.annotate(f"{other_label}:\n{us(other['seconds'])}" if after else
                    f"{other_label}: {us(other['seconds'])}",
                    (other["seconds"] * scale, 0.75 * full if after else full + 0.12),
                    xytext=(4 if after else -4, 0), textcoords="offset points",
                    ha="left" if after else "right", va="center" if after else "top",
                    fontsize=8)
    ax.set_xlim(0, x_max * scale)
    ax.set_ylim(full + 0.75, -0.75)
    ax.set_yticks([s + 0.5 for s in range(full)])
    ax.set_yticklabels([f"slot {s + 1}" for s in range(full)], fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("time on the busiest SM (µs, the model's)", fontsize=8.5)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def verdict(model, panels, picks):
    """Two lines under the panels: what plan_for takes under each reading of the last round."""
    chosen, one = picks[(EXAMPLE, "source")], picks[(EXAMPLE, "one occupancy")]
    capped, saw = picks[(SAWTOOTH, "two rounds")], panels[2]
    two = panels[0]["parts"]
    return "\n".join(textwrap.fill(line, 150) for line in (
        f"{EXAMPLE[0]} × {EXAMPLE[1]} × {EXAMPLE[2]}: plan_for takes {plan_name(model, chosen)} "
        f"({us(chosen['seconds'])}). Counting the {two['per_sm']} blocks of "
        f"{panels[0]['plan']['splits']} slices at one occupancy, as the model did before the "
        f"rule, it would take {plan_name(model, one)} ({us(one['seconds'])}).",
        f"{SAWTOOTH[0]}³: {saw['parts']['per_sm']} blocks per SM make more than two rounds; the "
        f"last, partial one is timed at its own occupancy all the same. Under the rule before "
        f"the constants were measured (at most two rounds), {plan_name(model, saw['plan'])} "
        f"would cost {us(saw['other']['seconds'])} and plan_for would take "
        f"{plan_name(model, capped)} ({us(capped['seconds'])})."))


def draw(plt, model, device, path):
    """two_rounds.png: the three panels of cases(), the verdict, a 256-colour PNG."""
    import io
    from matplotlib.patches import Patch
    from PIL import Image
    panels, picks = cases(model, device)
    chosen = picks[(EXAMPLE, "source")]
    device = dict(device, lanes=device["record"]["fp32_lanes_per_sm"],
                  clock_mhz=device["record"]["sm_clock_mhz"])
    fig, axes = plt.subplots(3, 1, figsize=(11.5, 11), gridspec_kw={"hspace": 1.05})
    example_max = max(max(p["parts"]["seconds"], p["other"]["seconds"]) for p in panels[:2])
    for ax, panel in zip(axes, panels):
        plan = panel["plan"]
        on_example = panel["shape"] == EXAMPLE
        picked = not on_example or (plan["tile"], plan["splits"]) == (chosen["tile"],
                                                                      chosen["splits"])
        x_max = (example_max if on_example else
                 max(panel["parts"]["seconds"], panel["other"]["seconds"])) * 1.2
        draw_panel(ax, model, panel, x_max, "counted at one occupancy" if on_example
                   else "the rule applied here")
        first, rest = panel_title(model, device, panel, picked)
        ax.set_title(rest, fontsize=8, loc="left", pad=20, color=INK)
        ax.annotate(first, (0, 1), xycoords="axes fraction", xytext=(0, 48),
                    textcoords="offset points", fontsize=9.5, fontweight="bold", va="bottom")
    fig.text(0.01, 0.03, verdict(model, panels, picks), fontsize=8.5, va="bottom",
             linespacing=1.4)
    fig.legend(handles=[Patch(facecolor=FULL_RATE, label="blocks at the full-occupancy rate"),
                        Patch(facecolor=OWN_RATE, label="blocks at a lower occupancy's rate"),
                        Patch(facecolor=IDLE, hatch="//", label="slot idle"),
                        Patch(facecolor=REDUCE, label="split-K: adding the slices"),
                        Patch(fill=False, edgecolor=INK, linestyle=(0, (4, 2)),
                              label="the last round and the total, the other way")],
               loc="upper center", ncol=5, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.962))
    fig.suptitle(f"The last, partial round in chapter 07's model (predict_seconds) on "
                 f"{device['name']}, {device['sms']} SMs", fontsize=11.5, y=0.988)
    fig.text(0.01, 0.01, f"Model times, not measurements; drawn by {SCRIPT} from {SOURCE} and "
             f"the device record of {RESULTS}", fontsize=7, color=GREY)
    fig.subplots_adjust(left=0.07, right=0.975, top=0.85, bottom=0.15)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=110, format="png")
    plt.close(fig)
    buffer.seek(0)
    Image.open(buffer).convert("RGB").quantize(256).save(path, optimize=True)


def parse_args(argv):
    parser = ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO,
                        help="the tree whose 07_any_shape/any_shape.cu is read (default: this "
                        "repository)")
    parser.add_argument("--results", type=Path,
                        help=f"shapes.json with the device record (default: ROOT/{RESULTS})")
    parser.add_argument("--out", type=Path, help=f"the PNG (default: ROOT/{FIGURE})")
    parser.add_argument("--check", action="store_true",
                        help="draw nothing; exit 1 when --out is not what the source gives now")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    results = args.results or args.root / RESULTS
    out = args.out or args.root / FIGURE
    try:
        if args.check:
            stale = out_of_date(args.root, results, out)
            for line in stale:
                print(line, file=sys.stderr)
            if not stale:
                print(f"{out} is up to date")
            return EXIT_WRONG if stale else EXIT_PASS
        model, device = read_model(args.root), read_device(results)
        sign = signature(model, device)
        plt = pyplot(SCRIPT)
        if plt is None:
            return EXIT_USAGE
        if out.is_dir():
            raise UsageError(f"{out} is a folder, not a PNG file")
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            draw(plt, model, device, out)
            stamp(out, sign)
        except OSError as error:
            raise UsageError(f"cannot write {out}: {error.strerror or error}") from None
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {out}")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
