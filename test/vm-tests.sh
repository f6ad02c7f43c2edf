#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Everything that needs real RDMA, run inside the SoftRoCE VM in one boot:
#   test/fabric/run-in-vm.sh -- bash test/vm-tests.sh BUILD_DIR...
# 1. the fabric smoke test (devices, GIDs, traffic crosses each rail);
# 2. the net plugin integration scenarios against every given build tree, one device per port,
#    then again with dual-rail devices (rxe0+rxe2 -> rxe1+rxe3), where the multi-rail scenarios
#    (mr_*: failover, both links down, rejoin) really run; in a tree built with
#    -DRAIL_FAULT_INJECTION=ON (scripts/test.sh: build-asan) the injected verbs faults run too
#    (vf_* one-rail, vf2_* dual-rail: docs/fault-injection.md);
# 3. the per-rail byte split of a dual-rail netbench run with the equal policy (veth0 / veth2
#    tx_bytes deltas within 40-60 %), and with rail B shaped to 16 Mbit/s by tc: the adaptive
#    policy must put at most 40 % of the bytes on it (equal would put 50 %);
# 4. NCCL_IB_TC / NCCL_IB_FIFO_TC / NCCL_IB_PKEY_VALUE read back from the QPs (ibv_query_qp);
#    a NCCL_RAIL_STATS_FILE snapshot of a running dual-rail connection, read by `nccl-rail stats`;
# 5. the short soak (first build only): 20000 messages of mixed sizes over the dual-rail device with
#    rail B flapping, every byte checked, RSS / registrations / QPs / MRs flat (scripts/soak.sh runs
#    the long one).
# Prints one closing line "N passed, M failed" summing the suites' own counts.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
[ $# -gt 0 ] || set -- build
passed=0 failed=0
log=$(mktemp)
suite() { # name command...
  local name=$1 rc line p f
  shift
  echo "== vm: $name"
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "== vm: $name printed no result (exit $rc)"
    failed=$((failed + 1))
    return
  fi
  line=$(echo "$line" | grep -oE '[0-9]+ passed, [0-9]+ failed' | tail -1)
  p=${line%% passed*}
  f=${line#*passed, }
  f=${f%% failed*}
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "== vm: $name exited $rc"
    failed=$((failed + 1))
  fi
}
suite "fabric smoke test" bash test/fabric/smoke.sh
# Prints "1 passed, 0 failed" when rail A carried 40-60 % of a dual-rail equal-policy run.
rail_split() { # build dir
  local b=$1 a0 b0 a1 b1 da db pct
  case $b in /*) ;; *) b=$root/$b ;; esac
  a0=$(cat /sys/class/net/veth0/statistics/tx_bytes) b0=$(cat /sys/class/net/veth2/statistics/tx_bytes)
  if ! NCCL_RAIL_RAILS=rxe0+rxe2,rxe1+rxe3 NCCL_RAIL_STRIPE_POLICY=equal \
    "$b/bench/netbench" "$b/libnccl-net-rail.so" --send-dev rxe0+rxe2 --recv-dev rxe1+rxe3 \
    --test bw --size 4194304 --iters 16 --warmup 2 --inflight 8 --verify-all; then
    echo "rail split: netbench failed"
    echo "0 passed, 1 failed"
    return 1
  fi
  a1=$(cat /sys/class/net/veth0/statistics/tx_bytes) b1=$(cat /sys/class/net/veth2/statistics/tx_bytes)
  da=$((a1 - a0)) db=$((b1 - b0))
  pct=$((da * 100 / (da + db > 0 ? da + db : 1)))
  echo "rail split (equal policy): veth0 +$da B, veth2 +$db B: rail A carried $pct %"
  if [ "$pct" -ge 40 ] && [ "$pct" -le 60 ]; then echo "1 passed, 0 failed"; else
    echo "0 passed, 1 failed"
  fi
}
# Prints "1 passed, 0 failed" when, with veth2 shaped to 16 Mbit/s, the adaptive policy sent at
# most 40 % of a dual-rail run's bytes over rail B.
rail_split_shaped() { # build dir
  local b=$1 a0 b0 a1 b1 da db pct t0 t1
  case $b in /*) ;; *) b=$root/$b ;; esac
  if ! grep -q '^sch_tbf ' /proc/modules; then
    for ko in "${FABRIC_DIR:-$root/build/fabric}"/kernel/lib/modules/*/kernel/net/sched/sch_tbf.ko; do
      [ -f "$ko" ] && insmod "$ko" 2>/dev/null
    done
  fi
  if ! tc qdisc add dev veth2 root tbf rate 16mbit burst 256kb latency 200ms; then
    echo "rail split (shaped): cannot shape veth2 (sch_tbf missing?)"
    echo "0 passed, 1 failed"
    return 1
  fi
  a0=$(cat /sys/class/net/veth0/statistics/tx_bytes) b0=$(cat /sys/class/net/veth2/statistics/tx_bytes)
  t0=$(date +%s)
  NCCL_RAIL_RAILS=rxe0+rxe2,rxe1+rxe3 NCCL_RAIL_STRIPE_POLICY=adaptive \
    "$b/bench/netbench" "$b/libnccl-net-rail.so" --send-dev rxe0+rxe2 --recv-dev rxe1+rxe3 \
    --test bw --size 4194304 --iters 16 --warmup 4 --inflight 8 --verify-all
  local rc=$?
  t1=$(date +%s)
  tc qdisc del dev veth2 root || true
  if [ "$rc" -ne 0 ]; then
    echo "rail split (shaped): netbench failed"
    echo "0 passed, 1 failed"
    return 1
  fi
  a1=$(cat /sys/class/net/veth0/statistics/tx_bytes) b1=$(cat /sys/class/net/veth2/statistics/tx_bytes)
  da=$((a1 - a0)) db=$((b1 - b0))
  pct=$((db * 100 / (da + db > 0 ? da + db : 1)))
  echo "rail split (adaptive, veth2 shaped to 16 Mbit/s): veth0 +$da B, veth2 +$db B: rail B carried $pct % ($((t1 - t0)) s)"
  if [ "$pct" -le 40 ]; then echo "1 passed, 0 failed"; else
    echo "0 passed, 1 failed"
  fi
}
# Prints "1 passed, 0 failed" when a dual-rail run's NCCL_RAIL_STATS_FILE snapshot, taken while
# it runs, lists both rails with bytes and `nccl-rail stats` prints it.
stats_file() { # build dir
  local b=$1 dir pid f snap="" i
  case $b in /*) ;; *) b=$root/$b ;; esac
  dir=$(mktemp -d)
  NCCL_RAIL_RAILS=rxe0+rxe2,rxe1+rxe3 NCCL_RAIL_STATS_FILE="$dir/rail-%p.json" \
    NCCL_RAIL_STATS_INTERVAL_MS=100 "$b/bench/netbench" "$b/libnccl-net-rail.so" \
    --send-dev rxe0+rxe2 --recv-dev rxe1+rxe3 --test bw --size 4194304 --iters 24 --warmup 2 \
    --inflight 8 >"$dir/nb.out" 2>&1 &
  pid=$!
  for i in $(seq 1 200); do
    for f in "$dir"/rail-*.json; do
      [ -f "$f" ] || continue
      cp "$f" "$dir/snap.json" 2>/dev/null || continue
      if "$b/tools/nccl-rail" stats "$dir/snap.json" >"$dir/table" 2>&1 &&
        grep -q rxe0 "$dir/table" && grep -q rxe2 "$dir/table" &&
        grep -qE "send .* [1-9][0-9]* messages" "$dir/table"; then
        snap=$dir/table
      fi
    done
    [ -n "$snap" ] && break
    sleep 0.1
  done
  wait "$pid"
  local rc=$?
  if [ -n "$snap" ]; then cat "$snap"; fi
  if [ "$rc" -eq 0 ] && [ -n "$snap" ]; then echo "1 passed, 0 failed"; else
    echo "stats file: netbench exit $rc, snapshot with both rails: ${snap:-none}"
    tail -n 3 "$dir/nb.out"
    echo "0 passed, 1 failed"
  fi
  rm -rf "$dir"
}
# NCCL_IB_HCA's name:port:rail:plane (NCCL 2.30+) reaches the net v12 railId/planeId of the
# send device (the versions scenario checks RAIL_IT_WANT_IDS), with NCCL's ^, = and prefix rules;
# a two-rail device as NCCL's fused vNICs; adaptive routing moves data byte-exact over it.
rail_plane_ids() {
  local b=$1 bad=0 line
  while IFS='|' read -r hca rails dev want scen; do
    if env RAIL_BUILD_DIR="$b" NCCL_IB_HCA="$hca" NCCL_RAIL_RAILS="$rails" FABRIC_DEV0="$dev" \
      FABRIC_DEV1="$dev" RAIL_IT_WANT_IDS="$want" \
      bash test/integration/run.sh $scen > "$b/ids.out" 2>&1; then
      line=ok
    else
      line=FAILED bad=$((bad + 1))
    fi
    echo "NCCL_IB_HCA=$hca NCCL_RAIL_RAILS=$rails ($scen): want railId,planeId $want: $line"
    grep -h "railId" "$b/ids.out" | head -n 1
  done <<'EOF2'
rxe0:1:0:0,rxe2:1:1:0|rxe0,rxe2|rxe0|0,0|versions
rxe0:1:0:0,rxe2:1:1:0|rxe0+rxe2|rxe0+rxe2|-1,16386|versions sizes_ar
rxe0:1:2:0,rxe2:1:2:1|rxe0+rxe2|rxe0+rxe2|2,16390|versions
=rxe0:1:3:1,rxe2:1:4:2|rxe0,rxe2|rxe0|3,1|versions sizes_ar
^rxe1,rxe3|rxe0,rxe2|rxe0|-1,-1|versions
rxe:1:5:2,rxe0:1:6:3|rxe0,rxe2|rxe0|5,2|versions
EOF2
  rm -f "$b/ids.out"
  echo "$((6 - bad)) passed, $bad failed"
}
# NCCL_IB_TC, NCCL_IB_FIFO_TC and NCCL_IB_PKEY_VALUE reach the QP attributes: the plugin reads
# them back (ibv_query_qp after RTS) and logs what the device holds, the sender's QP with
# NCCL_IB_TC, the receiver's (clear-to-send writes) with NCCL_IB_FIFO_TC; rxe's PKey table has
# 0xffff at index 0. A PKey value the port lacks is refused, naming the variable.
qp_readback() { # build dir
  local b=$1 bad=0 out
  out=$(env RAIL_BUILD_DIR="$b" RAIL_IT_VERBOSE=1 NCCL_IB_TC=40 NCCL_IB_FIFO_TC=96 \
    NCCL_IB_PKEY_VALUE=0xffff bash test/integration/run.sh sizes 2>&1)
  echo "$out" | grep "read back"
  echo "$out" | grep -qE "sender QP 0x[0-9a-f]+ read back \(ibv_query_qp\): pkey index 0, traffic class 40, as asked \(NCCL_IB_PKEY_VALUE, NCCL_IB_TC\)" ||
    { echo "qp read-back: no sender line with traffic class 40"; bad=$((bad + 1)); }
  echo "$out" | grep -qE "receiver QP 0x[0-9a-f]+ read back \(ibv_query_qp\): pkey index 0, traffic class 96, as asked \(NCCL_IB_PKEY_VALUE, NCCL_IB_FIFO_TC\)" ||
    { echo "qp read-back: no receiver line with traffic class 96"; bad=$((bad + 1)); }
  out=$(env RAIL_BUILD_DIR="$b" RAIL_IT_VERBOSE=1 NCCL_IB_PKEY_VALUE=0x1234 \
    bash test/integration/run.sh versions 2>&1)
  echo "$out" | grep -m 2 "NCCL_IB_PKEY_VALUE"
  echo "$out" | grep -q "NCCL_IB_PKEY_VALUE=0x1234 is not in the port's PKey table" ||
    { echo "qp read-back: PKey value 0x1234 not refused by name"; bad=$((bad + 1)); }
  echo "$((3 - bad)) passed, $bad failed"
}
for b in "$@"; do
  suite "net plugin integration ($b)" env RAIL_BUILD_DIR="$b" bash test/integration/run.sh
  suite "net plugin integration, dual-rail ($b)" env RAIL_BUILD_DIR="$b" \
    NCCL_RAIL_RAILS=rxe0+rxe2,rxe1+rxe3 FABRIC_DEV0=rxe0+rxe2 FABRIC_DEV1=rxe1+rxe3 \
    bash test/integration/run.sh
  suite "rail byte split ($b)" rail_split "$b"
  if [ "$b" = "$1" ]; then
    suite "NCCL_IB_HCA rail/plane ids ($b)" rail_plane_ids "$b"
    suite "QP attributes read back ($b)" qp_readback "$b"
    suite "rail byte split, rail B shaped ($b)" rail_split_shaped "$b"
    suite "telemetry snapshot ($b)" stats_file "$b"
    suite "soak, short ($b)" env NCCL_RAIL_RAILS=rxe0+rxe2,rxe1+rxe3 \
      "$b/test/integration/rail_net_soak" "$b/libnccl-net-rail.so" --messages "${SOAK_MESSAGES:-20000}" \
      --max-size 262144 --flap-up-ms 3000 --flap-down-ms 1500
  fi
done
rm -f "$log"
echo "vm tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
