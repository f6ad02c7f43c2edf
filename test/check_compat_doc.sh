#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The NCCL-variables table of docs/compatibility.md (between the compat-env markers) must be
# exactly what common/nccl_env_table.h generates.
set -u
src=${1:?usage: check_compat_doc.sh SOURCE_DIR BUILD_DIR}
build=${2:?}
doc="$src/docs/compatibility.md"
begin='<!-- compat-env:begin (generated: nccl-rail params --compat-markdown) -->'
end='<!-- compat-env:end -->'
if [ "$(grep -cxF "$begin" "$doc")" != 1 ] || [ "$(grep -cxF "$end" "$doc")" != 1 ]; then
  echo "docs/compatibility.md must hold the markers once each: $begin / $end"
  echo "docs_compat_env: 0 passed, 1 failed"
  exit 1
fi
if diff -u <(sed -n "\\|^$begin\$|,\\|^$end\$|p" "$doc" | sed '1d;$d') \
           <("$build/tools/nccl-rail" params --compat-markdown); then
  echo "docs_compat_env: 1 passed, 0 failed"
else
  echo "docs/compatibility.md's NCCL-variables table is out of date: replace the lines between"
  echo "the compat-env markers with the output of  build/tools/nccl-rail params --compat-markdown"
  echo "docs_compat_env: 0 passed, 1 failed"
  exit 1
fi
