#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nccl-rail calibrate on job measurements, end to end (docs/calibration.md §7): NCCL Inspector's
# Prometheus textfiles of a 2-node x 8-GPU job with several algo_proto pairs become a calibration
# that explain --calibration applies, choosing the fastest measured pair at every measured size;
# the rail profiler's rank files and Inspector's JSON (with --algo/--proto) are read too; a bad
# line stops the command with FILE:LINE: reason and writes nothing.
set -u
cli=${1:?usage: check_calib_job_cli.sh NCCL_RAIL}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() { if eval "$1"; then ok; else bad "$2"; fi; }

# --- Inspector's Prometheus files: one per GPU, 2 nodes x 8 GPUs, AllReduce at 4 sizes, 6 pairs.
# At each size one pair is 3x faster than the rest (the one the calibration must choose); ranks
# differ by up to 9% (the slowest rank is the collective's time).
mkdir -p "$tmp/prom"
fastest=(RING_LL NVLS_TREE_SIMPLE TREE_SIMPLE RING_SIMPLE)
sizes=(64-65KB 1-2MB 16-17MB 256-257MB)
for node in 0 1; do
  for g in 0 1 2 3 4 5 6 7; do
    f="$tmp/prom/nccl_inspector_metrics_GPU-$node$g.prom"
    {
      echo "# HELP nccl_collective_exec_time_microseconds NCCL collective execution time"
      echo "# TYPE nccl_collective_exec_time_microseconds gauge"
      for i in 0 1 2 3; do
        for ap in RING_LL RING_LL128 RING_SIMPLE TREE_LL TREE_SIMPLE NVLS_TREE_SIMPLE unknown_unknown; do
          m=1.0
          [ "$ap" = "${fastest[$i]}" ] && m=0.3
          t=$(awk -v i=$i -v m=$m -v g=$g -v n=$node 'BEGIN{printf "%.6g", 20*(16^i)*m*(1+0.01*g+0.02*n)}')
          l="version=\"v6.1\",slurm_job_id=\"4242\",node=\"node$node\",gpu=\"GPU$g\",comm_name=\"DP Group 0\",n_nodes=\"2\",nranks=\"16\",collective=\"AllReduce\",message_size=\"${sizes[$i]}\",algo_proto=\"$ap\""
          echo "nccl_bus_bandwidth_gbs{$l} 123.4"
          echo "nccl_collective_exec_time_microseconds{$l} $t"
        done
      done
      echo "nccl_p2p_exec_time_microseconds{version=\"v6.1\",node=\"node$node\",gpu=\"GPU$g\",p2p_operation=\"Send\",message_size=\"1-2MB\"} 10"
    } >"$f"
  done
done
"$cli" calibrate -o "$tmp/job.cal" "$tmp/prom" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ]' "calibrate on Inspector files: rc $rc, $(cat "$tmp/err")"
expect 'grep -q "0 Inspector JSON file(s): 1 run(s), 24 " "$tmp/out" && grep -q "16 Inspector Prometheus" "$tmp/out"' \
  "job summary: $(cat "$tmp/out")"
expect 'grep -q "0 log(s) and job measurements: 24 point(s), 1 shape(s), 6 pair(s), 2-2 node(s), 8-8 rank(s)/node" "$tmp/out"' \
  "cover line: $(cat "$tmp/out")"
expect 'grep -qx "# source: job" "$tmp/job.cal"' "the file records the origin"
# The slowest rank: node 1 GPU 7 (x 1.09): RING_LL at 64 KiB = 20 x 0.3 x 1.09.
expect 'grep -qx "AllReduce,Ring,LL,16,2,65536,6.54" "$tmp/job.cal"' "slowest rank's time"
"$cli" explain --profile dgx-h100 --nranks 16 --nnodes 2 --calibration "$tmp/job.cal" \
  --coll AllReduce --csv >"$tmp/explain" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ]' "explain --calibration: $(cat "$tmp/err")"
want=(65536:Ring:LL 1048576:NVLSTree:Simple 16777216:Tree:Simple 268435456:Ring:Simple)
for w in "${want[@]}"; do
  IFS=: read -r b a p <<<"$w"
  got=$(awk -F, -v b="$b" '$2==b && $6==1 {print $3":"$4":"$8":"$9}' "$tmp/explain")
  expect '[ "$got" = "$a:$p:calibration:job" ]' \
    "explain at $b bytes: '$got', want $a:$p from the calibration, measured by the job"
done
# The table says so too, and the header counts the job's points.
"$cli" explain --profile dgx-h100 --nranks 16 --nnodes 2 --calibration "$tmp/job.cal" \
  --coll AllReduce >"$tmp/explain.txt" 2>"$tmp/err"
expect 'grep -q "calibration: 24 point(s) (24 from job measurements)" "$tmp/explain.txt"' \
  "explain header: $(grep calibration: "$tmp/explain.txt")"
expect 'grep -E "^ +64 KiB +Ring/LL +calibration \(job\)" "$tmp/explain.txt" >/dev/null' \
  "explain row at 64 KiB: $(grep -E "^ +64 KiB" "$tmp/explain.txt")"
# The same rows as nccl-tests measurements (no "# source: job"): measured_by says nccl-tests.
sed '/^# source: job$/d' "$tmp/job.cal" >"$tmp/tests.cal"
"$cli" explain --profile dgx-h100 --nranks 16 --nnodes 2 --calibration "$tmp/tests.cal" \
  --coll AllReduce --csv >"$tmp/explain2" 2>"$tmp/err"
got=$(awk -F, '$2==65536 && $6==1 {print $8":"$9}' "$tmp/explain2")
expect '[ "$got" = "calibration:nccl-tests" ]' "explain without job rows: '$got'"
# The SVG marks job-measured cells hollow.
"$cli" explain --profile dgx-h100 --nranks 16 --nnodes 2 --calibration "$tmp/job.cal" \
  --coll AllReduce --svg "$tmp/map.svg" >/dev/null 2>"$tmp/err"
expect 'grep -q "calibration, job measurements)</title>" "$tmp/map.svg"' "svg cell titles name the job"

# --- a bad line: FILE:LINE: reason, nothing written ---
cp -r "$tmp/prom" "$tmp/prom-bad"
sed -i '8s/message_size="64-65KB"/message_size="64-66KB"/' "$tmp/prom-bad/nccl_inspector_metrics_GPU-13.prom"
rm -f "$tmp/x.cal"
"$cli" calibrate -o "$tmp/x.cal" "$tmp/prom-bad" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -qF "nccl_inspector_metrics_GPU-13.prom:8: message_size '"'"'64-66KB'"'"'" "$tmp/err" && [ ! -e "$tmp/x.cal" ]' \
  "bad bucket: rc $rc, $(cat "$tmp/err")"

# --- the rail profiler's files: two ranks; one collective only rank 0 recorded ---
for r in 0 1; do
  {
    echo "nccl-rail-profile 1"
    echo "# nccl-rail: profiler plugin, ABI v5, host h$r, pid 1"
    echo "comm 0x00000000cafe0001 rank $r nranks 2 nnodes 2"
    echo "seq,coll,algo,proto,channels,bytes,gpu_us"
    echo "10,AllGather,Ring,LL128,4,1048576,$((100 + r * 20)).5"
    echo "11,AllGather,Ring,LL128,4,1048576,$((90 + r * 50)).0"
    echo "12,AllGather,Ring,LL128,4,1048576,$((95 + r)).0"
    [ $r -eq 0 ] && echo "13,AllGather,PAT,Simple,2,1048576,9.0"
  } >"$tmp/nccl-rail-00000000cafe0001-r$r.prof"
done
"$cli" calibrate -o "$tmp/prof.cal" "$tmp/nccl-rail-00000000cafe0001-r0.prof" \
  "$tmp/nccl-rail-00000000cafe0001-r1.prof" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "2 profiler, 0 Inspector Prometheus and 0 Inspector JSON file(s): 1 run(s), 3 " "$tmp/out" && grep -q "left out: 1 not recorded by every rank" "$tmp/out"' \
  "profiler files: rc $rc, $(cat "$tmp/out" "$tmp/err")"
# instances 120.5, 140, 96: the median is 120.5
expect 'grep -qx "AllGather,Ring,LL128,2,2,1048576,120.5" "$tmp/prof.cal"' "median of the slowest ranks"

# --- Inspector's JSON: only with --algo/--proto (it records no pair) ---
for r in 0 1; do
  for sn in 1 2 3; do
    echo "{\"header\":{\"id\":\"0x7f8c496ae9f661\",\"rank\":$r,\"n_ranks\":2,\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\",\"git_rev\":\"\",\"rec_mechanism\":\"nccl_profiler_interface\",\"dump_timestamp_us\":1748030377748202,\"hostname\":\"h\",\"pid\":$r},\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":$sn,\"coll_msg_size_bytes\":16777216,\"coll_exec_time_us\":$((600 + sn * 10 + r)),\"coll_timing_source\":\"kernel_gpu\",\"coll_algobw_gbs\":27.2,\"coll_busbw_gbs\":27.2}}"
  done >"$tmp/h$r-pid$r.log"
done
"$cli" calibrate -o "$tmp/json.cal" "$tmp/h0-pid0.log" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -q "h0-pid0.log:1: NCCL Inspector.s JSON records no algorithm or protocol" "$tmp/err"' \
  "JSON without --algo: rc $rc, $(cat "$tmp/err")"
"$cli" calibrate -o "$tmp/json.cal" --algo Ring --proto Simple "$tmp/h0-pid0.log" "$tmp/h1-pid1.log" \
  >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -qx "AllReduce,Ring,Simple,2,1,16777216,621" "$tmp/json.cal"' \
  "JSON with --algo/--proto: rc $rc, $(cat "$tmp/err")"

# --- issue 29 item 5: a job with more sizes of one series than a calibration holds (300 > 256)
# still gives a calibration: the sizes are merged into log-spaced buckets, said in one line.
{
  echo "nccl-rail-profile 1"
  echo "comm 0x00000000beef0001 rank 0 nranks 1 nnodes 1"
  echo "seq,coll,algo,proto,channels,bytes,gpu_us"
  for i in $(seq 0 299); do echo "$i,AllReduce,Ring,Simple,4,$((4096 + i * 512)),$((10 + i)).5"; done
} >"$tmp/many.prof"
"$cli" calibrate -o "$tmp/many.cal" "$tmp/many.prof" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "job measurements: 300 sizes of 1 series merged into [0-9]* log-spaced buckets" "$tmp/out" && [ "$(grep -c "^AllReduce,Ring,Simple,1,1," "$tmp/many.cal")" -le 256 ]' \
  "300 sizes: rc $rc, $(cat "$tmp/out" "$tmp/err")"

# nccl-tests logs of one shape and pair whose sizes together are more than 256 (two sweeps of
# 200 sizes each, interleaved): merged the same way, not refused.
for half in 0 1; do
  {
    echo "# NCCL_ALGO=Ring"
    echo "# NCCL_PROTO=LL"
    echo "# Collective test starting: all_reduce_perf"
    echo "#  Rank  0 Group  0 Pid  10000 on node-0000 device  0 [0x18] NVIDIA H100 80GB HBM3"
    echo "#  Rank  1 Group  0 Pid  10001 on node-0001 device  0 [0x18] NVIDIA H100 80GB HBM3"
    echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
    for i in $(seq 0 199); do
      b=$((1024 + (2 * i + half) * 64))
      echo "  $b $((b / 4)) float sum -1 $((20 + b / 1000)).00 0.00 0.00 0 $((20 + b / 1000)).00 0.00 0.00 0"
    done
  } >"$tmp/sweep$half.log"
done
"$cli" calibrate -o "$tmp/sweeps.cal" "$tmp/sweep0.log" "$tmp/sweep1.log" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "all measurements: 400 sizes of 1 series merged into" "$tmp/out"' \
  "400 nccl-tests sizes: rc $rc, $(cat "$tmp/out" "$tmp/err")"

# --- issue 29 item 8: calibrate's inputs ---
# -o naming an input (directly, or inside a directory read): refused, the input untouched.
p0="$tmp/nccl-rail-00000000cafe0001-r0.prof"
cp "$p0" "$tmp/p0.keep"
"$cli" calibrate -o "$p0" "$p0" "$tmp/nccl-rail-00000000cafe0001-r1.prof" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -qF "$p0: is the output file (-o)" "$tmp/err" && cmp -s "$p0" "$tmp/p0.keep"' \
  "-o an input: rc $rc, $(cat "$tmp/err")"
cp "$tmp/p0.keep" "$p0" # the old code overwrote it: keep the next cases meaningful
pin="$tmp/prom/nccl_inspector_metrics_GPU-00.prom"
cp "$pin" "$tmp/pin.keep"
"$cli" calibrate -o "$pin" "$tmp/prom" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -qF "is the output file (-o)" "$tmp/err" && cmp -s "$pin" "$tmp/pin.keep"' \
  "-o a file in an input directory: rc $rc, $(cat "$tmp/err")"
cp "$tmp/pin.keep" "$pin"
# A link to a directory is followed (named, or inside a directory); a link loop is read once.
ln -s "$tmp/prom" "$tmp/promlink"
"$cli" calibrate -o "$tmp/link.cal" "$tmp/promlink" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "16 Inspector Prometheus" "$tmp/out"' "link to a directory: rc $rc, $(cat "$tmp/err")"
mkdir -p "$tmp/loop/sub"
cp "$tmp/prom/"*.prom "$tmp/loop/sub/"
ln -s .. "$tmp/loop/sub/up"
"$cli" calibrate -o "$tmp/loop.cal" "$tmp/loop" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "16 Inspector Prometheus" "$tmp/out" && grep -q "note: .*sub/up: a directory already read" "$tmp/err"' \
  "link loop: rc $rc, $(cat "$tmp/out" "$tmp/err")"
# An unrelated *.json in a directory is skipped with a note; named, it is read (and refused).
cp -r "$tmp/prom" "$tmp/prom-json"
echo '{"model": "llama", "tp": 8}' >"$tmp/prom-json/config.json"
"$cli" calibrate -o "$tmp/pj.cal" "$tmp/prom-json" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "note: .*prom-json/config.json: not an NCCL Inspector record: skipped" "$tmp/err"' \
  "unrelated json: rc $rc, $(cat "$tmp/err")"
"$cli" calibrate -o "$tmp/pj.cal" "$tmp/prom-json/config.json" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -q "config.json:1: not an NCCL Inspector record" "$tmp/err"' \
  "unrelated json named: rc $rc, $(cat "$tmp/err")"
# A UTF-8 byte order mark (editors on Windows, some exporters) is accepted.
mkdir -p "$tmp/bom"
for f in "$tmp/prom/"*.prom; do { printf '\357\273\277'; cat "$f"; } >"$tmp/bom/$(basename "$f")"; done
{ printf '\357\273\277'; cat "$tmp/h0-pid0.log"; } >"$tmp/bom-h0.json"
"$cli" calibrate -o "$tmp/bom.cal" "$tmp/bom" --algo Ring --proto Simple "$tmp/bom-h0.json" \
  "$tmp/h1-pid1.log" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "16 Inspector Prometheus and 2 Inspector JSON" "$tmp/out"' \
  "byte order mark: rc $rc, $(cat "$tmp/out" "$tmp/err")"
# Files 4 levels down are read; deeper than 8 levels is said, not "no log found" alone.
mkdir -p "$tmp/deep/a/b/c" "$tmp/deeper/1/2/3/4/5/6/7/8"
cp "$tmp/sweep0.log" "$tmp/deep/a/b/c/"
cp "$tmp/sweep0.log" "$tmp/deeper/1/2/3/4/5/6/7/8/"
"$cli" calibrate -o "$tmp/deep.cal" "$tmp/deep" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "^calibrate: 1 log(s)" "$tmp/out"' "4 levels down: rc $rc, $(cat "$tmp/err")"
"$cli" calibrate -o "$tmp/deep.cal" "$tmp/deeper" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -q "deeper than 8 directory levels" "$tmp/err" && grep -q "1 director(ies) deeper than 8 levels not read" "$tmp/err"' \
  "9 levels down: rc $rc, $(cat "$tmp/err")"

echo "check_calib_job_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
