#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build 09_3xtf32/figures/promotion_h100.csv, the table promotion.png is drawn from, out of the
harness CSVs of 09's promote_* variants (one run per promotion interval and distribution, 4096^3).

The runs, on the H100 (tuning build, `python3 scripts/tune.py --chapters 09 --build-only`):

  for p in 1 2 4 8 16 never; do for d in uniform wide; do
    build-tuning/bin/09_3xtf32.variant_promote_$p --size 4096 --dist $d --no-cublas \\
        --time-budget 0.5 --format csv \\
        > docs/results/nvidia-h100-80gb-hbm3/tensor_cores/prom_promote_${p}_$d.csv
  done; done
  python3 scripts/promotion_table.py && python3 scripts/tensor_core_figures.py

Exit codes: 0 written, 1 a run did not PASS, 2 a CSV is missing or has no 4096^3 row.
"""
import argparse
import csv
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIELDS = ["promote", "dist", "m", "tflops", "noise", "rms_rel_c", "max_rel_c", "rms_rel_ab",
          "max_rel_ab", "cublas_fp32_rms_rel_c", "cublas_fp32_max_rel_c"]
INTERVALS = [(0, "never"), (1, "1"), (2, "2"), (4, "4"), (8, "8"), (16, "16")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default=str(REPO / "docs/results/nvidia-h100-80gb-hbm3/tensor_cores"),
                        help="folder of the prom_promote_<p>_<dist>.csv files")
    parser.add_argument("--output", default=str(REPO / "09_3xtf32/figures/promotion_h100.csv"))
    args = parser.parse_args(argv)
    rows = []
    for promote, name in INTERVALS:
        for dist in ("uniform", "wide"):
            path = Path(args.runs) / f"prom_promote_{name}_{dist}.csv"
            try:
                with open(path, newline="") as f:
                    row = next(r for r in csv.DictReader(f) if r.get("m") == "4096")
            except (OSError, StopIteration):
                print(f"error: {path}: missing, or no 4096^3 row", file=sys.stderr)
                return 2
            if row["status"] != "PASS":
                print(f"error: {path}: the run says {row['status']}", file=sys.stderr)
                return 1
            rows.append({"promote": promote, "dist": dist, "m": row["m"],
                         "tflops": row["tflops"], "noise": row["noise"],
                         "rms_rel_c": row["fp64_rms_rel_c"], "max_rel_c": row["fp64_max_rel_c"],
                         "rms_rel_ab": row["fp64_rms_rel_ab"],
                         "max_rel_ab": row["fp64_max_rel_ab"],
                         "cublas_fp32_rms_rel_c": row["cublas_fp32_rms_rel_c"],
                         "cublas_fp32_max_rel_c": row["cublas_fp32_max_rel_c"]})
    with open(args.output, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.output}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
