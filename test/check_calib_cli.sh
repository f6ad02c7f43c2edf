#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nccl-rail calibrate / sweep / explain --svg end to end: calibrate reads the training logs and a
# directory; every bad input stops it with FILE:LINE: reason (or FILE: reason) in bounded time and
# writes nothing; the plan `sweep` prints, run against a stand-in nccl-tests binary, produces logs
# that calibrate reads with the right pairs; explain --svg writes well-formed SVG with a legend.
set -u
cli=${1:?usage: check_calib_cli.sh NCCL_RAIL SOURCE_DIR}
src=$(cd "${2:?}" && pwd)
data="$src/test/fixtures/tuner-data/nccl-tests"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() { if eval "$1"; then ok; else bad "$2"; fi; }

# --- calibrate: the training logs (directories, recursively) ---
"$cli" calibrate -o "$tmp/all.cal" "$data" >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ]' "calibrate on the fixtures failed: $(cat "$tmp/err")"
expect 'grep -q "82 log(s): 1930 point(s), 8 shape(s), 15 pair(s), 2-512 node(s)" "$tmp/out"' \
  "calibrate summary: $(cat "$tmp/out")"
expect '[ "$(head -1 "$tmp/all.cal")" = "nccl-rail-calibration 1" ]' "header line"
expect '[ "$(grep -c "^[A-Za-z]*,[A-Za-z]*,[A-Za-z0-9]*,[0-9]*," "$tmp/all.cal")" -eq 1930 ]' \
  "1930 rows"
expect 'grep -qx "AllGather,PAT,Simple,8,8,128,1721.2" "$tmp/all.cal"' "a known row"
# The file is what the tuner reads: explain applies it.
"$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --coll AllGather --calibration \
  "$tmp/all.cal" >"$tmp/explain" 2>&1
expect 'grep -q "calibration: 1930 point(s)" "$tmp/explain" && grep -q " calibration " "$tmp/explain"' \
  "explain with the calibration"
# Calibrated at 8 nodes only: on 2 nodes (two octaves beyond) it does not apply as such and
# explain says why (only ring steps are carried there); on 9 (0.17 octave) it still does.
"$cli" calibrate -o "$tmp/eight.cal" "$data/p5_8x1_efa" >/dev/null 2>&1
"$cli" explain --profile aws-p5 --nranks 2 --nnodes 2 --coll AllGather --calibration \
  "$tmp/eight.cal" >"$tmp/explain2" 2>&1
expect 'grep -q "some measured pairs are too far beyond the calibrated node counts" "$tmp/explain2"' \
  "explain on 2 nodes with an 8-node calibration: $(head -c 600 "$tmp/explain2")"
"$cli" explain --profile aws-p5 --nranks 9 --nnodes 9 --coll AllGather --calibration \
  "$tmp/eight.cal" >"$tmp/explain9" 2>&1
expect '! grep -q "too far beyond" "$tmp/explain9" && ! grep -q "nothing applies" "$tmp/explain9"' \
  "explain on 9 nodes with an 8-node calibration: $(head -c 600 "$tmp/explain9")"

# --- calibrate: --algo/--proto before a file without header lines ---
grep -v '^# NCCL_' "$data/p5_8x1_efa/all_gather.Ring.LL.log" >"$tmp/all_gather_nohdr.log"
"$cli" calibrate -o "$tmp/x.cal" "$tmp/all_gather_nohdr.log" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -q "all_gather_nohdr.log: the forced algorithm is unknown" "$tmp/err"' "no pair"
"$cli" calibrate -o "$tmp/x.cal" --algo ring --proto LL "$tmp/all_gather_nohdr.log" >/dev/null 2>&1
rc=$?
expect '[ $rc -eq 0 ] && grep -q "^AllGather,Ring,LL,8,8," "$tmp/x.cal"' "--algo/--proto"

# --- calibrate: bad input, bounded, nothing written ---
rm -f "$tmp/x.cal"
head -c 3000 "$data/p5_8x1_efa/all_gather.PAT.Simple.log" >"$tmp/trunc.log"
mkfifo "$tmp/fifo.log"
truncate -s 1G "$tmp/huge.log"
sed 's/node-0007/node-0006/' "$data/p5_8x1_efa/all_gather.PAT.Simple.log" >"$tmp/all_gather.uneven.log"
{ cat "$data/p5_8x1_efa/all_gather.PAT.Simple.log"; grep -v NCCL_ "$data/p5_2x1_efa/all_gather.PAT.Simple.log"; } >"$tmp/all_gather.mixed.log"
for case in "trunc.log:33: truncated table row" "fifo.log: not a regular file" \
  "huge.log: 1073741824 bytes, larger than" "all_gather.uneven.log" \
  "all_gather.mixed.log:57: mixed shapes in one file"; do
  f=${case%%:*}
  f=${f%% *}
  start=$(date +%s)
  timeout 20 "$cli" calibrate -o "$tmp/x.cal" "$data/p5_2x1_efa" "$tmp/$f" >/dev/null 2>"$tmp/err"
  rc=$?
  expect '[ $rc -eq 1 ] && grep -qF "$tmp/$case" "$tmp/err"' "$f: rc $rc, $(cat "$tmp/err")"
  expect '[ ! -e "$tmp/x.cal" ] && [ $(( $(date +%s) - start )) -lt 10 ]' "$f: wrote or slow"
done
"$cli" calibrate -o "$tmp/x.cal" 2>/dev/null
rc=$?
expect '[ $rc -eq 2 ]' "no log is a usage error"

# --- calibrate -o / explain --svg: the output-file rule (issue 22) ---
# Only a regular file (or nothing) is replaced; a FIFO, a device node, a socket, a directory or a
# symbolic link is refused with its kind, left unchanged, and nothing blocks.
small="$data/p5_2x1_efa"
mkfifo "$tmp/out.fifo"
echo keep >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/out.link"
mkdir "$tmp/out.dir"
/usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/out.sock"
kinds=("out.fifo:a FIFO" "out.link:a symbolic link" "out.dir:a directory" "out.sock:a socket")
if mknod "$tmp/out.dev" c 1 3 2>/dev/null; then kinds+=("out.dev:a character device"); fi
for k in "${kinds[@]}"; do
  f=${k%%:*}
  kind=${k#*:}
  before=$(stat -c '%F %i' "$tmp/$f")
  timeout 20 "$cli" calibrate -o "$tmp/$f" "$small" >/dev/null 2>"$tmp/err"
  rc=$?
  expect '[ $rc -eq 1 ] && grep -qF "$tmp/$f: not a regular file ($kind); refused, left unchanged" "$tmp/err"' \
    "calibrate -o $f: rc $rc, $(cat "$tmp/err")"
  expect '[ "$(stat -c "%F %i" "$tmp/$f")" = "$before" ] && [ "$(cat "$tmp/victim")" = keep ]' \
    "calibrate -o $f changed it"
  timeout 20 "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --svg "$tmp/$f" >/dev/null 2>"$tmp/err"
  rc=$?
  expect '[ $rc -eq 1 ] && grep -qF "$tmp/$f: not a regular file ($kind)" "$tmp/err"' \
    "explain --svg $f: rc $rc, $(cat "$tmp/err")"
  expect '[ "$(stat -c "%F %i" "$tmp/$f")" = "$before" ]' "explain --svg $f changed it"
done
timeout 20 "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --svg /dev/full >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -qF "/dev/full: not a regular file (a character device)" "$tmp/err"' \
  "explain --svg /dev/full: rc $rc, $(cat "$tmp/err")"
# The temporary file is created exclusively under a random name: a link planted at the old
# predictable name (OUT.tmp.PID) is not followed.
(
  ln -s "$tmp/victim" "$tmp/new.cal.tmp.$BASHPID"
  exec "$cli" calibrate -o "$tmp/new.cal" "$small" >/dev/null 2>&1
)
rc=$?
expect '[ $rc -eq 0 ] && [ "$(cat "$tmp/victim")" = keep ] && [ -f "$tmp/new.cal" ] && [ ! -L "$tmp/new.cal" ]' \
  "calibrate followed a planted temporary-name link (rc $rc)"
expect '[ -z "$(ls "$tmp" | grep "new.cal.*tmp" | grep -v "^new.cal.tmp.")" ]' "temporary file left behind"
# A regular file is replaced, its (narrower than new) mode kept.
echo old >"$tmp/new.cal"
chmod 640 "$tmp/new.cal"
"$cli" calibrate -o "$tmp/new.cal" "$small" >/dev/null 2>&1
expect '[ "$(head -1 "$tmp/new.cal")" = "nccl-rail-calibration 1" ] && [ "$(stat -c %a "$tmp/new.cal")" = 640 ]' \
  "regular file replaced, mode kept"
# A write error says what it was (here EFBIG from RLIMIT_FSIZE), not "Input/output error".
(
  trap '' XFSZ
  ulimit -f 1
  exec "$cli" calibrate -o "$tmp/big.cal" "$data" >/dev/null 2>"$tmp/err"
)
rc=$?
expect '[ $rc -eq 1 ] && grep -q "big.cal: File too large" "$tmp/err" && [ ! -e "$tmp/big.cal" ]' \
  "calibrate write error: rc $rc, $(cat "$tmp/err")"
(
  trap '' XFSZ
  ulimit -f 1
  exec "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --svg "$tmp/big.svg" >/dev/null 2>"$tmp/err"
)
rc=$?
expect '[ $rc -eq 1 ] && grep -q "big.svg: File too large" "$tmp/err" && [ ! -e "$tmp/big.svg" ]' \
  "explain --svg write error: rc $rc, $(cat "$tmp/err")"
# The same with SIGXFSZ at its default (kill): no death, the limit named, no temporary left
# (issue 29). Before, calibrate died of SIGXFSZ without a word and left .big2.cal.<hex>.tmp.
(
  ulimit -f 1
  exec "$cli" calibrate -o "$tmp/big2.cal" "$data" >/dev/null 2>"$tmp/err"
)
rc=$?
expect '[ $rc -eq 1 ] && grep -q "big2.cal: File too large: .*RLIMIT_FSIZE, ulimit -f) of 1024 bytes" "$tmp/err" && [ ! -e "$tmp/big2.cal" ] && [ -z "$(ls -A "$tmp" | grep "^\.big2\.cal\..*\.tmp$")" ]' \
  "calibrate under ulimit -f 1 (SIGXFSZ default): rc $rc, $(cat "$tmp/err")"

# --- sweep: the plan, run against a stand-in nccl-tests, read back by calibrate ---
mkdir -p "$tmp/bin"
for t in all_gather reduce_scatter all_reduce; do
  printf '#!/bin/sh\ngrep -v "^# NCCL_" "%s"\n' "$data/p5_8x1_efa/all_gather.Ring.LL.log" >"$tmp/bin/${t}_perf"
  chmod +x "$tmp/bin/${t}_perf"
done
"$cli" sweep --nnodes 8 --gpus-per-node 1 --colls AllGather,ReduceScatter --launcher '' \
  --nccl-tests "$tmp/bin" --out-dir "$tmp/logs" >"$tmp/plan.sh"
rc=$?
expect '[ $rc -eq 0 ] && [ "$(grep -c _perf "$tmp/plan.sh")" -eq 8 ]' "8 runs at 8x1 (Ring x3, PAT)"
(cd "$tmp" && bash plan.sh)
"$cli" calibrate -o "$tmp/sweep.cal" "$tmp/logs" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ]' "calibrate on the sweep logs: $(cat "$tmp/err") $(ls "$tmp/logs")"
for pair in AllGather,PAT,Simple ReduceScatter,PAT,Simple ReduceScatter,Ring,LL128 AllGather,Ring,LL; do
  expect 'grep -q "^$pair,8,8,128," "$tmp/sweep.cal"' "sweep log of $pair"
done
"$cli" sweep --nnodes 2 --gpus-per-node 8 >"$tmp/plan2"
expect 'grep -q NVLSTree "$tmp/plan2" && ! grep -q PAT "$tmp/plan2" && grep -q "all_reduce.Tree.LL.log" "$tmp/plan2"' \
  "2x8 sm90: NVLSTree, Tree, no PAT"
expect '! grep -q "all_gather.Tree" "$tmp/plan2"' "Tree only for AllReduce"
"$cli" sweep --nnodes 2 --gpus-per-node 8 --sm 80 >"$tmp/plan3"
expect '! grep -q NVLS "$tmp/plan3"' "no NVLS before sm90"
"$cli" sweep --nnodes 4 --gpus-per-node 8 --slurm >"$tmp/batch"
expect 'head -1 "$tmp/batch" | grep -q "^#!/bin/bash" && grep -q "#SBATCH --nodes=4" "$tmp/batch" && grep -q "srun" "$tmp/batch" && bash -n "$tmp/batch"' \
  "slurm script"
"$cli" sweep --nnodes 4 2>/dev/null
rc=$?
expect '[ $rc -eq 2 ]' "sweep without --gpus-per-node"

# --- sweep: paths are quoted in the plan, collectives matched exactly (issue 22) ---
weird="$tmp/o'ut \$(touch $tmp/pwned) \"x\" \`touch $tmp/pwned2\`"
bins="$tmp/te'sts \$(touch $tmp/pwned3)"
mkdir -p "$bins"
cp "$tmp/bin/"*_perf "$bins/"
"$cli" sweep --nnodes 8 --gpus-per-node 1 --colls all_gather --launcher '' --nccl-tests "$bins" \
  --out-dir "$weird" >"$tmp/plan_q.sh"
rc=$?
(cd "$tmp" && bash plan_q.sh >/dev/null 2>&1)
expect '[ $rc -eq 0 ] && [ ! -e "$tmp/pwned" ] && [ ! -e "$tmp/pwned2" ] && [ ! -e "$tmp/pwned3" ]' \
  "sweep plan ran code from --out-dir/--nccl-tests: $(ls "$tmp")"
expect '[ "$(ls "$weird" | wc -l)" -eq 4 ] && "$cli" calibrate -o "$tmp/q.cal" "$weird" >/dev/null 2>&1' \
  "quoted plan wrote its 4 logs where --out-dir says"
mkdir -p "$tmp/fake"
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/fake/srun"
chmod +x "$tmp/fake/srun"
rm -rf "$weird"
"$cli" sweep --nnodes 8 --gpus-per-node 1 --colls AllGather --slurm --nccl-tests "$bins" \
  --out-dir "$weird" >"$tmp/batch_q.sh"
(cd "$tmp" && PATH="$tmp/fake:$PATH" bash batch_q.sh >/dev/null 2>&1)
expect '[ ! -e "$tmp/pwned" ] && [ ! -e "$tmp/pwned2" ] && [ ! -e "$tmp/pwned3" ] && [ "$(ls "$weird" | wc -l)" -eq 4 ]' \
  "slurm plan with quoted paths: $(ls "$tmp")"
"$cli" sweep --nnodes 2 --gpus-per-node 1 --out-dir "$(printf 'a\nrm -rf x')" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 2 ] && grep -q "control character is refused" "$tmp/err"' "newline in --out-dir"
for c in allreducefoo xreduce all_reduce_perfx reducescatterx; do
  "$cli" sweep --nnodes 2 --gpus-per-node 8 --colls "$c" >/dev/null 2>"$tmp/err"
  rc=$?
  expect '[ $rc -eq 2 ] && grep -q "unknown collective" "$tmp/err"' "sweep --colls $c: rc $rc"
  "$cli" calibrate -o "$tmp/x.cal" --coll "$c" "$small" >/dev/null 2>"$tmp/err"
  rc=$?
  expect '[ $rc -eq 2 ] && grep -q "unknown name" "$tmp/err"' "calibrate --coll $c: rc $rc"
done
"$cli" sweep --nnodes 2 --gpus-per-node 8 --colls all_reduce,ReduceScatter,reduce >"$tmp/plan4"
expect 'grep -q all_reduce_perf "$tmp/plan4" && grep -q reduce_scatter_perf "$tmp/plan4" && grep -q "/reduce_perf" "$tmp/plan4" && ! grep -q all_gather "$tmp/plan4"' \
  "exact names still accepted"

# --- every command: a failed write to stdout is an error with its reason (issue 22) ---
for args in "sweep --nnodes 2 --gpus-per-node 8" "sweep --nnodes 2 --gpus-per-node 8 --slurm" \
  "explain --profile aws-p5 --nranks 8 --nnodes 8" "params --markdown" "version" "help" \
  "doctor --root $src/test/fixtures/sysfs/doctor-roce --json"; do
  # shellcheck disable=SC2086
  "$cli" $args >/dev/full 2>"$tmp/err"
  rc=$?
  expect '[ $rc -ne 0 ] && grep -q "cannot write the output: No space left on device" "$tmp/err"' \
    "$args >/dev/full: rc $rc, $(cat "$tmp/err")"
done
"$cli" version >&- 2>"$tmp/err"
rc=$?
expect '[ $rc -ne 0 ] && grep -q "Bad file descriptor" "$tmp/err"' "closed stdout: rc $rc"

# --- explain --svg ---
"$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --calibration "$tmp/all.cal" \
  --svg "$tmp/map.svg" --svg-nnodes 2,8,32,128,512 >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ]' "explain --svg: $(cat "$tmp/err")"
expect '/usr/bin/python3 -c "import sys,xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); assert r.tag.endswith(\"svg\"); assert len(r.findall(\"{http://www.w3.org/2000/svg}rect\")) > 3*5*31" "$tmp/map.svg"' \
  "SVG well-formed with a cell per size x node count"
expect 'grep -q "PAT/Simple" "$tmp/map.svg" && grep -q "from the calibration" "$tmp/map.svg" && grep -q "message size" "$tmp/map.svg"' \
  "legend and axes"
"$cli" explain --profile aws-p5 --svg /nonexistent/dir/map.svg >/dev/null 2>&1
rc=$?
expect '[ $rc -eq 1 ]' "unwritable SVG path"

echo "check_calib_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
