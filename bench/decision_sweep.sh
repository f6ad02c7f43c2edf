#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Decision sweep: the algorithm/protocol the tuner picks per size, for every built-in profile
# and a few communicator shapes (AllReduce, AllGather). Figures come from `nccl-rail explain`.
# usage: bench/decision_sweep.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
cli="$build/tools/nccl-rail"
sizes="8 1024 65536 1048576 16777216 268435456 4294967296"
printf '%-11s %-12s %-13s' profile coll shape
for s in $sizes; do printf ' %-15s' "$s"; done
echo
for profile in dgx-a100 dgx-h100 hgx-b200 aws-p5 azure-ndv5; do
  for shape in "8 1" "16 2" "64 8" "8 8"; do
    set -- $shape
    for coll in AllReduce AllGather; do
      printf '%-11s %-12s %-13s' "$profile" "$coll" "$1r/$2n"
      csv=$("$cli" explain --profile "$profile" --nranks "$1" --nnodes "$2" --coll "$coll" --csv)
      for s in $sizes; do
        pick=$(echo "$csv" | awk -F, -v s="$s" '$2==s && $6==1 {print $3"/"$4}')
        printf ' %-15s' "${pick:-NCCL}"
      done
      echo
    done
  done
done
