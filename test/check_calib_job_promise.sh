#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Job calibration keeps its promise (issue 30, docs/calibration.md §4): NCCL Inspector's
# Prometheus files of a 2-node x 8-GPU job with four AllReduce pairs measured at 64 KiB (Ring/LL
# 45 us, Ring/LL128 27 us, Ring/Simple 36 us, Tree/LL 40.5 us), calibrated and explained as a new
# user would: the choice is the measured fastest, Ring/LL128, from the calibration (job), never a
# pair nobody measured (Tree/LL128, predicted 13.5 us by the geometric mean of ratios that differ
# 8x), and explain says which rule decided.
set -u
cli=${1:?usage: check_calib_job_promise.sh NCCL_RAIL}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() { if eval "$1"; then ok; else bad "$2"; fi; }

mkdir -p "$tmp/prom"
for node in 0 1; do
  for g in 0 1 2 3 4 5 6 7; do
    {
      echo "# TYPE nccl_collective_exec_time_microseconds gauge"
      for m in RING_LL:45 RING_LL128:27 RING_SIMPLE:36 TREE_LL:40.5; do
        l="node=\"node$node\",gpu=\"GPU$g\",comm_name=\"DP\",n_nodes=\"2\",nranks=\"16\",collective=\"AllReduce\",message_size=\"64-65KB\",algo_proto=\"${m%%:*}\""
        echo "nccl_collective_exec_time_microseconds{$l} ${m#*:}"
      done
    } >"$tmp/prom/nccl_inspector_metrics_GPU-$node$g.prom"
  done
done
"$cli" calibrate -o "$tmp/job.cal" "$tmp/prom" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -qx "AllReduce,Ring,LL128,16,2,65536,27" "$tmp/job.cal"' \
  "calibrate: rc $rc, $(cat "$tmp/err") $(cat "$tmp/job.cal" 2>/dev/null)"
# aws-p5: the topology on which the old rule chose Tree/LL128; dgx-h100 and dgx-a100 too.
for profile in aws-p5 dgx-h100 dgx-a100; do
  "$cli" explain --profile $profile --nranks 16 --nnodes 2 --calibration "$tmp/job.cal" \
    --coll AllReduce --min-bytes 65536 --max-bytes 65536 --csv >"$tmp/csv" 2>"$tmp/err"
  rc=$?
  got=$(awk -F, '$2==65536 && $6==1 {print $3"/"$4":"$8":"$9":"$10}' "$tmp/csv")
  expect '[ $rc -eq 0 ] && [ "$got" = "Ring/LL128:calibration:job:held-spread" ]' \
    "$profile: explain --csv at 64 KiB: '$got' (rc $rc), want Ring/LL128 from the calibration (job), rule held-spread"
done
"$cli" explain --profile aws-p5 --nranks 16 --nnodes 2 --calibration "$tmp/job.cal" \
  --coll AllReduce --min-bytes 65536 --max-bytes 65536 >"$tmp/txt" 2>"$tmp/err"
expect 'grep -E "^ +64 KiB +Ring/LL128 +calibration \(job\)" "$tmp/txt" >/dev/null' \
  "explain row: $(grep -E "^ +64 KiB" "$tmp/txt")"
expect 'grep -q "64 KiB: measured fastest: unmeasured pairs held back.*max/min 8\.[0-9]x" "$tmp/txt"' \
  "explain names the rule: $(grep -A2 "measured sizes" "$tmp/txt")"

echo "check_calib_job_promise: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
