#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Wire interoperability with another release of the net plugin, on the shm verbs provider (no VM):
#   bash test/check_interop.sh OTHER.so [BUILD]
# e.g. OTHER.so = the main branch's build (/work/main/build/libnccl-net-rail.so, wire version 5)
# against this tree's (wire version 6). netbench moves 4 MiB and 8-byte messages between the two
# in both directions (--recv-plugin: the receiving process loads the other .so; the latency test
# connects back the other way), every byte compared (--verify-all), then this build with itself.
# Asserted from the plugins' INFO lines: a connection with the other release uses 128-byte
# clear-to-send entries on both ends (its META frames are version 5 or older) and this tree's
# receive comms keep 320 receive WRs per QP (no send queue depth announced); one between two
# builds of this tree uses 64-byte entries and receive queues sized by the sender's send queue
# (126 + 32 spare, NCCL_RAIL_SEND_QUEUE_DEPTH's default). Exit 1 on any failure.
set -uo pipefail
other=${1:?usage: check_interop.sh OTHER.so [BUILD]}
build=${2:-${RAIL_BUILD_DIR:-build}}
mine=$build/libnccl-net-rail.so nb=$build/bench/netbench
for f in "$other" "$mine" "$nb"; do
  [ -e "$f" ] || { echo "check_interop: $f missing"; exit 1; }
done
export NCCL_RAIL_VERBS_PROVIDER=shm NCCL_RAIL_SHM_FABRIC=interop-$$
export NCCL_RAIL_RAILS=shm0,shm1 NCCL_SOCKET_IFNAME=lo
trap 'find /dev/shm -maxdepth 1 -user "$(id -u)" -name "nccl-rail-shm-$(id -u)-interop-$$*" -delete' EXIT
fail=0
run() { # label, sender .so, receiver .so, expected entry bytes and receive WRs of this tree's comms
  local label=$1 snd=$2 rcv=$3 want=$4 wrs=$5 out
  out=$("$nb" "$snd" --recv-plugin "$rcv" --send-dev shm0 --recv-dev shm1 --verify-all \
    --size 4194304 --iters 16 --warmup 2 --lat-iters 200 --lat-warmup 20 --timeout 60 \
    --verbose 2>&1)
  local rc=$?
  local bw lat sizes
  bw=$(echo "$out" | grep -o 'netbench bw .*' | grep -o 'MBps=[0-9.]*')
  lat=$(echo "$out" | grep -o 'netbench lat .*' | grep -o 'median_us=[0-9.]*')
  # Entry sizes the comms of this tree report (the other release's lines have no such field).
  sizes=$(echo "$out" | grep -o '[0-9]*-byte clear-to-send entries' | sort | uniq -c | tr -s ' ' |
    tr '\n' ';')
  if [ $rc -ne 0 ] || echo "$out" | grep -q 'FAILED'; then
    echo "$label: FAILED (exit $rc)"; echo "$out" | grep -E 'FAILED|WARN' | head -5; fail=1; return
  fi
  if [ -z "$sizes" ] || echo "$out" | grep -o '[0-9]*-byte clear-to-send entries' | grep -vq "^$want-byte"; then
    echo "$label: FAILED: entry sizes [$sizes], want only $want-byte"; fail=1; return
  fi
  local rq
  rq=$(echo "$out" | grep -o 'of [0-9]* receive WRs' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  if [ -z "$rq" ] || echo "$out" | grep -o 'of [0-9]* receive WRs' | grep -vq "^of $wrs "; then
    echo "$label: FAILED: receive queues [$rq], want only $wrs WRs"; fail=1; return
  fi
  echo "$label: ok, verified, $bw $lat, this tree's comms: $sizes $rq"
}
# Both runs with the other release connect both ways (the latency test connects back).
run "this tree -> other (other listens)" "$mine" "$other" 128 320
run "other -> this tree (this listens)" "$other" "$mine" 128 320
run "this tree -> this tree" "$mine" "$mine" 64 158
exit $fail
