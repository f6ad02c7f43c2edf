#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, on a fresh machine: builds everything, moves real data through the net plugin
# on the SoftRoCE fabric (a TCG VM with rdma_rxe; every byte verified, perftest alongside), then
# shows the tuner at work (scripts/demo_tuner.sh): a shape where it changes NCCL's choice, with
# the measured regret it avoids, next to one where it defers to NCCL, and why.
# Installs what it needs (apt-get).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh build
bash test/fabric/setup-host.sh
echo
echo "== net plugin on SoftRoCE: test/fabric/run-in-vm.sh -- bash bench/net_demo.sh"
bash test/fabric/run-in-vm.sh --timeout 900 -- bash bench/net_demo.sh
echo
bash scripts/demo_tuner.sh build
