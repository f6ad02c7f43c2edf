#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regret of the tuner against forced-pair measurements (test/fixtures/tuner-data): the shipped
# model, the refit on all systems, leave-one-system-out and leave-one-node-count-out (refit, then
# calibrated from the other node counts' logs), with NCCL 2.28.9's default as the anchor. Figures
# go to docs/cost-model.md §12 and docs/calibration.md §6. Takes a few minutes.
# usage: bench/tuner_eval.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
bin="$build/bench/tuner_eval"
if [ ! -x "$bin" ]; then
  echo "tuner_eval.sh: $bin not found; build first (bash scripts/build.sh $build)" >&2
  exit 2
fi
exec "$bin" --fit --loso --lono --calibrated
