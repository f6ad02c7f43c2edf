#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The net plugin between two hosts: two qemu VMs (separate kernels) linked by two rails and a
# management network (test/fabric/run-two-hosts.sh). Runs on the host:
#   bash test/two-host-tests.sh [BUILD_DIR] [SCENARIO...]
# Rank 0 runs in VM A, rank 1 in VM B (test/integration/it_2h.c): exchange, cut_rail, cut_both,
# dead_peer (VM B is killed, so it comes last). Prints "two-host tests: N passed, M failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
build=${1:-build}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$root/$build ;; esac
prog=$build/test/integration/rail_net_2h
plugin=$build/libnccl-net-rail.so
if [ ! -x "$prog" ] || [ ! -f "$plugin" ]; then
  echo "two-host tests: $prog or $plugin missing: build first"
  echo "two-host tests: 0 passed, 1 failed"
  exit 1
fi
cmd=$(printf '%q ' "$prog" "$plugin" "$@")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bash test/fabric/run-two-hosts.sh --timeout "${TWO_HOST_TIMEOUT:-1200}" \
  --a "ulimit -l unlimited; $cmd" --b "ulimit -l unlimited; $cmd" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
line=$(grep -E '^A\| [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
if [ -z "$line" ]; then
  echo "two-host tests: rank 0 printed no result (run-two-hosts.sh exit $rc)"
  echo "two-host tests: 0 passed, 1 failed"
  exit 1
fi
p=$(echo "$line" | sed -E 's/^A\| ([0-9]+) passed.*/\1/')
f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
  echo "two-host tests: run-two-hosts.sh exited $rc"
  f=$((f + 1))
fi
echo "two-host tests: $p passed, $f failed"
[ "$f" -eq 0 ]
