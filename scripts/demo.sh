#!/usr/bin/env bash
# The main job: builds everything and shows the tuner's decision table for a 2-node DGX H100
# communicator (16 ranks). Installs what it needs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh build
echo
echo "== tuner decision table: nccl-rail explain --profile dgx-h100 --nranks 16 --nnodes 2"
./build/tools/nccl-rail explain --profile dgx-h100 --nranks 16 --nnodes 2 --coll AllReduce
