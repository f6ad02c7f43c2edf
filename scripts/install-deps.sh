#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build and test dependencies from Debian's archive (idempotent; needs root).
set -euo pipefail
PKGS=(build-essential cmake pkg-config binutils libxml2-dev libxml2-utils libhwloc-dev hwloc
      libibverbs-dev librdmacm-dev libjson-c-dev valgrind python3-jsonschema
      # packaging (test/packaging/package-suite.sh): .deb build and lint, rpmbuild, man
      debhelper dpkg-dev lintian rpm man-db)
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
