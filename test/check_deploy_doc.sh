#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/deploy.md runs what the tests run: every command line of its ```sh blocks, and every RUN
# line of packaging/Containerfile (apt-get update aside: it needs the network), must be a command
# of test/packaging/package-suite.sh (the same text, possibly followed by redirections).
# ```console blocks hold commands that need GPUs or a container runtime and are not checked.
# usage: check_deploy_doc.sh SOURCE_DIR
set -u
src=${1:?usage: check_deploy_doc.sh SOURCE_DIR}
suite="$src/test/packaging/package-suite.sh"
pass=0 fail=0
runs() { # command: is it a command of the suite?
  python3 - "$suite" "$1" <<'PY'
import re, sys
cmd = sys.argv[2].strip()
for line in open(sys.argv[1]):
    line = line.strip()
    i = line.find(cmd)
    while i >= 0:
        before = line[:i].rstrip()
        after = line[i + len(cmd):]
        if (before in ("", "if", "!") or before.endswith(("(", ";", "&&", "||", " if", "!", '"')) or re.search(r"(^|\s)env( -u \S+)*$", before)) \
                and (after == "" or after[0] in " ;)"):
            sys.exit(0)
        i = line.find(cmd, i + 1)
sys.exit(1)
PY
}
check_cmd() { # where command
  if runs "$2"; then pass=$((pass + 1)); else echo "$1: not run by the package suite: $2"; fail=$((fail + 1)); fi
}
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  check_cmd docs/deploy.md "$cmd"
done < <(awk '/^```/{ if (inb) { inb=0; next } if ($0 == "```sh") { inb=1 } ; next } inb && $0 !~ /^[[:space:]]*(#|$)/ { print }' "$src/docs/deploy.md")
[ "$n" -ge 5 ] || { echo "docs/deploy.md: only $n commands found in sh blocks"; fail=$((fail + 1)); }
while IFS= read -r cmd; do
  [ "$cmd" = "apt-get update" ] && continue
  check_cmd packaging/Containerfile "$cmd"
done < <(sed -n 's/^RUN //p' "$src/packaging/Containerfile")
echo "docs_deploy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
