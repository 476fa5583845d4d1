#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for a chapter binary, for host tests of scripts/tour.py: NO GPU, MADE-UP NUMBERS.

Linked as <bin>/<chapter name>, it accepts the chapter options the tour uses and writes a
schema-1 JSON report for the "Fixture GPU". The TF32 chapters (those whose source declares the
TF32 contract, as chapters.chapter_precision() reads it) report "precision": "TF32" and are timed
against a made-up cuBLAS TF32, like the real binaries. Environment switches:
  FAKE_CHAPTER_NO_GPU=1             behave like a machine without a GPU (exit 3, one error line)
  FAKE_CHAPTER_FAIL=<chapter>       that chapter reports a wrong result (status FAIL, exit 1)
  FAKE_CHAPTER_UNSUPPORTED=<a,b>    those chapters cannot use this GPU: the harness's one line
                                    "error: <chapter> needs compute capability 9.0 ...", exit 3
  FAKE_CHAPTER_SPEED=<a>=<x>[,...]  chapter a runs x times its made-up speed (cuBLAS's stays)
"""

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
from chapters import CHAPTERS, chapter_precision  # noqa: E402  (needs the path above)

DEVICE = {
    "name": "Fixture GPU", "index": 0, "compute_capability": "0.0", "sms": 100,
    "sm_clock_mhz": 2000, "fp32_lanes_per_sm": 128, "fp32_peak_tflops": 51.2,
    "mem_clock_mhz": 2000, "bus_width_bits": 4096, "dram_bandwidth_gbs": 2048.0,
    "ridge_flop_per_byte": 25.0, "l2_bytes": 50331648, "memory_bytes": 85899345920,
    "driver": "fixture", "runtime": "fixture", "cublas": "fixture",
}
# Made-up share of the FP32 peak each chapter reaches at a large size, and its C tile; any other
# chapter (07: tests/scripts/test_shapes.py counts on a slow one) reaches 10 % with a 1 x 1 tile.
FAKE = {
    "00_naive": (0.02, 1, 1), "01_coalescing": (0.09, 1, 1), "02_smem_tiling": (0.16, 32, 32),
    "03_thread_tiling": (0.45, 128, 128), "04_vectorized": (0.58, 128, 128),
    "05_bank_conflict": (0.66, 128, 128), "06_double_buffer": (0.70, 128, 128),
    "08_tensor_cores": (2.4, 128, 256), "09_3xtf32": (1.2, 128, 128), "10_wgmma": (3.4, 256, 128),
    "11_tma": (3.8, 256, 128), "12_warp_specialization": (4.3, 256, 128),
    "13_persistent_clusters": (4.4, 256, 128),
}
# cuBLAS's made-up share of the FP32 peak in each precision mode.
CUBLAS_SHARE = {"FP32": 0.78, "TF32": 6.0}
# Made-up errors against FP64 (rms relative to rms(C)) of each precision.
RMS_ERROR = {"FP32": 1.2e-6, "TF32": 2.6e-4}


def precision(chapter):
    """The chapter's contract from its source; a tuning binary (03_x.tile_...) is its chapter's."""
    base = chapter.split(".", 1)[0]
    try:
        return chapter_precision(base) if base in CHAPTERS else "FP32"
    except OSError:  # a chapter listed in CMakeLists.txt whose source is not written yet
        return "FP32"


def speed_factor(chapter):
    """FAKE_CHAPTER_SPEED's factor for the chapter (a tuning binary: its chapter's), else 1."""
    base = chapter.split(".", 1)[0]
    for item in filter(None, re.split(r"[ ,]+", os.environ.get("FAKE_CHAPTER_SPEED", ""))):
        name, _, factor = item.partition("=")
        if name in (chapter, base):
            return float(factor)
    return 1.0


def errors(rms):
    return {"rms_rel_c": rms, "max_rel_c": 16 * rms}


def row(chapter, m, n, k, failing):
    share, tile_m, tile_n = FAKE.get(chapter.split(".", 1)[0], (0.1, 1, 1))
    contract = precision(chapter)
    flops = 2.0 * m * n * k
    traffic = 4.0 * (m * k * math.ceil(n / tile_n) + k * n * math.ceil(m / tile_m) + 2 * m * n)
    small = min(1.0, (m * n * k / 4096 ** 3) ** 0.25)  # small sizes fill the GPU less
    tflops = DEVICE["fp32_peak_tflops"] * share * (0.5 + 0.5 * small) * speed_factor(chapter)
    cublas = DEVICE["fp32_peak_tflops"] * CUBLAS_SHARE[contract] * (0.6 + 0.4 * small)
    ratio = flops / traffic
    return {
        "chapter": chapter, "m": m, "n": n, "k": k,
        "time_ms": flops / tflops / 1e9, "noise": 0.01, "samples": 30, "tflops": tflops,
        "cublas_time_ms": flops / cublas / 1e9, "cublas_tflops": cublas,
        "pct_cublas": 100 * tflops / cublas, "pct_peak": 100 * tflops / DEVICE["fp32_peak_tflops"],
        "ratio": ratio, "ideal_ratio": flops / (4.0 * (m * k + k * n + m * n)),
        "ridge": DEVICE["ridge_flop_per_byte"],
        "bound": "memory" if ratio < DEVICE["ridge_flop_per_byte"] else "compute",
        "max_abs_err": 1e-4, "max_rel_err": 2e-5, "rel_fro_err": 3e-7,
        "mismatches": 7 if failing else 0, "status": "FAIL" if failing else "PASS",
        "first_mismatch": {"row": 0, "col": 1, "got": 0.0, "want": 1.5} if failing else None,
        "precision": contract, "run_differences": 0, "fp64_error": errors(RMS_ERROR[contract]),
        "cublas_fp32_error": errors(RMS_ERROR["FP32"]),
        "cublas_tf32_error": errors(RMS_ERROR["TF32"]) if contract == "TF32" else None,
    }


def int_list(text):
    return [int(v) for v in text.split(",")]


def main():
    chapter = Path(sys.argv[0]).name
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int_list)
    parser.add_argument("--m", type=int_list)
    parser.add_argument("--n", type=int_list)
    parser.add_argument("--k", type=int_list)
    parser.add_argument("--format", default="table")
    parser.add_argument("--output")
    parser.add_argument("--samples", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--time-budget", type=float, default=2.0)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--verify-only", action="store_true")
    args = parser.parse_args()  # argparse exits 2 on bad usage, like the real binaries

    if os.environ.get("FAKE_CHAPTER_NO_GPU"):
        print("error: no CUDA GPU found (cudaGetDeviceCount: no CUDA-capable device is detected)",
              file=sys.stderr)
        return 3
    base = chapter.split(".", 1)[0]  # a tuning binary prints its chapter's name, as the harness
    if {chapter, base} & set(re.split(r"[ ,]+", os.environ.get("FAKE_CHAPTER_UNSUPPORTED", ""))):
        print(f"error: {base} needs compute capability 9.0 (Hopper: wgmma, sm_90a); device 0 "
              f"is {DEVICE['name']}, compute capability {DEVICE['compute_capability']}",
              file=sys.stderr)
        return 3
    shapes = ([(s, s, s) for s in args.size] if args.size
              else list(zip(args.m or [], args.n or [], args.k or [])))
    failing = os.environ.get("FAKE_CHAPTER_FAIL") == chapter
    report = {
        "schema": 1, "chapter": chapter, "title": "fixture chapter (made-up numbers)",
        "command": " ".join([f"build/bin/{chapter}"] + sys.argv[1:]),
        "date": "2026-01-01T00:00:00Z", "device": DEVICE,
        "settings": {"seed": 2026, "warmup": args.warmup, "samples": args.samples,
                     "time_budget_s": args.time_budget, "alpha": 1, "beta": 0, "verify": True,
                     "verify_only": args.verify_only, "tolerance": 16,
                     "reference": "fixture (no GPU, made-up numbers)",
                     "precision": precision(chapter)},
        "rows": [row(chapter, m, n, k, failing) for m, n, k in shapes],
    }
    text = json.dumps(report, indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
