#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (test/fuzz, clang, ASan+UBSan) and fuzzes each for a while:
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 600 s, every target)
# Seeds: test/fuzz/corpus/<target>, test/fuzz/regressions/<target> and the matching fixtures
# (NCCL/hwloc XML, rules files). New corpus entries go to $RAIL_FUZZ_WORK (default build-fuzz/work,
# never into the tree). Crash inputs land in $RAIL_FUZZ_WORK/<target>/artifacts; a crash makes the
# script fail. Prints "fuzz: N passed, M failed". Env: RAIL_FUZZ_BUILD (build-fuzz), RAIL_FUZZ_JOBS.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
secs=${1:-600}
shift || true
build=${RAIL_FUZZ_BUILD:-build-fuzz}
work=${RAIL_FUZZ_WORK:-$build/work}
case $secs in '' | *[!0-9]*) echo "usage: fuzz.sh [SECONDS_PER_TARGET] [TARGET...]"; exit 2 ;; esac

bash scripts/install-deps.sh fuzz || { echo "fuzz: dependency install failed"; exit 1; }
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAIL_FUZZ=ON >/dev/null &&
  cmake --build "$build" --target fuzz_all -j"${RAIL_FUZZ_JOBS:-2}" >/dev/null ||
  { echo "fuzz: build failed (CC=clang -DRAIL_FUZZ=ON, target fuzz_all)"; echo "fuzz: 0 passed, 1 failed"; exit 1; }

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in test/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi
fixtures_for() { # target -> fixture files that make good seeds
  case $1 in
    fuzz_nccl_xml) ls test/fixtures/nccl-topo/*.xml test/fixtures/tuner/*.xml 2>/dev/null ;;
    fuzz_hwloc_xml) ls test/fixtures/hwloc-xml/hwloc_*.xml 2>/dev/null ;;
    fuzz_rules_file) ls test/fixtures/rules/*.conf 2>/dev/null ;;
  esac
}
# NCCL Inspector JSON of the shapes that used to cost gigabytes of json-c tree (issue 29 item 4):
# one object of zeros, of empty arrays, of members, one deep object; 1 MiB each, made here.
shape_seeds() { # dir
  local pad open close
  for pad in '0,' '[],' '"k":0,' '"k\n":[],'; do
    open='[' close='0]}'
    [ "${pad:0:1}" = '"' ] && open='{' close='"z":0}}'
    { printf '{"header":{"id":"x","rank":0,"n_ranks":1,"nnodes":1},"coll_perf":{},"pad":%s' "$open"
      yes "$pad" | tr -d '\n' | head -c 1040000
      printf '%s\n' "$close"; } >"$1/shape-$(printf %s "$pad" | md5sum | cut -c1-8).json"
  done
  { printf '{"a":'; yes '[' | tr -d '\n' | head -c 1040000; } >"$1/shape-deep.json"
}
target_opts() { # target -> extra libFuzzer options
  case $1 in
    fuzz_calib_inspector) echo "-max_len=1048576 -rss_limit_mb=1024" ;;
    *) echo "-max_len=65536 -rss_limit_mb=2048" ;;
  esac
}
export LSAN_OPTIONS="suppressions=$root/test/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
passed=0 failed=0
for t in "${targets[@]}"; do
  bin=$build/test/fuzz/$t
  if [ ! -x "$bin" ]; then echo "fuzz: $t: no such target"; failed=$((failed + 1)); continue; fi
  corpus=$work/$t/corpus art=$work/$t/artifacts
  mkdir -p "$corpus" "$art"
  cp -n test/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null
  [ -d test/fuzz/regressions/"$t" ] && cp -n test/fuzz/regressions/"$t"/* "$corpus"/ 2>/dev/null
  for f in $(fixtures_for "$t"); do cp -n "$f" "$corpus"/ 2>/dev/null; done
  [ "$t" = fuzz_calib_inspector ] && shape_seeds "$corpus"
  # -rss_limit_mb: a parser that blows up memory is a finding too; -timeout: so is a hang.
  # shellcheck disable=SC2046 # the options are words
  if "$bin" "$corpus" -max_total_time="$secs" -timeout=10 $(target_opts "$t") \
      -print_final_stats=1 -artifact_prefix="$art/" >"$work/$t.log" 2>&1; then
    echo "fuzz: $t: ok ($(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/$t.log" | grep -Eo '[0-9]+$') runs in ${secs} s)"
    passed=$((passed + 1))
  else
    echo "fuzz: $t: FAILED (log $work/$t.log, inputs in $art)"
    grep -E 'ERROR|SUMMARY|property violated|Test unit written' "$work/$t.log" | head -5
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
