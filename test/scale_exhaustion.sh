#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Exhaustion is a clear error (issue 27): on the shm verbs provider, the fault layer makes the
# K-th connection's ibv_create_qp (sender), ibv_create_cq (receiver) or ibv_reg_mr (sender's
# clear-to-send FIFO: 36 KiB with wire v6's 64-byte entries, 68 KiB with v5's; the fault's size
# window holds both) fail from then on (count=0), as an HCA at its limit or RLIMIT_MEMLOCK
# would. Asserts for each: that connect/accept returns an error (bench/scale --exhaust sees
# connection K fail, no hang), with exactly ONE WARN on the failing side that names the limit and
# the knob to change (scale accepts in channel order under --exhaust, so the K-th resource taken
# is connection K's whatever order the connects arrive in), and that the K-1 connections set up before it then carry a 4 KiB and a
# 256 KiB message each, byte-checked (scale exits non-zero on a wrong byte). The other end is not
# judged: a listen comm whose peer failed before connecting keeps waiting for a connect (NCCL's
# accept semantics; scale reports it as peer_hung after 30 s), one whose peer failed mid-handshake
# gets an error.
#   test/scale_exhaustion.sh BUILD_DIR [K] [N]      (a -DRAIL_FAULT_INJECTION=ON build)
set -uo pipefail
build=${1:?usage: scale_exhaustion.sh BUILD_DIR [K] [N]}
k=${2:-200} n=${3:-256}
bin=$build/bench/scale
[ -x "$bin" ] || { echo "FAIL: $bin missing"; exit 1; }
fails=0
check() { # name, fault spec, failing process, limit regex, knob regex
  local name=$1 spec=$2 proc=$3 limit=$4 knob=$5 out err rc
  err=$(mktemp)
  out=$(NCCL_RAIL_FAULT=$spec timeout 300 "$bin" --exhaust --conns "$n" --window 32 2>"$err")
  rc=$?
  local line
  line=$(echo "$out" | grep "^scale exhaust proc=$proc ")
  local bad=""
  [ $rc -eq 0 ] || bad="scale exited $rc (crash, hang or wrong bytes)"
  [ -z "$bad" ] && ! grep -q "fault injection: rule 1 (${spec%%:*}) fires" "$err" &&
    bad="the fault never fired"
  [ -z "$bad" ] && ! echo "$out" | grep -q "^scale exhaust conns=$n failed_at=$k verified=$((k - 1))" &&
    bad="connection $k did not fail alone: $(echo "$out" | head -1)"
  [ -z "$bad" ] && ! echo "$line" | grep -q " failed_at=$k warns=1 peer_hung=0 " &&
    bad="failing side: $line (want one WARN, the peer not hung)"
  [ -z "$bad" ] && ! echo "$line" | grep -Eq "$limit" && bad="the WARN names no limit: $line"
  [ -z "$bad" ] && ! echo "$line" | grep -Eq "$knob" && bad="the WARN names no knob: $line"
  if [ -n "$bad" ]; then
    echo "FAIL $name: $bad"
    tail -5 "$err"
    fails=$((fails + 1))
  else
    echo "ok   $name: ${line#*warn=}"
  fi
  rm -f "$err"
}
check create_qp "create_qp:dev=shm0,after=$((k - 1)),count=0" 0 "max_qp" "NCCL_IB_QPS_PER_CONNECTION"
check create_cq "create_cq:dev=shm1,after=$((k - 1)),count=0" 1 "max_cq" "NCCL_NCHANNELS_PER_NET_PEER"
check reg_mr "reg_mr:dev=shm0,min=32768,max=70000,after=$((k - 1)),count=0" 0 "RLIMIT_MEMLOCK" "ulimit -l"
echo "$((3 - fails)) passed, $fails failed"
[ $fails -eq 0 ]
