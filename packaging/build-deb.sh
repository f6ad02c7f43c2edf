#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian package from this source tree: build-deb.sh OUTDIR
# (the same commands as packaging/Containerfile and docs/deploy.md). The tree is copied into a
# scratch directory first, so the build leaves nothing in the checkout and dpkg-buildpackage's
# ../*.deb lands in OUTDIR. The git SHA is taken from the checkout (RAIL_GIT_SHA overrides it).
set -euo pipefail
out=${1:?usage: build-deb.sh OUTDIR}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${RAIL_GIT_SHA:-}" ] && git -C "$src" rev-parse --short=12 HEAD >/dev/null 2>&1; then
  RAIL_GIT_SHA=$(git -C "$src" rev-parse --short=12 HEAD)
fi
export RAIL_GIT_SHA=${RAIL_GIT_SHA:-}
mkdir "$work/nccl-rail"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  # Tracked files and new files git does not ignore (no build trees).
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read --no-recursion -T - -cf -) | tar -C "$work/nccl-rail" -xf -
else
  tar -C "$src" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -C "$work/nccl-rail" -xf -
fi
(cd "$work/nccl-rail" && dpkg-buildpackage -us -uc -b)
cp "$work"/*.deb "$out"/
ls "$out"/*.deb
