#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the RPM from this source tree: build-rpm.sh OUTDIR (rpmbuild -bb on a tarball of the
# tree). On a non-RPM distribution (Debian's rpm package) the build dependencies are not in the
# rpm database, so they are not checked (--nodeps): install them with the native tools first.
set -euo pipefail
out=${1:?usage: build-rpm.sh OUTDIR}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$(sed -n 's/^project(nccl-rail VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
mkdir -p "$top"/{SOURCES,BUILD,RPMS,SRPMS,SPECS} "$top/stage/nccl-rail-$ver"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  sha=${RAIL_GIT_SHA:-$(git -C "$src" rev-parse --short=12 HEAD)}
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read --no-recursion -T - -cf -) | tar -C "$top/stage/nccl-rail-$ver" -xf -
else
  sha=${RAIL_GIT_SHA:-}
  tar -C "$src" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -C "$top/stage/nccl-rail-$ver" -xf -
fi
tar -C "$top/stage" -czf "$top/SOURCES/nccl-rail-$ver.tar.gz" "nccl-rail-$ver"
nodeps=()
[ -e /etc/debian_version ] && nodeps=(--nodeps)
rpmbuild -bb "${nodeps[@]}" --define "_topdir $top" --define "rail_git_sha $sha" \
  "$src/packaging/rpm/nccl-rail.spec"
find "$top/RPMS" -name '*.rpm' -exec cp {} "$out"/ \;
ls "$out"/*.rpm
