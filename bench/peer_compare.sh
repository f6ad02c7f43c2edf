#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2034,SC2154,SC2086 # build/sdev/rdev/scratch are perftest_lib.sh's; $tests splits
# nccl-rail's net plugin against perftest and a peer net plugin, one boot. Runs INSIDE the VM:
#   bash test/fabric/run-in-vm.sh --timeout 1500 -- bash bench/peer_compare.sh [options]
# Each round, in alternating order (odd rounds as listed, even rounds reversed):
#   raw1      ib_write_bw -s 4194304 -t 8 on rail A (rxe0 -> rxe1)
#   raw2      two ib_write_bw at once, one per rail: the emulator's two-rail ceiling (sum)
#   rawlat    ib_write_lat -s 8 on rail A (t_typical)
#   ours1/2   netbench bw, 4 MiB x 8 in flight, with our plugin: rail A, then the dual-rail
#             device (NCCL_RAIL_RAILS=rxe0+rxe2,rxe1+rxe3)
#   ours2w    ours2 with NCCL_RAIL_STRIPE_MIN=1073741824: every message whole to one rail,
#             round-robin (no split, no two-phase size record)
#   base2     ours2 with the plugin given by --base (another build of ours: A/B in one boot)
#   ours1q2   ours1 with NCCL_IB_QPS_PER_CONNECTION=2 (two QPs on one rail: under SoftRoCE the
#             "NIC" is kernel work on the guest's vCPUs, and two QPs buy the same concurrency
#             as two rails, which shows where the ceiling is)
#   ourslat   netbench 8 B latency on rail A
#   ourslat0  ourslat with NCCL_RAIL_EAGER_INLINE=0 (the eager write not inline)
#   baselat   ourslat with the plugin given by --base
#   fo1/fo0   netbench 8 B latency on the dual-rail device as a one-piece rendezvous message
#             (NCCL_RAIL_EAGER_MAX=0: data + record, the shape failover used to make two-phase),
#             NCCL_RAIL_FAILOVER=1 / 0
#   peer1/2   the same bw runs with the peer plugin: rail A, then its fused virtual NIC
#             (netbench asks the plugin's makeVDevice for "rxe0+rxe2")
#   peerlat   netbench 8 B latency with the peer on rail A
# Then medians over the rounds and the table of issue 12 (ratios of the medians), and the same
# table from each test's best round (interference from the host only slows runs). Figures only:
# nothing about speed is asserted. Exit status 1 when a run failed (a byte differed, a tool failed).
#
# Options: --rounds N (5)  --bw-iters N (16)  --lat-iters N (1000)  --build DIR (build; also
#          $RAIL_BUILD_DIR)  --peer SO (also $PEER_PLUGIN; none: the peer columns are skipped)
#          --base SO (for base2, baselat)  --tests "T1 T2 ..." (only these, in this order;
#          default: all of the above but ours2w, base2, ourslat0 and baselat; ratios whose tests
#          did not run print n/a)
# The peer is built outside the tree, e.g. Mellanox nccl-rdma-sharp-plugins (autotools,
# --with-cuda=... --without-ucx --without-sharp): --peer /path/lib/libnccl-net.so
set -uo pipefail
rounds=5 bw_iters=16 lat_iters=1000
build=${RAIL_BUILD_DIR:-build} plugin='' peer=${PEER_PLUGIN:-} only='' base=''
while [ $# -gt 0 ]; do
  case $1 in
  --rounds) rounds=$2 ;;
  --bw-iters) bw_iters=$2 ;;
  --lat-iters) lat_iters=$2 ;;
  --build) build=$2 ;;
  --peer) peer=$2 ;;
  --tests) only=$2 ;;
  --base) base=$2 ;;
  *)
    sed -n '4,34p' "$0"
    exit 2
    ;;
  esac
  shift 2 || exit 2
done
a0=${FABRIC_DEV0:-rxe0} a1=${FABRIC_DEV1:-rxe1} b0=${FABRIC_DEV2:-rxe2} b1=${FABRIC_DEV3:-rxe3}
sdev=$a0 rdev=$a1
# shellcheck source=bench/perftest_lib.sh
. "$(dirname "$0")/perftest_lib.sh"
lib_setup peer_compare
ours=$plugin
if [ -n "$peer" ] && [ ! -f "$peer" ]; then
  echo "peer_compare: peer plugin $peer not found" >&2
  exit 1
fi
singles="$a0,$a1,$b0,$b1" groups="$a0+$b0,$a1+$b1"
port=19100
# The peer (NCCL's net_ib design) picks RoCE v2 GIDs itself; pin the fabric's index anyway.
export NCCL_IB_GID_INDEX=${FABRIC_G0:-1} NCCL_PLUGIN_P2P=ib

raw1() {
  local -a f
  port=$((port + 1))
  read -r -a f <<<"$(perftest ib_write_bw 4194304 "$bw_iters" "$port" -t 8)"
  echo "${f[1]:-}"
}
rawlat() {
  local -a f
  port=$((port + 1))
  read -r -a f <<<"$(perftest ib_write_lat 8 "$lat_iters" "$port")"
  echo "${f[2]:-}"
}
raw2() { raw2_bw "$a0" "$a1" "$b0" "$b1" "$bw_iters"; }
nb() { # plugin rails sdev rdev bw|lat [env...] -> MB/s or one-way us
  local so=$1 rails=$2 key
  sdev=$3 rdev=$4
  local test=$5
  shift 5
  plugin=$so
  # The peer WARNs with a char where its format says %s when an rxe device has no PCI path:
  # its log formats are printed unformatted.
  [ "$so" = "$peer" ] && set -- "$@" --log-raw
  if [ "$test" = bw ]; then
    key=MBps
    NCCL_RAIL_RAILS=$rails nb_env "$@" --test bw --size 4194304 --iters "$bw_iters" --warmup 2 \
      --inflight 8 || return
  else
    key=median_us
    NCCL_RAIL_RAILS=$rails nb_env "$@" --test lat --lat-iters "$lat_iters" --lat-warmup 100 ||
      return
  fi
  nb_get "$scratch/nb" "$key"
}
nb_env() { # [VAR=value...] netbench-args -> nb_run with those variables exported
  local -a envs=()
  while [ $# -gt 0 ] && [[ $1 == *=* ]] && [[ $1 != --* ]]; do
    envs+=("$1")
    shift
  done
  (
    for e in "${envs[@]}"; do export "${e?}"; done
    export NCCL_RAIL_RAILS
    nb_run "$scratch/nb" "$@"
  )
}

run_one() { # test name -> its figure on stdout (empty when it failed)
  case $1 in
  raw1) raw1 ;;
  raw2) raw2 ;;
  rawlat) rawlat ;;
  ours1) nb "$ours" "$singles" "$a0" "$a1" bw ;;
  ours2) nb "$ours" "$groups" "$a0+$b0" "$a1+$b1" bw ;;
  ours2w) nb "$ours" "$groups" "$a0+$b0" "$a1+$b1" bw NCCL_RAIL_STRIPE_MIN=1073741824 ;;
  base2) nb "$base" "$groups" "$a0+$b0" "$a1+$b1" bw ;;
  baselat) nb "$base" "$singles" "$a0" "$a1" lat ;;
  ourslat0) nb "$ours" "$singles" "$a0" "$a1" lat NCCL_RAIL_EAGER_INLINE=0 ;;
  ours1q2) nb "$ours" "$singles" "$a0" "$a1" bw NCCL_IB_QPS_PER_CONNECTION=2 ;;
  ourslat) nb "$ours" "$singles" "$a0" "$a1" lat ;;
  fo1) nb "$ours" "$groups" "$a0+$b0" "$a1+$b1" lat NCCL_RAIL_FAILOVER=1 NCCL_RAIL_EAGER_MAX=0 ;;
  fo0) nb "$ours" "$groups" "$a0+$b0" "$a1+$b1" lat NCCL_RAIL_FAILOVER=0 NCCL_RAIL_EAGER_MAX=0 ;;
  peer1) nb "$peer" "" "$a0" "$a1" bw ;;
  peer2) nb "$peer" "" "$a0+$b0" "$a1+$b1" bw ;;
  peerlat) nb "$peer" "" "$a0" "$a1" lat ;;
  *)
    echo "peer_compare: unknown test $1" >&2
    return 1
    ;;
  esac
}

median() { # numbers on stdin -> median, or n/a (blank, 0.00, inf, nan skipped: perftest prints
  # such values when the guest's unsynchronised TSC misleads it)
  sort -g | awk '$1 ~ /^[0-9.]+$/ && $1 > 0 {v[n++] = $1}
    END {if (!n) print "n/a"; else if (n % 2) print v[(n - 1) / 2];
         else printf "%.2f\n", (v[n / 2 - 1] + v[n / 2]) / 2}'
}
best() { # numbers on stdin, $1 test -> the fastest round: lowest us (latency), highest MB/s
  local order=-gr
  [[ $1 == *lat* || $1 == fo? ]] && order=-g
  sort $order | awk '$1 ~ /^[0-9.]+$/ && $1 > 0 {print; found = 1; exit} END {if (!found) print "n/a"}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a > 0 && b > 0)
  printf "%.2f", a / b; else printf "n/a"}'; }

tests="raw1 ours1 raw2 ours2 ours1q2 rawlat ourslat fo1 fo0"
[ -n "$peer" ] && tests="raw1 ours1 peer1 raw2 ours2 peer2 ours1q2 rawlat ourslat peerlat fo1 fo0"
if [ -n "$only" ]; then
  for t in $only; do
    known=" raw1 raw2 rawlat ours1 ours2 ours2w base2 ours1q2 ourslat ourslat0 baselat fo1 fo0 peer1 peer2 peerlat "
    case $known in
    *" $t "*) ;;
    *)
      echo "peer_compare: unknown test $t in --tests" >&2
      exit 2
      ;;
    esac
    if [[ $t == peer* ]] && [ -z "$peer" ]; then
      echo "peer_compare: test $t needs --peer" >&2
      exit 2
    fi
    if [[ $t == base* ]] && [ ! -f "$base" ]; then
      echo "peer_compare: test $t needs --base with an existing plugin" >&2
      exit 2
    fi
  done
  tests=$only
fi
echo "peer_compare: $rounds rounds; bw 4194304 B x $bw_iters, 8 in flight; lat 8 B x $lat_iters"
echo "  ours $ours"
echo "  peer ${peer:-(none: peer columns skipped)}"
[ -n "$base" ] && echo "  base $base"
declare -A V=() CALLS=()
for ((r = 1; r <= rounds; r++)); do
  order=$tests
  ((r % 2)) || order=$(printf '%s\n' $tests | tac | tr '\n' ' ')
  line="round $r:"
  for t in $order; do
    v=$(run_one "$t")
    V[$t]+="${v:-x} "
    # netbench's latency runs also print the mean cost of each plugin call in the pinger
    if [[ $t == *lat* && $t != rawlat && -n $v ]] && c=$(grep -m1 '^netbench calls ' "$scratch/nb"); then
      for kv in ${c#netbench calls }; do CALLS[$t.${kv%%=*}]+="${kv#*=} "; done
    fi
    line+=" $t=${v:-failed}"
  done
  echo "$line"
done
declare -A M=() B=() # medians, best rounds
for t in raw1 raw2 rawlat ours1 ours2 ours2w base2 ours1q2 ourslat ourslat0 baselat fo1 fo0 peer1 peer2 peerlat; do M[$t]=n/a B[$t]=n/a; done
for t in $tests; do
  M[$t]=$(printf '%s\n' ${V[$t]} | median)
  B[$t]=$(printf '%s\n' ${V[$t]} | best "$t")
done

echo "== medians over $rounds rounds (MB/s = 2^20 B/s; latency one-way us)"
for t in $tests; do printf '  %-8s %s\n' "$t" "${M[$t]}"; done
if [ ${#CALLS[@]} -gt 0 ]; then
  echo "== plugin calls in the pinger's latency rounds (mean ns per call, median over rounds;" \
    "isend includes the post's system call, which under SoftRoCE runs the packet exchange)"
  for t in $tests; do
    line=''
    for f in isend_ns irecv_ns recv_test_done_ns recv_test_idle_ns send_test_done_ns; do
      [ -n "${CALLS[$t.$f]:-}" ] && line+=" $f=$(printf '%s\n' ${CALLS[$t.$f]} | median)"
    done
    [ -n "$line" ] && printf '  %-8s%s\n' "$t" "$line"
  done
fi
pr() { [ -n "$peer" ] && echo "$1" || echo "skipped"; }
table() { # $1 name of the array of per-test figures, $2 what they are
  local -n X=$1
  echo "== table ($2, one boot)"
  echo "| | nccl-rail | peer |"
  echo "|---|---|---|"
  echo "| 4 MiB, one rail, ÷ ib_write_bw | $(ratio "${X[ours1]}" "${X[raw1]}") | $(pr "$(ratio "${X[peer1]:-}" "${X[raw1]}")") |"
  echo "| two rails ÷ one rail | $(ratio "${X[ours2]}" "${X[ours1]}") | $(pr "$(ratio "${X[peer2]:-}" "${X[peer1]:-}")") |"
  [[ " $tests " == *" ours2w "* ]] &&
    echo "| two rails, whole messages round-robin ÷ one rail | $(ratio "${X[ours2w]}" "${X[ours1]}") (ours2w ÷ ours2 $(ratio "${X[ours2w]}" "${X[ours2]}")) | — |"
  [[ " $tests " == *" base2 "* ]] &&
    echo "| two rails, MB/s, ours ÷ --base build | $(ratio "${X[ours2]}" "${X[base2]}") | — |"
  [[ " $tests " == *" baselat "* ]] &&
    echo "| 8 B latency, ours ÷ --base build | $(ratio "${X[ourslat]}" "${X[baselat]}") (${X[baselat]} us) | — |"
  [[ " $tests " == *" ourslat0 "* ]] &&
    echo "| 8 B latency, ours ÷ ours without inline eager writes | $(ratio "${X[ourslat]}" "${X[ourslat0]}") (${X[ourslat0]} us) | — |"
  echo "| two rails, MB/s, ours ÷ peer | $(pr "$(ratio "${X[ours2]}" "${X[peer2]:-}")") | — |"
  echo "| 8 B one-way latency ÷ ib_write_lat | $(ratio "${X[ourslat]}" "${X[rawlat]}") (${X[ourslat]} us) | $(pr "$(ratio "${X[peerlat]:-}" "${X[rawlat]}") (${X[peerlat]:-} us)") |"
  echo "| raw verbs: two ib_write_bw at once ÷ one | $(ratio "${X[raw2]}" "${X[raw1]}") | (emulator ceiling) |"
  echo "| ours, one rail with 2 QPs ÷ one rail with 1 | $(ratio "${X[ours1q2]}" "${X[ours1]}") | (emulator: CPU, not links) |"
  echo "one-piece rendezvous 8 B latency, dual-rail device: failover on ${X[fo1]} us," \
    "off ${X[fo0]} us, on ÷ off $(ratio "${X[fo1]}" "${X[fo0]}")"
}
table M "ratios of the medians"
# Interference from the host only ever slows a run down, and on a shared 2-core host it comes
# and goes between runs (raw ib_write_lat has ranged 18-51 us within one boot, in two modes):
# the best round of each test is the figure least disturbed by it, as timeit's min.
echo "== best round per test (highest MB/s, lowest us)"
for t in $tests; do printf '  %-8s %s\n' "$t" "${B[$t]}"; done
table B "ratios of the best rounds"
n=$(failures)
echo "peer_compare: $n failed runs"
[ "$n" -eq 0 ]
