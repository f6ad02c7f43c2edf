#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Multi-rail bandwidth in the fabric VM, one boot. Runs INSIDE the VM:
#   bash test/fabric/run-in-vm.sh --timeout 1500 -- bash bench/multirail.sh [options]
# Phase 1, both rails at full speed, each round in alternating order:
#   single    netbench bw on one rail (rxe0 -> rxe1);
#   adaptive  netbench bw on the dual-rail devices (rxe0+rxe2 -> rxe1+rxe3), policy adaptive;
#   equal     the same with NCCL_RAIL_STRIPE_POLICY=equal;
#   raw2      two ib_write_bw streams at once, one per rail: the emulator's ceiling.
# Phase 2, rail B shaped to half the single-rail median (tc tbf on veth2): adaptive and equal
# against the sum of the capacities (single + single/2).
# netbench: 4 MiB messages, 8 in flight, --verify-all. Medians over the rounds; ratios printed.
# Figures only. Exit status 1 when a run failed (verification or a tool failing).
#
# Options: --rounds N (3)  --iters N (16)  --build DIR (build; also $RAIL_BUILD_DIR)
set -uo pipefail
rounds=3 iters=16
build=${RAIL_BUILD_DIR:-build} plugin=''
while [ $# -gt 0 ]; do
  case $1 in
  --rounds) rounds=$2 ;;
  --iters) iters=$2 ;;
  --build) build=$2 ;;
  *)
    sed -n '2,15p' "$0"
    exit 2
    ;;
  esac
  shift 2 || exit 2
done
dev_a0=${FABRIC_DEV0:-rxe0} dev_a1=${FABRIC_DEV1:-rxe1}
dev_b0=${FABRIC_DEV2:-rxe2} dev_b1=${FABRIC_DEV3:-rxe3}
if_b=${FABRIC_IF2:-veth2}
sdev=$dev_a0 rdev=$dev_a1
# shellcheck source=bench/perftest_lib.sh
. "$(dirname "$0")/perftest_lib.sh"
lib_setup multirail
singles="$dev_a0,$dev_a1,$dev_b0,$dev_b1"
groups="$dev_a0+$dev_b0,$dev_a1+$dev_b1"
port=18900

nb_bw() { # rails policy sdev rdev -> MB/s
  export NCCL_RAIL_RAILS=$1 NCCL_RAIL_STRIPE_POLICY=$2
  sdev=$3 rdev=$4
  nb_run "$scratch/nb" --test bw --size 4194304 --iters "$iters" --warmup 2 --inflight 8 \
    --verify-all && nb_get "$scratch/nb" MBps
}
single() { nb_bw "$singles" adaptive "$dev_a0" "$dev_a1"; }
dual() { nb_bw "$groups" "$1" "$dev_a0+$dev_b0" "$dev_a1+$dev_b1"; }

raw2() { raw2_bw "$dev_a0" "$dev_a1" "$dev_b0" "$dev_b1" "$iters"; }

median() { printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 }
  END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
        else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "nan" }'; }

declare -a S=() A=() E=() R=() SA=() SE=()
echo "multirail: $rounds rounds, netbench 4 MiB x $iters, 8 in flight, --verify-all"
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order="single adaptive equal raw2"; else order="raw2 equal adaptive single"; fi
  for t in $order; do
    case $t in
    single) v=$(single) && S+=("$v") ;;
    adaptive) v=$(dual adaptive) && A+=("$v") ;;
    equal) v=$(dual equal) && E+=("$v") ;;
    raw2) v=$(raw2) && R+=("$v") ;;
    esac
    echo "round $r: $t ${v:-failed} MB/s"
  done
done
ms=$(median "${S[@]}") ma=$(median "${A[@]}") me=$(median "${E[@]}") mr=$(median "${R[@]}")
echo "== both rails at full speed (medians, MB/s)"
echo "single-rail $ms  dual adaptive $ma  dual equal $me  raw ib_write_bw x2 $mr"
echo "ratios: adaptive/single $(ratio "$ma" "$ms")  equal/single $(ratio "$me" "$ms")" \
  " adaptive/raw2 $(ratio "$ma" "$mr")  equal/raw2 $(ratio "$me" "$mr")"

# Phase 2: rail B at half the single-rail rate (MB/s = 2^20 B/s -> kbit/s).
kbit=$(awk -v m="$ms" 'BEGIN { printf "%d", m * 1048576 * 8 / 1000 / 2 }')
if [ "${kbit:-0}" -le 0 ]; then
  echo "no single-rail figure: phase 2 skipped"
  failed phase2
else
  # The guest's modprobe cannot see the VM kernel's modules: load sch_tbf from the fabric dir.
  if ! grep -q '^sch_tbf ' /proc/modules; then
    for ko in "${FABRIC_DIR:-$(dirname "$0")/../build/fabric}"/kernel/lib/modules/*/kernel/net/sched/sch_tbf.ko; do
      [ -f "$ko" ] && insmod "$ko" 2>/dev/null
    done
  fi
  tc qdisc add dev "$if_b" root tbf rate "${kbit}kbit" burst 512kb latency 100ms || failed tc
  echo "== rail B ($if_b) shaped to ${kbit} kbit/s (half of single-rail)"
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then order="adaptive equal"; else order="equal adaptive"; fi
    for t in $order; do
      case $t in
      adaptive) v=$(dual adaptive) && SA+=("$v") ;;
      equal) v=$(dual equal) && SE+=("$v") ;;
      esac
      echo "round $r (shaped): $t ${v:-failed} MB/s"
    done
  done
  tc qdisc del dev "$if_b" root || true
  cap=$(awk -v m="$ms" 'BEGIN { printf "%.2f", m * 1.5 }')
  msa=$(median "${SA[@]}") mse=$(median "${SE[@]}")
  echo "shaped medians: adaptive $msa  equal $mse  sum of capacities $cap (MB/s)"
  echo "ratios: adaptive/capacity $(ratio "$msa" "$cap")  equal/capacity $(ratio "$mse" "$cap")" \
    " adaptive/equal $(ratio "$msa" "$mse")"
fi
n=$(failures)
echo "multirail: $n failed runs"
[ "$n" -eq 0 ]
