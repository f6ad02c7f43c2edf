#!/usr/bin/env bash
# Builds and runs every test: unit tests (plain build and ASan+UBSan build, via ctest).
# Installs what it needs. Prints one closing line "N passed, M failed" (ctest tests of every suite).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh || { echo "test: dependency install failed"; exit 1; }

passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run_suite() { # name build-dir cmake-args...
  local name=$1 dir=$2; shift 2
  echo "== $name: build ($dir)"
  if ! bash scripts/build.sh "$dir" "$@"; then
    echo "== $name: BUILD FAILED"; failed=$((failed + 1)); return
  fi
  echo "== $name: ctest"
  (cd "$dir" && ctest --output-on-failure -j2 --timeout 300) 2>&1 | tee "$log"
  # ctest's summary: "NN% tests passed, F tests failed out of T"
  local sum f t
  sum=$(grep -E 'tests failed out of [0-9]+' "$log" | tail -1)
  if [ -z "$sum" ]; then
    echo "== $name: ctest printed no summary"; failed=$((failed + 1)); return
  fi
  f=$(echo "$sum" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
  t=$(echo "$sum" | sed -E 's/.* tests failed out of ([0-9]+).*/\1/')
  passed=$((passed + t - f))
  failed=$((failed + f))
}
run_suite "unit tests" build
run_suite "unit tests under ASan+UBSan" build-asan -DRAIL_SANITIZE=ON
echo "all tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
