#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Net plugin integration scenarios over verbs. Two fabrics:
#   - real kernel verbs inside the SoftRoCE VM (rxe devices):
#       test/fabric/run-in-vm.sh -- bash test/integration/run.sh [SCENARIO...]
#   - the shm verbs provider on any Linux host, no VM, no RDMA (NCCL_RAIL_VERBS_PROVIDER=shm):
#       RAIL_IT_PROVIDER=shm bash test/integration/run.sh [SCENARIO...]          (one rail)
#       RAIL_IT_PROVIDER=shm FABRIC_DEV0=shm0+shm2 FABRIC_DEV1=shm1+shm3 \
#         NCCL_RAIL_RAILS=shm0+shm2,shm1+shm3 bash test/integration/run.sh          (two rails)
#     Each run gets its own shm fabric (NCCL_RAIL_SHM_FABRIC=it-PID, removed at the end), so
#     runs of several build trees at once do not pull each other's cables. Scenarios that need
#     kernel verbs (RoCE GIDs, GPUDirect) are skipped with their reason.
# Uses the build tree $RAIL_BUILD_DIR (default: build). Prints one closing line
# "N passed, M failed" (from rail_net_it; ", K skipped" on the shm provider).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${RAIL_BUILD_DIR:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
plugin=$build/libnccl-net-rail.so
it=$build/test/integration/rail_net_it
if [ ! -x "$it" ] || [ ! -f "$plugin" ]; then
  echo "run.sh: $it or $plugin missing: build first (cmake --build $build)"
  echo "0 passed, 1 failed"
  exit 1
fi
ulimit -l unlimited 2>/dev/null || true
if [ "${RAIL_IT_PROVIDER:-}" = shm ]; then
  pfx=shm
  export NCCL_RAIL_VERBS_PROVIDER=shm
  export NCCL_RAIL_SHM_FABRIC=${NCCL_RAIL_SHM_FABRIC:-it-$$}
  # The VM's veth names, as the shm fabric calls its cable ends; socket_ifname uses lo.
  export FABRIC_IF0=shm0 FABRIC_IF1=shm1 FABRIC_IF2=shm2 FABRIC_IF3=shm3 FABRIC_A3=127.0.0.1
  # The last user removes the fabric file (docs/net-plugin.md); sides leaving through _exit do
  # not, so remove it (and this user's NAME+1..+7, used when another user took NAME).
  trap 'find /dev/shm -maxdepth 1 -user "$(id -u)" \( -name "nccl-rail-shm-$(id -u)-$NCCL_RAIL_SHM_FABRIC" -o -name "nccl-rail-shm-$(id -u)-$NCCL_RAIL_SHM_FABRIC+[1-7]" \) -delete' EXIT
elif [ ! -e /dev/infiniband ]; then
  echo "run.sh: no /dev/infiniband here; run through test/fabric/run-in-vm.sh" \
    "(or RAIL_IT_PROVIDER=shm for the shm verbs provider)"
  echo "0 passed, 1 failed"
  exit 1
else
  pfx=rxe
fi
send=${FABRIC_DEV0:-${pfx}0}
recv=${FABRIC_DEV1:-${pfx}1}
# One plugin device per port unless the caller groups them (multi-rail runs do).
export NCCL_RAIL_RAILS=${NCCL_RAIL_RAILS-${FABRIC_DEV0:-${pfx}0},${FABRIC_DEV1:-${pfx}1},${FABRIC_DEV2:-${pfx}2},${FABRIC_DEV3:-${pfx}3}}
echo "run.sh: $plugin"
"$it" "$plugin" --send-dev "$send" --recv-dev "$recv" "$@"
