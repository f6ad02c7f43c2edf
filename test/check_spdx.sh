#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# License check: every C source/header, shell and Python script, CMakeLists.txt and *.cmake file
# of the project (git's list, or a find outside a git checkout) carries the SPDX line
# "SPDX-License-Identifier: Apache-2.0" in its first 3 lines (after a shebang).
# usage: check_spdx.sh SOURCE_DIR
set -u
src=${1:?usage: check_spdx.sh SOURCE_DIR}
cd "$src" || exit 1
if git rev-parse --git-dir >/dev/null 2>&1; then
  files=$(git ls-files --cached --others --exclude-standard -- '*.c' '*.h' '*.sh' '*.py' \
            '*CMakeLists.txt' '*.cmake' 'debian/rules' 'packaging/*')
else
  files=$(find . -path ./build -prune -o -path './build-*' -prune -o -path './obj-*' -prune -o \
            -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.py' -o \
            -name CMakeLists.txt -o -name '*.cmake' \) -print | sed 's|^\./||')
fi
pass=0 fail=0
for f in $files; do
  [ -f "$f" ] || continue
  if head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0'; then
    pass=$((pass + 1))
  else
    echo "no SPDX line: $f"; fail=$((fail + 1))
  fi
done
echo "spdx: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
