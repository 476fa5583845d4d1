#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shape suite: chapters 06 and 07 (or, with --chapters, any) against cuBLAS on the shapes
users actually have.

Each chapter binary runs once over the whole suite (`--m/--n/--k` lists, `--format json
--output`), verifying every shape and timing itself and cuBLAS FP32 in the same process, so every
"% of cuBLAS" is a ratio from one process. The script writes into the results folder
(docs/results/<gpu-slug>/ by default):
  shapes.json          the suite, every chapter's rows, the device, the command and the commit,
                       chapter 07's floors evaluated
  shapes.md            one line per shape: 06, 07 and cuBLAS TFLOP/s, % of cuBLAS, 07 / 06; the
                       geometric mean; which of chapter 07's floors hold (07_any_shape/README.md)
  figures/shapes.png   % of cuBLAS per shape, 06 beside 07

With --sawtooth START:STOP:STEP it runs the square sizes START, START+STEP, ... STOP instead
(timing only: the suite verifies) and writes sawtooth.json and figures/sawtooth.png: % of cuBLAS
against size for both chapters, beside the efficiency chapter 07's launcher model predicts for
its own plan and for chapter 06's single tile (wave quantization, 07_any_shape/README.md).
--render-only redraws the tables and figures from the JSON already in the folder (no GPU; with
--chapters or --suite, those of that run).
--waves M,N,K draws, from the launcher model and the GPU recorded in the folder's shapes.json,
which SM runs which blocks for one shape: chapter 06's single tile beside chapter 07's plan
(07_any_shape/figures/waves.png by default; no GPU).

With --chapters (numbers or names, as tour.py and tune.py take them) it runs the same suite for
those chapters instead of 06 and 07, each against cuBLAS in its precision contract's mode (TF32
chapters: cuBLAS TF32; FP32 chapters: cuBLAS FP32), and writes beside the files above, which it
leaves alone (shapes_<NN>_<NN>, e.g. shapes_08_09 for --chapters 08 09):
  shapes_08_09.json           the same document as shapes.json, plus the floors evaluated
  shapes_08_09.md             one line per shape: each chapter's TFLOP/s, its cuBLAS mode's TFLOP/s,
                              % of cuBLAS; the geometric mean per chapter; which floors of
                              CHAPTER_FLOORS hold (issue 16 for 08 and 09), lowest row per floor
  figures/shapes_08_09.png    % of cuBLAS per shape, one series per chapter, the floor lines
--shapes M,N,K[;M,N,K...] runs only those shapes, --extra adds the shapes issue 16 names (group
"issue16": shown, but counted in neither the floors nor the geometric mean); both work with or
without --chapters, and --check-floors turns a floor that does not hold (or has no shape to
measure it) into exit code 1 in both.

--suite picks the shapes, with or without --chapters: 07 (SUITE, chapter 07's, issue 10; the
default), hopper (HOPPER_SUITE, issue 18's suite for the Hopper chapters: squares, shapes that are
no multiple of the tile, transformer layers of published models, decode steps of 1-16 tokens, tall
and wide skinny, long K with a small C; the source of each shape is written beside it), heldout
(HELDOUT_SUITE, issue 19's first held-out draw for chapter 07: 59 shapes drawn with a fixed seed
from a distribution of realistic shapes written down above it; watched while 07's thin kernels
were written, so fitting data since), heldout2 (HELDOUT2_SUITE, the second draw from the same
distribution with the next seed, none of the first draw's shapes; watched while 07's few-columns
kernel was rewritten, so fitting data too), heldout3 (HELDOUT3_SUITE, the third draw, none of
the first two draws' shapes; watched while 07's epilogue for padded B was rewritten, so fitting
data too), heldout4 (HELDOUT4_SUITE, the fourth draw, none of the first three draws' shapes;
its tall rows were watched while 07's model learned the column shares, and its small-M rows
while the few-rows kernel was rewritten, so fitting data too), heldout5 (HELDOUT5_SUITE, the
fifth draw, none of the first four draws' shapes; its weak rows were examined under forced plans,
and its wide rows with N odd watched while 07's copies of B rows that are not 16-byte aligned were
rewritten, so fitting data too), heldout6 (HELDOUT6_SUITE, the sixth draw, none of the first
five draws' shapes; its failing rows were run under forced plans, and its tall rows with few
columns examined while 07's wide few-columns kernel was written, so fitting data too),
heldout7 (HELDOUT7_SUITE, the seventh draw, none of the first six draws' shapes; its failing
rows, five large shapes with N odd, were run under forced plans and used while 07's kernels for
N odd were changed, so fitting data too), heldout8 (HELDOUT8_SUITE, the eighth draw, none of
the first seven draws' shapes; its one failing large row, a deep split-K on a small C, was run
under forced plans and used while 07's model's handling of that was changed, so fitting data
too), heldout9 (HELDOUT9_SUITE, the ninth draw, none of the first eight draws' shapes; its
failing large row 768 x 768 x 8192, a C of 768^2 in 20 slices, was used while 07's model was
changed to try every split count, and the draw was run again once seen, so fitting data too),
heldout10 (HELDOUT10_SUITE, the tenth draw, none of the first nine draws' shapes; its three
failing large rows, all with N % 4 != 0, were run under forced plans and profiled while 07's
handling of rows of B that are not whole float4s was changed, so fitting data too), heldout11
(HELDOUT11_SUITE, the eleventh draw, none of the first ten draws' shapes; its two failing
few-column rows, both with K % 4 != 0, were run under forced plans and profiled while 07's
few-columns kernel got its copy plan, so fitting data too) or heldout12 (HELDOUT12_SUITE, the
twelfth draw, none of the first eleven draws' shapes; see heldout_suite()).
Floors belong to a suite and are evaluated only on it: issue 18's, for 13 and 14, on the hopper
suite; chapter 07's on the 07 suite (issue 10) and on the twelfth held-out draw
(issue 19, the same numbers; 07 equal to 06 at 4096^3 and 8192^3 only where the suite holds
those shapes, the 07 suite). The results of another suite than 07 carry the suite's name, so
they never overwrite the 07 suite's: shapes_<suite> for 06 and 07, shapes_<suite>_<NN>_<NN>
with --chapters.
For example --suite heldout (06 and 07) and --chapters 13 14 --suite hopper write:
  shapes_heldout.json, shapes_hopper_13_14.json          the document, "suite_name" the suite
  shapes_heldout.md, shapes_hopper_13_14.md              the table and the floors
  figures/shapes_heldout.png, figures/shapes_hopper_13_14.png     the chart
"""

import argparse
import datetime
import json
import math
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple, Optional

import rounds_figure
from chapters import (EXIT_PASS, EXIT_RUNTIME, EXIT_USAGE, EXIT_WRONG, REPO, binaries, build,
                      chapter_precision, git_commit, gpu_slug, log, select_chapters)

EXAMPLES = """\
examples:
  python3 scripts/shapes.py                                   # build, run the suite, save
  python3 scripts/shapes.py --no-build --build-dir build --results-dir /tmp/shapes
  python3 scripts/shapes.py --sawtooth 1024:8192:128          # the README's sawtooth
  python3 scripts/shapes.py --render-only --results-dir docs/results/nvidia-h100-80gb-hbm3
  python3 scripts/shapes.py --waves 4224,4224,4224 --results-dir docs/results/nvidia-h100-80gb-hbm3
  python3 scripts/shapes.py --chapters 08 09 --extra          # issue 16: shapes_08_09.*
  python3 scripts/shapes.py --chapters 09 --shapes "8,4096,4096;4096,4096,4096"
  python3 scripts/shapes.py --chapters 12 13 14 --suite hopper  # issue 18: shapes_hopper_12_13_14.*
  python3 scripts/shapes.py --suite {judged} --check-floors  # issue 19: shapes_{judged}.*

exit codes: 0 every shape verified, 1 a chapter computed a wrong result (or, with
            --check-floors, a floor of chapter 07, or with --chapters one of
            CHAPTER_FLOORS, does not hold), 2 bad usage,
            3 build or CUDA/runtime failure (no GPU, out of memory, crash)
"""

CHAPTERS = ["06_double_buffer", "07_any_shape"]
BASE, NEW = CHAPTERS

# The suite: (M, N, K, group). Groups: the issue's table (measured before chapter 07 existed),
# squares (powers of two and not), tall and wide skinny, small K, long K with small M x N, and
# rows or K not multiples of 4.
SUITE = [
    (4096, 4100, 4096, "issue"), (4095, 4097, 4095, "issue"), (8192, 128, 8192, "issue"),
    (128, 8192, 8192, "issue"), (3000, 3000, 3000, "issue"), (512, 512, 512, "issue"),
    (256, 256, 256, "issue"), (2048, 2048, 2048, "issue"), (16384, 16384, 16384, "issue"),
    (8192, 8192, 256, "issue"),
    (768, 768, 768, "square"), (1000, 1000, 1000, "square"), (1024, 1024, 1024, "square"),
    (1536, 1536, 1536, "square"), (4096, 4096, 4096, "square"), (5000, 5000, 5000, "square"),
    (6144, 6144, 6144, "square"), (8192, 8192, 8192, "square"), (12288, 12288, 12288, "square"),
    (32768, 256, 1024, "tall"), (16384, 64, 4096, "tall"),
    (256, 32768, 1024, "wide"), (64, 16384, 4096, "wide"),
    (8192, 8192, 128, "small K"), (4096, 4096, 64, "small K"), (16384, 4096, 32, "small K"),
    (256, 256, 65536, "long K"), (128, 128, 262144, "long K"), (512, 512, 32768, "long K"),
    (64, 64, 1048576, "long K"), (1024, 1024, 16384, "long K"),
    (2049, 2051, 1023, "unaligned"), (1001, 3003, 5005, "unaligned"),
    (777, 333, 16383, "unaligned"), (8191, 8191, 8191, "unaligned"),
]

# Chapter 07's floors: % of cuBLAS by size, the geometric mean, and 07 against 06. Issue 10 set
# them on SUITE; issue 19 sets the same numbers on the held-out suite's newest draw (JUDGED_DRAW,
# the last of HELDOUT_DRAWS; the earlier draws are watched), whose figures alone then count
# (CHAPTER_FLOORS holds both; floors() checks them in the default run).
BIG_MACS = 2 ** 30
FLOOR_BIG, FLOOR_SMALL, FLOOR_GEOMEAN, FLOOR_VS_06 = 90.0, 75.0, 97.0, 0.98
# "07 equal to 06 at 4096^3 and 8192^3" (both issues) is a floor of the suites that hold those
# shapes: SUITE does, and a held-out suite cannot (it holds no shape of SUITE, and both are
# shapes 07 was fitted on). So a held-out run leaves it to the default suite's run, and says so.
EQUAL_TO_06 = [(4096, 4096, 4096), (8192, 8192, 8192)]
EQUAL_TOLERANCE = 0.02  # "equal": within 2 % either way, the noise of two processes

# The shapes issue 16 gives as examples of what fills the GPU badly (a long K with a tiny C, a few
# rows, one row): --extra adds them, in their own group, outside the floors.
EXTRA_GROUP = "issue16"
EXTRA = [(96, 96, 1048576, EXTRA_GROUP), (8, 4096, 4096, EXTRA_GROUP),
         (1, 8192, 8192, EXTRA_GROUP)]

# Issue 18's suite for the Hopper chapters (13_persistent_clusters, 14_3xtf32_hopper), written down
# before either chapter was tuned, so that it judges them on shapes they were not tuned on.
# (M, N, K, group), row-major C (M x N) = A (M x K) B (K x N). A layer y = x W of a transformer is
# M = tokens, N = output features, K = input features; its weight gradient dW = x^T dy is
# M = input features, N = output features, K = tokens. Model dimensions as published:
#   LLaMA-2-7B (Touvron et al. 2023, "Llama 2"): d 4096, FFN 11008, 32 heads (no GQA: Q, K, V
#     4096 each), context 4096, vocabulary 32000.
#   LLaMA-3-8B (Meta 2024, model card): d 4096, FFN 14336, GQA with 8 K/V heads of 128 (K and V
#     1024 each), context 8192, vocabulary 128256.
#   GPT-3 175B (Brown et al. 2020, table 2.1): d 12288, FFN 4d = 49152, context 2048.
#   GPT-2 (Radford et al. 2019): small d 768, medium d 1024; context 1024, vocabulary 50257.
#   Mixtral 8x7B (Jiang et al. 2024): d 4096, a router to 8 experts.
#   LoRA (Hu et al. 2021): adapters of rank r (the paper's experiments: 1 to 64), A is d x r.
# 2^30 multiply-adds splits the floors (BIG_MACS): 29 shapes are large, 11 smaller; three do more
# work than 8192^3 (12288^3, 16384^3, GPT-3's FFN up), every operand stays under 2.5 GB.
HOPPER_SUITE = [
    # Squares 1024 to 16384: powers of two, 3 x 2^k, and GPT-3's d. 1024^3 is exactly 2^30: large.
    (1024, 1024, 1024, "square"), (2048, 2048, 2048, "square"), (3072, 3072, 3072, "square"),
    (4096, 4096, 4096, "square"), (6144, 6144, 6144, "square"), (8192, 8192, 8192, "square"),
    (12288, 12288, 12288, "square"), (16384, 16384, 16384, "square"),
    # No multiple of the 256 x 128 tile: one past 4096 (a last row and column of nearly empty
    # tiles), primes on both sides of 4096, the 1000th prime 7919, mixed primes, and two smaller
    # prime shapes (1021 x 1019 x 1013 lies just under 2^30). Odd K and N: rows no multiple of 16
    # bytes, which TMA cannot read in place.
    (4097, 4097, 4097, "unaligned"), (4093, 4099, 4091, "unaligned"),
    (7919, 7919, 7919, "unaligned"), (1999, 3001, 2003, "unaligned"),
    (1021, 1019, 1013, "unaligned"), (257, 509, 1021, "unaligned"),
    # Transformer layers over one full-context sequence. LLaMA-2-7B, 4096 tokens: Q, K and V
    # fused, FFN up (or gate), FFN down.
    (4096, 12288, 4096, "transformer"), (4096, 11008, 4096, "transformer"),
    (4096, 4096, 11008, "transformer"),
    # LLaMA-3-8B, 8192 tokens: Q, K and V fused (4096 + 2 x 1024), K (or V) alone, FFN up, down.
    (8192, 6144, 4096, "transformer"), (8192, 1024, 4096, "transformer"),
    (8192, 14336, 4096, "transformer"), (8192, 4096, 14336, "transformer"),
    # GPT-3 175B, 2048 tokens: attention output projection, FFN up.
    (2048, 12288, 12288, "transformer"), (2048, 49152, 12288, "transformer"),
    # GPT-2 small's output layer (logits) at every one of 1024 positions: N = vocabulary, odd.
    (1024, 50257, 768, "transformer"),
    # Decode steps, M = sequences decoded together (1, 4, 8, 16 tokens): LLaMA-2-7B attention
    # output and FFN up, GPT-3's FFN up (one token: 2.4 GB of weights read once), LLaMA-3-8B FFN
    # up, Q/K/V and FFN down.
    (1, 4096, 4096, "small M"), (1, 49152, 12288, "small M"), (4, 11008, 4096, "small M"),
    (8, 14336, 4096, "small M"), (16, 6144, 4096, "small M"), (16, 4096, 14336, "small M"),
    # Tall and skinny: Mixtral's router over 16384 tokens (N = 8 experts); a rank-64 LoRA A on
    # LLaMA-2-7B over 8192 tokens.
    (16384, 8, 4096, "tall"), (8192, 64, 4096, "tall"),
    # Wide and skinny: LLaMA-3-8B's output layer for the last token of 128 sequences; LLaMA-2-7B's
    # for 32 sequences decoding; the weight gradient of a rank-64 LoRA B (r x d) over 8192 tokens.
    (128, 128256, 4096, "wide"), (32, 32000, 4096, "wide"), (64, 4096, 8192, "wide"),
    # Long K, small C: Gram matrices (M = N = features, K = samples) at K = 2^20, 2^17 and 2^18
    # (issue 18's accuracy point: K = 2^18 with small M x N); weight gradients over 65536 tokens
    # of a rank-16 LoRA A on LLaMA-2-7B and of a 1024 x 1024 layer of GPT-2 medium (64
    # sequences of 1024 tokens).
    (16, 16, 1048576, "long K"), (48, 48, 131072, "long K"), (64, 64, 262144, "long K"),
    (4096, 16, 65536, "long K"), (1024, 1024, 65536, "long K"),
]

# The held-out suite (issue 19): chapter 07 judged on shapes that no constant, rule or test of its
# launcher model was fitted on. SUITE is the fitting set (the model's constants were measured or
# chosen on it, and on the sawtooth's multiples of 128); these shapes are drawn with a fixed seed
# from the distribution written down here, and were committed before any chapter ran them. Tune
# nothing on them: a constant fitted to this list makes it a second fitting set, and a new
# held-out list (a new seed, fixed before drawing) is then owed.
#
# The distribution: HELDOUT_GROUPS' number of shapes of each group, each drawn by its group's rule
# below. A shape is drawn again when it is already in the list or in SUITE, HOPPER_SUITE or EXTRA,
# when an operand (A, B or C) exceeds MAX_OPERAND_BYTES, or when it does more than MAX_MACS
# multiply-adds. "Log-uniform in [lo, hi]" is an integer x with P(x) proportional to 1/x
# (log_uniform()). A layer y = x W is (M, N, K) = (tokens, output features, input features); its
# data gradient dx = dy W^T is (tokens, input features, output features); its weight gradient
# dW = x^T dy is (input features, output features, tokens).
#   layer        a projection of HELDOUT_MODELS (uniform over all of them: Q/K/V, attention output,
#                FFN up, FFN gate and up fused where the FFN is gated, FFN down, the LM head where
#                the vocabulary is given), even odds of forward and data gradient. Tokens
#                (heldout_tokens()): a training batch of whole sequences, or for a text model's
#                forward pass even odds of that and a prefill (inference on prompts of any length).
#   weight grad  a projection's weight gradient over a training batch (K = tokens).
#   small M      a decode step: M = 1..16 sequences decoded together (uniform), one projection.
#   small N      N <= 16, a third each of: the decode step as a column-major framework computes it,
#                y^T = W^T x^T (M = output features, N = 1..16 sequences, K = input features); a
#                LoRA down projection x A (Hu et al. 2021; rank of LORA_RANKS) on a projection's
#                input; Mixtral's router (N = 8 experts, K = 4096).
#   square       n x n x n, n log-uniform in [1000, 12000], no multiple of 128; stratified: the
#                i-th square in the i-th of SQUARE_STRATA's equal parts of the log range, so the
#                five span it whatever the seed.
#   near-square  s log-uniform in [1000, 12000], stratified as the squares (NEAR_SQUARE_STRATA);
#                M, N, K each s * (850..1150, uniform) // 1000; none a multiple of 128, not all
#                three equal.
#   tall         M log-uniform in [16384, 262144], N in [17, 256], K in [256, 8192]: many rows
#                against few columns (scores of many samples on a few components, a QR panel).
#   wide         the transpose of tall: M in [17, 256], N in [16384, 262144], K in [256, 8192].
#   long K       M and N log-uniform in [8, 256], K in [2^18, 2^21] (issue 19: K >= 2^18 with a tiny
#                C): Gram and covariance matrices of a few features over many samples, a small
#                layer's weight gradient over a long stream of tokens.
#   unaligned    M, N, K each log-uniform in [257, 16383], made odd: no row of A, B or C a multiple
#                of 16 bytes (issue 19's 12345 x 6789 x 1011).
# No square or near-square has a multiple of 128, so none lies on the sawtooth (1024:8192:128)
# that the model's wave quantization was studied on.
#
# Model dimensions, as published (d: the model's width; fused Q/K/V: d + 2 x the K/V width):
#   BERT base, large (Devlin et al. 2019, section 3): d 768, 1024; FFN 4d; 512 tokens a sequence.
#   GPT-2 small, medium, large, XL (Radford et al. 2019, table 2): d 768, 1024, 1280, 1600; FFN 4d;
#     context 1024; vocabulary 50257.
#   GPT-3 2.7B, 6.7B, 13B, 175B (Brown et al. 2020, table 2.1; d_ff = 4 d): d 2560, 4096, 5140,
#     12288; context 2048.
#   LLaMA-2-7B, 13B, 70B (Touvron et al. 2023, and the released configurations): d 4096, 5120,
#     8192; gated FFN 11008, 13824, 28672; 70B with GQA, 8 K/V heads of 128 (K and V 1024 each);
#     context 4096; vocabulary 32000.
#   LLaMA-3-8B (Meta 2024, model card): d 4096, gated FFN 14336, K and V 1024 each, context 8192,
#     vocabulary 128256.
#   Falcon-7B (Almazrouei et al. 2023): d 4544, FFN 4d, multi-query attention (one K/V head of 64),
#     context 2048, vocabulary 65024.
#   ViT-B/16, L/16, H/14 (Dosovitskiy et al. 2021, table 1): d 768, 1024, 1280; MLP 4d; at 224 x 224
#     pixels 196 patches and the class token, 197 tokens an image (H/14: 256 + 1 = 257).
#   Mixtral 8x7B (Jiang et al. 2024): d 4096, a router to 8 experts, context 32768.
HELDOUT = "heldout"
HELDOUT_SEED = 19  # issue 19's number, fixed before the first draw; never changed to pick a draw
# (model, d, fused Q/K/V width, FFN width, gated FFN, vocabulary (0: its LM head is not drawn),
# tokens a sequence (an image for ViT), text (False: no prompts of any length))
HELDOUT_MODELS = [
    ("BERT-base", 768, 2304, 3072, False, 0, 512, True),
    ("BERT-large", 1024, 3072, 4096, False, 0, 512, True),
    ("GPT-2 small", 768, 2304, 3072, False, 50257, 1024, True),
    ("GPT-2 medium", 1024, 3072, 4096, False, 50257, 1024, True),
    ("GPT-2 large", 1280, 3840, 5120, False, 50257, 1024, True),
    ("GPT-2 XL", 1600, 4800, 6400, False, 50257, 1024, True),
    ("GPT-3 2.7B", 2560, 7680, 10240, False, 0, 2048, True),
    ("GPT-3 6.7B", 4096, 12288, 16384, False, 0, 2048, True),
    ("GPT-3 13B", 5140, 15420, 20560, False, 0, 2048, True),
    ("GPT-3 175B", 12288, 36864, 49152, False, 0, 2048, True),
    ("LLaMA-2-7B", 4096, 12288, 11008, True, 32000, 4096, True),
    ("LLaMA-2-13B", 5120, 15360, 13824, True, 32000, 4096, True),
    ("LLaMA-2-70B", 8192, 10240, 28672, True, 32000, 4096, True),
    ("LLaMA-3-8B", 4096, 6144, 14336, True, 128256, 8192, True),
    ("Falcon-7B", 4544, 4672, 18176, False, 65024, 2048, True),
    ("ViT-B/16", 768, 2304, 3072, False, 0, 197, False),
    ("ViT-L/16", 1024, 3072, 4096, False, 0, 197, False),
    ("ViT-H/14", 1280, 3840, 5120, False, 0, 257, False),
]
ROUTER = ("Mixtral 8x7B router", 4096, 8, 32768)  # (source, d, experts, context)
LORA_RANKS = [1, 2, 4, 8, 16]
# A training batch is BATCHES' sequences, at most MAX_TOKENS tokens; a prefill is log-uniform in
# PREFILL_TOKENS.
BATCHES = [1, 2, 4, 8, 16, 32, 64]
MAX_TOKENS = 32768
PREFILL_TOKENS = (128, 16384)
# Every shape fits the harness on an 80 GB GPU: A, B and C under 2.5 GB each, so A, B, two or
# three copies of C, their FP64 copies (the accuracy columns), 07's split-K workspace (at most
# 256 MB) and padded B (at most 1 GB) take under 40 GB. MAX_MACS (2^42, 8 x 8192^3) keeps a launch
# under about 0.2 s.
MAX_OPERAND_BYTES = 2_500_000_000
MAX_MACS = 2 ** 42
# 1000 * 12^(i/5) and 1000 * 12^(i/4), rounded: [1000, 12000] cut into equal parts of its log range.
SQUARE_STRATA = [1000, 1644, 2702, 4441, 7300, 12000]
NEAR_SQUARE_STRATA = [1000, 1861, 3464, 6447, 12000]
HELDOUT_GROUPS = [("layer", 12), ("weight grad", 6), ("small M", 10), ("small N", 8),
                  ("square", 5), ("near-square", 4), ("tall", 3), ("wide", 3), ("long K", 4),
                  ("unaligned", 4)]


def log_uniform(rng, lo, hi):
    """An integer in [lo, hi] with P(x) proportional to 1/x: x uniform, kept with probability
    lo / x. Integers and randrange only, so every platform and Python 3 version draws the same."""
    while True:
        x = rng.randrange(lo, hi + 1)
        if rng.randrange(x) < lo:
            return x


def model_layers():
    """[(source, input features, output features, tokens a sequence, text)]: every projection of
    HELDOUT_MODELS."""
    layers = []
    for name, d, qkv, ffn, gated, vocabulary, sequence, text in HELDOUT_MODELS:
        widths = [("Q/K/V", d, qkv), ("attention out", d, d), ("FFN up", d, ffn),
                  ("FFN down", ffn, d)]
        if gated:
            widths.append(("FFN gate+up", d, 2 * ffn))
        if vocabulary:
            widths.append(("LM head", d, vocabulary))
        layers += [(f"{name} {what}", k, n, sequence, text) for what, k, n in widths]
    return layers


def heldout_tokens(rng, sequence, prompts):
    """(tokens, what they are) of one pass over sequences of `sequence` tokens: a training batch,
    or with `prompts` (a text model's forward pass) even odds of that and a prefill."""
    if not prompts or rng.choice(["batch", "prefill"]) == "batch":
        batch = rng.choice([b for b in BATCHES if b * sequence <= MAX_TOKENS])
        return batch * sequence, f"{batch} x {sequence} tokens"
    tokens = log_uniform(rng, *PREFILL_TOKENS)
    return tokens, f"{tokens} prompt tokens"


def draw_heldout(rng, group, index, layers):
    """One candidate (M, N, K, source) for the index-th shape of a group, by the rules written
    above HELDOUT_SEED."""
    if group in ("layer", "weight grad", "small M"):
        source, k, n, sequence, text = rng.choice(layers)
        if group == "small M":
            m = rng.randrange(1, 17)
            return m, n, k, f"{source}, decode step of {m}"
        if group == "weight grad":
            tokens, what = heldout_tokens(rng, sequence, prompts=False)
            return k, n, tokens, f"{source}, {what}"
        if rng.choice(["forward", "data gradient"]) == "forward":
            tokens, what = heldout_tokens(rng, sequence, prompts=text)
            return tokens, n, k, f"{source}, {what}"
        tokens, what = heldout_tokens(rng, sequence, prompts=False)
        return tokens, k, n, f"{source}, data grad, {what}"
    if group == "small N":
        kind = rng.choice(["transposed", "lora", "router"])
        if kind == "router":
            source, d, experts, sequence = ROUTER
            tokens, what = heldout_tokens(rng, sequence, prompts=True)
            return tokens, experts, d, f"{source}, {what}"
        source, k, n, sequence, text = rng.choice(layers)
        if kind == "transposed":
            count = rng.randrange(1, 17)
            return n, count, k, f"{source}, decode step of {count} as W^T x^T"
        rank = rng.choice(LORA_RANKS)
        tokens, what = heldout_tokens(rng, sequence, prompts=text)
        return tokens, rank, k, f"rank-{rank} LoRA A, {source} input, {what}"
    if group == "square":
        n = log_uniform(rng, *SQUARE_STRATA[index:index + 2])
        return n, n, n, "square"
    if group == "near-square":
        s = log_uniform(rng, *NEAR_SQUARE_STRATA[index:index + 2])
        m, n, k = (s * rng.randrange(850, 1151) // 1000 for _ in range(3))
        return m, n, k, f"near {s}^3"
    if group == "tall":
        return (log_uniform(rng, 16384, 262144), log_uniform(rng, 17, 256),
                log_uniform(rng, 256, 8192), "tall and skinny")
    if group == "wide":
        return (log_uniform(rng, 17, 256), log_uniform(rng, 16384, 262144),
                log_uniform(rng, 256, 8192), "wide and skinny")
    if group == "long K":
        return (log_uniform(rng, 8, 256), log_uniform(rng, 8, 256),
                log_uniform(rng, 2 ** 18, 2 ** 21), "long K, small C")
    if group == "unaligned":
        m, n, k = (log_uniform(rng, 257, 16383) | 1 for _ in range(3))
        return m, n, k, "odd M, N and K"
    raise ValueError(f"unknown held-out group {group!r}")


def heldout_draws(seed=HELDOUT_SEED, seen=()):
    """[(M, N, K, group, source)]: HELDOUT_GROUPS' counts of each group, in that order, drawn with
    random.Random(seed) by the rules written above HELDOUT_SEED; `seen` adds shapes a draw must
    not repeat (the second draw: the first's)."""
    rng = random.Random(seed)
    layers = model_layers()
    taken = {s[:3] for s in list(SUITE) + HOPPER_SUITE + EXTRA + list(seen)}
    draws = []
    for group, count in HELDOUT_GROUPS:
        index = 0
        while index < count:
            m, n, k, source = draw_heldout(rng, group, index, layers)
            tile_multiple = group in ("square", "near-square") and any(
                v % 128 == 0 for v in (m, n, k))
            if (tile_multiple or (group == "near-square" and m == n == k)
                    or (m, n, k) in taken or m * n * k > MAX_MACS
                    or 4 * max(m * k, k * n, m * n) > MAX_OPERAND_BYTES):
                continue
            taken.add((m, n, k))
            draws.append((m, n, k, group, source))
            index += 1
    return draws


def heldout_suite(seed=HELDOUT_SEED, seen=()):
    """[(M, N, K, group)] drawn with `seed`: HELDOUT_SUITE for HELDOUT_SEED, and the n-th draw's
    HELDOUT<n>_SUITE for HELDOUT<n>_SEED with the first n - 1 draws' shapes seen (HELDOUT_DRAWS
    lists the draws in order)."""
    return [draw[:4] for draw in heldout_draws(seed, seen)]


def heldout_literal(seed=HELDOUT_SEED, seen=(), name="HELDOUT_SUITE"):
    """The `name` literal of scripts/shapes.py for `seed`, each shape's source beside it."""
    lines = [f"{name} = ["]
    for m, n, k, group, source in heldout_draws(seed, seen):
        shape = f'    ({m}, {n}, {k}, "{group}"),'
        line = f"{shape}  # {source}"
        # The tree's line limit (100): a longer source goes on a line of its own, above.
        lines += [line] if len(line) <= 100 else [f"    # {source}", shape]
    return "\n".join(lines + ["]"])


# heldout_literal() wrote this list (the test checks that the two agree): see the comment above
# HELDOUT_SEED for the distribution, and beside each shape where it comes from.
HELDOUT_SUITE = [
    (4096, 1024, 1024, "layer"),  # BERT-large attention out, 8 x 512 tokens
    (8192, 4096, 12288, "layer"),  # LLaMA-2-7B Q/K/V, data grad, 2 x 4096 tokens
    (197, 3072, 768, "layer"),  # ViT-B/16 FFN down, data grad, 1 x 197 tokens
    (8192, 4096, 4096, "layer"),  # GPT-3 6.7B attention out, data grad, 4 x 2048 tokens
    (241, 16384, 4096, "layer"),  # GPT-3 6.7B FFN up, 241 prompt tokens
    (14718, 32000, 8192, "layer"),  # LLaMA-2-70B LM head, 14718 prompt tokens
    (16384, 2560, 10240, "layer"),  # GPT-3 2.7B FFN down, 8 x 2048 tokens
    (4096, 4096, 22016, "layer"),  # LLaMA-2-7B FFN gate+up, data grad, 1 x 4096 tokens
    (514, 1280, 5120, "layer"),  # ViT-H/14 FFN up, data grad, 2 x 257 tokens
    (8192, 5120, 5120, "layer"),  # LLaMA-2-13B attention out, data grad, 2 x 4096 tokens
    (16384, 28672, 8192, "layer"),  # LLaMA-2-70B FFN down, data grad, 4 x 4096 tokens
    (4096, 5140, 20560, "layer"),  # GPT-3 13B FFN down, 2 x 2048 tokens
    (20560, 5140, 16384, "weight grad"),  # GPT-3 13B FFN down, 8 x 2048 tokens
    (768, 50257, 8192, "weight grad"),  # GPT-2 small LM head, 8 x 1024 tokens
    (768, 2304, 8192, "weight grad"),  # GPT-2 small Q/K/V, 8 x 1024 tokens
    (4096, 14336, 16384, "weight grad"),  # LLaMA-3-8B FFN up, 2 x 8192 tokens
    (5120, 1280, 257, "weight grad"),  # ViT-H/14 FFN down, 1 x 257 tokens
    (1280, 50257, 8192, "weight grad"),  # GPT-2 large LM head, 8 x 1024 tokens
    (9, 5120, 1280, "small M"),  # ViT-H/14 FFN up, decode step of 9
    (3, 768, 768, "small M"),  # GPT-2 small attention out, decode step of 3
    (6, 1024, 4096, "small M"),  # GPT-2 medium FFN down, decode step of 6
    (10, 32000, 5120, "small M"),  # LLaMA-2-13B LM head, decode step of 10
    (4, 8192, 28672, "small M"),  # LLaMA-2-70B FFN down, decode step of 4
    (16, 6400, 1600, "small M"),  # GPT-2 XL FFN up, decode step of 16
    (14, 2304, 768, "small M"),  # GPT-2 small Q/K/V, decode step of 14
    (5, 5120, 1280, "small M"),  # ViT-H/14 FFN up, decode step of 5
    (13, 768, 768, "small M"),  # BERT-base attention out, decode step of 13
    (10, 4096, 1024, "small M"),  # ViT-L/16 FFN up, decode step of 10
    (32768, 8, 4096, "small N"),  # Mixtral 8x7B router, 1 x 32768 tokens
    (1136, 4, 6400, "small N"),  # rank-4 LoRA A, GPT-2 XL FFN down input, 1136 prompt tokens
    (257, 2, 1280, "small N"),  # rank-2 LoRA A, ViT-H/14 FFN up input, 1 x 257 tokens
    (5140, 15, 5140, "small N"),  # GPT-3 13B attention out, decode step of 15 as W^T x^T
    (1619, 8, 4096, "small N"),  # Mixtral 8x7B router, 1619 prompt tokens
    (1182, 8, 4096, "small N"),  # Mixtral 8x7B router, 1182 prompt tokens
    (32768, 8, 10240, "small N"),  # rank-8 LoRA A, GPT-3 2.7B FFN down input, 16 x 2048 tokens
    (554, 8, 4096, "small N"),  # rank-8 LoRA A, GPT-3 6.7B attention out input, 554 prompt tokens
    (1074, 1074, 1074, "square"),  # square
    (1824, 1824, 1824, "square"),  # square
    (3640, 3640, 3640, "square"),  # square
    (4585, 4585, 4585, "square"),  # square
    (9842, 9842, 9842, "square"),  # square
    (1244, 1224, 1180, "near-square"),  # near 1344^3
    (1836, 1772, 1992, "near-square"),  # near 1950^3
    (5351, 5947, 4941, "near-square"),  # near 5466^3
    (9676, 10457, 11038, "near-square"),  # near 11161^3
    (21091, 23, 7692, "tall"),  # tall and skinny
    (55412, 41, 600, "tall"),  # tall and skinny
    (160211, 22, 1808, "tall"),  # tall and skinny
    (91, 57324, 482, "wide"),  # wide and skinny
    (31, 113375, 1181, "wide"),  # wide and skinny
    (104, 186503, 1144, "wide"),  # wide and skinny
    (9, 101, 667448, "long K"),  # long K, small C
    (9, 55, 1645564, "long K"),  # long K, small C
    (228, 43, 1823817, "long K"),  # long K, small C
    (9, 13, 494290, "long K"),  # long K, small C
    (509, 263, 6015, "unaligned"),  # odd M, N and K
    (311, 1633, 3461, "unaligned"),  # odd M, N and K
    (7587, 10993, 457, "unaligned"),  # odd M, N and K
    (2193, 2029, 1361, "unaligned"),  # odd M, N and K
]

# The second draw (issue 19). The first draw's thin rows were watched while the thin kernels were
# written (07_any_shape/README.md), and its weak rows are what later changes aim at: from then on
# it is fitting data like SUITE. HELDOUT2_SEED, fixed before this draw and committed with it
# before any chapter ran these shapes, draws the same distribution again without the first
# draw's shapes; its figures alone count for issue 19's floors. heldout_literal() wrote the list.
HELDOUT2 = "heldout2"
HELDOUT2_SEED = 20  # the next integer after HELDOUT_SEED; never changed to pick a draw
HELDOUT2_SUITE = [
    (32768, 1280, 1280, "layer"),  # GPT-2 large attention out, data grad, 32 x 1024 tokens
    (16448, 3840, 1280, "layer"),  # ViT-H/14 Q/K/V, 64 x 257 tokens
    (16384, 12288, 12288, "layer"),  # GPT-3 175B attention out, 8 x 2048 tokens
    (8192, 13824, 5120, "layer"),  # LLaMA-2-13B FFN up, 2 x 4096 tokens
    (32768, 1600, 6400, "layer"),  # GPT-2 XL FFN up, data grad, 32 x 1024 tokens
    (8192, 3072, 768, "layer"),  # GPT-2 small FFN down, data grad, 8 x 1024 tokens
    (1024, 3072, 768, "layer"),  # GPT-2 small FFN up, 1 x 1024 tokens
    (2048, 6400, 1600, "layer"),  # GPT-2 XL FFN up, 2 x 1024 tokens
    (2048, 12288, 4096, "layer"),  # GPT-3 6.7B Q/K/V, 1 x 2048 tokens
    (32768, 16384, 4096, "layer"),  # GPT-3 6.7B FFN up, 16 x 2048 tokens
    (32768, 10240, 2560, "layer"),  # GPT-3 2.7B FFN up, 16 x 2048 tokens
    (4112, 1280, 1280, "layer"),  # ViT-H/14 attention out, data grad, 16 x 257 tokens
    (1280, 3840, 1028, "weight grad"),  # ViT-H/14 Q/K/V, 4 x 257 tokens
    (18176, 4544, 16384, "weight grad"),  # Falcon-7B FFN down, 8 x 2048 tokens
    (1280, 5120, 2048, "weight grad"),  # GPT-2 large FFN up, 2 x 1024 tokens
    (5120, 5120, 4096, "weight grad"),  # LLaMA-2-13B attention out, 1 x 4096 tokens
    (4096, 1024, 16384, "weight grad"),  # GPT-2 medium FFN down, 16 x 1024 tokens
    (5120, 27648, 16384, "weight grad"),  # LLaMA-2-13B FFN gate+up, 4 x 4096 tokens
    (4, 7680, 2560, "small M"),  # GPT-3 2.7B Q/K/V, decode step of 4
    (2, 3072, 1024, "small M"),  # ViT-L/16 Q/K/V, decode step of 2
    (7, 28672, 4096, "small M"),  # LLaMA-3-8B FFN gate+up, decode step of 7
    (6, 32000, 5120, "small M"),  # LLaMA-2-13B LM head, decode step of 6
    (3, 50257, 1280, "small M"),  # GPT-2 large LM head, decode step of 3
    (10, 1024, 1024, "small M"),  # GPT-2 medium attention out, decode step of 10
    (11, 2304, 768, "small M"),  # BERT-base Q/K/V, decode step of 11
    (15, 5120, 5120, "small M"),  # LLaMA-2-13B attention out, decode step of 15
    (2, 128256, 4096, "small M"),  # LLaMA-3-8B LM head, decode step of 2
    (4, 1280, 5120, "small M"),  # GPT-2 large FFN down, decode step of 4
    (2048, 4, 18176, "small N"),  # rank-4 LoRA A, Falcon-7B FFN down input, 1 x 2048 tokens
    (2693, 1, 4096, "small N"),  # rank-1 LoRA A, GPT-3 6.7B Q/K/V input, 2693 prompt tokens
    (5120, 9, 13824, "small N"),  # LLaMA-2-13B FFN down, decode step of 9 as W^T x^T
    (32000, 4, 4096, "small N"),  # LLaMA-2-7B LM head, decode step of 4 as W^T x^T
    (10240, 7, 2560, "small N"),  # GPT-3 2.7B FFN up, decode step of 7 as W^T x^T
    (50257, 10, 768, "small N"),  # GPT-2 small LM head, decode step of 10 as W^T x^T
    (4544, 13, 18176, "small N"),  # Falcon-7B FFN down, decode step of 13 as W^T x^T
    (1280, 3, 1280, "small N"),  # ViT-H/14 attention out, decode step of 3 as W^T x^T
    (1459, 1459, 1459, "square"),  # square
    (1650, 1650, 1650, "square"),  # square
    (3088, 3088, 3088, "square"),  # square
    (5716, 5716, 5716, "square"),  # square
    (9743, 9743, 9743, "square"),  # square
    (1091, 969, 1153, "near-square"),  # near 1101^3
    (2761, 2850, 2362, "near-square"),  # near 2625^3
    (4072, 3579, 3194, "near-square"),  # near 3736^3
    (12183, 11040, 9240, "near-square"),  # near 10782^3
    (17022, 130, 2339, "tall"),  # tall and skinny
    (179806, 22, 2680, "tall"),  # tall and skinny
    (21343, 26, 2506, "tall"),  # tall and skinny
    (98, 84315, 1491, "wide"),  # wide and skinny
    (147, 153175, 611, "wide"),  # wide and skinny
    (90, 20014, 604, "wide"),  # wide and skinny
    (38, 8, 371491, "long K"),  # long K, small C
    (89, 10, 633786, "long K"),  # long K, small C
    (29, 47, 311006, "long K"),  # long K, small C
    (191, 122, 370614, "long K"),  # long K, small C
    (805, 1417, 4499, "unaligned"),  # odd M, N and K
    (11337, 12271, 925, "unaligned"),  # odd M, N and K
    (285, 3175, 669, "unaligned"),  # odd M, N and K
    (297, 927, 2199, "unaligned"),  # odd M, N and K
]

# The third draw (issue 19). The second draw's few-column rows were watched while sgemm_few_cols
# was rewritten (07_any_shape/README.md, "Thin problems"): from then on it is fitting data too.
# HELDOUT3_SEED, fixed before this draw and committed with it before any chapter ran these shapes,
# draws the same distribution again without the first two draws' shapes. heldout_literal() wrote
# the list.
HELDOUT3 = "heldout3"
HELDOUT3_SEED = 21  # the next integer after HELDOUT2_SEED; never changed to pick a draw
HELDOUT3_SUITE = [
    (32768, 5120, 1280, "layer"),  # GPT-2 large FFN down, data grad, 32 x 1024 tokens
    (32768, 13824, 5120, "layer"),  # LLaMA-2-13B FFN down, data grad, 8 x 4096 tokens
    (1024, 4800, 1600, "layer"),  # GPT-2 XL Q/K/V, 1 x 1024 tokens
    (32768, 3840, 1280, "layer"),  # GPT-2 large Q/K/V, 32 x 1024 tokens
    (16384, 1024, 1024, "layer"),  # BERT-large attention out, data grad, 32 x 512 tokens
    (4096, 5120, 13824, "layer"),  # LLaMA-2-13B FFN up, data grad, 1 x 4096 tokens
    (2048, 12288, 49152, "layer"),  # GPT-3 175B FFN up, data grad, 1 x 2048 tokens
    (257, 1280, 5120, "layer"),  # ViT-H/14 FFN up, data grad, 1 x 257 tokens
    (1024, 1280, 1280, "layer"),  # GPT-2 large attention out, 1 x 1024 tokens
    (567, 28672, 8192, "layer"),  # LLaMA-2-70B FFN up, 567 prompt tokens
    (1024, 1280, 5120, "layer"),  # GPT-2 large FFN up, data grad, 1 x 1024 tokens
    (32768, 6144, 4096, "layer"),  # LLaMA-3-8B Q/K/V, 4 x 8192 tokens
    (1024, 3072, 788, "weight grad"),  # ViT-L/16 Q/K/V, 4 x 197 tokens
    (18176, 4544, 32768, "weight grad"),  # Falcon-7B FFN down, 16 x 2048 tokens
    (1024, 1024, 2048, "weight grad"),  # GPT-2 medium attention out, 2 x 1024 tokens
    (5120, 1280, 32768, "weight grad"),  # GPT-2 large FFN down, 32 x 1024 tokens
    (4096, 12288, 16384, "weight grad"),  # LLaMA-2-7B Q/K/V, 4 x 4096 tokens
    (10240, 2560, 2048, "weight grad"),  # GPT-3 2.7B FFN down, 1 x 2048 tokens
    (3, 1280, 5120, "small M"),  # GPT-2 large FFN down, decode step of 3
    (14, 50257, 1280, "small M"),  # GPT-2 large LM head, decode step of 14
    (6, 4096, 11008, "small M"),  # LLaMA-2-7B FFN down, decode step of 6
    (8, 3072, 1024, "small M"),  # BERT-large Q/K/V, decode step of 8
    (6, 13824, 5120, "small M"),  # LLaMA-2-13B FFN up, decode step of 6
    (1, 3072, 768, "small M"),  # ViT-B/16 FFN up, decode step of 1
    (16, 12288, 4096, "small M"),  # LLaMA-2-7B Q/K/V, decode step of 16
    (13, 14336, 4096, "small M"),  # LLaMA-3-8B FFN up, decode step of 13
    (8, 2560, 10240, "small M"),  # GPT-3 2.7B FFN down, decode step of 8
    (3, 5120, 1280, "small M"),  # GPT-2 large FFN up, decode step of 3
    (16384, 8, 5120, "small N"),  # rank-8 LoRA A, LLaMA-2-13B FFN up input, 4 x 4096 tokens
    (4096, 10, 4096, "small N"),  # GPT-3 6.7B attention out, decode step of 10 as W^T x^T
    (5120, 8, 13824, "small N"),  # LLaMA-2-13B FFN down, decode step of 8 as W^T x^T
    (15360, 3, 5120, "small N"),  # LLaMA-2-13B Q/K/V, decode step of 3 as W^T x^T
    (514, 2, 1280, "small N"),  # rank-2 LoRA A, ViT-H/14 attention out input, 2 x 257 tokens
    (2410, 8, 4096, "small N"),  # Mixtral 8x7B router, 2410 prompt tokens
    (536, 1, 4096, "small N"),  # rank-1 LoRA A, GPT-2 medium FFN down input, 536 prompt tokens
    (232, 8, 4096, "small N"),  # Mixtral 8x7B router, 232 prompt tokens
    (1320, 1320, 1320, "square"),  # square
    (2282, 2282, 2282, "square"),  # square
    (4169, 4169, 4169, "square"),  # square
    (5159, 5159, 5159, "square"),  # square
    (11579, 11579, 11579, "square"),  # square
    (1774, 1478, 1527, "near-square"),  # near 1634^3
    (3153, 3371, 3434, "near-square"),  # near 3302^3
    (6148, 5573, 5404, "near-square"),  # near 6255^3
    (9458, 8119, 8290, "near-square"),  # near 8529^3
    (87792, 25, 411, "tall"),  # tall and skinny
    (147771, 78, 1467, "tall"),  # tall and skinny
    (250859, 232, 1502, "tall"),  # tall and skinny
    (19, 42114, 3142, "wide"),  # wide and skinny
    (58, 24887, 410, "wide"),  # wide and skinny
    (190, 19331, 2428, "wide"),  # wide and skinny
    (14, 201, 704368, "long K"),  # long K, small C
    (75, 60, 330821, "long K"),  # long K, small C
    (14, 10, 857162, "long K"),  # long K, small C
    (23, 170, 303828, "long K"),  # long K, small C
    (13569, 777, 6735, "unaligned"),  # odd M, N and K
    (11941, 1051, 347, "unaligned"),  # odd M, N and K
    (317, 965, 733, "unaligned"),  # odd M, N and K
    (929, 10355, 2577, "unaligned"),  # odd M, N and K
]

# The fourth draw (issue 19). The third draw's padded-B rows were watched while 07's epilogue for
# padded B was rewritten (07_any_shape/README.md, "Rows of odd length"): from then on it is
# fitting data too. HELDOUT4_SEED, fixed before this draw and committed with it before any
# chapter ran these shapes, draws the same distribution again without the first three draws'
# shapes. heldout_literal() wrote the list.
HELDOUT4 = "heldout4"
HELDOUT4_SEED = 22  # the next integer after HELDOUT3_SEED; never changed to pick a draw
HELDOUT4_SUITE = [
    (16384, 8192, 8192, "layer"),  # LLaMA-2-70B attention out, 4 x 4096 tokens
    (6692, 3072, 768, "layer"),  # GPT-2 small FFN up, 6692 prompt tokens
    (2048, 768, 50257, "layer"),  # GPT-2 small LM head, data grad, 2 x 1024 tokens
    (426, 1280, 5120, "layer"),  # GPT-2 large FFN down, 426 prompt tokens
    (32768, 4096, 14336, "layer"),  # LLaMA-3-8B FFN up, data grad, 4 x 8192 tokens
    (1024, 768, 2304, "layer"),  # GPT-2 small Q/K/V, data grad, 1 x 1024 tokens
    (2048, 16384, 4096, "layer"),  # GPT-3 6.7B FFN up, 1 x 2048 tokens
    (32768, 1600, 1600, "layer"),  # GPT-2 XL attention out, data grad, 32 x 1024 tokens
    (4667, 4096, 1024, "layer"),  # GPT-2 medium FFN up, 4667 prompt tokens
    (32768, 2560, 2560, "layer"),  # GPT-3 2.7B attention out, data grad, 16 x 2048 tokens
    (183, 32000, 5120, "layer"),  # LLaMA-2-13B LM head, 183 prompt tokens
    (8192, 2560, 10240, "layer"),  # GPT-3 2.7B FFN down, 4 x 2048 tokens
    (5140, 20560, 2048, "weight grad"),  # GPT-3 13B FFN up, 1 x 2048 tokens
    (12288, 36864, 2048, "weight grad"),  # GPT-3 175B Q/K/V, 1 x 2048 tokens
    (1024, 3072, 8192, "weight grad"),  # GPT-2 medium Q/K/V, 8 x 1024 tokens
    (12288, 49152, 4096, "weight grad"),  # GPT-3 175B FFN up, 2 x 2048 tokens
    (1280, 5120, 8192, "weight grad"),  # GPT-2 large FFN up, 8 x 1024 tokens
    (5140, 15420, 16384, "weight grad"),  # GPT-3 13B Q/K/V, 8 x 2048 tokens
    (12, 15360, 5120, "small M"),  # LLaMA-2-13B Q/K/V, decode step of 12
    (13, 50257, 1024, "small M"),  # GPT-2 medium LM head, decode step of 13
    (8, 5140, 20560, "small M"),  # GPT-3 13B FFN down, decode step of 8
    (8, 4544, 4544, "small M"),  # Falcon-7B attention out, decode step of 8
    (12, 4096, 1024, "small M"),  # ViT-L/16 FFN up, decode step of 12
    (15, 1024, 1024, "small M"),  # BERT-large attention out, decode step of 15
    (7, 4096, 16384, "small M"),  # GPT-3 6.7B FFN down, decode step of 7
    (5, 768, 3072, "small M"),  # GPT-2 small FFN down, decode step of 5
    (10, 10240, 2560, "small M"),  # GPT-3 2.7B FFN up, decode step of 10
    (5, 4544, 18176, "small M"),  # Falcon-7B FFN down, decode step of 5
    (32768, 4, 1024, "small N"),  # rank-4 LoRA A, BERT-large FFN up input, 64 x 512 tokens
    (1024, 16, 1024, "small N"),  # GPT-2 medium attention out, decode step of 16 as W^T x^T
    (334, 16, 5120, "small N"),  # rank-16 LoRA A, GPT-2 large FFN down input, 334 prompt tokens
    (10240, 11, 8192, "small N"),  # LLaMA-2-70B Q/K/V, decode step of 11 as W^T x^T
    (32000, 6, 8192, "small N"),  # LLaMA-2-70B LM head, decode step of 6 as W^T x^T
    (1273, 1, 11008, "small N"),  # rank-1 LoRA A, LLaMA-2-7B FFN down input, 1273 prompt tokens
    (445, 8, 4096, "small N"),  # Mixtral 8x7B router, 445 prompt tokens
    (4096, 14, 4096, "small N"),  # GPT-3 6.7B attention out, decode step of 14 as W^T x^T
    (1286, 1286, 1286, "square"),  # square
    (2376, 2376, 2376, "square"),  # square
    (3454, 3454, 3454, "square"),  # square
    (6361, 6361, 6361, "square"),  # square
    (8461, 8461, 8461, "square"),  # square
    (1327, 1271, 1421, "near-square"),  # near 1432^3
    (2911, 3694, 3810, "near-square"),  # near 3405^3
    (4674, 5195, 5021, "near-square"),  # near 5423^3
    (7768, 9908, 8181, "near-square"),  # near 8991^3
    (74670, 60, 1358, "tall"),  # tall and skinny
    (51280, 50, 2120, "tall"),  # tall and skinny
    (93267, 40, 2419, "tall"),  # tall and skinny
    (38, 33188, 501, "wide"),  # wide and skinny
    (86, 21108, 339, "wide"),  # wide and skinny
    (29, 63952, 2411, "wide"),  # wide and skinny
    (14, 87, 958730, "long K"),  # long K, small C
    (16, 136, 798326, "long K"),  # long K, small C
    (201, 110, 1307849, "long K"),  # long K, small C
    (131, 122, 950606, "long K"),  # long K, small C
    (971, 409, 271, "unaligned"),  # odd M, N and K
    (9015, 579, 2687, "unaligned"),  # odd M, N and K
    (3525, 6553, 2519, "unaligned"),  # odd M, N and K
    (3369, 365, 627, "unaligned"),  # odd M, N and K
]


# The fifth draw (issue 19). The fourth draw's tall rows (74670 x 60 x 1358, 93267 x 40 x 2419)
# were watched while 07's model learned the column shares, and its small-M rows (15 x 1024 x 1024)
# while the few-rows kernel was rewritten (07_any_shape/README.md): from then on it is fitting data
# too. HELDOUT5_SEED, fixed before this draw and committed with it before any chapter ran these
# shapes, draws the same distribution again without the first four draws' shapes.
# heldout_literal() wrote the list.
HELDOUT5 = "heldout5"
HELDOUT5_SEED = 23  # the next integer after HELDOUT4_SEED; never changed to pick a draw
HELDOUT5_SUITE = [
    (32768, 5140, 5140, "layer"),  # GPT-3 13B attention out, 16 x 2048 tokens
    (16384, 20560, 5140, "layer"),  # GPT-3 13B FFN down, data grad, 8 x 2048 tokens
    (8192, 1600, 1600, "layer"),  # GPT-2 XL attention out, data grad, 8 x 1024 tokens
    (4586, 768, 768, "layer"),  # BERT-base attention out, 4586 prompt tokens
    (2048, 1280, 3840, "layer"),  # GPT-2 large Q/K/V, data grad, 2 x 1024 tokens
    (3119, 768, 3072, "layer"),  # BERT-base FFN down, 3119 prompt tokens
    (1087, 50257, 1024, "layer"),  # GPT-2 medium LM head, 1087 prompt tokens
    (4096, 1280, 5120, "layer"),  # GPT-2 large FFN up, data grad, 4 x 1024 tokens
    (2048, 10240, 2560, "layer"),  # GPT-3 2.7B FFN down, data grad, 1 x 2048 tokens
    (4096, 5140, 5140, "layer"),  # GPT-3 13B attention out, data grad, 2 x 2048 tokens
    (32768, 5120, 5120, "layer"),  # LLaMA-2-13B attention out, data grad, 8 x 4096 tokens
    (32768, 768, 3072, "layer"),  # BERT-base FFN up, data grad, 64 x 512 tokens
    (1024, 3072, 394, "weight grad"),  # ViT-L/16 Q/K/V, 2 x 197 tokens
    (8192, 10240, 8192, "weight grad"),  # LLaMA-2-70B Q/K/V, 2 x 4096 tokens
    (5120, 1280, 16448, "weight grad"),  # ViT-H/14 FFN down, 64 x 257 tokens
    (5120, 32000, 4096, "weight grad"),  # LLaMA-2-13B LM head, 1 x 4096 tokens
    (8192, 28672, 4096, "weight grad"),  # LLaMA-2-70B FFN up, 1 x 4096 tokens
    (5120, 15360, 32768, "weight grad"),  # LLaMA-2-13B Q/K/V, 8 x 4096 tokens
    (2, 12288, 4096, "small M"),  # GPT-3 6.7B Q/K/V, decode step of 2
    (14, 3072, 1024, "small M"),  # BERT-large Q/K/V, decode step of 14
    (12, 32000, 4096, "small M"),  # LLaMA-2-7B LM head, decode step of 12
    (6, 16384, 4096, "small M"),  # GPT-3 6.7B FFN up, decode step of 6
    (3, 3840, 1280, "small M"),  # GPT-2 large Q/K/V, decode step of 3
    (15, 3072, 768, "small M"),  # ViT-B/16 FFN up, decode step of 15
    (4, 4544, 4544, "small M"),  # Falcon-7B attention out, decode step of 4
    (5, 57344, 8192, "small M"),  # LLaMA-2-70B FFN gate+up, decode step of 5
    (10, 1280, 1280, "small M"),  # ViT-H/14 attention out, decode step of 10
    (1, 4096, 1024, "small M"),  # GPT-2 medium FFN up, decode step of 1
    (10534, 4, 20560, "small N"),  # rank-4 LoRA A, GPT-3 13B FFN down input, 10534 prompt tokens
    (1280, 3, 5120, "small N"),  # ViT-H/14 FFN down, decode step of 3 as W^T x^T
    (6144, 2, 4096, "small N"),  # LLaMA-3-8B Q/K/V, decode step of 2 as W^T x^T
    (768, 13, 3072, "small N"),  # ViT-B/16 FFN down, decode step of 13 as W^T x^T
    (65024, 14, 4544, "small N"),  # Falcon-7B LM head, decode step of 14 as W^T x^T
    (3840, 1, 1280, "small N"),  # ViT-H/14 Q/K/V, decode step of 1 as W^T x^T
    (4112, 16, 1280, "small N"),  # rank-16 LoRA A, ViT-H/14 attention out input, 16 x 257 tokens
    (642, 8, 4096, "small N"),  # Mixtral 8x7B router, 642 prompt tokens
    (1457, 1457, 1457, "square"),  # square
    (2187, 2187, 2187, "square"),  # square
    (4214, 4214, 4214, "square"),  # square
    (7199, 7199, 7199, "square"),  # square
    (9763, 9763, 9763, "square"),  # square
    (1993, 1644, 1922, "near-square"),  # near 1821^3
    (2259, 2473, 3000, "near-square"),  # near 2634^3
    (5276, 5313, 6231, "near-square"),  # near 6121^3
    (8967, 10986, 9702, "near-square"),  # near 9801^3
    (19243, 200, 1208, "tall"),  # tall and skinny
    (33426, 49, 1763, "tall"),  # tall and skinny
    (66608, 66, 5066, "tall"),  # tall and skinny
    (68, 16796, 2219, "wide"),  # wide and skinny
    (38, 68303, 420, "wide"),  # wide and skinny
    (163, 17420, 750, "wide"),  # wide and skinny
    (35, 9, 1259364, "long K"),  # long K, small C
    (22, 108, 357581, "long K"),  # long K, small C
    (12, 31, 1520856, "long K"),  # long K, small C
    (28, 31, 1064199, "long K"),  # long K, small C
    (6685, 297, 3273, "unaligned"),  # odd M, N and K
    (12327, 4623, 449, "unaligned"),  # odd M, N and K
    (409, 515, 1907, "unaligned"),  # odd M, N and K
    (1423, 363, 311, "unaligned"),  # odd M, N and K
]


# The sixth draw (issue 19). The fifth draw's weak rows were examined under forced plans (every
# tile, 1-8 slices, padded or not) in the session of e074133, and its wide rows with N odd
# (38 x 68303 x 420 and the like; odd N is the class most failures of the five draws share) were
# watched while 07's copies of B rows that are not 16-byte aligned were rewritten (7c8dd6f): from
# then on it is fitting data too. HELDOUT6_SEED, fixed before this draw and committed with it
# before any chapter ran these shapes, draws the same distribution again without the first five
# draws' shapes. heldout_literal() wrote the list.
HELDOUT6 = "heldout6"
HELDOUT6_SEED = 24  # the next integer after HELDOUT5_SEED; never changed to pick a draw
HELDOUT6_SUITE = [
    (8192, 32000, 4096, "layer"),  # LLaMA-2-7B LM head, 2 x 4096 tokens
    (4096, 768, 768, "layer"),  # BERT-base attention out, data grad, 8 x 512 tokens
    (257, 3840, 1280, "layer"),  # ViT-H/14 Q/K/V, 1 x 257 tokens
    (681, 28672, 4096, "layer"),  # LLaMA-3-8B FFN gate+up, 681 prompt tokens
    (32768, 8192, 8192, "layer"),  # LLaMA-2-70B attention out, data grad, 8 x 4096 tokens
    (4096, 8192, 8192, "layer"),  # LLaMA-2-70B attention out, 1 x 4096 tokens
    (32768, 4544, 4672, "layer"),  # Falcon-7B Q/K/V, data grad, 16 x 2048 tokens
    (8192, 2560, 7680, "layer"),  # GPT-3 2.7B Q/K/V, data grad, 4 x 2048 tokens
    (8192, 11008, 4096, "layer"),  # LLaMA-2-7B FFN down, data grad, 2 x 4096 tokens
    (5347, 4544, 4544, "layer"),  # Falcon-7B attention out, 5347 prompt tokens
    (1473, 15360, 5120, "layer"),  # LLaMA-2-13B Q/K/V, 1473 prompt tokens
    (334, 10240, 2560, "layer"),  # GPT-3 2.7B FFN up, 334 prompt tokens
    (16384, 4096, 8192, "weight grad"),  # GPT-3 6.7B FFN down, 4 x 2048 tokens
    (8192, 57344, 8192, "weight grad"),  # LLaMA-2-70B FFN gate+up, 2 x 4096 tokens
    (2560, 10240, 8192, "weight grad"),  # GPT-3 2.7B FFN up, 4 x 2048 tokens
    (3072, 768, 1024, "weight grad"),  # BERT-base FFN down, 2 x 512 tokens
    (2560, 7680, 8192, "weight grad"),  # GPT-3 2.7B Q/K/V, 4 x 2048 tokens
    (2560, 2560, 32768, "weight grad"),  # GPT-3 2.7B attention out, 16 x 2048 tokens
    (11, 15360, 5120, "small M"),  # LLaMA-2-13B Q/K/V, decode step of 11
    (15, 4096, 4096, "small M"),  # LLaMA-2-7B attention out, decode step of 15
    (12, 8192, 8192, "small M"),  # LLaMA-2-70B attention out, decode step of 12
    (16, 8192, 8192, "small M"),  # LLaMA-2-70B attention out, decode step of 16
    (14, 65024, 4544, "small M"),  # Falcon-7B LM head, decode step of 14
    (2, 10240, 2560, "small M"),  # GPT-3 2.7B FFN up, decode step of 2
    (6, 3072, 1024, "small M"),  # GPT-2 medium Q/K/V, decode step of 6
    (1, 28672, 4096, "small M"),  # LLaMA-3-8B FFN gate+up, decode step of 1
    (3, 20560, 5140, "small M"),  # GPT-3 13B FFN up, decode step of 3
    (12, 768, 768, "small M"),  # ViT-B/16 attention out, decode step of 12
    (3072, 7, 1024, "small N"),  # ViT-L/16 Q/K/V, decode step of 7 as W^T x^T
    (16384, 1, 1280, "small N"),  # rank-1 LoRA A, GPT-2 large Q/K/V input, 16 x 1024 tokens
    (394, 4, 1024, "small N"),  # rank-4 LoRA A, ViT-L/16 attention out input, 2 x 197 tokens
    (200, 8, 4096, "small N"),  # rank-8 LoRA A, LLaMA-3-8B FFN gate+up input, 200 prompt tokens
    (14068, 8, 4096, "small N"),  # Mixtral 8x7B router, 14068 prompt tokens
    (16384, 16, 1024, "small N"),  # rank-16 LoRA A, GPT-2 medium LM head input, 16 x 1024 tokens
    (2938, 8, 4096, "small N"),  # Mixtral 8x7B router, 2938 prompt tokens
    (3152, 8, 1024, "small N"),  # rank-8 LoRA A, ViT-L/16 Q/K/V input, 16 x 197 tokens
    (1044, 1044, 1044, "square"),  # square
    (1972, 1972, 1972, "square"),  # square
    (4045, 4045, 4045, "square"),  # square
    (6170, 6170, 6170, "square"),  # square
    (8321, 8321, 8321, "square"),  # square
    (1425, 1258, 1252, "near-square"),  # near 1303^3
    (2234, 2667, 2742, "near-square"),  # near 2410^3
    (6621, 5393, 5879, "near-square"),  # near 5933^3
    (6293, 6727, 7603, "near-square"),  # near 7361^3
    (17010, 35, 327, "tall"),  # tall and skinny
    (132453, 82, 3550, "tall"),  # tall and skinny
    (50606, 23, 7712, "tall"),  # tall and skinny
    (49, 59466, 2192, "wide"),  # wide and skinny
    (56, 22306, 1256, "wide"),  # wide and skinny
    (30, 85441, 2618, "wide"),  # wide and skinny
    (14, 162, 1201492, "long K"),  # long K, small C
    (16, 47, 286914, "long K"),  # long K, small C
    (152, 13, 2003831, "long K"),  # long K, small C
    (14, 116, 374785, "long K"),  # long K, small C
    (2995, 2893, 5795, "unaligned"),  # odd M, N and K
    (2701, 443, 1047, "unaligned"),  # odd M, N and K
    (3291, 3015, 2985, "unaligned"),  # odd M, N and K
    (11909, 559, 7389, "unaligned"),  # odd M, N and K
]


# The seventh draw (issue 19). The sixth draw's two failing rows (50606 x 23 x 7712 and
# 17010 x 35 x 327) were run under forced plans, and its tall rows with few columns examined,
# while 07's few-columns kernel got its wide layout for C 17 to 24 columns wide (3ce0925, then
# 06d56e2): from then on it is fitting data too. HELDOUT7_SEED, fixed before this draw and
# committed with it before any chapter ran these shapes, draws the same distribution again without
# the first six draws' shapes. heldout_literal() wrote the list.
HELDOUT7 = "heldout7"
HELDOUT7_SEED = 25  # the next integer after HELDOUT6_SEED; never changed to pick a draw
HELDOUT7_SUITE = [
    (16384, 22016, 4096, "layer"),  # LLaMA-2-7B FFN gate+up, 4 x 4096 tokens
    (257, 1280, 3840, "layer"),  # ViT-H/14 Q/K/V, data grad, 1 x 257 tokens
    (5162, 12288, 4096, "layer"),  # GPT-3 6.7B Q/K/V, 5162 prompt tokens
    (8192, 15420, 5140, "layer"),  # GPT-3 13B Q/K/V, 4 x 2048 tokens
    (8192, 5140, 20560, "layer"),  # GPT-3 13B FFN up, data grad, 4 x 2048 tokens
    (327, 5140, 20560, "layer"),  # GPT-3 13B FFN down, 327 prompt tokens
    (878, 50257, 1024, "layer"),  # GPT-2 medium LM head, 878 prompt tokens
    (1024, 768, 768, "layer"),  # GPT-2 small attention out, 1 x 1024 tokens
    (2022, 32000, 8192, "layer"),  # LLaMA-2-70B LM head, 2022 prompt tokens
    (4096, 4800, 1600, "layer"),  # GPT-2 XL Q/K/V, 4 x 1024 tokens
    (8192, 8192, 32000, "layer"),  # LLaMA-2-70B LM head, data grad, 2 x 4096 tokens
    (8192, 768, 2304, "layer"),  # GPT-2 small Q/K/V, data grad, 8 x 1024 tokens
    (1024, 50257, 4096, "weight grad"),  # GPT-2 medium LM head, 4 x 1024 tokens
    (1280, 50257, 2048, "weight grad"),  # GPT-2 large LM head, 2 x 1024 tokens
    (5120, 27648, 4096, "weight grad"),  # LLaMA-2-13B FFN gate+up, 1 x 4096 tokens
    (12288, 12288, 16384, "weight grad"),  # GPT-3 175B attention out, 8 x 2048 tokens
    (2560, 2560, 4096, "weight grad"),  # GPT-3 2.7B attention out, 2 x 2048 tokens
    (6400, 1600, 4096, "weight grad"),  # GPT-2 XL FFN down, 4 x 1024 tokens
    (16, 1024, 4096, "small M"),  # ViT-L/16 FFN down, decode step of 16
    (4, 1024, 1024, "small M"),  # GPT-2 medium attention out, decode step of 4
    (13, 4544, 4544, "small M"),  # Falcon-7B attention out, decode step of 13
    (5, 4096, 4096, "small M"),  # GPT-3 6.7B attention out, decode step of 5
    (1, 5120, 1280, "small M"),  # ViT-H/14 FFN up, decode step of 1
    (14, 4096, 4096, "small M"),  # LLaMA-2-7B attention out, decode step of 14
    (9, 27648, 5120, "small M"),  # LLaMA-2-13B FFN gate+up, decode step of 9
    (2, 36864, 12288, "small M"),  # GPT-3 175B Q/K/V, decode step of 2
    (2, 2560, 10240, "small M"),  # GPT-3 2.7B FFN down, decode step of 2
    (9, 4544, 18176, "small M"),  # Falcon-7B FFN down, decode step of 9
    (512, 8, 768, "small N"),  # rank-8 LoRA A, BERT-base attention out input, 1 x 512 tokens
    (1024, 1, 1600, "small N"),  # rank-1 LoRA A, GPT-2 XL LM head input, 1 x 1024 tokens
    (3072, 16, 1024, "small N"),  # BERT-large Q/K/V, decode step of 16 as W^T x^T
    (3072, 4, 768, "small N"),  # ViT-B/16 FFN up, decode step of 4 as W^T x^T
    (1280, 9, 1280, "small N"),  # ViT-H/14 attention out, decode step of 9 as W^T x^T
    (128256, 13, 4096, "small N"),  # LLaMA-3-8B LM head, decode step of 13 as W^T x^T
    (32768, 8, 4544, "small N"),  # rank-8 LoRA A, Falcon-7B LM head input, 16 x 2048 tokens
    (398, 8, 768, "small N"),  # rank-8 LoRA A, BERT-base FFN up input, 398 prompt tokens
    (1559, 1559, 1559, "square"),  # square
    (2215, 2215, 2215, "square"),  # square
    (3904, 3904, 3904, "square"),  # square
    (4688, 4688, 4688, "square"),  # square
    (8117, 8117, 8117, "square"),  # square
    (1064, 1239, 1116, "near-square"),  # near 1104^3
    (1931, 1782, 1977, "near-square"),  # near 1931^3
    (4907, 5062, 4173, "near-square"),  # near 4586^3
    (11876, 9939, 10585, "near-square"),  # near 11531^3
    (176427, 97, 827, "tall"),  # tall and skinny
    (74519, 23, 6740, "tall"),  # tall and skinny
    (40592, 57, 437, "tall"),  # tall and skinny
    (40, 125196, 1289, "wide"),  # wide and skinny
    (39, 24647, 965, "wide"),  # wide and skinny
    (64, 53928, 739, "wide"),  # wide and skinny
    (8, 19, 1171847, "long K"),  # long K, small C
    (16, 21, 752232, "long K"),  # long K, small C
    (14, 9, 944453, "long K"),  # long K, small C
    (25, 104, 604671, "long K"),  # long K, small C
    (567, 5401, 6399, "unaligned"),  # odd M, N and K
    (8927, 7021, 3117, "unaligned"),  # odd M, N and K
    (12263, 4025, 4299, "unaligned"),  # odd M, N and K
    (899, 3069, 375, "unaligned"),  # odd M, N and K
]


# The eighth draw (issue 19). The seventh draw's five failing rows, all large shapes with N odd
# (1024 x 50257 x 4096, 1064 x 1239 x 1116, 1280 x 50257 x 2048, 567 x 5401 x 6399 and
# 878 x 50257 x 1024), were run under forced plans and used while 07's kernels for N odd were
# changed (two stages for the 4-byte copies of B on the 128-register tiles, the staged epilogue
# for 128 x 256 with N odd unpadded, a per-tile odd share in the model): from then on it is
# fitting data too. HELDOUT8_SEED, fixed before this draw and committed with it before any
# chapter ran these shapes, draws the same distribution again without the first seven draws'
# shapes. heldout_literal() wrote the list.
HELDOUT8 = "heldout8"
HELDOUT8_SEED = 26  # the next integer after HELDOUT7_SEED; never changed to pick a draw
HELDOUT8_SUITE = [
    (632, 6400, 1600, "layer"),  # GPT-2 XL FFN up, 632 prompt tokens
    (2048, 5140, 5140, "layer"),  # GPT-3 13B attention out, 1 x 2048 tokens
    (8192, 5120, 27648, "layer"),  # LLaMA-2-13B FFN gate+up, data grad, 2 x 4096 tokens
    (1024, 4096, 1024, "layer"),  # BERT-large FFN down, data grad, 2 x 512 tokens
    (12608, 1024, 4096, "layer"),  # ViT-L/16 FFN up, data grad, 64 x 197 tokens
    (4096, 27648, 5120, "layer"),  # LLaMA-2-13B FFN gate+up, 1 x 4096 tokens
    (657, 13824, 5120, "layer"),  # LLaMA-2-13B FFN up, 657 prompt tokens
    (16384, 1280, 1280, "layer"),  # GPT-2 large attention out, 16 x 1024 tokens
    (4096, 57344, 8192, "layer"),  # LLaMA-2-70B FFN gate+up, 1 x 4096 tokens
    (512, 768, 3072, "layer"),  # BERT-base FFN up, data grad, 1 x 512 tokens
    (2048, 768, 2304, "layer"),  # GPT-2 small Q/K/V, data grad, 2 x 1024 tokens
    (602, 27648, 5120, "layer"),  # LLaMA-2-13B FFN gate+up, 602 prompt tokens
    (20560, 5140, 4096, "weight grad"),  # GPT-3 13B FFN down, 2 x 2048 tokens
    (1280, 3840, 16384, "weight grad"),  # GPT-2 large Q/K/V, 16 x 1024 tokens
    (5120, 5120, 16384, "weight grad"),  # LLaMA-2-13B attention out, 4 x 4096 tokens
    (768, 3072, 16384, "weight grad"),  # GPT-2 small FFN up, 16 x 1024 tokens
    (1280, 5120, 257, "weight grad"),  # ViT-H/14 FFN up, 1 x 257 tokens
    (1280, 1280, 32768, "weight grad"),  # GPT-2 large attention out, 32 x 1024 tokens
    (1, 1024, 1024, "small M"),  # BERT-large attention out, decode step of 1
    (13, 3840, 1280, "small M"),  # GPT-2 large Q/K/V, decode step of 13
    (11, 2560, 10240, "small M"),  # GPT-3 2.7B FFN down, decode step of 11
    (7, 2304, 768, "small M"),  # GPT-2 small Q/K/V, decode step of 7
    (11, 4096, 16384, "small M"),  # GPT-3 6.7B FFN down, decode step of 11
    (16, 32000, 5120, "small M"),  # LLaMA-2-13B LM head, decode step of 16
    (16, 50257, 1600, "small M"),  # GPT-2 XL LM head, decode step of 16
    (1, 10240, 2560, "small M"),  # GPT-3 2.7B FFN up, decode step of 1
    (4, 128256, 4096, "small M"),  # LLaMA-3-8B LM head, decode step of 4
    (1, 3072, 1024, "small M"),  # GPT-2 medium Q/K/V, decode step of 1
    (50257, 4, 1600, "small N"),  # GPT-2 XL LM head, decode step of 4 as W^T x^T
    (4544, 5, 18176, "small N"),  # Falcon-7B FFN down, decode step of 5 as W^T x^T
    (4096, 6, 1024, "small N"),  # ViT-L/16 FFN up, decode step of 6 as W^T x^T
    (128256, 2, 4096, "small N"),  # LLaMA-3-8B LM head, decode step of 2 as W^T x^T
    (32000, 16, 4096, "small N"),  # LLaMA-2-7B LM head, decode step of 16 as W^T x^T
    (2560, 2, 2560, "small N"),  # GPT-3 2.7B attention out, decode step of 2 as W^T x^T
    (1679, 2, 13824, "small N"),  # rank-2 LoRA A, LLaMA-2-13B FFN down input, 1679 prompt tokens
    (768, 3, 3072, "small N"),  # ViT-B/16 FFN down, decode step of 3 as W^T x^T
    (1137, 1137, 1137, "square"),  # square
    (1815, 1815, 1815, "square"),  # square
    (3512, 3512, 3512, "square"),  # square
    (7080, 7080, 7080, "square"),  # square
    (10720, 10720, 10720, "square"),  # square
    (1451, 1773, 1425, "near-square"),  # near 1611^3
    (2134, 2095, 2324, "near-square"),  # near 2315^3
    (6517, 5887, 5258, "near-square"),  # near 5722^3
    (11457, 9521, 11341, "near-square"),  # near 10521^3
    (58992, 87, 5711, "tall"),  # tall and skinny
    (23506, 148, 6292, "tall"),  # tall and skinny
    (83739, 31, 448, "tall"),  # tall and skinny
    (33, 230002, 653, "wide"),  # wide and skinny
    (17, 147060, 1149, "wide"),  # wide and skinny
    (241, 40401, 1088, "wide"),  # wide and skinny
    (12, 152, 289948, "long K"),  # long K, small C
    (144, 98, 902137, "long K"),  # long K, small C
    (69, 27, 288670, "long K"),  # long K, small C
    (90, 140, 852061, "long K"),  # long K, small C
    (3583, 1875, 9643, "unaligned"),  # odd M, N and K
    (4361, 10403, 801, "unaligned"),  # odd M, N and K
    (1809, 679, 379, "unaligned"),  # odd M, N and K
    (2429, 3119, 599, "unaligned"),  # odd M, N and K
]


# The ninth draw (issue 19). The eighth draw's one failing large row, 90 x 140 x 852061 (85.2 %,
# the model's 64 x 64 plan with 128 slices, where forced plans reached 102.5 %), was run under
# forced plans and used while the model's handling of deep split-K on a small C was changed: from
# then on it is fitting data too. HELDOUT9_SEED, fixed before this draw and committed with it
# before any chapter ran these shapes, draws the same distribution again without the first eight
# draws' shapes. heldout_literal() wrote the list.
HELDOUT9 = "heldout9"
HELDOUT9_SEED = 27  # the next integer after HELDOUT8_SEED; never changed to pick a draw
HELDOUT9_SUITE = [
    (8224, 1280, 5120, "layer"),  # ViT-H/14 FFN up, data grad, 32 x 257 tokens
    (4096, 16384, 4096, "layer"),  # GPT-3 6.7B FFN down, data grad, 2 x 2048 tokens
    (5857, 768, 768, "layer"),  # GPT-2 small attention out, 5857 prompt tokens
    (1028, 1280, 1280, "layer"),  # ViT-H/14 attention out, data grad, 4 x 257 tokens
    (8224, 5120, 1280, "layer"),  # ViT-H/14 FFN up, 32 x 257 tokens
    (4096, 20560, 5140, "layer"),  # GPT-3 13B FFN up, 2 x 2048 tokens
    (5906, 28672, 8192, "layer"),  # LLaMA-2-70B FFN up, 5906 prompt tokens
    (2050, 11008, 4096, "layer"),  # LLaMA-2-7B FFN up, 2050 prompt tokens
    (2109, 15420, 5140, "layer"),  # GPT-3 13B Q/K/V, 2109 prompt tokens
    (788, 3072, 768, "layer"),  # ViT-B/16 FFN up, 4 x 197 tokens
    (197, 1024, 1024, "layer"),  # ViT-L/16 attention out, 1 x 197 tokens
    (16384, 18176, 4544, "layer"),  # Falcon-7B FFN down, data grad, 8 x 2048 tokens
    (1600, 4800, 4096, "weight grad"),  # GPT-2 XL Q/K/V, 4 x 1024 tokens
    (768, 768, 8192, "weight grad"),  # BERT-base attention out, 16 x 512 tokens
    (1600, 1600, 2048, "weight grad"),  # GPT-2 XL attention out, 2 x 1024 tokens
    (4096, 22016, 8192, "weight grad"),  # LLaMA-2-7B FFN gate+up, 2 x 4096 tokens
    (768, 2304, 4096, "weight grad"),  # GPT-2 small Q/K/V, 4 x 1024 tokens
    (768, 2304, 1024, "weight grad"),  # GPT-2 small Q/K/V, 1 x 1024 tokens
    (8, 5140, 5140, "small M"),  # GPT-3 13B attention out, decode step of 8
    (15, 50257, 1024, "small M"),  # GPT-2 medium LM head, decode step of 15
    (16, 3072, 1024, "small M"),  # ViT-L/16 Q/K/V, decode step of 16
    (12, 768, 3072, "small M"),  # ViT-B/16 FFN down, decode step of 12
    (1, 4096, 16384, "small M"),  # GPT-3 6.7B FFN down, decode step of 1
    (16, 1280, 5120, "small M"),  # ViT-H/14 FFN down, decode step of 16
    (10, 5120, 1280, "small M"),  # GPT-2 large FFN up, decode step of 10
    (15, 4672, 4544, "small M"),  # Falcon-7B Q/K/V, decode step of 15
    (14, 50257, 1600, "small M"),  # GPT-2 XL LM head, decode step of 14
    (7, 20560, 5140, "small M"),  # GPT-3 13B FFN up, decode step of 7
    (57344, 3, 8192, "small N"),  # LLaMA-2-70B FFN gate+up, decode step of 3 as W^T x^T
    (32000, 11, 5120, "small N"),  # LLaMA-2-13B LM head, decode step of 11 as W^T x^T
    (4096, 2, 1024, "small N"),  # rank-2 LoRA A, BERT-large attention out input, 8 x 512 tokens
    (4096, 7, 11008, "small N"),  # LLaMA-2-7B FFN down, decode step of 7 as W^T x^T
    (4544, 1, 4544, "small N"),  # Falcon-7B attention out, decode step of 1 as W^T x^T
    (10240, 2, 8192, "small N"),  # LLaMA-2-70B Q/K/V, decode step of 2 as W^T x^T
    (12114, 8, 4096, "small N"),  # Mixtral 8x7B router, 12114 prompt tokens
    (3152, 1, 4096, "small N"),  # rank-1 LoRA A, ViT-L/16 FFN down input, 16 x 197 tokens
    (1022, 1022, 1022, "square"),  # square
    (2220, 2220, 2220, "square"),  # square
    (2956, 2956, 2956, "square"),  # square
    (5056, 5056, 5056, "square"),  # square
    (7456, 7456, 7456, "square"),  # square
    (1127, 1343, 1485, "near-square"),  # near 1292^3
    (3241, 3464, 3254, "near-square"),  # near 3184^3
    (4705, 4529, 4373, "near-square"),  # near 4613^3
    (8085, 8101, 7934, "near-square"),  # near 7557^3
    (48678, 102, 1085, "tall"),  # tall and skinny
    (21962, 17, 431, "tall"),  # tall and skinny
    (115122, 157, 1837, "tall"),  # tall and skinny
    (66, 58240, 3677, "wide"),  # wide and skinny
    (45, 97298, 307, "wide"),  # wide and skinny
    (37, 64237, 7266, "wide"),  # wide and skinny
    (48, 67, 1291213, "long K"),  # long K, small C
    (116, 8, 1982563, "long K"),  # long K, small C
    (107, 42, 269937, "long K"),  # long K, small C
    (29, 44, 460619, "long K"),  # long K, small C
    (525, 733, 1195, "unaligned"),  # odd M, N and K
    (5665, 443, 1021, "unaligned"),  # odd M, N and K
    (541, 7135, 4089, "unaligned"),  # odd M, N and K
    (5039, 1353, 699, "unaligned"),  # odd M, N and K
]


# The tenth draw (issue 19). The ninth draw's failing large row 768 x 768 x 8192 (88.4 %, the
# model's 64 x 128 plan with 20 slices, where 128 x 256 with 7 slices, a count the model did not
# try, is predicted faster) was used while the model was changed to try every split count, and
# the draw was run again with a new calibration once seen: from then on it is fitting data too.
# HELDOUT10_SEED, fixed before this draw and committed with it before any chapter ran these
# shapes, draws the same distribution again without the first nine draws' shapes.
# heldout_literal() wrote the list.
HELDOUT10 = "heldout10"
HELDOUT10_SEED = 28  # the next integer after HELDOUT9_SEED; never changed to pick a draw
HELDOUT10_SUITE = [
    (2048, 1024, 1024, "layer"),  # GPT-2 medium attention out, 2 x 1024 tokens
    (8192, 4096, 1024, "layer"),  # GPT-2 medium FFN down, data grad, 8 x 1024 tokens
    (8192, 1600, 6400, "layer"),  # GPT-2 XL FFN down, 8 x 1024 tokens
    (2048, 5120, 1280, "layer"),  # GPT-2 large FFN up, 2 x 1024 tokens
    (3405, 2304, 768, "layer"),  # GPT-2 small Q/K/V, 3405 prompt tokens
    (2048, 5140, 15420, "layer"),  # GPT-3 13B Q/K/V, data grad, 1 x 2048 tokens
    (2048, 1024, 4096, "layer"),  # GPT-2 medium FFN up, data grad, 2 x 1024 tokens
    (1024, 1600, 6400, "layer"),  # GPT-2 XL FFN up, data grad, 1 x 1024 tokens
    (32768, 1024, 3072, "layer"),  # BERT-large Q/K/V, data grad, 64 x 512 tokens
    (8192, 4096, 6144, "layer"),  # LLaMA-3-8B Q/K/V, data grad, 1 x 8192 tokens
    (674, 5140, 20560, "layer"),  # GPT-3 13B FFN down, 674 prompt tokens
    (16384, 5120, 32000, "layer"),  # LLaMA-2-13B LM head, data grad, 4 x 4096 tokens
    (768, 2304, 16384, "weight grad"),  # BERT-base Q/K/V, 32 x 512 tokens
    (8192, 28672, 16384, "weight grad"),  # LLaMA-2-70B FFN up, 4 x 4096 tokens
    (2560, 7680, 16384, "weight grad"),  # GPT-3 2.7B Q/K/V, 8 x 2048 tokens
    (1600, 6400, 16384, "weight grad"),  # GPT-2 XL FFN up, 16 x 1024 tokens
    (1024, 3072, 16384, "weight grad"),  # GPT-2 medium Q/K/V, 16 x 1024 tokens
    (1280, 1280, 1028, "weight grad"),  # ViT-H/14 attention out, 4 x 257 tokens
    (15, 4096, 14336, "small M"),  # LLaMA-3-8B FFN down, decode step of 15
    (5, 768, 768, "small M"),  # GPT-2 small attention out, decode step of 5
    (6, 1600, 1600, "small M"),  # GPT-2 XL attention out, decode step of 6
    (3, 28672, 4096, "small M"),  # LLaMA-3-8B FFN gate+up, decode step of 3
    (11, 8192, 8192, "small M"),  # LLaMA-2-70B attention out, decode step of 11
    (16, 14336, 4096, "small M"),  # LLaMA-3-8B FFN up, decode step of 16
    (13, 15360, 5120, "small M"),  # LLaMA-2-13B Q/K/V, decode step of 13
    (3, 5120, 5120, "small M"),  # LLaMA-2-13B attention out, decode step of 3
    (8, 49152, 12288, "small M"),  # GPT-3 175B FFN up, decode step of 8
    (11, 128256, 4096, "small M"),  # LLaMA-3-8B LM head, decode step of 11
    (3455, 8, 4096, "small N"),  # Mixtral 8x7B router, 3455 prompt tokens
    (8192, 1, 28672, "small N"),  # LLaMA-2-70B FFN down, decode step of 1 as W^T x^T
    (768, 4, 768, "small N"),  # GPT-2 small attention out, decode step of 4 as W^T x^T
    (8226, 1, 1024, "small N"),  # rank-1 LoRA A, BERT-large Q/K/V input, 8226 prompt tokens
    (16139, 8, 4096, "small N"),  # Mixtral 8x7B router, 16139 prompt tokens
    (128256, 11, 4096, "small N"),  # LLaMA-3-8B LM head, decode step of 11 as W^T x^T
    (6952, 16, 4096, "small N"),  # rank-16 LoRA A, GPT-3 6.7B Q/K/V input, 6952 prompt tokens
    (5140, 9, 5140, "small N"),  # GPT-3 13B attention out, decode step of 9 as W^T x^T
    (1532, 1532, 1532, "square"),  # square
    (2468, 2468, 2468, "square"),  # square
    (3699, 3699, 3699, "square"),  # square
    (5577, 5577, 5577, "square"),  # square
    (10098, 10098, 10098, "square"),  # square
    (922, 899, 941, "near-square"),  # near 1020^3
    (2377, 2214, 2090, "near-square"),  # near 2203^3
    (4007, 3627, 3366, "near-square"),  # near 3525^3
    (10293, 9177, 9397, "near-square"),  # near 9150^3
    (73340, 155, 409, "tall"),  # tall and skinny
    (38535, 73, 1491, "tall"),  # tall and skinny
    (31664, 90, 7535, "tall"),  # tall and skinny
    (137, 101220, 1268, "wide"),  # wide and skinny
    (18, 17859, 1279, "wide"),  # wide and skinny
    (22, 64255, 3191, "wide"),  # wide and skinny
    (251, 157, 1041322, "long K"),  # long K, small C
    (89, 173, 1950012, "long K"),  # long K, small C
    (47, 60, 1739001, "long K"),  # long K, small C
    (94, 137, 647082, "long K"),  # long K, small C
    (16277, 2731, 3719, "unaligned"),  # odd M, N and K
    (363, 875, 2625, "unaligned"),  # odd M, N and K
    (859, 719, 1835, "unaligned"),  # odd M, N and K
    (4367, 11235, 259, "unaligned"),  # odd M, N and K
]

# The eleventh draw (issue 19). The tenth draw's three failing large rows, 251 x 157 x 1041322
# (84.5 %), 2377 x 2214 x 2090 (84.8 %) and 859 x 719 x 1835 (87.2 %), all with N % 4 != 0, were
# run under forced plans and profiled while 07's handling of rows of B that are not whole float4s
# was changed (with the padded copy of B, split-K runs the kernel for N % 4 == 0 on the padded
# problem, slices in rows of whole float4s; tried and not kept: every split kernel's slices in
# such rows, an eight-byte share in the model, padding for N % 4 == 2): from then on it is fitting
# data too.
# HELDOUT11_SEED, fixed before this draw and committed with it before any chapter ran these
# shapes, draws the same distribution again without the first ten draws' shapes.
# heldout_literal() wrote the list.
HELDOUT11 = "heldout11"
HELDOUT11_SEED = 29  # the next integer after HELDOUT10_SEED; never changed to pick a draw
HELDOUT11_SUITE = [
    (433, 18176, 4544, "layer"),  # Falcon-7B FFN up, 433 prompt tokens
    (2048, 2560, 7680, "layer"),  # GPT-3 2.7B Q/K/V, data grad, 1 x 2048 tokens
    (32768, 4096, 4096, "layer"),  # LLaMA-3-8B attention out, data grad, 4 x 8192 tokens
    (4096, 4544, 4544, "layer"),  # Falcon-7B attention out, data grad, 2 x 2048 tokens
    (4688, 13824, 5120, "layer"),  # LLaMA-2-13B FFN up, 4688 prompt tokens
    (4096, 768, 3072, "layer"),  # BERT-base FFN up, data grad, 8 x 512 tokens
    (1205, 18176, 4544, "layer"),  # Falcon-7B FFN up, 1205 prompt tokens
    (512, 3072, 768, "layer"),  # BERT-base FFN up, 1 x 512 tokens
    (145, 1280, 5120, "layer"),  # GPT-2 large FFN down, 145 prompt tokens
    (788, 768, 2304, "layer"),  # ViT-B/16 Q/K/V, data grad, 4 x 197 tokens
    (2048, 2560, 2560, "layer"),  # GPT-3 2.7B attention out, data grad, 1 x 2048 tokens
    (8192, 12288, 12288, "layer"),  # GPT-3 175B attention out, data grad, 4 x 2048 tokens
    (768, 2304, 394, "weight grad"),  # ViT-B/16 Q/K/V, 2 x 197 tokens
    (1024, 1024, 8192, "weight grad"),  # GPT-2 medium attention out, 8 x 1024 tokens
    (1024, 4096, 4096, "weight grad"),  # BERT-large FFN up, 8 x 512 tokens
    (5120, 13824, 32768, "weight grad"),  # LLaMA-2-13B FFN up, 8 x 4096 tokens
    (3072, 768, 16384, "weight grad"),  # BERT-base FFN down, 32 x 512 tokens
    (1024, 50257, 2048, "weight grad"),  # GPT-2 medium LM head, 2 x 1024 tokens
    (12, 1280, 5120, "small M"),  # GPT-2 large FFN down, decode step of 12
    (16, 4096, 1024, "small M"),  # ViT-L/16 FFN up, decode step of 16
    (7, 12288, 12288, "small M"),  # GPT-3 175B attention out, decode step of 7
    (2, 57344, 8192, "small M"),  # LLaMA-2-70B FFN gate+up, decode step of 2
    (8, 10240, 8192, "small M"),  # LLaMA-2-70B Q/K/V, decode step of 8
    (8, 3072, 768, "small M"),  # ViT-B/16 FFN up, decode step of 8
    (6, 8192, 8192, "small M"),  # LLaMA-2-70B attention out, decode step of 6
    (11, 1280, 1280, "small M"),  # ViT-H/14 attention out, decode step of 11
    (6, 1280, 5120, "small M"),  # GPT-2 large FFN down, decode step of 6
    (15, 3072, 1024, "small M"),  # BERT-large Q/K/V, decode step of 15
    (1024, 15, 4096, "small N"),  # ViT-L/16 FFN down, decode step of 15 as W^T x^T
    (1018, 8, 4096, "small N"),  # Mixtral 8x7B router, 1018 prompt tokens
    (2048, 4, 2560, "small N"),  # rank-4 LoRA A, GPT-3 2.7B attention out input, 1 x 2048 tokens
    (3072, 6, 1024, "small N"),  # ViT-L/16 Q/K/V, decode step of 6 as W^T x^T
    (4096, 4, 12288, "small N"),  # rank-4 LoRA A, GPT-3 175B Q/K/V input, 2 x 2048 tokens
    (2484, 2, 1600, "small N"),  # rank-2 LoRA A, GPT-2 XL attention out input, 2484 prompt tokens
    (6304, 16, 768, "small N"),  # rank-16 LoRA A, ViT-B/16 attention out input, 32 x 197 tokens
    (516, 16, 5120, "small N"),  # rank-16 LoRA A, LLaMA-2-13B Q/K/V input, 516 prompt tokens
    (1521, 1521, 1521, "square"),  # square
    (1977, 1977, 1977, "square"),  # square
    (2706, 2706, 2706, "square"),  # square
    (6187, 6187, 6187, "square"),  # square
    (9886, 9886, 9886, "square"),  # square
    (1093, 948, 1257, "near-square"),  # near 1105^3
    (2018, 1815, 1736, "near-square"),  # near 2033^3
    (6585, 6504, 6533, "near-square"),  # near 5792^3
    (12790, 11311, 12080, "near-square"),  # near 11832^3
    (17192, 47, 5016, "tall"),  # tall and skinny
    (47458, 22, 1009, "tall"),  # tall and skinny
    (53993, 24, 5333, "tall"),  # tall and skinny
    (54, 32840, 2287, "wide"),  # wide and skinny
    (102, 59342, 1506, "wide"),  # wide and skinny
    (141, 24091, 3229, "wide"),  # wide and skinny
    (54, 17, 350914, "long K"),  # long K, small C
    (15, 170, 304882, "long K"),  # long K, small C
    (24, 11, 1659834, "long K"),  # long K, small C
    (86, 23, 1138428, "long K"),  # long K, small C
    (5103, 321, 371, "unaligned"),  # odd M, N and K
    (405, 11961, 639, "unaligned"),  # odd M, N and K
    (281, 3501, 285, "unaligned"),  # odd M, N and K
    (3889, 9589, 359, "unaligned"),  # odd M, N and K
]
# The twelfth draw (issue 19). The eleventh draw's two failing few-column rows, 53993 x 24 x 5333
# (78.1 %) and 47458 x 22 x 1009 (71.3 %), both with K % 4 != 0, were run under forced plans,
# swept by width and profiled while 07's few-columns kernel got its copy plan (each thread's
# addresses computed once, then stepped): from then on it is fitting data too.
# HELDOUT12_SEED, fixed before this draw and committed with it before any chapter ran these
# shapes, draws the same distribution again without the first eleven draws' shapes.
# heldout_literal() wrote the list.
HELDOUT12 = "heldout12"
HELDOUT12_SEED = 30  # the next integer after HELDOUT11_SEED; never changed to pick a draw
HELDOUT12_SUITE = [
    (32768, 4544, 4544, "layer"),  # Falcon-7B attention out, data grad, 16 x 2048 tokens
    (7689, 768, 3072, "layer"),  # BERT-base FFN down, 7689 prompt tokens
    (32768, 1280, 5120, "layer"),  # GPT-2 large FFN up, data grad, 32 x 1024 tokens
    (2069, 12288, 4096, "layer"),  # LLaMA-2-7B Q/K/V, 2069 prompt tokens
    (8192, 5120, 13824, "layer"),  # LLaMA-2-13B FFN up, data grad, 2 x 4096 tokens
    (1246, 128256, 4096, "layer"),  # LLaMA-3-8B LM head, 1246 prompt tokens
    (2056, 5120, 1280, "layer"),  # ViT-H/14 FFN up, 8 x 257 tokens
    (16384, 4096, 6144, "layer"),  # LLaMA-3-8B Q/K/V, data grad, 2 x 8192 tokens
    (4096, 4096, 12288, "layer"),  # GPT-3 6.7B Q/K/V, data grad, 2 x 2048 tokens
    (10910, 4800, 1600, "layer"),  # GPT-2 XL Q/K/V, 10910 prompt tokens
    (16384, 1280, 3840, "layer"),  # GPT-2 large Q/K/V, data grad, 16 x 1024 tokens
    (32768, 11008, 4096, "layer"),  # LLaMA-2-7B FFN down, data grad, 8 x 4096 tokens
    (4096, 28672, 8192, "weight grad"),  # LLaMA-3-8B FFN gate+up, 1 x 8192 tokens
    (1024, 50257, 8192, "weight grad"),  # GPT-2 medium LM head, 8 x 1024 tokens
    (12288, 49152, 2048, "weight grad"),  # GPT-3 175B FFN up, 1 x 2048 tokens
    (1600, 1600, 8192, "weight grad"),  # GPT-2 XL attention out, 8 x 1024 tokens
    (768, 2304, 1576, "weight grad"),  # ViT-B/16 Q/K/V, 8 x 197 tokens
    (5140, 5140, 8192, "weight grad"),  # GPT-3 13B attention out, 4 x 2048 tokens
    (11, 36864, 12288, "small M"),  # GPT-3 175B Q/K/V, decode step of 11
    (16, 2304, 768, "small M"),  # BERT-base Q/K/V, decode step of 16
    (4, 8192, 8192, "small M"),  # LLaMA-2-70B attention out, decode step of 4
    (16, 4096, 4096, "small M"),  # LLaMA-2-7B attention out, decode step of 16
    (6, 32000, 8192, "small M"),  # LLaMA-2-70B LM head, decode step of 6
    (8, 4096, 1024, "small M"),  # GPT-2 medium FFN up, decode step of 8
    (16, 49152, 12288, "small M"),  # GPT-3 175B FFN up, decode step of 16
    (4, 32000, 4096, "small M"),  # LLaMA-2-7B LM head, decode step of 4
    (7, 1600, 1600, "small M"),  # GPT-2 XL attention out, decode step of 7
    (4, 32000, 8192, "small M"),  # LLaMA-2-70B LM head, decode step of 4
    (15360, 4, 5120, "small N"),  # LLaMA-2-13B Q/K/V, decode step of 4 as W^T x^T
    (5120, 12, 1280, "small N"),  # GPT-2 large FFN up, decode step of 12 as W^T x^T
    (65024, 6, 4544, "small N"),  # Falcon-7B LM head, decode step of 6 as W^T x^T
    (196, 8, 4096, "small N"),  # Mixtral 8x7B router, 196 prompt tokens
    (9768, 8, 1024, "small N"),  # rank-8 LoRA A, GPT-2 medium FFN up input, 9768 prompt tokens
    (520, 8, 4096, "small N"),  # Mixtral 8x7B router, 520 prompt tokens
    (3072, 11, 1024, "small N"),  # GPT-2 medium Q/K/V, decode step of 11 as W^T x^T
    (768, 15, 3072, "small N"),  # ViT-B/16 FFN down, decode step of 15 as W^T x^T
    (1398, 1398, 1398, "square"),  # square
    (1733, 1733, 1733, "square"),  # square
    (2724, 2724, 2724, "square"),  # square
    (7023, 7023, 7023, "square"),  # square
    (10832, 10832, 10832, "square"),  # square
    (1348, 1207, 1265, "near-square"),  # near 1283^3
    (2100, 2138, 1833, "near-square"),  # near 2004^3
    (5259, 4411, 4326, "near-square"),  # near 4962^3
    (6762, 8254, 7389, "near-square"),  # near 7937^3
    (21469, 40, 561, "tall"),  # tall and skinny
    (24675, 88, 1748, "tall"),  # tall and skinny
    (26536, 95, 964, "tall"),  # tall and skinny
    (32, 154148, 1129, "wide"),  # wide and skinny
    (48, 129649, 883, "wide"),  # wide and skinny
    (72, 18968, 1026, "wide"),  # wide and skinny
    (219, 9, 1710885, "long K"),  # long K, small C
    (45, 12, 2070834, "long K"),  # long K, small C
    (9, 8, 792392, "long K"),  # long K, small C
    (13, 131, 358474, "long K"),  # long K, small C
    (13515, 2285, 1963, "unaligned"),  # odd M, N and K
    (965, 2735, 4907, "unaligned"),  # odd M, N and K
    (14993, 15067, 369, "unaligned"),  # odd M, N and K
    (1869, 5903, 2147, "unaligned"),  # odd M, N and K
]
# Issue 19's held-out draws in draw order, (name, suite): a new draw is its literal block above
# and one line here. The newest is where 07's floors are judged (JUDGED_DRAW, CHAPTER_FLOORS); the
# earlier ones were watched, so they are fitting data since. SUITES, SUITE_TITLES and --suite's
# help follow from this table.
HELDOUT_DRAWS = (
    (HELDOUT, HELDOUT_SUITE),
    (HELDOUT2, HELDOUT2_SUITE),
    (HELDOUT3, HELDOUT3_SUITE),
    (HELDOUT4, HELDOUT4_SUITE),
    (HELDOUT5, HELDOUT5_SUITE),
    (HELDOUT6, HELDOUT6_SUITE),
    (HELDOUT7, HELDOUT7_SUITE),
    (HELDOUT8, HELDOUT8_SUITE),
    (HELDOUT9, HELDOUT9_SUITE),
    (HELDOUT10, HELDOUT10_SUITE),
    (HELDOUT11, HELDOUT11_SUITE),
    (HELDOUT12, HELDOUT12_SUITE),
)
JUDGED_DRAW = HELDOUT_DRAWS[-1][0]


def ordinal(n):
    """1 -> 'first', 2 -> 'second', ... 99 -> 'ninety-ninth' (the draws' titles and help)."""
    ones = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen").split()
    tens = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
    if not 1 <= n <= 99:
        raise ValueError(f"no ordinal word for {n}")
    words = ones[n] if n < 20 else tens[n // 10] + (f"-{ones[n % 10]}" if n % 10 else "")
    head, _, last = words.rpartition("-")
    irregular = {"one": "first", "two": "second", "three": "third", "five": "fifth",
                 "eight": "eighth", "nine": "ninth", "twelve": "twelfth"}
    last = irregular.get(last) or (last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return f"{head}-{last}" if head else last


def heldout_help():
    """--suite's words for the held-out draws: the first and the middle ones watched (fitting
    data since), the newest where 07's floors are judged, each with its number of shapes."""
    parts = []
    for index, (name, suite) in enumerate(HELDOUT_DRAWS):
        draw, count = ordinal(index + 1), f"{len(suite)} shapes"
        if name == JUDGED_DRAW:
            parts.append(f"{name} (its {draw} draw, {count}, where 07's floors are judged)")
        elif index == 0:
            parts.append(f"{name} (issue 19's first held-out draw for 07, {count}, fitting data "
                         "since)")
        else:
            parts.append(f"{name} (its {draw} draw, {count}, watched as well)")
    return ", ".join(parts[:-1]) + (" or " if len(parts) > 1 else "") + parts[-1]


# The suites --suite picks from; 07 is the default, and its results keep their names.
DEFAULT_SUITE = "07"
SUITES = {DEFAULT_SUITE: SUITE, "hopper": HOPPER_SUITE, **dict(HELDOUT_DRAWS)}
SUITE_TITLES = {"hopper": "Hopper suite, issue 18",
                **{name: f"Held-out suite, issue 19, {ordinal(index + 1)} draw"
                         + ("" if name == JUDGED_DRAW else " (watched: fitting data since)")
                   for index, (name, _) in enumerate(HELDOUT_DRAWS)}}


class Floors(NamedTuple):
    """A chapter's floors on one suite, in % of cuBLAS (in its precision contract's mode): where
    M*N*K >= 2^30 (BIG_MACS), on the smaller shapes (None: no floor), the geometric mean over all
    counted shapes (None: no floor), the issue that sets them, and the suite they are set on."""
    large: float
    small: Optional[float]
    issue: int
    geomean: Optional[float] = None
    suite: str = DEFAULT_SUITE


# The floors of --chapters runs: per chapter, its Floors on each suite that has some, each
# evaluated on runs of its own suite only. 07's size and geometric-mean floors are the ones
# floors() checks in the default run (issue 10 on SUITE, issue 19 on the held-out suite), so
# `--chapters 07 08 09` reports them too; 07 against 06 needs both chapters' rows, the default
# run's. Issue 16 (split-K and tile choice in 08 and 09): 09, the FP32 contract, at least 1.0x
# cuBLAS FP32 on the large shapes; 08, TF32, at least 40 % of cuBLAS TF32 there; both at least
# 25 % on the smaller ones. Issue 18, on the hopper suite: 13 (TF32) at least 85 % of cuBLAS TF32
# on the large shapes, 60 % on the smaller; 14 (FP32) at least 1.0x cuBLAS FP32 on the large
# shapes and 1.5x in geometric mean (the issue sets no floor on its smaller shapes).
CHAPTER_FLOORS = {
    "07_any_shape": (Floors(FLOOR_BIG, FLOOR_SMALL, 10, geomean=FLOOR_GEOMEAN),
                     Floors(FLOOR_BIG, FLOOR_SMALL, 19, geomean=FLOOR_GEOMEAN,
                            suite=JUDGED_DRAW)),
    "08_tensor_cores": (Floors(40.0, 25.0, 16),),
    "09_3xtf32": (Floors(100.0, 25.0, 16),),
    "13_persistent_clusters": (Floors(85.0, 60.0, 18, suite="hopper"),),
    "14_3xtf32_hopper": (Floors(100.0, None, 18, geomean=150.0, suite="hopper"),),
}


def floors_on(chapter, suite):
    """The chapter's Floors on `suite`, or None where it has none there."""
    return next((f for f in CHAPTER_FLOORS.get(chapter, ()) if f.suite == suite), None)


class UsageError(Exception):
    """Bad input the user can fix: one "error:" line, exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_sawtooth(text):
    """'1024:8192:128' -> [1024, 1152, ..., 8192]."""
    try:
        start, stop, step = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected START:STOP:STEP (whole numbers), got {text!r}") from None
    if start < 1 or stop < start or step < 1:
        raise argparse.ArgumentTypeError(
            f"need 1 <= START <= STOP and STEP >= 1, got {text!r}")
    return list(range(start, stop + 1, step))


def parse_shape(text):
    """'4224,4224,4224' -> (4224, 4224, 4224)."""
    try:
        shape = tuple(int(v) for v in text.split(","))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"expected M,N,K (three whole numbers >= 1), got {text!r}")
    return shape


def parse_shapes(text):
    """'8,4096,4096;1,8192,8192' -> [(8, 4096, 4096), (1, 8192, 8192)] (';' between shapes, spaces
    ignored, a trailing ';' allowed)."""
    items = [item.strip() for item in text.replace(" ", "").split(";")]
    if not any(items):
        raise argparse.ArgumentTypeError(f"expected M,N,K[;M,N,K...], got {text!r}")
    return [parse_shape(item) for item in items if item]


def parse_args(argv):
    parser = Parser(description=__doc__, epilog=EXAMPLES.format(judged=JUDGED_DRAW),
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sawtooth", type=parse_sawtooth, metavar="START:STOP:STEP",
                        help="square sizes instead of the suite (timing only)")
    parser.add_argument("--samples", type=int, help="timed runs per shape (chapter default)")
    parser.add_argument("--warmup", type=int, help="warm-up runs per shape (chapter default)")
    parser.add_argument("--time-budget", type=float, metavar="SECONDS",
                        help="kernel time per shape after which sampling stops (chapter default)")
    parser.add_argument("--device", type=int, help="CUDA device index (chapter default: 0)")
    parser.add_argument("--build-dir", type=Path, default=REPO / "build",
                        help="CMake build folder (default: build/ in the repository)")
    parser.add_argument("--no-build", action="store_true", help="do not build, run what is built")
    parser.add_argument("--results-dir", type=Path,
                        help="where to write (default: docs/results/<gpu-slug>/)")
    parser.add_argument("--render-only", action="store_true",
                        help="redraw tables and figures from the JSON in --results-dir")
    parser.add_argument("--waves", type=parse_shape, metavar="M,N,K",
                        help="draw the SMs' blocks for one shape (model; needs --results-dir)")
    parser.add_argument("--out", type=Path, default=REPO / "07_any_shape" / "figures" / "waves.png",
                        help="where --waves writes its figure (default: %(default)s)")
    parser.add_argument("--check-floors", action="store_true",
                        help="exit 1 when a floor of chapter 07 (with --chapters: of those "
                             "chapters) does not hold")
    parser.add_argument("--chapters", nargs="+", metavar="NN",
                        help="run the suite for these chapters instead of 06 and 07: numbers (08), "
                             "names or folder names; writes shapes_<NN>_<NN>.*")
    parser.add_argument("--suite", choices=list(SUITES), default=DEFAULT_SUITE,
                        help="the shapes to run: 07 (chapter 07's suite, the default), hopper "
                             f"(issue 18's, {len(HOPPER_SUITE)} shapes), {heldout_help()}; "
                             "another suite than 07 writes shapes_<suite>.* (06 and 07) or "
                             "shapes_<suite>_<NN>_<NN>.* (--chapters)")
    parser.add_argument("--shapes", type=parse_shapes, action="append", metavar="M,N,K[;M,N,K]",
                        help="run only these shapes (repeatable; quote the ';')")
    parser.add_argument("--extra", action="store_true",
                        help="add issue 16's shapes "
                             f"({', '.join(shape_name(s[:3]) for s in EXTRA)}) as group "
                             f"{EXTRA_GROUP!r}")
    args = parser.parse_args(argv)
    for name in ("samples", "warmup"):
        value = getattr(args, name)
        if value is not None and value < (1 if name == "samples" else 0):
            raise UsageError(f"--{name} must be >= {1 if name == 'samples' else 0} (got {value})")
    if args.time_budget is not None and not args.time_budget > 0:
        raise UsageError(f"--time-budget must be > 0 (got {args.time_budget})")
    model = "--sawtooth" if args.sawtooth else "--waves" if args.waves else None
    chosen = [option for option, value in (("--chapters", args.chapters), ("--shapes", args.shapes),
                                           ("--extra", args.extra),
                                           (f"--suite {args.suite}", args.suite != DEFAULT_SUITE))
              if value]
    if model and chosen:
        raise UsageError(f"{chosen[0]} does not combine with {model} (chapter 07's launcher model, "
                         "chapters 06 and 07 only)")
    if args.render_only and (args.shapes or args.extra):
        raise UsageError(f"{'--shapes' if args.shapes else '--extra'} chooses what to run: "
                         "--render-only runs nothing")
    if args.chapters:
        try:
            args.chapters = select_chapters(args.chapters)
        except ValueError as error:
            raise UsageError(f"--chapters: {error}") from None
    if args.shapes:
        args.shapes = [shape for group in args.shapes for shape in group]
    if (args.render_only or args.waves) and args.results_dir is None:
        raise UsageError(f"{'--waves' if args.waves else '--render-only'} needs --results-dir "
                         "(the folder holding the JSON)")
    args.build_dir = args.build_dir.resolve()
    return args


# ---------------------------------------------------------------------------------------------
# Chapter 07's launcher model, for the plan column, --waves and the sawtooth's prediction. It lives
# once in Python: scripts/rounds_figure.py reads every constant from 07_any_shape/any_shape.cu and
# holds the copy of predict_seconds and plan_for, checked statement by statement against the
# source (its MIRRORED). Here: the same functions on a shapes.json device record.
# ---------------------------------------------------------------------------------------------

_LAUNCHER_MODEL = []


def launcher_model():
    """07's model as rounds_figure.read_model() reads it from this repository (once)."""
    if not _LAUNCHER_MODEL:
        try:
            _LAUNCHER_MODEL.append(rounds_figure.read_model(REPO))
        except rounds_figure.UsageError as error:
            raise UsageError(f"chapter 07's launcher model: {error}") from None
    return _LAUNCHER_MODEL[0]


def model_device(device):
    try:
        return rounds_figure.device_of(device)
    except rounds_figure.UsageError as error:
        raise UsageError(str(error)) from None


ceil_div = rounds_figure.ceil_div


def tile_size(tile):
    """(BM, BN) of the model's tile `tile` (kTileModels' order)."""
    t = launcher_model()["tiles"][tile]
    return t["block_m"], t["block_n"]


def sm_rate(device, tile, resident, split, odd_rows=False, column=1.0):
    """Multiply-adds per second of one SM running `resident` blocks of the tile."""
    return rounds_figure.sm_rate(launcher_model(), model_device(device), tile, resident, split,
                                 odd_rows, column)


def predict_seconds(m, n, k, device, tile, splits, k_slice, pad=False):
    return rounds_figure.predict(launcher_model(), model_device(device), (m, n, k), tile, splits,
                                 k_slice, pad)["seconds"]


def plan(m, n, k, device, tiles=None, split=True, pad=True, with_pad=False):
    """(tile, splits, seconds) of the fastest candidate, as the launcher chooses it; with
    with_pad, (tile, splits, seconds, B padded). tiles: the indices tried (default: all)."""
    try:
        chosen = rounds_figure.plan_for(launcher_model(), model_device(device), (m, n, k),
                                        tiles=tiles, split=split, pad=pad)
    except rounds_figure.UsageError as error:  # a thin shape: no tile plan to draw
        raise UsageError(str(error)) from None
    best = (chosen["tile"], chosen["splits"], chosen["seconds"], chosen["pad"])
    return best if with_pad else best[:3]


def predicted_efficiency(m, n, k, device, **choice):
    """Share of the large tile's full-GPU speed the model predicts for the chosen plan."""
    _, _, seconds = plan(m, n, k, device, **choice)
    large = launcher_model()["tiles"][0]
    ideal = m * n * k / (model_device(device)["fma_per_s_per_sm"] * device["sms"]
                         * large["peak_share"])
    return ideal / seconds


# Chapter 07's thin plans (M <= kThinMax or N <= kFewColsMax, rounds_figure.is_thin: a kernel that
# streams B, or A, once; its K slices come from the kernel's occupancy, which the device record
# does not hold, so the table names the kernel only).
def plan_name(m, n, k, device):
    model = launcher_model()
    if rounds_figure.is_thin(model, m, n):
        few_rows = rounds_figure.thin_kind(model, m, n) == 1
        return "few rows (streams B)" if few_rows else "few columns (streams A)"
    tile, splits, _, padded = plan(m, n, k, device, with_pad=True)
    bm, bn = tile_size(tile)
    return (f"{bm}x{bn}" + (f", split-K {splits}" if splits > 1 else "")
            + (", B padded" if padded else ""))


# ---------------------------------------------------------------------------------------------
# Tables and floors (pure functions: tests/scripts/test_shapes.py covers them)
# ---------------------------------------------------------------------------------------------

def by_shape(rows):
    """{(m, n, k): {chapter: row}}."""
    table = {}
    for r in rows:
        table.setdefault((r["m"], r["n"], r["k"]), {})[r["chapter"]] = r
    return table


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def pct(row):
    return row.get("pct_cublas") if row else None


def floors(rows, suite=DEFAULT_SUITE, counted=None):
    """[(floor, holds, detail)] for chapter 07's floors on `suite` (none where it has none), over
    the rows of a default run (06 and 07), or only the shapes in `counted`. 07 equal to 06 is
    checked at the EQUAL_TO_06 shapes the suite holds (see EQUAL_TO_06)."""
    own = floors_on(NEW, suite)
    if own is None:
        return []
    table = {s: c for s, c in by_shape(rows).items() if counted is None or s in counted}
    results = []
    for floor, where, wanted in ((own.large, "where M*N*K >= 2^30", True),
                                 (own.small, "on the smaller shapes", False)):
        if floor is None:
            continue
        value, shape = lowest([(s, pct(c.get(NEW))) for s, c in table.items()
                               if is_large(s) == wanted])
        holds = value is not None and value >= floor
        detail = "no shapes" if value is None else f"lowest {value:.1f} % at {shape_name(shape)}"
        results.append((f"07 >= {floor:.0f} % of cuBLAS {where}", holds, detail))
    if own.geomean is not None:
        mean = geomean([pct(c.get(NEW)) for c in table.values()])
        results.append((f"geometric mean of 07's % of cuBLAS >= {own.geomean:.0f} %",
                        mean is not None and mean >= own.geomean,
                        "-" if mean is None else f"{mean:.1f} %"))
    ratios = [(speedup(c), s) for s, c in table.items() if speedup(c) is not None]
    low = min(ratios) if ratios else (None, None)
    detail = "-" if low[0] is None else f"lowest 07/06 {low[0]:.3f} at {shape_name(low[1])}"
    results.append((f"07 never more than {100 * (1 - FLOOR_VS_06):.0f} % slower than 06",
                    low[0] is not None and low[0] >= FLOOR_VS_06, detail))
    for shape in equal_shapes(suite):
        ratio = speedup(table.get(shape, {}))
        results.append((f"07 equal to 06 at {shape_name(shape)} (within "
                        f"{100 * EQUAL_TOLERANCE:.0f} %)",
                        ratio is not None and abs(ratio - 1) <= EQUAL_TOLERANCE,
                        "not measured" if ratio is None else f"07/06 {ratio:.3f}"))
    return results


def equal_shapes(suite):
    """The EQUAL_TO_06 shapes that `suite` holds: where "07 equal to 06" is a floor."""
    held = {s[:3] for s in SUITES[suite]}
    return [shape for shape in EQUAL_TO_06 if shape in held]


def speedup(chapters):
    """07's TFLOP/s over 06's at one shape, or None."""
    a, b = chapters.get(BASE), chapters.get(NEW)
    if not a or not b or not a.get("tflops") or not b.get("tflops"):
        return None
    return b["tflops"] / a["tflops"]


def shape_name(shape):
    m, n, k = shape
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def cublas_tflops(chapters):
    """cuBLAS TFLOP/s at one shape: the median-free choice is 07's process (06's beside it)."""
    values = [c.get("cublas_tflops") for c in chapters.values() if c.get("cublas_tflops")]
    return sorted(values)[len(values) // 2] if values else None


def run_lines(document):
    """The GPU and the run (date, command, commit) as the tables' first bullet lines."""
    device, environment = document["device"], document["environment"]
    return [f"- GPU: {device.get('name')}, {device.get('sms')} SMs, SM clock "
            f"{device.get('sm_clock_mhz')} MHz; driver {device.get('driver')}, cuBLAS "
            f"{device.get('cublas')}",
            f"- Date: {environment['date']}; command: `{environment['command']}`; commit: "
            f"{environment['git_commit'] or 'unknown'}"
            f"{' (uncommitted changes)' if environment['git_dirty'] else ''}"]


def render_suite(document):
    """shapes.md (shapes_<suite>.md on another suite than 07's): 06 and 07 per shape, chapter
    07's floors on the suite."""
    rows, device = document["rows"], document["device"]
    suite = suite_of(document)
    counted = counted_shapes(document)
    table = by_shape(rows)
    title = f" ({SUITE_TITLES[suite]})" if suite in SUITE_TITLES else ""
    out = [f"# Shape suite{title}: chapters 06 and 07 against cuBLAS", "",
           "Generated by `scripts/shapes.py`; do not edit by hand.", "",
           *run_lines(document),
           "- Each chapter binary times itself and cuBLAS FP32 (TF32 off) in the same process, "
           "alternating sample by sample, L2 flushed; % of cuBLAS is the ratio of the medians "
           "in that process. cuBLAS column: the higher-middle of the two processes' medians.",
           "- 07's plan: the tile and split count its launcher model picks on this GPU "
           "(scripts/rounds_figure.py's copy of the model, read from any_shape.cu)."]
    if counted != set(table):
        out.append(f"- Rows of the group {EXTRA_GROUP} (--extra, issue 16's examples) count in "
                   "neither the floors nor the geometric means.")
    if suite != DEFAULT_SUITE:
        out.append(f"- Suite: `--suite {suite}` ({SUITE_TITLES.get(suite, suite)}); where each "
                   "shape comes from is written beside it in scripts/shapes.py.")
    own = floors_on(NEW, suite)
    missing = [s for s in EQUAL_TO_06 if s not in equal_shapes(suite)]
    if own is not None and missing:
        out.append(f"- 07 equal to 06 at {' and '.join(shape_name(s) for s in missing)} (issue "
                   f"{own.issue}): not shapes of this suite; the run of the default suite "
                   "(`python3 scripts/shapes.py`) checks it.")
    if document.get("note"):
        out.append(f"- Note: {document['note']}")
    out += ["",
           "| shape | group | 06 TFLOP/s | 07 TFLOP/s | cuBLAS TFLOP/s | 06 % of cuBLAS | "
           "07 % of cuBLAS | 07 / 06 | 07's plan | check |",
           "|:---|:---|---:|---:|---:|---:|---:|---:|:---|:---|"]
    groups = {(m, n, k): g for m, n, k, g in document.get("suite", [])}
    for shape in document_order(document, table):
        c = table[shape]
        a, b = c.get(BASE), c.get(NEW)
        ratio = speedup(c)
        status = "/".join(r.get("status") or "-" for r in (a, b) if r) or "-"
        out.append(f"| {shape_name(shape)} | {groups.get(shape, '-')} | "
                   f"{fmt(a and a.get('tflops'), 2)} | {fmt(b and b.get('tflops'), 2)} | "
                   f"{fmt(cublas_tflops(c), 2)} | {fmt(pct(a))} | {fmt(pct(b))} | "
                   f"{fmt(ratio, 3)} | {plan_name(*shape, device)} | {status} |")
    kept = [c for s, c in table.items() if s in counted]
    mean_a = geomean([pct(c.get(BASE)) for c in kept])
    mean_b = geomean([pct(c.get(NEW)) for c in kept])
    mean_r = geomean([speedup(c) for c in kept])
    out.append(f"| **geometric mean** | | | | | **{fmt(mean_a)}** | **{fmt(mean_b)}** | "
               f"**{fmt(mean_r, 3)}** | | |")
    if own is None:
        out += ["", "## Chapter 07's floors", "", "None are set on this suite."]
        return "\n".join(out) + "\n"
    out += ["", f"## Chapter 07's floors (issue {own.issue})", "", "| floor | holds | measured |",
            "|:---|:---|:---|"]
    out += [f"| {label} | {'yes' if holds else '**no**'} | {detail} |"
            for label, holds, detail in floors(rows, suite, counted)]
    return "\n".join(out) + "\n"


def document_order(document, table):
    """Shapes in suite order, then any others."""
    order = [(m, n, k) for m, n, k, _ in document.get("suite", [])]
    return [s for s in order if s in table] + sorted(s for s in table if s not in order)


def select_suite(shapes=None, extra=False, suite=DEFAULT_SUITE):
    """[(m, n, k, group)] to run: the suite (SUITES[suite]), or only `shapes` (in their order; a
    shape of that suite or of EXTRA keeps its group, any other is "custom"), then with `extra` the
    shapes of EXTRA; each shape once."""
    known = {s[:3]: s[3] for s in SUITES[suite] + EXTRA}
    chosen = [(*s, known.get(s, "custom")) for s in shapes] if shapes else list(SUITES[suite])
    if extra:
        chosen += EXTRA
    unique = {}
    for m, n, k, group in chosen:
        unique.setdefault((m, n, k), group)
    return [(*shape, group) for shape, group in unique.items()]


def results_stem(chapters, suite=DEFAULT_SUITE):
    """The results' names: 'shapes_08_09' for chapters 08_tensor_cores and 09_3xtf32 (--chapters)
    on the default suite, 'shapes_hopper_08_09' on the hopper suite; without chapters (the
    default run, 06 and 07) 'shapes', and 'shapes_heldout' on the held-out suite."""
    prefix = "shapes" if suite == DEFAULT_SUITE else f"shapes_{suite}"
    return "_".join([prefix] + [c.split("_", 1)[0] for c in chapters or []])


def suite_of(document):
    """The suite a document was run on (documents written before --suite: the default)."""
    return document.get("suite_name", DEFAULT_SUITE)


def is_large(shape):
    m, n, k = shape
    return m * n * k >= BIG_MACS


def lowest(items):
    """(value, shape) of the lowest measured value in [(shape, value)], or (None, None)."""
    measured = [(v, s) for s, v in items if v is not None]
    return min(measured) if measured else (None, None)


def counted_shapes(document):
    """The shapes the floors and the geometric means count: all but EXTRA_GROUP's."""
    table = by_shape(document["rows"])
    groups = {tuple(s[:3]): s[3] for s in document.get("suite", [])}
    return {s for s in table if groups.get(s) != EXTRA_GROUP}


def precision_of(rows, chapter):
    """A chapter's precision contract, "TF32" or "FP32": as its rows report it, else as its
    source declares it (FP32 when there is no source)."""
    for r in rows:
        if r.get("chapter") == chapter and r.get("precision") in ("TF32", "FP32"):
            return r["precision"]
    try:
        return chapter_precision(chapter)
    except OSError:
        return "FP32"


def chapter_floors(rows, chapters, counted=None, suite=DEFAULT_SUITE):
    """[(chapter, floor, holds, detail)] for the CHAPTER_FLOORS of the given chapters that are set
    on `suite` (other chapters have none here), over the rows' shapes, or only those in
    `counted`. A floor with no measured shape does not hold."""
    table = {s: c for s, c in by_shape(rows).items() if counted is None or s in counted}
    results = []
    for chapter in chapters:
        floors_ = floors_on(chapter, suite)
        if floors_ is None:
            continue
        mode = f"cuBLAS {precision_of(rows, chapter)}"
        short = chapter.split("_", 1)[0]
        for floor, where, wanted in ((floors_.large, "where M*N*K >= 2^30", True),
                                     (floors_.small, "on the smaller shapes", False)):
            if floor is None:
                continue
            label = f"{short} >= {floor:g} % of {mode} {where}"
            value, shape = lowest([(s, pct(c.get(chapter))) for s, c in table.items()
                                   if is_large(s) == wanted])
            holds = value is not None and value >= floor
            detail = ("no shapes" if value is None
                      else f"lowest {value:.1f} % at {shape_name(shape)}")
            results.append((chapter, f"{label} (issue {floors_.issue})", holds, detail))
        if floors_.geomean is not None:
            values = [pct(c.get(chapter)) for c in table.values()]
            mean = geomean(values)
            count = sum(1 for v in values if v is not None and v > 0)
            results.append((chapter, f"{short}'s geometric mean >= {floors_.geomean:g} % of {mode} "
                                     f"(issue {floors_.issue})",
                            mean is not None and mean >= floors_.geomean,
                            "no shapes" if mean is None else f"{mean:.1f} % over {count} shapes"))
    return results


def floors_elsewhere(chapters, suite):
    """The chapters of a run with CHAPTER_FLOORS on other suites only, not on `suite`."""
    return [c for c in chapters if c in CHAPTER_FLOORS and floors_on(c, suite) is None]


def document_chapters(document):
    """The chapters of a --chapters document, in the order they ran."""
    names = [c["chapter"] for c in document.get("chapters", []) if c.get("chapter")]
    return names or sorted({r["chapter"] for r in document["rows"]})


def render_chapters(document):
    """shapes_<NN>_<NN>.md: per shape, each chapter against cuBLAS in its own precision mode."""
    rows, device = document["rows"], document["device"]
    chapters = document_chapters(document)
    shorts = [c.split("_", 1)[0] for c in chapters]
    modes = [f"cuBLAS {precision_of(rows, c)}" for c in chapters]
    table = by_shape(rows)
    counted = counted_shapes(document)
    groups = {tuple(s[:3]): s[3] for s in document.get("suite", [])}
    names = " and ".join(filter(None, [", ".join(shorts[:-1]), shorts[-1]]))
    suite = suite_of(document)
    title = f" ({SUITE_TITLES[suite]})" if suite in SUITE_TITLES else ""
    out = [f"# Shape suite{title}: chapter{'s' if len(chapters) > 1 else ''} {names} against "
           "cuBLAS", "",
           "Generated by `scripts/shapes.py`; do not edit by hand.", "",
           *run_lines(document),
           "- Each chapter binary times itself and cuBLAS in the mode of its precision contract "
           "(TF32 chapters: cuBLAS TF32; FP32 chapters: cuBLAS FP32, TF32 off) in the same "
           "process, alternating sample by sample, L2 flushed; % of cuBLAS is the ratio of the "
           "medians in that process.",
           f"- Large: M*N*K >= 2^30. Rows of the group {EXTRA_GROUP} (--extra, the issue's "
           "examples) count in neither the floors nor the geometric means."]
    if suite != DEFAULT_SUITE:
        out.append(f"- Suite: `--suite {suite}` ({SUITE_TITLES.get(suite, suite)}); where each "
                   "shape comes from is written beside it in scripts/shapes.py.")
    elsewhere = floors_elsewhere(chapters, suite)
    if elsewhere:
        out.append("- Not evaluated on this suite: the floors of "
                   + ", ".join(f"{c.split('_', 1)[0]} ("
                               + "; ".join(f"issue {f.issue}, --suite {f.suite}"
                                           for f in CHAPTER_FLOORS[c]) + ")"
                               for c in elsewhere) + ".")
    if document.get("note"):
        out.append(f"- Note: {document['note']}")
    header = ["shape", "group", "large"]
    for short, mode in zip(shorts, modes):
        header += [f"{short} TFLOP/s", f"{mode} TFLOP/s", f"{short} % of {mode}"]
    header.append(f"check ({'/'.join(shorts)})")
    out += ["", "| " + " | ".join(header) + " |",
            "|:---|:---|:---|" + "---:|" * (3 * len(chapters)) + ":---|"]
    for shape in document_order(document, table):
        c = table[shape]
        cells = [shape_name(shape), groups.get(shape, "-"), "yes" if is_large(shape) else "no"]
        for chapter in chapters:
            r = c.get(chapter)
            cells += [fmt(r and r.get("tflops"), 2), fmt(r and r.get("cublas_tflops"), 2),
                      fmt(pct(r))]
        cells.append("/".join((c[ch].get("status") or "-") if ch in c else "-"
                              for ch in chapters))
        out.append("| " + " | ".join(cells) + " |")
    means = ["", "", ""]
    for chapter in chapters:
        mean = geomean([pct(table[s].get(chapter)) for s in table if s in counted])
        means += ["", "", f"**{fmt(mean)}**"]
    out.append("| **geometric mean** | " + " | ".join(means[1:]) + " | |")
    results = chapter_floors(rows, chapters, counted, suite)
    if results:
        out += ["", "## Floors", "", "| floor | holds | measured |", "|:---|:---|:---|"]
        out += [f"| {label} | {'yes' if holds else '**no**'} | {detail} |"
                for _, label, holds, detail in results]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("matplotlib is not installed (pip install matplotlib)") from None
    return plt


def draw_suite(plt, document, path):
    table = by_shape(document["rows"])
    shapes = document_order(document, table)
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(shapes) + 1.6))
    y = range(len(shapes))
    for offset, name, colour in ((-0.2, BASE, "#E69F00"), (0.2, NEW, "#0072B2")):
        values = [pct(table[s].get(name)) or 0 for s in shapes]
        ax.barh([i + offset for i in y], values, height=0.4, color=colour, label=name)
    suite = suite_of(document)
    own = floors_on(NEW, suite)  # 07's floor lines where it has floors on this suite
    for x, style in ((own and own.small, ":"), (own and own.large, "--"), (100, "-")):
        if x is not None:
            ax.axvline(x, color="#1f2328", linestyle=style, linewidth=0.8)
    ax.set_yticks(list(y))
    ax.set_yticklabels([shape_name(s) for s in shapes], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("% of cuBLAS FP32 (same process)")
    title = f" ({SUITE_TITLES[suite]})" if suite in SUITE_TITLES else ""
    ax.set_title(f"Shape suite{title} on {document['device'].get('name')}")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", color="#d0d7de", linewidth=0.6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# Okabe-Ito colours, one per chapter of a --chapters figure.
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]


def draw_chapters(plt, document, path):
    """% of cuBLAS per shape, one bar per chapter, large shapes' names in bold; a floor line per
    floor value (a chapter's colour, or grey where chapters share it): dashed for the large
    shapes' floors, dotted for the smaller ones'."""
    table = by_shape(document["rows"])
    shapes = document_order(document, table)
    chapters = document_chapters(document)
    colours = {c: COLOURS[i % len(COLOURS)] for i, c in enumerate(chapters)}
    fig, ax = plt.subplots(figsize=(8, (0.1 + 0.08 * len(chapters)) * len(shapes) + 1.2))
    height = 0.8 / len(chapters)
    for i, chapter in enumerate(chapters):
        offset = (i - (len(chapters) - 1) / 2) * height
        ax.barh([j + offset for j in range(len(shapes))],
                [pct(table[s].get(chapter)) or 0 for s in shapes], height=height,
                color=colours[chapter],
                label=f"{chapter} (vs cuBLAS {precision_of(document['rows'], chapter)})")
    lines = {}
    suite = suite_of(document)
    for chapter in chapters:
        floors_ = floors_on(chapter, suite)
        if floors_ is None:
            continue
        for value, style, which in ((floors_.large, "--", "M*N*K >= 2^30"),
                                    (floors_.small, ":", "smaller"),
                                    (floors_.geomean, "-.", "geometric mean")):
            if value is not None:
                lines.setdefault((value, style, which), []).append(chapter)
    for (value, style, which), owners in sorted(lines.items()):
        ax.axvline(value, color=colours[owners[0]] if len(owners) == 1 else "#57606a",
                   linestyle=style, linewidth=1.2,
                   label=f"floor {', '.join(c.split('_', 1)[0] for c in owners)}, {which}: "
                         f"{value:g} %")
    if all(value != 100 for value, _, _ in lines):
        ax.axvline(100, color="#1f2328", linewidth=0.8)
    ax.set_yticks(list(range(len(shapes))))
    ax.set_yticklabels([shape_name(s) for s in shapes], fontsize=8)
    for label, shape in zip(ax.get_yticklabels(), shapes):
        if is_large(shape):
            label.set_fontweight("bold")
    ax.set_ylim(len(shapes) - 0.5, -0.5)
    ax.set_xlabel("% of cuBLAS in the chapter's precision mode (same process); "
                  "bold: M*N*K >= 2^30")
    title = f" ({SUITE_TITLES[suite]})" if suite in SUITE_TITLES else ""
    ax.set_title(f"Shape suite{title} on {document['device'].get('name')}")
    # Below the axis label, whatever the number of shapes; bbox_inches="tight" keeps it in.
    from matplotlib.transforms import offset_copy
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0), ncol=2, fontsize=7, frameon=False,
              bbox_transform=offset_copy(ax.transAxes, fig=fig, y=-32, units="points"))
    ax.grid(axis="x", color="#d0d7de", linewidth=0.6)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def sm_loads(m, n, k, device, tile, splits):
    """Per SM, (its blocks, model seconds per block), blocks dealt out round-robin the way the
    hardware fills a wave; and the makespan (the busiest SM's time)."""
    bm, bn = tile_size(tile)
    sms = device["sms"]
    k_slice = rounds_figure.slice_of(launcher_model(), k, splits)
    blocks = ceil_div(m, bm) * ceil_div(n, bn) * ceil_div(k, k_slice)
    column = rounds_figure.column_share(launcher_model(), tile, n, k)
    loads = []
    for sm in range(sms):
        count = blocks // sms + (1 if sm < blocks % sms else 0)
        rate = sm_rate(device, tile, max(1, count), splits > 1, column=column)
        loads.append((count, bm * bn * (k_slice + launcher_model()["constants"]["kFillK"])
                      / rate))
    return loads, max(c * t for c, t in loads)


def draw_waves(plt, device, shape, path, measured=None):
    """Two Gantt charts of the SMs for one shape: 06's tile, and 07's plan (the model's view)."""
    m, n, k = shape
    tile, splits, _ = plan(m, n, k, device)
    plans = [("chapter 06: 128x256, K not split", 0, 1),
             (f"chapter 07: {plan_name(m, n, k, device)}", tile, splits)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharey=True)
    longest = max(sm_loads(m, n, k, device, t, s)[1] for _, t, s in plans)
    for i, (ax, (title, t, s), colour) in enumerate(zip(axes, plans, ("#E69F00", "#0072B2"))):
        loads, makespan = sm_loads(m, n, k, device, t, s)
        for sm, (count, seconds) in enumerate(loads):
            ax.broken_barh([(j * seconds * 1e6, seconds * 1e6) for j in range(count)], (sm, 1),
                           facecolors=colour, edgecolors="white", linewidth=0.2)
        busy = sum(c * t for c, t in loads) / (len(loads) * makespan)
        lines = [title, f"{sum(c for c, _ in loads)} blocks; model: SMs busy {100 * busy:.0f} % "
                        f"of {makespan * 1e6:.0f} us"]
        if measured:
            lines.append(measured[i])
        ax.set_title("\n".join(lines), fontsize=9)
        ax.axvline(makespan * 1e6, color="#1f2328", linewidth=0.8)
        ax.set_xlim(0, longest * 1e6 * 1.02)
        ax.set_xlabel("time (us, model)")
        ax.grid(False)
    axes[0].set_ylabel(f"SM (of {device['sms']})")
    axes[0].set_ylim(device["sms"], 0)
    fig.suptitle(f"Who runs what: M = {m}, N = {n}, K = {k} on {device.get('name')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_sawtooth(plt, document, path):
    device = document["device"]
    table = by_shape(document["rows"])
    sizes = sorted(s[0] for s in table)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for name, colour in ((BASE, "#E69F00"), (NEW, "#0072B2")):
        top.plot(sizes, [pct(table[(s, s, s)].get(name)) for s in sizes], marker="o",
                 markersize=3, color=colour, label=f"{name} (measured)")
    top.axhline(100, color="#1f2328", linewidth=0.8)
    top.set_ylabel("% of cuBLAS FP32")
    top.legend(fontsize=8)
    top.set_title(f"Wave quantization on {device.get('name')} ({device.get('sms')} SMs)")
    single = [100 * predicted_efficiency(s, s, s, device, tiles=(0,), split=False) for s in sizes]
    chosen = [100 * predicted_efficiency(s, s, s, device) for s in sizes]
    bottom.plot(sizes, single, color="#E69F00", linestyle="--",
                label="model: 128x256 tile only (06 at these sizes)")
    bottom.plot(sizes, chosen, color="#0072B2", linestyle="--", label="model: 07's choice")
    bottom.set_ylabel("predicted % of full-wave speed")
    bottom.set_xlabel("M = N = K")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

def last_error_line(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or ["(no message)"])[-1].removeprefix("error:").strip()


def run_chapters(bins, shapes, args, timing_only):
    """Run each chapter over all shapes; returns (reports, exit code)."""
    extra = []
    for option in ("samples", "warmup", "time_budget", "device"):
        if getattr(args, option) is not None:
            extra += ["--" + option.replace("_", "-"), str(getattr(args, option))]
    if timing_only:
        extra += ["--no-verify", "--no-accuracy"]
    reports, code = [], EXIT_PASS
    with tempfile.TemporaryDirectory(prefix="sgemm-shapes-") as tmp:
        for name, path in bins.items():
            output = Path(tmp) / f"{name}.json"
            command = [str(path), "--m", ",".join(str(s[0]) for s in shapes),
                       "--n", ",".join(str(s[1]) for s in shapes),
                       "--k", ",".join(str(s[2]) for s in shapes),
                       "--format", "json", "--output", str(output)] + extra
            log(f"{name}: {len(shapes)} shapes")
            proc = subprocess.run(command, capture_output=True, text=True)
            if proc.returncode == EXIT_USAGE:
                log(f"error: {name} refused the options: {last_error_line(proc.stderr)}")
                return reports, EXIT_USAGE
            if proc.returncode not in (EXIT_PASS, EXIT_WRONG):
                why = (last_error_line(proc.stderr) if proc.returncode > 0
                       else f"killed by signal {-proc.returncode}")
                log(f"error: {name} failed (exit {proc.returncode}): {why}")
                return reports, EXIT_RUNTIME
            try:
                report = json.loads(output.read_text(encoding="utf-8"))
                if report.get("schema") != 1 or not isinstance(report.get("rows"), list):
                    raise ValueError("not a schema-1 chapter report")
            except (OSError, ValueError) as error:
                log(f"error: {name} wrote no usable report ({error})")
                return reports, EXIT_RUNTIME
            if proc.returncode == EXIT_WRONG:
                log(f"{name}: WRONG RESULT on some shape (see the check column)")
                code = EXIT_WRONG
            reports.append(report)
    return reports, code


def environment(argv):
    commit, dirty = git_commit()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(["python3 scripts/shapes.py"] + argv),
            "git_commit": commit, "git_dirty": dirty}


def load_document(path):
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read {path}: {error}") from None
    if not isinstance(document, dict) or not isinstance(document.get("rows"), list) \
            or not isinstance(document.get("device"), dict):
        raise UsageError(f"{path} is not a shapes.py result (no rows or device)")
    return document


def render(folder, document, kind, stem):
    """<stem>.md (a suite run: kind "suite", 06 and 07, or "chapters", --chapters) and
    figures/<stem>.png (also for kind "sawtooth"). Without matplotlib the figure is skipped with a
    note: the measurements, the expensive part, are already saved."""
    if kind != "sawtooth":
        text = render_chapters(document) if kind == "chapters" else render_suite(document)
        (folder / f"{stem}.md").write_text(text, encoding="utf-8")
        log(f"wrote {folder / f'{stem}.md'}")
    figure = folder / "figures" / f"{stem}.png"
    try:
        plt = pyplot()
    except UsageError as error:
        log(f"note: {figure} not drawn: {error}")
        return
    figure.parent.mkdir(parents=True, exist_ok=True)
    draw = {"chapters": draw_chapters, "sawtooth": draw_sawtooth, "suite": draw_suite}[kind]
    draw(plt, document, figure)
    log(f"wrote {figure}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
        kind = "chapters" if args.chapters else "sawtooth" if args.sawtooth else "suite"
        # shapes.json for 06 and 07 on the default suite; every other run its own names.
        stem = "sawtooth" if args.sawtooth else results_stem(args.chapters, args.suite)
        chapters = args.chapters or CHAPTERS
        name = f"{stem}.json"
        if args.waves:
            document = load_document(args.results_dir / "shapes.json")
            # The measured speeds beside the model, when the suite or the sawtooth has the shape.
            rows = list(document["rows"])
            if (args.results_dir / "sawtooth.json").exists():
                rows += load_document(args.results_dir / "sawtooth.json")["rows"]
            table = by_shape(rows).get(args.waves, {})
            measured = None
            if BASE in table and NEW in table:
                measured = [f"measured: {table[c]['tflops']:.1f} TFLOP/s "
                            f"({table[c]['pct_cublas']:.1f} % of cuBLAS)" for c in (BASE, NEW)]
            args.out.parent.mkdir(parents=True, exist_ok=True)
            draw_waves(pyplot(), document["device"], args.waves, args.out, measured)
            log(f"wrote {args.out}")
            return EXIT_PASS
        if args.render_only:
            document = load_document(args.results_dir / name)
            render(args.results_dir, document, kind, stem)
            return EXIT_PASS
        if not args.no_build:
            build(args.build_dir, targets=chapters)  # only the chapters the suite runs
        bins = binaries(args.build_dir, chapters)
        missing = [c for c in chapters if c not in bins]
        if missing:
            log(f"error: no binary for {', '.join(missing)} in {args.build_dir / 'bin'} "
                "(build first, or drop --no-build)")
            return EXIT_RUNTIME
        suite = ([(s, s, s, "square") for s in args.sawtooth] if args.sawtooth
                 else select_suite(args.shapes, args.extra, args.suite))
        reports, code = run_chapters(bins, [s[:3] for s in suite], args, bool(args.sawtooth))
        if code not in (EXIT_PASS, EXIT_WRONG):
            return code
        device = reports[0]["device"]
        document = {"schema": 1, "generator": "scripts/shapes.py", "environment": environment(argv),
                    "device": device, "suite": [list(s) for s in suite],
                    "chapters": [{"chapter": r["chapter"], "title": r.get("title"),
                                  "command": r.get("command")} for r in reports],
                    "rows": [row for r in reports for row in r["rows"]]}
        if kind != "sawtooth":
            document["suite_name"] = args.suite
            counted = counted_shapes(document)
            evaluated = (chapter_floors(document["rows"], chapters, counted, args.suite)
                         if kind == "chapters" else
                         [(NEW, *f) for f in floors(document["rows"], args.suite, counted)])
            document["floors"] = [
                {"chapter": c, "floor": label, "holds": holds, "measured": detail}
                for c, label, holds, detail in evaluated]
        folder = args.results_dir or REPO / "docs" / "results" / gpu_slug(device.get("name", ""))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        render(folder, document, kind, stem)
        if kind != "sawtooth":
            print((render_chapters if kind == "chapters" else render_suite)(document), end="")
            if args.check_floors and code == EXIT_PASS and \
                    not all(f["holds"] for f in document["floors"]):
                log(f"floors: some do not hold (see {stem}.md)")
                code = EXIT_WRONG
        return code
    except UsageError as error:
        log(f"error: {error}")
        return EXIT_USAGE
    except OSError as error:
        log(f"error: cannot write the results: {error}")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
