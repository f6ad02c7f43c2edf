#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where the held-out regret is (issue 30): every system replayed with the table fitted on the
# others (`tuner_eval --loso --dump`), then per system the regret split by what the tuner did —
#   kept:    the tuner left NCCL's pick and it was not the measured best (a missed gain),
#   hurt:    the tuner changed NCCL's pick and did worse than NCCL's,
#   short:   the tuner changed it, did better than NCCL, but not the best,
#   first:   the part of the regret at the first (smallest) size of each measured sweep —
# and the N points with the largest regret. Regret = measured time of the choice / best measured
# time - 1, summed over the points (mean = sum / points), as `tuner_eval --loso` counts them.
# --check: the pooled and per-system means of the dump must be those `tuner_eval --loso` prints
# (ctest tuner_loso_dump).
# usage: bench/tuner_eval_loso.sh [BUILD_DIR] [N | --check]
set -euo pipefail
build=${1:-build}
arg=${2:-20}
bin="$build/bench/tuner_eval"
if [ ! -x "$bin" ]; then
  echo "tuner_eval_loso.sh: $bin not found; build first (bash scripts/build.sh $build)" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --loso --dump >"$tmp/dump.csv"

# One line per point with two or more measured pairs:
# system coll nnodes bytes tuner_regret nccl_regret tuner_pair nccl_pair best_pair first
awk -F, 'NR > 1 {
    k = $1 "," $2 "," $4 "," $5
    if (!(k in n)) order[++np] = k
    n[k]++
    if (!(k in best) || $8 + 0 < best[k]) { best[k] = $8 + 0; bp[k] = $6 "/" $7 }
    if ($11 == 1) { nt[k] = $8 + 0; np_[k] = $6 "/" $7 }
    if ($12 == 1) { tt[k] = $8 + 0; tp[k] = $6 "/" $7 }
    sc = $1 "," $2
    if (!(sc in lo) || $5 + 0 < lo[sc]) lo[sc] = $5 + 0
  }
  END {
    for (i = 1; i <= np; i++) {
      k = order[i]
      if (n[k] < 2) continue
      split(k, f, ",")
      printf "%s %s %s %s %.6f %.6f %s %s %s %d\n", f[1], f[2], f[3], f[4], tt[k] / best[k] - 1,
             nt[k] / best[k] - 1, tp[k], np_[k], bp[k], f[4] + 0 == lo[f[1] "," f[2]]
    }
  }' "$tmp/dump.csv" >"$tmp/points"

if [ "$arg" = "--check" ]; then
  "$bin" --loso >"$tmp/table"
  awk 'FNR == NR { s[$1] += $5; c[$1]++; all += $5; n++; next }
       /^Leave one system out/ { on = 1; next }
       !on { next }
       $1 == "pooled" { want = $3 + 0; got = 100 * all / n
         if (got - want > 0.051 || want - got > 0.051) {
           printf "tuner_eval_loso: pooled %.2f%% from the dump, %.1f%% printed\n", got, want; bad = 1 }
         done = 1; on = 0; next }
       ($1 in c) { want = $3 + 0; got = 100 * s[$1] / c[$1]
         if ($2 + 0 != c[$1] || got - want > 0.051 || want - got > 0.051) {
           printf "tuner_eval_loso: %s: %d points %.2f%% from the dump, %d points %.1f%% printed\n",
                  $1, c[$1], got, $2, want; bad = 1 }
         seen++ }
       END { if (!done || seen < 2 || bad) { print "tuner_eval_loso: FAILED"; exit 1 }
             printf "tuner_eval_loso: dump matches the held-out table (%d systems, %d points)\n", seen, n }' \
    "$tmp/points" "$tmp/table"
  exit
fi

echo "Held-out regret by system (sums over points; the system's mean is the sum / points)"
printf "%-14s %6s %8s %8s %8s %8s %8s %8s %9s\n" system points tuner NCCL kept hurt short first "mean %"
awk '{ s = $1; c[s]++; tot[s] += $5; nc[s] += $6
       if ($7 == $8) kept[s] += $5
       else if ($5 > $6) hurt[s] += $5 - $6
       else short[s] += $5
       if ($10 == 1) first[s] += $5 }
     END { for (s in c) printf "%-14s %6d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.1f\n", s, c[s],
                               tot[s], nc[s], kept[s], hurt[s], short[s], first[s],
                               100 * tot[s] / c[s] }' "$tmp/points" | sort
echo
echo "The $arg held-out points with the largest regret (%; * first size of the sweep)"
sort -k5,5gr "$tmp/points" >"$tmp/sorted"
awk -v n="$arg" 'NR <= n { printf "%-14s %-13s %4s nodes %12s B  tuner %6.1f %-16s NCCL %6.1f %-16s best %s%s\n",
                $1, $2, $3, $4, 100 * $5, $7, 100 * $6, $8, $9, $10 == 1 ? " *" : "" }' "$tmp/sorted"
