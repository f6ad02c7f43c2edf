#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/configuration.md must be exactly what the parameter table generates.
set -u
src=${1:?usage: check_docs.sh SOURCE_DIR BUILD_DIR}
build=${2:?}
if diff -u "$src/docs/configuration.md" <("$build/tools/nccl-rail" params --markdown); then
  echo "docs_config: 1 passed, 0 failed"
else
  echo "docs/configuration.md is out of date: regenerate with"
  echo "  build/tools/nccl-rail params --markdown > docs/configuration.md"
  echo "docs_config: 0 passed, 1 failed"
  exit 1
fi
