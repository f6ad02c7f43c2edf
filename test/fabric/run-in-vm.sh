#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# run-in-vm.sh - run a command inside a qemu guest that has real RDMA verbs:
# four SoftRoCE (rdma_rxe) devices on two veth "rails".
#
# usage: run-in-vm.sh [--timeout SECONDS] -- COMMAND [ARG...]
#
# The guest sees the host's root filesystem read-only (9p) under a tmpfs
# overlay: every host path, the project's build tree included, is visible at
# the same path, and writes are discarded when the VM powers off. COMMAND runs
# as root in the caller's current directory, with the caller's exported
# environment plus:
#   FABRIC_VM=1
#   FABRIC_DEV0..3  rxe0..rxe3       RDMA devices
#   FABRIC_IF0..3   veth0..veth3     their netdevs
#   FABRIC_A0..3    10.0.1.1 10.0.1.2 10.0.2.1 10.0.2.2   their IPv4 addresses
#   FABRIC_G0..3    the RoCE v2 GID index of each address
# Rail A is rxe0 <-> rxe1, rail B is rxe2 <-> rxe3.
#
# COMMAND's stdout and stderr (merged) appear on this script's stdout.
# Exit status: COMMAND's, or
#   121 usage error   122 host not prepared (run setup-host.sh) or qemu failed to start
#   123 the fabric could not be set up in the guest
#   124 the hard timeout expired (default 900 s)
#   125 the VM stopped without reporting a status (crash, panic)
#   130 interrupted (SIGINT/SIGTERM/SIGHUP; the VM is stopped)
# On 123-125 the end of the guest console log is printed on stderr and the
# whole log is kept in $FABRIC_DIR/logs/.
#
# Environment:
#   FABRIC_DIR      work directory (kernel, initramfs, logs); default build/fabric
#                   in the repository
#   FABRIC_TIMEOUT  default for --timeout
#   FABRIC_ACCEL    tcg or kvm (default: kvm only when /dev/kvm is writable and
#                   a stock kvm_intel/kvm_amd module drives it)
#   FABRIC_VERBOSE  1: copy the guest console to stderr as it is written
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd -P)
REPO=$(cd "$HERE/../.." && pwd -P)
FABRIC_DIR=${FABRIC_DIR:-$REPO/build/fabric}
TIMEOUT=${FABRIC_TIMEOUT:-900}

usage() {
  echo "usage: run-in-vm.sh [--timeout SECONDS] -- COMMAND [ARG...]" >&2
  exit 121
}
while [ $# -gt 0 ]; do
  case $1 in
  --timeout)
    [ $# -ge 2 ] || usage
    TIMEOUT=$2
    shift 2
    ;;
  --timeout=*)
    TIMEOUT=${1#--timeout=}
    shift
    ;;
  --)
    shift
    break
    ;;
  *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || {
  echo "run-in-vm: --timeout wants a positive number of seconds, got '$TIMEOUT'" >&2
  exit 121
}

fail() { # $1 status, $2 message
  echo "run-in-vm: $2" >&2
  exit "$1"
}

mkdir -p "$FABRIC_DIR" || fail 122 "cannot create $FABRIC_DIR"
FABRIC_DIR=$(cd "$FABRIC_DIR" && pwd -P)
# the job path travels on the kernel command line: keep it simple
[[ $FABRIC_DIR =~ ^/[A-Za-z0-9._/+-]*$ ]] ||
  fail 122 "FABRIC_DIR '$FABRIC_DIR' has characters that cannot go on a kernel command line"
# shellcheck source=SCRIPTDIR/fabric-lib.sh
. "$HERE/fabric-lib.sh"
fabric_prepare # the kernel, qemu, and the initramfs (independent of COMMAND, so it is cached)

# --- the job script (read by the guest through 9p) ------------------------------
JOB=$(mktemp "$FABRIC_DIR/jobs/job.XXXXXX") || fail 122 "cannot create a job file"
CONSOLE=$FABRIC_DIR/logs/console.${JOB##*.}.log
trap 'rm -f "$JOB"' EXIT
fabric_write_job "$JOB" "$@"

# --- boot -------------------------------------------------------------------------
fabric_accel

: >"$CONSOLE"
TAIL_PID=
if [ "${FABRIC_VERBOSE:-0}" = 1 ]; then
  tail -n +1 -f "$CONSOLE" >&2 &
  TAIL_PID=$!
fi

# ttyS0 (console) -> log file; ttyS1 (the command's output) -> our stdout.
# -nic none: the guest has no network link to the host; its 10.0.x.x
# addresses exist only inside it.
start=$(date +%s.%N)
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 "${ACCEL_ARGS[@]}" \
  -smp 2 -m 2G -nic none -no-reboot \
  -display none -vga none -monitor none -parallel none \
  -serial "file:$CONSOLE" \
  -chardev stdio,id=cmdout,signal=off -serial chardev:cmdout \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -kernel "$KERNEL" -initrd "$INITRD" \
  -append "console=ttyS0 quiet loglevel=4 panic=-1 fabric.job=$JOB" </dev/null &
VM_PID=$!
# timeout(1) runs in its own process group, out of reach of a terminal's ^C:
# pass INT/TERM/HUP on to it
INTERRUPTED=
trap 'INTERRUPTED=1; kill -TERM "$VM_PID" 2>/dev/null' INT TERM HUP
while :; do
  wait "$VM_PID"
  qrc=$?
  kill -0 "$VM_PID" 2>/dev/null || break # else wait was cut short by a signal
done
trap - INT TERM HUP
elapsed=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
[ -z "$TAIL_PID" ] || {
  sleep 0.2
  kill "$TAIL_PID" 2>/dev/null
}

console_tail() { fabric_console_tail "$CONSOLE"; }
status=$(fabric_status "$CONSOLE")
[ -z "$INTERRUPTED" ] || fail 130 "interrupted"
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
  console_tail
  fail 124 "timed out after ${TIMEOUT} s"
fi
if grep -aq FABRIC_SETUP_FAILED "$CONSOLE"; then
  console_tail
  fail 123 "the fabric could not be set up in the guest"
fi
if [ -z "$status" ]; then
  console_tail
  [ -s "$CONSOLE" ] || fail 122 "qemu failed to start (status $qrc)"
  fail 125 "the VM stopped without reporting the command's status"
fi
mv -f "$CONSOLE" "$FABRIC_DIR/logs/last-console.log"
echo "run-in-vm: exit status $status, VM wall ${elapsed} s ($ACCEL)" >&2
exit "$status"
