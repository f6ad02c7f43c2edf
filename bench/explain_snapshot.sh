#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every decision `nccl-rail explain --csv` prints, into one folder: each built-in profile at
# 1, 2, 4, ... 1024 nodes with 1, 2, 4 and 8 ranks per node, every collective, alone and with a
# rules file and a calibration file (written by `nccl-rail calibrate` from the fixtures' nccl-tests
# logs). A restructuring that changes no behaviour leaves every file byte-identical:
#   bash bench/explain_snapshot.sh build-before /tmp/before
#   bash bench/explain_snapshot.sh build /tmp/after && diff -r /tmp/before /tmp/after
# usage: bench/explain_snapshot.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=${1:?usage: explain_snapshot.sh BUILD_DIR OUT_DIR}
out=${2:?usage: explain_snapshot.sh BUILD_DIR OUT_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
cli="$(cd "$build" && pwd)/tools/nccl-rail"
mkdir -p "$out"
cd "$out" # every path the outputs print is relative: two snapshots compare with diff -r
unset NCCL_RAIL_CALIBRATION_FILE NCCL_TUNER_CONFIG_FILE
rules="$src/test/fixtures/rules/good_all_forms.conf"
calib=calibration.txt
"$cli" calibrate -o "$calib" "$src"/test/fixtures/tuner-data/nccl-tests/p5_16x8_efa \
  >calibrate.out 2>&1 || echo "calibrate rc $?" >>calibrate.out
n=0
for profile in dgx-a100 dgx-h100 hgx-b200 aws-p5 azure-ndv5; do
  for rpn in 1 2 4 8; do
    for nodes in 1 2 4 8 16 32 64 128 256 512 1024; do
      for extra in plain rules calib; do
        case $extra in
          plain) args=() ;;
          rules) args=(--rules "$rules") ;;
          calib) args=(--calibration "$calib") ;;
        esac
        f="$profile.${nodes}x$rpn.$extra.csv"
        "$cli" explain --profile "$profile" --nnodes "$nodes" --nranks $((nodes * rpn)) \
          "${args[@]}" --csv >"$f" 2>&1 || echo "rc $?" >>"$f"
        n=$((n + 1))
      done
    done
  done
  "$cli" explain --profile "$profile" --nnodes 2 --svg "$profile.svg" \
    >"$profile.svg.out" 2>&1 || echo "rc $?" >>"$profile.svg.out"
done
echo "explain_snapshot: $n explain --csv outputs (+ 5 maps) in $out"
