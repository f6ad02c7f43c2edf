#!/usr/bin/env bash
# Everything that needs real RDMA, run inside the SoftRoCE VM in one boot:
#   test/fabric/run-in-vm.sh -- bash test/vm-tests.sh BUILD_DIR...
# 1. the fabric smoke test (devices, GIDs, traffic crosses each rail);
# 2. the net plugin integration scenarios against every given build tree.
# Prints one closing line "N passed, M failed" summing the suites' own counts.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ $# -gt 0 ] || set -- build
passed=0 failed=0
log=$(mktemp)
suite() { # name command...
  local name=$1 rc line p f
  shift
  echo "== vm: $name"
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "== vm: $name printed no result (exit $rc)"
    failed=$((failed + 1))
    return
  fi
  line=$(echo "$line" | grep -oE '[0-9]+ passed, [0-9]+ failed' | tail -1)
  p=${line%% passed*}
  f=${line#*passed, }
  f=${f%% failed*}
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "== vm: $name exited $rc"
    failed=$((failed + 1))
  fi
}
suite "fabric smoke test" bash test/fabric/smoke.sh
for b in "$@"; do
  suite "net plugin integration ($b)" env RAIL_BUILD_DIR="$b" bash test/integration/run.sh
done
rm -f "$log"
echo "vm tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
