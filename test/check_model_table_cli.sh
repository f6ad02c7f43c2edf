#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A platform's table as data (issue 30, docs/calibration.md §9): `nccl-rail fit` on the training
# logs of test/fixtures/tuner-data writes a table that reproduces the embedded table's decisions
# (identical `explain --csv` under NCCL_RAIL_MODEL_TABLE=FILE); NCCL_RAIL_MODEL_TABLE=none gives
# the model without a table; a bad table WARNs naming the variable and the embedded one is used;
# fit refuses bad input with FILE:LINE: reason and writes nothing.
set -u
cli=${1:?usage: check_model_table_cli.sh NCCL_RAIL SOURCE_DIR}
src=${2:?usage: check_model_table_cli.sh NCCL_RAIL SOURCE_DIR}
data=$src/test/fixtures/tuner-data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() { if eval "$1"; then ok; else bad "$2"; fi; }

"$cli" fit -o "$tmp/t.txt" --published "$src/test/fixtures/measurements/published.csv" \
  --topo-dir "$data/topo" "$data"/nccl-tests/* >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "fit: 10 system(s), 2152 measured point(s)" "$tmp/out"' \
  "fit: rc $rc, $(tail -2 "$tmp/out") $(cat "$tmp/err")"
expect 'head -2 "$tmp/t.txt" | grep -qx "nccl-rail-model-table 1"' "table header"
# The same decisions as the embedded table, on shapes the training covers and on others.
shapes=("aws-p5 2 2" "aws-p5 16 2" "aws-p5 128 16" "aws-p5 8 8" "aws-p5 512 512" "hgx-b200 128 16"
  "dgx-h100 8 1" "dgx-h100 4 1" "dgx-a100 16 2" "azure-ndv5 64 8")
for s in "${shapes[@]}"; do
  read -r profile nranks nnodes <<<"$s"
  args=(explain --profile "$profile" --nranks "$nranks" --nnodes "$nnodes" --csv)
  NCCL_RAIL_MODEL_TABLE= "$cli" "${args[@]}" >"$tmp/a.csv" 2>"$tmp/a.err"
  NCCL_RAIL_MODEL_TABLE="$tmp/t.txt" "$cli" "${args[@]}" >"$tmp/b.csv" 2>"$tmp/b.err"
  expect 'cmp -s "$tmp/a.csv" "$tmp/b.csv" && [ $(wc -l <"$tmp/a.csv") -gt 100 ] && [ ! -s "$tmp/b.err" ]' \
    "$s: explain --csv differs with the fitted table: $(diff "$tmp/a.csv" "$tmp/b.csv" | head -4) $(cat "$tmp/b.err")"
done
# explain names the table in use.
NCCL_RAIL_MODEL_TABLE="$tmp/t.txt" "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 \
  --coll AllGather >"$tmp/x.txt" 2>&1
expect 'grep -qx "model table: $tmp/t.txt" "$tmp/x.txt"' "explain names the file: $(grep "model table" "$tmp/x.txt")"
"$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --coll AllGather >"$tmp/x.txt" 2>&1
expect 'grep -qx "model table: embedded" "$tmp/x.txt"' "explain names the embedded table"

# none: the model without the table. P5 at 1 GPU x 8 nodes, where the trained table changes
# NCCL's choice at many sizes, leaves NCCL's choices with no table.
NCCL_RAIL_MODEL_TABLE=none "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 \
  --coll AllGather >"$tmp/none.txt" 2>&1
expect 'grep -qx "model table: none" "$tmp/none.txt"' "none: $(grep "model table" "$tmp/none.txt")"
n_model=$("$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --coll AllGather --csv |
  awk -F, '$6==1 && $8=="model"' | wc -l)
n_none=$(NCCL_RAIL_MODEL_TABLE=none "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 \
  --coll AllGather --csv | awk -F, '$6==1 && $8=="model"' | wc -l)
expect '[ "$n_model" -gt 0 ] && [ "$n_none" -eq 0 ]' \
  "decisions from the model: $n_model with the table, $n_none without (want > 0 and 0)"

# A bad table: one WARN naming the variable and FILE:LINE, the embedded table's decisions.
printf 'nccl-rail-model-table 1\nmargin 0.03 0.04 0.5 0.5 2\ncoef efa hopper ai_ll=x\n' >"$tmp/bad.txt"
mkfifo "$tmp/fifo"
for f in "$tmp/bad.txt:3:" "$tmp/fifo: not a regular file" "$tmp/missing.txt: No such file"; do
  path=${f%%:*}
  NCCL_RAIL_MODEL_TABLE=$path timeout 20 "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 \
    --coll AllGather --csv >"$tmp/b.csv" 2>"$tmp/b.err"
  "$cli" explain --profile aws-p5 --nranks 8 --nnodes 8 --coll AllGather --csv >"$tmp/a.csv"
  expect 'grep -qF "NCCL_RAIL_MODEL_TABLE: $f" "$tmp/b.err" && grep -q "using the embedded table" "$tmp/b.err" && cmp -s "$tmp/a.csv" "$tmp/b.csv"' \
    "bad table $path: $(cat "$tmp/b.err")"
done

# fit: a malformed log stops it with FILE:LINE and nothing is written; no topology is an error.
mkdir -p "$tmp/logs"
cp "$data/nccl-tests/p5_2x8_efa/all_reduce.Ring.LL.log" "$tmp/logs/"
sed -i '30s/139.30    0.00    0.00      0/139.30    0.00    0.00      7/' "$tmp/logs/all_reduce.Ring.LL.log"
"$cli" fit -o "$tmp/fitted.txt" --topo-file "$data/topo/p5_2x8_efa.xml" "$tmp/logs" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -q "all_reduce.Ring.LL.log:30:" "$tmp/err" && [ ! -e "$tmp/fitted.txt" ]' \
  "malformed log: rc $rc, $(cat "$tmp/err")"
"$cli" fit -o "$tmp/fitted.txt" "$data/nccl-tests/p5_2x8_efa" >/dev/null 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 1 ] && grep -q "no topology before it" "$tmp/err" && [ ! -e "$tmp/fitted.txt" ]' \
  "no topology: rc $rc, $(cat "$tmp/err")"
# A calibration file is an input too: the P5 8-GPU sweeps as calibrations, one per node count.
for s in p5_2x8_efa p5_16x8_efa p5_256x8_efa; do
  "$cli" calibrate -o "$tmp/$s.cal" "$data/nccl-tests/$s" >/dev/null 2>&1
done
"$cli" fit -o "$tmp/cal.txt" --topo-file "$data/topo/p5_2x8_efa.xml" "$tmp"/p5_*.cal \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
expect '[ $rc -eq 0 ] && grep -q "fit: 3 system(s)" "$tmp/out" && grep -q "^coef efa hopper" "$tmp/cal.txt"' \
  "fit from calibration files: rc $rc, $(tail -1 "$tmp/out") $(cat "$tmp/err")"

echo "check_model_table_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
