#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# build-initramfs.sh - pack the fabric guest's initramfs.
#
# usage: build-initramfs.sh OUT.cpio.gz
#
# The image only has to bring the fabric up; the test command itself runs
# later from the host's root filesystem, shared into the guest over 9p (see
# README.md). So it holds:
#   - busybox-static (shell, mount, insmod, chroot, stty, poweroff ...)
#   - the kernel modules for rxe, veth, crc32 and 9p/overlay, deps first,
#     listed in load order in /etc/fabric-modules
#   - iproute2's ip and rdma with their shared libraries (setup runs from RAM,
#     which is much faster under TCG than exec'ing them over 9p)
#   - guest-init.sh as /init
# Environment: FABRIC_DIR (work dir; the kernel is read from $FABRIC_DIR/kernel).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd -P)
FABRIC_DIR=${FABRIC_DIR:-$(cd "$HERE/../.." && pwd -P)/build/fabric}
OUT=${1:?usage: build-initramfs.sh OUT.cpio.gz}
KDIR=$FABRIC_DIR/kernel
KVER=$(find "$KDIR/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | head -1)
[ -n "$KVER" ] || {
  echo "build-initramfs: no kernel in $KDIR (run test/fabric/setup-host.sh)" >&2
  exit 1
}
MODSRC=$KDIR/lib/modules/$KVER
MA=x86_64-linux-gnu

# crc32_generic only: rxe takes whichever "crc32" shash is registered, and
# crc32_pclmul (emulated SIMD) is slower under TCG. It is not put in the image,
# so nothing can auto-load it.
MODULES="crc32_generic veth rdma_rxe rdma_ucm virtio_pci 9pnet_virtio 9p overlay"
# loaded only in two-host mode (run-two-hosts.sh: the guest's NICs are virtio-net)
MODULES_2H="virtio_net"

ROOT=$(mktemp -d "$FABRIC_DIR/initramfs.root.XXXXXX")
trap 'rm -rf "$ROOT"' EXIT

# merged-/usr layout, as on the Debian host the libraries come from
mkdir -p "$ROOT"/{dev,proc,sys,tmp,run,etc,host,usr/bin,usr/sbin,usr/lib/$MA,usr/lib64}
ln -s usr/bin "$ROOT/bin"
ln -s usr/sbin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"

# --- busybox --------------------------------------------------------------------
# No link for its 'ip' applet: it cannot create veth pairs. (Debian's static
# busybox runs applets before searching $PATH anyway, which is why guest-init
# calls /usr/sbin/ip by full path.)
cp /bin/busybox "$ROOT/usr/bin/busybox"
for applet in $(/bin/busybox --list); do
  case $applet in ip | busybox) continue ;; esac
  [ -e "$ROOT/usr/bin/$applet" ] || ln -s busybox "$ROOT/usr/bin/$applet"
done

# --- kernel modules -----------------------------------------------------------------
declare -A ADDED=()
MODLIST=()
add_module() { # $1: module name; its dependencies are added before it
  local name=$1 pattern line path dep
  pattern="(^|/)${name//_/[-_]}\\.ko(\\.[a-z]+)?:"
  line=$(grep -E "$pattern" "$MODSRC/modules.dep" | head -1) || true
  [ -n "$line" ] || {
    echo "build-initramfs: module $name not in $KVER (built in?)" >&2
    return 0
  }
  path=${line%%:*}
  for dep in ${line#*:}; do
    dep=${dep##*/}
    add_module "${dep%%.ko*}"
  done
  [ -z "${ADDED[$path]:-}" ] || return 0
  ADDED[$path]=1
  MODLIST+=("$path")
}
for m in $MODULES; do add_module "$m"; done
NBASE=${#MODLIST[@]}
for m in $MODULES_2H; do add_module "$m"; done
mkdir -p "$ROOT/lib/modules/$KVER"
: >"$ROOT/etc/fabric-modules"
: >"$ROOT/etc/fabric-modules-2h"
n=0
for path in "${MODLIST[@]}"; do
  mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$path")"
  cp "$MODSRC/$path" "$ROOT/lib/modules/$KVER/$path"
  list=fabric-modules
  [ "$n" -lt "$NBASE" ] || list=fabric-modules-2h
  echo "/lib/modules/$KVER/$path" >>"$ROOT/etc/$list"
  n=$((n + 1))
done
cp "$MODSRC"/modules.builtin* "$ROOT/lib/modules/$KVER/"
printf '%s\n' "${MODLIST[@]}" >"$ROOT/lib/modules/$KVER/modules.order"
/sbin/depmod -b "$ROOT" "$KVER"

# --- iproute2 with its libraries ----------------------------------------------------
copy_with_libs() { # $1: binary; $2: directory in the image
  local lib
  cp "$1" "$ROOT/$2/"
  for lib in $(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    case $lib in
    /lib64/* | /usr/lib64/*) cp -nL "$lib" "$ROOT/usr/lib64/" ;;
    *) cp -nL "$lib" "$ROOT/usr/lib/$MA/" ;;
    esac
  done
}
copy_with_libs /usr/sbin/ip usr/sbin
copy_with_libs /usr/bin/rdma usr/bin

cp "$HERE/guest-init.sh" "$ROOT/init"
chmod 755 "$ROOT/init"

(cd "$ROOT" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$OUT.tmp.$$"
mv "$OUT.tmp.$$" "$OUT"
echo "build-initramfs: $OUT ($(du -h "$OUT" | cut -f1), kernel $KVER, ${#MODLIST[@]} modules)"
