#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# setup-host.sh - prepare this (Debian 12) host to run the SoftRoCE test fabric.
#
# 1. apt-get installs qemu (TCG, no GUI), busybox, kmod and the RDMA userspace
#    (libibverbs + rxe provider, perftest, iproute2's ip/rdma, dev headers).
# 2. Fetches Debian's stock kernel (the one linux-image-amd64 depends on) with
#    `apt-get download`, unpacks it with `dpkg -x` into $FABRIC_DIR/kernel
#    (it is NOT installed on the host) and runs depmod on it.
#
# Idempotent: step 2 is skipped when a kernel is already unpacked there.
# Package installs need root (sudo is used when not root). Environment:
#   FABRIC_DIR   work directory, default build/fabric in the repository
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo # package installs need root; the rest does not

HERE=$(cd "$(dirname "$0")" && pwd -P)
FABRIC_DIR=${FABRIC_DIR:-$(cd "$HERE/../.." && pwd -P)/build/fabric}
mkdir -p "$FABRIC_DIR"
FABRIC_DIR=$(cd "$FABRIC_DIR" && pwd -P)
KDIR=$FABRIC_DIR/kernel

PACKAGES=(
  qemu-system-x86 # the VM (TCG, or KVM when /dev/kvm is usable)
  busybox-static  # the guest's initramfs shell and tools
  kmod            # depmod for the unpacked kernel (its .deb has no modules.dep)
  cpio            # to pack the initramfs
  iproute2        # ip (veth, policy routing) and rdma (rxe devices)
  libibverbs1 ibverbs-providers ibverbs-utils # verbs + the rxe provider
  perftest        # ib_write_bw etc. (smoke test)
  rdmacm-utils    # rping/ucmatose (handy for debugging rdma_cm)
  libibverbs-dev librdmacm-dev # to build the net plugin and its tests
)

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-q -y -o DPkg::Lock::Timeout=300)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-host: installing ${missing[*]}"
  $SUDO apt-get "${APT_OPTS[@]}" update
  $SUDO apt-get "${APT_OPTS[@]}" install --no-install-recommends "${PACKAGES[@]}"
else
  echo "setup-host: all packages already installed"
fi

# --- the guest kernel ----------------------------------------------------------
if ls "$KDIR"/lib/modules/*/modules.dep >/dev/null 2>&1 && [ -e "$KDIR/vmlinuz" ]; then
  echo "setup-host: kernel already unpacked in $KDIR"
  exit 0
fi

# The metapackage tracks the current ABI; pinning an exact image package breaks
# once Debian drops it from the archive after a point release.
find_image_pkg() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
PKG=$(find_image_pkg)
if [ -z "$PKG" ]; then
  $SUDO apt-get "${APT_OPTS[@]}" update
  PKG=$(find_image_pkg)
fi
[ -n "$PKG" ] || { echo "setup-host: cannot resolve linux-image-amd64" >&2; exit 1; }

DEBDIR=$FABRIC_DIR/debs
mkdir -p "$DEBDIR"
if ! ls "$DEBDIR/${PKG}"_*.deb >/dev/null 2>&1; then
  echo "setup-host: downloading $PKG"
  # apt-get download as root warns "Download is performed unsandboxed": harmless
  (cd "$DEBDIR" && apt-get -q -o DPkg::Lock::Timeout=300 download "$PKG")
fi
debs=("$DEBDIR/${PKG}"_*.deb)
DEB=${debs[0]}

echo "setup-host: unpacking $(basename "$DEB")"
TMPK=$(mktemp -d "$FABRIC_DIR/kernel.tmp.XXXXXX")
trap 'rm -rf "$TMPK"' EXIT
dpkg -x "$DEB" "$TMPK"
KVER=$(find "$TMPK/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -1)
if [ -z "$KVER" ] || [ ! -f "$TMPK/boot/vmlinuz-$KVER" ]; then
  echo "setup-host: $DEB has no kernel image/modules" >&2
  exit 1
fi
/sbin/depmod -b "$TMPK" "$KVER"
ln -sf "boot/vmlinuz-$KVER" "$TMPK/vmlinuz"
rm -rf "$KDIR"
mv "$TMPK" "$KDIR"
trap - EXIT
rm -f "$DEB" # 70 MB: not needed once unpacked
echo "setup-host: kernel $KVER unpacked in $KDIR"
