#!/usr/bin/env bash
# Builds and runs every test: unit tests (plain build and ASan+UBSan build, via ctest).
# Installs what it needs. Prints one closing line "N passed, M failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh || { echo "test: dependency install failed"; exit 1; }

passed=0 failed=0
run_suite() { # name build-dir cmake-args...
  local name=$1 dir=$2; shift 2
  echo "== $name: build ($dir)"
  if ! bash scripts/build.sh "$dir" "$@"; then
    echo "== $name: BUILD FAILED"; failed=$((failed + 1)); return
  fi
  echo "== $name: ctest"
  if (cd "$dir" && ctest --output-on-failure -j2 --timeout 300); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
}
run_suite "unit tests" build
run_suite "unit tests under ASan+UBSan" build-asan -DRAIL_SANITIZE=ON
echo "test suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
