#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# run-two-hosts.sh - run a pair of commands in two qemu guests ("hosts" A and B, separate
# kernels) linked by three qemu socket networks on 127.0.0.1: two rails, each with rxe on
# both ends, and a management network for the out-of-band TCP traffic.
#
# usage: run-two-hosts.sh [--timeout SECONDS] --a 'COMMAND A' --b 'COMMAND B'
#
# Each COMMAND is a bash command line, run as root in the guest in the caller's current
# directory with the caller's exported environment (as run-in-vm.sh does), plus:
#   FABRIC_VM=1 FABRIC_MODE=2h FABRIC_HOST=0 (A) or 1 (B)
#   FABRIC_DEV0/1   rxe0 rxe1 (on rail0, rail1)     FABRIC_IF0/1 rail0 rail1    FABRIC_IFM mgmt
#   FABRIC_A0/A1/MGMT        this VM's addresses: 10.0.1.H+1, 10.0.2.H+1, 10.0.9.H+1
#   FABRIC_PEER_A0/A1/MGMT   the other VM's
#   FABRIC_G0/1     the RoCE v2 GID index of each rail address
# A guest asks the host to act on the fabric by printing a line on its output:
#   @@fabric-host: link R off|on    qemu monitor set_link on rail R (0 or 1, or m for the
#                                   management network) in both VMs: the cable is cut / back
#   @@fabric-host: kill B|A         SIGKILL to that VM's qemu (the host dies, no goodbye)
# Every action is logged on stderr with its time.
# Prints A's output, then B's, each line prefixed "A| " / "B| ".
# Exit status: A's command's status when it is not 0; else B's, unless B was killed on request
# (then 0); 121-125 and 130 as in run-in-vm.sh (for the VM that failed first).
# Environment: FABRIC_DIR, FABRIC_TIMEOUT (default 900), FABRIC_ACCEL, FABRIC_VERBOSE=1 (copy
# both guests' output to stderr as it comes).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd -P)
REPO=$(cd "$HERE/../.." && pwd -P)
FABRIC_DIR=${FABRIC_DIR:-$REPO/build/fabric}
TIMEOUT=${FABRIC_TIMEOUT:-900}
CMD_A='' CMD_B=''

usage() {
  echo "usage: run-two-hosts.sh [--timeout SECONDS] --a 'COMMAND A' --b 'COMMAND B'" >&2
  exit 121
}
while [ $# -gt 0 ]; do
  case $1 in
  --timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
  --a) [ $# -ge 2 ] || usage; CMD_A=$2; shift 2 ;;
  --b) [ $# -ge 2 ] || usage; CMD_B=$2; shift 2 ;;
  *) usage ;;
  esac
done
if [ -z "$CMD_A" ] || [ -z "$CMD_B" ]; then usage; fi
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || {
  echo "run-two-hosts: --timeout wants a positive number of seconds, got '$TIMEOUT'" >&2
  exit 121
}
fail() { # $1 status, $2 message
  echo "run-two-hosts: $2" >&2
  exit "$1"
}
say() { echo "run-two-hosts: t=$(elapsed) $*" >&2; }

mkdir -p "$FABRIC_DIR" || fail 122 "cannot create $FABRIC_DIR"
FABRIC_DIR=$(cd "$FABRIC_DIR" && pwd -P)
[[ $FABRIC_DIR =~ ^/[A-Za-z0-9._/+-]*$ ]] ||
  fail 122 "FABRIC_DIR '$FABRIC_DIR' has characters that cannot go on a kernel command line"
# shellcheck source=SCRIPTDIR/fabric-lib.sh
. "$HERE/fabric-lib.sh"
fabric_prepare
fabric_accel

RUN=$(mktemp -d "$FABRIC_DIR/jobs/twohost.XXXXXX") || fail 122 "cannot create a run directory"
PIDS=()
cleanup() { # shellcheck disable=SC2317 # a trap
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  rm -rf "$RUN"
}
trap cleanup EXIT
fabric_write_job "$RUN/job.A" bash -c "$CMD_A"
fabric_write_job "$RUN/job.B" bash -c "$CMD_B"

T0=$EPOCHREALTIME
elapsed() {
  local now=$EPOCHREALTIME
  awk -v a="$T0" -v b="$now" 'BEGIN { printf "%.1f", b - a }'
}

# Free TCP ports on 127.0.0.1 (listening sockets in /proc/net/tcp are skipped).
used_ports() {
  local _sl addr _rem st _rest
  while read -r _sl addr _rem st _rest; do
    if [ "$st" = 0A ]; then echo $((16#${addr#*:})); fi
  done </proc/net/tcp
}
pick_ports() { # count
  local used n=0 p
  used=" $(used_ports | tr '\n' ' ') "
  while [ "$n" -lt "$1" ]; do
    p=$((20000 + RANDOM % 40000))
    [[ $used == *" $p "* ]] && continue
    used="$used$p "
    echo "$p"
    n=$((n + 1))
  done
}
read -r P_R0 P_R1 P_M MON_A MON_B <<<"$(pick_ports 5 | tr '\n' ' ')"

# boot VM h (0 = A listens on the three network ports, 1 = B connects to them)
boot() { # host letter
  local h=$1 n i mode port console out mon
  console=$RUN/console.$h out=$RUN/out.$h
  : >"$console"
  : >"$out"
  if [ "$h" = A ]; then i=0 mode=listen mon=$MON_A; else i=1 mode=connect mon=$MON_B; fi
  local nets=()
  n=0
  for port in "$P_R0" "$P_R1" "$P_M"; do
    nets+=(-netdev "socket,id=n$n,$mode=127.0.0.1:$port"
      -device "virtio-net-pci,netdev=n$n,mac=52:54:00:00:0$n:0$i")
    n=$((n + 1))
  done
  timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 "${ACCEL_ARGS[@]}" \
    -smp 2 -m 1536M -no-reboot -nodefaults \
    -display none -vga none -parallel none \
    -monitor "tcp:127.0.0.1:$mon,server=on,wait=off" -pidfile "$RUN/qemu.$h.pid" \
    "${nets[@]}" \
    -serial "file:$console" \
    -chardev "file,id=cmdout,path=$out" -serial chardev:cmdout \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -kernel "$KERNEL" -initrd "$INITRD" \
    -append "console=ttyS0 quiet loglevel=4 panic=-1 fabric.mode=2h fabric.host=$i fabric.job=$RUN/job.$h" \
    </dev/null >"$RUN/qemu.$h.log" 2>&1 &
  PIDS+=($!)
}
listening() { # port: 0 when something listens on 127.0.0.1:port
  [[ " $(used_ports | tr '\n' ' ') " == *" $1 "* ]]
}

# qemu's HMP monitor over TCP (bash's /dev/tcp), one connection per VM held for the whole
# run (the server takes one client at a time and re-listens late after a disconnect)
# shellcheck disable=SC2034 # set and read through ${!fdvar}
MONFD_A='' MONFD_B=''
monitor() { # host letter, command
  local fdvar=MONFD_$1 portvar=MON_$1 _line
  if [ -z "${!fdvar}" ]; then
    exec {fd}<>"/dev/tcp/127.0.0.1/${!portvar}" || return 1
    eval "$fdvar=$fd"
  fi
  printf '%s\n' "$2" >&"${!fdvar}"
  # drain what it printed (the banner, the echo, the prompt)
  while IFS= read -r -t 0.3 -u "${!fdvar}" _line; do :; done
}

KILLED_A='' KILLED_B=''
act() { # the words after "@@fabric-host:"
  local what=$1 arg=${2:-} state=${3:-} id pid
  case $what in
  link)
    case $arg in 0 | 1) id=n$arg ;; m) id=n2 ;; *) say "bad link request '$*'"; return ;; esac
    [[ $state == on || $state == off ]] || { say "bad link request '$*'"; return; }
    [ -n "$KILLED_A" ] || monitor A "set_link $id $state"
    [ -n "$KILLED_B" ] || monitor B "set_link $id $state"
    say "link $arg $state (set_link $id $state in both VMs)"
    ;;
  kill)
    [[ $arg == A || $arg == B ]] || { say "bad kill request '$*'"; return; }
    pid=$(cat "$RUN/qemu.$arg.pid" 2>/dev/null)
    if [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; then
      say "killed VM $arg (qemu pid $pid)"
      eval "KILLED_$arg=1"
    else
      say "could not kill VM $arg"
    fi
    ;;
  *) say "unknown request '$*'" ;;
  esac
}

say "ports: rail0 $P_R0 rail1 $P_R1 mgmt $P_M, monitors $MON_A $MON_B ($ACCEL)"
boot A
for _ in $(seq 1 100); do
  listening "$P_R0" && listening "$P_R1" && listening "$P_M" && listening "$MON_A" && break
  sleep 0.1
done
listening "$P_M" || fail 122 "VM A's qemu does not listen on its network ports ($(cat "$RUN/qemu.A.log"))"
boot B

INTERRUPTED=
trap 'INTERRUPTED=1; for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done' INT TERM HUP
declare -A SEEN=([A]=0 [B]=0)
if [ "${FABRIC_VERBOSE:-0}" = 1 ]; then
  tail -n +1 -f "$RUN/out.A" "$RUN/out.B" >&2 &
  PIDS+=($!)
fi
while kill -0 "${PIDS[0]}" 2>/dev/null || kill -0 "${PIDS[1]}" 2>/dev/null; do
  for h in A B; do
    # requests: lines not seen yet
    total=$(grep -ac '^@@fabric-host:' "$RUN/out.$h")
    while [ "${SEEN[$h]}" -lt "$total" ]; do
      SEEN[$h]=$((SEEN[$h] + 1))
      req=$(grep -a '^@@fabric-host:' "$RUN/out.$h" | sed -n "${SEEN[$h]}p" | tr -d '\r')
      # shellcheck disable=SC2086 # words
      act ${req#@@fabric-host:}
    done
  done
  sleep 0.1
done
wait "${PIDS[0]}" 2>/dev/null
QRC_A=$?
wait "${PIDS[1]}" 2>/dev/null # "Killed" when B was killed on request
QRC_B=$?
trap - INT TERM HUP
[ -z "$INTERRUPTED" ] || fail 130 "interrupted"

sed 's/^/A| /' "$RUN/out.A"
sed 's/^/B| /' "$RUN/out.B"
cp "$RUN/console.A" "$FABRIC_DIR/logs/last-console.A.log"
cp "$RUN/console.B" "$FABRIC_DIR/logs/last-console.B.log"

verdict() { # host letter, qemu status: prints the command's status or fails
  local h=$1 qrc=$2 st killed
  killed=KILLED_$h
  [ -z "${!killed}" ] || { echo 0; return; }
  if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    fabric_console_tail "$RUN/console.$h"
    fail 124 "VM $h timed out after ${TIMEOUT} s"
  fi
  if grep -aq FABRIC_SETUP_FAILED "$RUN/console.$h"; then
    fabric_console_tail "$RUN/console.$h"
    fail 123 "the fabric could not be set up in VM $h"
  fi
  st=$(fabric_status "$RUN/console.$h")
  if [ -z "$st" ]; then
    fabric_console_tail "$RUN/console.$h"
    [ -s "$RUN/console.$h" ] || fail 122 "VM $h's qemu failed to start (status $qrc): $(cat "$RUN/qemu.$h.log")"
    fail 125 "VM $h stopped without reporting the command's status"
  fi
  echo "$st"
}
ST_A=$(verdict A "$QRC_A") || exit $?
ST_B=$(verdict B "$QRC_B") || exit $?
say "exit status A $ST_A${KILLED_A:+ (killed)}, B $ST_B${KILLED_B:+ (killed)}"
[ "$ST_A" != 0 ] && exit "$ST_A"
exit "$ST_B"
