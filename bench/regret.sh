#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regret of the tuner's choices against published nccl-tests measurements
# (test/fixtures/measurements/published.csv): one line per comparable set with the measured best
# alternative, the project's choice (the tuner's real decision path), NCCL 2.28's own choice
# (emulated model) and their regrets (time / best time - 1; r_meas: NCCL's logged pick, when the
# source has it), then the mean regrets per system. --details adds measured vs predicted times.
# usage: bench/regret.sh [BUILD_DIR] [--details]
set -euo pipefail
build=${1:-build}
shift || true
bin="$build/test/test_regret"
if [ ! -x "$bin" ]; then
  echo "regret.sh: $bin not found; build first (bash scripts/build.sh $build)" >&2
  exit 2
fi
exec "$bin" --table "$@"
