#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The full soak of the net plugin (test/integration/it_soak.c) in the SoftRoCE VM: N messages
# (default 10^6) of seeded log-distributed sizes up to MAX bytes (default 1 MiB) over the dual-rail
# device rxe0+rxe2 -> rxe1+rxe3, rail B (veth2) flapping, every byte checked; RSS, registrations,
# kernel QPs and MRs compared between warm-up and end. Figures: bench/README.md.
#   bash scripts/soak.sh [BUILD_DIR] [--messages N] [--max-size B] [--seed S] [--flap-up-ms U]
#                        [--flap-down-ms D] [--window W]
# Environment: SOAK_TIMEOUT (seconds for the VM, default 36000), FABRIC_DIR.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
build=build
case ${1:-} in --* | '') ;; *) build=$1; shift ;; esac
case $build in /*) ;; *) build=$root/$build ;; esac
prog=$build/test/integration/rail_net_soak
[ -x "$prog" ] || { echo "soak: $prog missing: build first (bash scripts/build.sh $build)"; exit 1; }
has_messages=0
for a in "$@"; do [ "$a" = --messages ] && has_messages=1; done
args=("$@")
[ "$has_messages" = 1 ] || args=(--messages 1000000 --max-size 1048576 "${args[@]}")
NCCL_RAIL_RAILS=rxe0+rxe2,rxe1+rxe3 bash test/fabric/run-in-vm.sh --timeout "${SOAK_TIMEOUT:-36000}" -- \
  "$prog" "$build/libnccl-net-rail.so" "${args[@]}"
