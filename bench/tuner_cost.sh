#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Instructions per getCollInfo call, counted by callgrind (repeatable, unlike wall time).
# usage: bench/tuner_cost.sh [BUILD_DIR] [PROFILE]
set -euo pipefail
build=${1:-build}
profile=${2:-dgx-h100}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
  --toggle-collect=bench_loop_tuner --toggle-collect=bench_loop_baseline \
  "$build/bench/tuner_cost" "$build/libnccl-tuner-rail.so" "$profile" >/dev/null 2>"$out/vg.log"
calls=100000
# Inclusive instruction counts of the two loops.
incl() { callgrind_annotate --inclusive=yes "$out/cg.out" 2>/dev/null |
         awk -v f="$1" '$0 ~ f {gsub(",","",$1); print $1; exit}'; }
tuner=$(incl bench_loop_tuner)
base=$(incl bench_loop_baseline)
per=$(( (tuner - base) / calls ))
echo "tuner getCollInfo cost ($profile, 16 ranks on 2 nodes, sizes 1 B..8 GiB, 5 collectives):"
echo "  instructions per call: $per   (loop with tuner $tuner, baseline $base, $calls calls; target <= 100)"
