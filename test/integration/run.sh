#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Net plugin integration scenarios over real verbs. Meant to run inside the fabric VM:
#   test/fabric/run-in-vm.sh -- bash test/integration/run.sh [SCENARIO...]
# Uses the build tree $RAIL_BUILD_DIR (default: build). Prints one closing line
# "N passed, M failed" (from rail_net_it).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${RAIL_BUILD_DIR:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
plugin=$build/libnccl-net-rail.so
it=$build/test/integration/rail_net_it
send=${FABRIC_DEV0:-rxe0}
recv=${FABRIC_DEV1:-rxe1}
if [ ! -x "$it" ] || [ ! -f "$plugin" ]; then
  echo "run.sh: $it or $plugin missing: build first (cmake --build $build)"
  echo "0 passed, 1 failed"
  exit 1
fi
if [ ! -e /dev/infiniband ]; then
  echo "run.sh: no /dev/infiniband here; run through test/fabric/run-in-vm.sh"
  echo "0 passed, 1 failed"
  exit 1
fi
ulimit -l unlimited 2>/dev/null || true
# One plugin device per rxe port unless the caller groups them (multi-rail runs do).
export NCCL_RAIL_RAILS=${NCCL_RAIL_RAILS-${FABRIC_DEV0:-rxe0},${FABRIC_DEV1:-rxe1},${FABRIC_DEV2:-rxe2},${FABRIC_DEV3:-rxe3}}
echo "run.sh: $plugin"
exec "$it" "$plugin" --send-dev "$send" --recv-dev "$recv" "$@"
