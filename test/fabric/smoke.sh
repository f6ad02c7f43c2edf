#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh - check the SoftRoCE fabric inside the VM:
#   bash test/fabric/run-in-vm.sh -- bash test/fabric/smoke.sh
# 1. the four rxe devices exist, are ACTIVE, have link layer Ethernet, sit on
#    the expected veth and carry the advertised RoCE v2 GID
# 2. a short ib_write_bw on each rail (rxe0 -> rxe1, rxe2 -> rxe3) succeeds and
#    its bytes really cross that rail's veth pair (and not the other rail's)
# Ends with "N passed, M failed"; exit status 0 only when nothing failed.
set -u

if [ "${FABRIC_VM:-}" != 1 ]; then
  echo "smoke.sh: run me inside the fabric VM: bash test/fabric/run-in-vm.sh -- bash $0" >&2
  exit 2
fi

PASSED=0 FAILED=0
T0=$EPOCHREALTIME
pass() {
  echo "PASS $1 [t=$(elapsed)s]"
  PASSED=$((PASSED + 1))
}
fail() {
  echo "FAIL $1: $2 [t=$(elapsed)s]"
  FAILED=$((FAILED + 1))
}
elapsed() { # seconds since T0, one decimal, without forking
  local now=$EPOCHREALTIME us
  us=$((10#${now//[.,]/} - 10#${T0//[.,]/}))
  echo "$((us / 1000000)).$((us / 100000 % 10))"
}
var() { echo "${!1:-}"; } # value of the variable named $1
# Under TCG every exec of a dynamically linked tool read over 9p costs
# 0.2-1 s, so the checks below use shell builtins where they can.
sysread() { # $1 file: its first line, or empty
  local line=''
  read -r line <"$1" 2>/dev/null
  echo "$line"
}

ipv4_gid() { # 10.0.1.1 -> 0000:0000:0000:0000:0000:ffff:0a00:0101
  local IFS=.
  # shellcheck disable=SC2086 # split on the dots
  printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $1
}

# --- 1. devices --------------------------------------------------------------------
echo "== devices"
ibv_devices
for i in 0 1 2 3; do
  dev=$(var FABRIC_DEV$i) netdev=$(var FABRIC_IF$i) addr=$(var FABRIC_A$i) gid=$(var FABRIC_G$i)
  name=device_$dev
  port=/sys/class/infiniband/$dev/ports/1
  info=$(ibv_devinfo -d "$dev" 2>&1) || {
    fail "$name" "ibv_devinfo failed: $info"
    continue
  }
  if ! [[ $info =~ state:[[:space:]]*PORT_ACTIVE ]]; then
    fail "$name" "port not ACTIVE: $info"
  elif ! [[ $info =~ link_layer:[[:space:]]*Ethernet ]]; then
    fail "$name" "link layer is not Ethernet: $info"
  elif [ -z "$gid" ] || [ "$(sysread "$port/gids/$gid")" != "$(ipv4_gid "$addr")" ]; then
    fail "$name" "GID index '$gid' does not hold $addr"
  elif [ "$(sysread "$port/gid_attrs/types/$gid")" != "RoCE v2" ]; then
    fail "$name" "GID index $gid is not RoCE v2"
  elif [ "$(sysread "$port/gid_attrs/ndevs/$gid")" != "$netdev" ]; then
    fail "$name" "GID index $gid is not on $netdev"
  else
    pass "$name ($netdev $addr gid[$gid])"
  fi
done

# --- 2. traffic on each rail ----------------------------------------------------------
tx_bytes() { sysread "/sys/class/net/$1/statistics/tx_bytes"; }

wait_tcp_listen() { # $1 port; up to 30 s
  local n hexport local_addr st rest
  hexport=$(printf '%04X' "$1")
  for ((n = 0; n < 300; n++)); do
    while read -r _ local_addr _ st rest; do
      [ "${local_addr##*:}" = "$hexport" ] && [ "$st" = 0A ] && return 0
    done </proc/net/tcp
    sleep 0.1
  done
  return 1
}

show() { # $1 prefix, $2 file: print the file with a prefix on each line
  local line
  while IFS= read -r line; do echo "  [$1] $line"; done <"$2"
}
bw_of() { # perftest report $1 -> average MB/s of the $SIZE-byte row
  local bytes iters avg rest
  while read -r bytes iters _ avg rest; do
    [ "$bytes" = "$SIZE" ] && [ "$iters" = "$ITERS" ] && echo "$avg" && return
  done <"$1"
  echo "?"
}

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
ITERS=200 SIZE=65536 # 12.5 MiB per run: a few seconds under TCG
rail_write_bw() { # $1 rail name, $2 client index, $3 server index, $4 other rail's first index, $5 port
  local name=write_bw_rail_$1 c=$2 s=$3 o=$4 port=$5
  local cdev sdev cif sif oif0 oif1 srv_pid crc src before_c before_s before_o
  local sent acks other payload=$((ITERS * SIZE))
  cdev=$(var FABRIC_DEV"$c") sdev=$(var FABRIC_DEV"$s")
  cif=$(var FABRIC_IF"$c") sif=$(var FABRIC_IF"$s")
  oif0=$(var FABRIC_IF"$o") oif1=$(var FABRIC_IF$((o + 1)))
  echo "== $name: $cdev ($cif) -> $sdev ($sif), $ITERS x $SIZE B RDMA WRITE"
  before_c=$(tx_bytes "$cif") before_s=$(tx_bytes "$sif")
  before_o=$(($(tx_bytes "$oif0") + $(tx_bytes "$oif1")))
  timeout 120 ib_write_bw -d "$sdev" -x "$(var FABRIC_G"$s")" -F -s $SIZE -n $ITERS -p "$port" \
    >"$SCRATCH/server" 2>&1 &
  srv_pid=$!
  if ! wait_tcp_listen "$port"; then
    kill "$srv_pid" 2>/dev/null
    wait "$srv_pid"
    show server "$SCRATCH/server"
    fail "$name" "server never listened on port $port"
    return
  fi
  timeout 120 ib_write_bw -d "$cdev" -x "$(var FABRIC_G"$c")" -F -s $SIZE -n $ITERS -p "$port" \
    "$(var FABRIC_A"$s")" >"$SCRATCH/client" 2>&1
  crc=$?
  wait "$srv_pid"
  src=$?
  sent=$(($(tx_bytes "$cif") - before_c)) acks=$(($(tx_bytes "$sif") - before_s))
  other=$(($(tx_bytes "$oif0") + $(tx_bytes "$oif1") - before_o))
  echo "  tx bytes: $cif +$sent, $sif +$acks, other rail +$other"
  if [ $crc != 0 ] || [ $src != 0 ]; then
    show client "$SCRATCH/client"
    show server "$SCRATCH/server"
    fail "$name" "client status $crc, server status $src"
  elif [ $sent -lt $payload ]; then
    fail "$name" "$cif sent only $sent bytes for $payload bytes of payload: traffic did not cross the rail"
  elif [ $acks -le 0 ]; then
    fail "$name" "$sif sent nothing back (no ACKs crossed the rail)"
  elif [ $other -ge $((payload / 10)) ]; then
    fail "$name" "the other rail carried $other bytes"
  else
    pass "$name ($(bw_of "$SCRATCH/client") MB/s)"
  fi
}
rail_write_bw A 0 1 2 18515
rail_write_bw B 2 3 0 18516

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
