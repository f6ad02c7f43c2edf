#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds one build tree: build.sh DIR [extra cmake args...]
set -euo pipefail
dir=${1:?usage: build.sh DIR [cmake args]}
shift
cmake -S "$(dirname "$0")/.." -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
