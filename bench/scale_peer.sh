#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/scale on kernel verbs next to a peer net plugin, one boot. Runs INSIDE the VM (rxe0/rxe1,
# one rail, 1 QP per connection):
#   flock /tmp/rail-vm.lock bash test/fabric/run-in-vm.sh --timeout 500 -- \
#     bash bench/scale_peer.sh --peer /path/to/libnccl-net.so [--conns "64 256"] [--knobs]
# Rows: ours (linked into scale: the verbs-seam counts too) and the peer (--plugin) at each N;
# with --knobs, ours again at the largest N with each knob that changes what a connection holds
# (NCCL_RAIL_EAGER_INLINE=0, NCCL_RAIL_EAGER_MAX=0, NCCL_RAIL_CONTROL_QP=0). Every row also
# prints /proc/self/smaps by kind of mapping (--smaps): the rings rdma_rxe maps from
# /dev/infiniband/uverbsN by size, heap, anonymous. Figures only (bench/README.md, "Scale on
# SoftRoCE, next to the peer"); exit status 1 when a run failed (a byte differed, a call failed).
set -uo pipefail
build=${RAIL_BUILD_DIR:-build} peer=${PEER_PLUGIN:-} ns="64 256" knobs=0
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift ;;
  --peer) peer=$2; shift ;;
  --conns) ns=$2; shift ;;
  --knobs) knobs=1 ;;
  *) sed -n 3,13p "$0"; exit 2 ;;
  esac
  shift
done
bin=$build/bench/scale
[ -x "$bin" ] || { echo "scale_peer.sh: $bin missing: cmake --build $build --target scale"; exit 1; }
d0=${FABRIC_DEV0:-rxe0} d1=${FABRIC_DEV1:-rxe1}
# The peer (NCCL's net_ib design) picks RoCE v2 GIDs itself; pin the fabric's index anyway.
export NCCL_IB_GID_INDEX=${FABRIC_G0:-1} NCCL_PLUGIN_P2P=ib
fail=0
run() { # label, then env assignments and scale's arguments
  local label=$1
  shift
  echo "== $label"
  if ! env "$@" --provider verbs --devs "$d0,$d1" --smaps --msgs 200 2>"/tmp/scale-peer-$$.err" |
    grep -E '^scale (procs|per_conn|smaps|closed|warns)'; then
    echo "$label: FAILED"
    fail=1
  fi
  grep -E 'WARN|failed' "/tmp/scale-peer-$$.err" | sort | uniq -c | head -5
  rm -f "/tmp/scale-peer-$$.err"
}
for n in $ns; do
  run "ours N=$n" "$bin" --conns "$n"
  [ -n "$peer" ] && run "peer N=$n" "$bin" --conns "$n" --plugin "$peer"
done
if [ "$knobs" = 1 ]; then
  n=${ns##* }
  run "ours N=$n NCCL_RAIL_EAGER_INLINE=0" NCCL_RAIL_EAGER_INLINE=0 "$bin" --conns "$n"
  run "ours N=$n NCCL_RAIL_EAGER_MAX=0" NCCL_RAIL_EAGER_MAX=0 "$bin" --conns "$n"
  run "ours N=$n NCCL_RAIL_CONTROL_QP=0" NCCL_RAIL_CONTROL_QP=0 "$bin" --conns "$n"
fi
exit $fail
