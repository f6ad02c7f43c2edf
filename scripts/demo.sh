#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, on a fresh machine: builds everything, moves real data through the net plugin
# on the SoftRoCE fabric (a TCG VM with rdma_rxe; every byte verified, perftest alongside), then
# prints the tuner's decision table for a 2-node DGX H100 communicator (16 ranks).
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
echo "== tuner decision table: nccl-rail explain --profile dgx-h100 --nranks 16 --nnodes 2"
./build/tools/nccl-rail explain --profile dgx-h100 --nranks 16 --nnodes 2 --coll AllReduce
