#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# guest-init.sh - /init (PID 1, busybox sh) of the fabric guest.
#
# 1. loads the modules listed in /etc/fabric-modules
# 2. builds two rails, each a veth pair with one rxe device per end:
#      rail A: rxe0 on veth0 (10.0.1.1) <-> rxe1 on veth1 (10.0.1.2)
#      rail B: rxe2 on veth2 (10.0.2.1) <-> rxe3 on veth3 (10.0.2.2)
#    with policy routing so that traffic between the two ends really crosses
#    the veth, and waits for each device's RoCE v2 IPv4 GID
# 3. mounts the host's root (9p, read-only) under a tmpfs overlay at /host and
#    runs the job script named by fabric.job=PATH in a chroot there, its output
#    on /dev/ttyS1 (the host's stdout)
#    (two-host mode, fabric.mode=2h fabric.host=H on the kernel command line, see
#    run-two-hosts.sh: no veths; the three virtio NICs become rail0, rail1 (rxe0, rxe1) and
#    mgmt, addressed 10.0.1.H+1, 10.0.2.H+1 and 10.0.9.H+1; the peer VM holds the other ends)
# 4. prints FABRIC_EXIT=<status> (or FABRIC_SETUP_FAILED) on the console and
#    powers off.
# The console (ttyS0) goes to a log file on the host; see run-in-vm.sh.

# This script rewires networking and powers off: never run it on a host.
if [ "$$" != 1 ]; then
  echo "guest-init.sh: only runs as PID 1 inside the fabric VM" >&2
  exit 1
fi

export PATH=/usr/sbin:/usr/bin
IP=/usr/sbin/ip # never busybox's own 'ip' applet (cannot create veths)
RDMA=/usr/bin/rdma

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

log() { echo "fabric-guest: t=$(cut -d' ' -f1 /proc/uptime) $*"; }
halt() {
  sync
  poweroff -f
}
setup_failed() {
  log "setup failed: $*"
  echo "FABRIC_SETUP_FAILED"
  halt
}

JOB='' MODE=1h HOST=0
read -r cmdline </proc/cmdline
for word in $cmdline; do
  case $word in
  fabric.job=*) JOB=${word#fabric.job=} ;;
  fabric.mode=*) MODE=${word#fabric.mode=} ;;
  fabric.host=*) HOST=${word#fabric.host=} ;;
  esac
done
log "init on $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpus, mode=$MODE host=$HOST job=$JOB"

LISTS=/etc/fabric-modules
[ "$MODE" != 2h ] || LISTS="$LISTS /etc/fabric-modules-2h"
# shellcheck disable=SC2086 # one or two lists
cat $LISTS >/tmp/modules
while read -r mod; do
  insmod "$mod" || setup_failed "insmod $mod"
done </tmp/modules
log "modules loaded"

# --- network ------------------------------------------------------------------
# index i: netdev veth<i>, rxe device rxe<i>, address A<i>; the peer of i is
# i^1. Every exec costs ~50 ms or more under TCG, so ip runs in batch mode and
# the sysctls are plain writes.
one_host_net() {
  A0=10.0.1.1 A1=10.0.1.2 A2=10.0.2.1 A3=10.0.2.2
  NDEV=4
  printf '%s\n' "link set lo up" \
    "link add veth0 type veth peer name veth1" \
    "link add veth2 type veth peer name veth3" |
    $IP -batch - || setup_failed "creating the veth pairs"
  for conf in all default veth0 veth1 veth2 veth3; do
    echo 0 >/proc/sys/net/ipv4/conf/$conf/rp_filter
  done
  for i in 0 1 2 3; do
    # packets from the peer carry a source address that is local to this host
    echo 1 >/proc/sys/net/ipv4/conf/veth$i/accept_local
  done
  net_commands | $IP -batch - || setup_failed "addresses and policy routing"
  log "veths and routing up"
  for i in 0 1 2 3; do
    $RDMA link add rxe$i type rxe netdev veth$i || setup_failed "rdma link add rxe$i"
  done
}

# Both ends of a rail live in one network namespace, so the peer's address is
# local. rxe pins its output netdev, so its packets do leave through the veth;
# the receiving veth then needs accept_local=1 (set above), or it drops them.
# Lookups that pin no netdev (rdma_cm with a source address, a socket bound to
# A<i>) would still resolve the peer via lo; these rules send them through
# the veth too (lower pref first):
#   10  packets that arrived on a veth: normal local delivery
#   20  from A<i> to A<peer>: a per-pair table that sends them out of veth<i>
#   100 everything else: the local table, moved down from pref 0
# The peer's MAC is pinned in the neighbour table, so no ARP is involved.
net_commands() {
  src='' dst=''
  for i in 0 1 2 3; do
    p=$((i ^ 1))
    eval "src=\$A$i dst=\$A$p"
    echo "addr add $src/24 dev veth$i"
    echo "link set veth$i up"
    echo "rule add pref 10 iif veth$i lookup local"
    echo "rule add pref 20 from $src to $dst lookup $((100 + i))"
    echo "route add $dst/32 dev veth$i src $src table $((100 + i))"
    echo "neigh replace $dst lladdr $(cat /sys/class/net/veth$p/address) dev veth$i nud permanent"
  done
  echo "rule add pref 100 lookup local"
  echo "rule del pref 0 lookup local"
}


# Two-host mode: each VM has three virtio NICs, told apart by the MAC run-two-hosts.sh gives
# them (52:54:00:00:0N:0H for NIC N of host H). They are renamed rail0, rail1 and mgmt; rxe0 and
# rxe1 sit on the rails. Separate kernels: no policy routing, no accept_local.
two_host_net() {
  h=$((HOST + 1)) p=$((2 - HOST))
  A0=10.0.1.$h A1=10.0.2.$h AM=10.0.9.$h
  PA0=10.0.1.$p PA1=10.0.2.$p PAM=10.0.9.$p
  NDEV=2
  for n in 0 1 2; do
    want=52:54:00:00:0$n:0$HOST
    dev=''
    for f in /sys/class/net/*/address; do
      [ "$(cat "$f")" = "$want" ] && dev=${f%/address} && dev=${dev##*/}
    done
    [ -n "$dev" ] || setup_failed "no NIC with MAC $want"
    name=rail$n
    [ "$n" != 2 ] || name=mgmt
    $IP link set "$dev" name "$name" || setup_failed "renaming $dev to $name"
  done
  printf '%s\n' "link set lo up" \
    "addr add $A0/24 dev rail0" "link set rail0 up" \
    "addr add $A1/24 dev rail1" "link set rail1 up" \
    "addr add $AM/24 dev mgmt" "link set mgmt up" |
    $IP -batch - || setup_failed "addresses"
  log "rail0 rail1 mgmt up"
  for i in 0 1; do
    $RDMA link add rxe$i type rxe netdev rail$i || setup_failed "rdma link add rxe$i"
  done
}
if [ "$MODE" = 2h ]; then two_host_net; else one_host_net; fi

# GID index of the RoCE v2 entry that holds the device's IPv4 address
# (::ffff:a.b.c.d); the kernel fills the table asynchronously.
roce_v2_gid_index() { # $1 device, $2 IPv4 address
  want=$(echo "$2" | awk -F. '{printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4}')
  port=/sys/class/infiniband/$1/ports/1
  for f in "$port"/gids/*; do
    n=${f##*/}
    [ "$(cat "$f" 2>/dev/null)" = "$want" ] || continue
    [ "$(cat "$port/gid_attrs/types/$n" 2>/dev/null)" = "RoCE v2" ] || continue
    echo "$n"
    return 0
  done
  return 1
}
a=''
i=0
while [ $i -lt $NDEV ]; do
  eval "a=\$A$i"
  tries=0
  until g=$(roce_v2_gid_index rxe$i "$a"); do
    tries=$((tries + 1))
    [ $tries -le 200 ] || setup_failed "no RoCE v2 IPv4 GID on rxe$i after 20 s"
    sleep 0.1
  done
  eval "G$i=$g"
  i=$((i + 1))
done
log "rxe devices up: GID index rxe0=$G0 rxe1=$G1 rxe2=${G2:-} rxe3=${G3:-}"

# --- the host's root filesystem -------------------------------------------------
[ -n "$JOB" ] || setup_failed "no fabric.job=PATH on the kernel command line"
mkdir -p /lower /rw
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower ||
  setup_failed "9p mount of the host root"
mount -t tmpfs -o size=1g tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /host ||
  setup_failed "overlay mount"
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mkdir -p /host/dev/shm /host/dev/pts
mount -t tmpfs tmpfs /host/dev/shm
mount -t tmpfs tmpfs /host/run
[ -f "/host$JOB" ] || setup_failed "job script $JOB not visible in the guest"
log "host root mounted"

# --- run the job ------------------------------------------------------------------
export FABRIC_VM=1
if [ "$MODE" = 2h ]; then
  export FABRIC_MODE=2h FABRIC_HOST="$HOST"
  export FABRIC_A0="$A0" FABRIC_A1="$A1" FABRIC_MGMT="$AM"
  export FABRIC_PEER_A0="$PA0" FABRIC_PEER_A1="$PA1" FABRIC_PEER_MGMT="$PAM"
  export FABRIC_G0="$G0" FABRIC_G1="$G1"
  export FABRIC_IF0=rail0 FABRIC_IF1=rail1 FABRIC_IFM=mgmt
  export FABRIC_DEV0=rxe0 FABRIC_DEV1=rxe1
else
  export FABRIC_A0="$A0" FABRIC_A1="$A1" FABRIC_A2="$A2" FABRIC_A3="$A3"
  export FABRIC_G0="$G0" FABRIC_G1="$G1" FABRIC_G2="$G2" FABRIC_G3="$G3"
  export FABRIC_IF0=veth0 FABRIC_IF1=veth1 FABRIC_IF2=veth2 FABRIC_IF3=veth3
  export FABRIC_DEV0=rxe0 FABRIC_DEV1=rxe1 FABRIC_DEV2=rxe2 FABRIC_DEV3=rxe3
fi
# shellcheck disable=SC3045 # busybox sh has ulimit -l; verbs pin memory
ulimit -l unlimited
stty -F /dev/ttyS1 raw -echo 2>/dev/null # no \n -> \r\n on the command's output
log "job start"
chroot /host /bin/bash "$JOB" </dev/null >/dev/ttyS1 2>&1
rc=$?
log "job end"
echo "FABRIC_EXIT=$rc"
halt
