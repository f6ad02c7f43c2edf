#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build and test dependencies from Debian's archive (idempotent; needs root).
# `install-deps.sh fuzz` also installs clang and its libFuzzer runtime (test/fuzz, scripts/fuzz.sh).
set -euo pipefail
PKGS=(build-essential cmake pkg-config binutils libxml2-dev libxml2-utils libhwloc-dev hwloc
      libibverbs-dev librdmacm-dev libjson-c-dev valgrind python3-jsonschema
      # packaging (test/packaging/package-suite.sh): .deb build and lint, rpmbuild, man
      debhelper dpkg-dev lintian rpm man-db)
if [ "${1:-}" = fuzz ]; then
  # Debian 12: clang 14; -fsanitize=fuzzer needs libclang-rt-14-dev (only a Recommends of clang).
  PKGS+=(clang libclang-rt-14-dev)
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${missing[@]}"
