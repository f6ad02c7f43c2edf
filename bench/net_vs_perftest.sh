#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The net plugin next to perftest on the same devices in the same boot. Runs INSIDE the fabric VM:
#   bash test/fabric/run-in-vm.sh --timeout 1200 -- bash bench/net_vs_perftest.sh [options]
# Each round measures, in alternating order (odd rounds perftest first, even rounds netbench
# first):
#   bandwidth  ib_write_bw -s 4194304 -t 8 (8 writes outstanding) and netbench --test bw
#              (4 MiB messages, 8 in flight, irecv n=1), twice: both netbench processes polling
#              without pause, and with the receiving process sleeping 200 us when a poll found
#              nothing (perftest's server is passive: it never polls);
#   latency    ib_write_lat -s 8 (t_typical, the median of round trip / 2) and netbench --test
#              lat (8-byte ping-pong, median of round trip / 2).
# Then the medians over the rounds and the ratios plugin/perftest: of the medians, and the median
# of the per-round ratios. Figures only: nothing about speed is asserted. Exit status 1 when a
# netbench run failed its byte verification or a tool failed to run at all.
#
# Options: --rounds N (5)  --bw-iters N (16)  --lat-iters N (1000)  --build DIR (build; also
#          $RAIL_BUILD_DIR)  --plugin SO (DIR/libnccl-net-rail.so, any NCCL net plugin works)
#          --send-dev / --recv-dev (FABRIC_DEV0 / FABRIC_DEV1)
set -uo pipefail
rounds=5 bw_iters=16 lat_iters=1000
build=${RAIL_BUILD_DIR:-build} plugin=''
sdev=${FABRIC_DEV0:-rxe0} rdev=${FABRIC_DEV1:-rxe1}
# One plugin device per rxe port unless the caller groups them (multi-rail runs do).
export NCCL_RAIL_RAILS=${NCCL_RAIL_RAILS-${FABRIC_DEV0:-rxe0},${FABRIC_DEV1:-rxe1},${FABRIC_DEV2:-rxe2},${FABRIC_DEV3:-rxe3}}
while [ $# -gt 0 ]; do
  case $1 in
  --rounds) rounds=$2 ;;
  --bw-iters) bw_iters=$2 ;;
  --lat-iters) lat_iters=$2 ;;
  --build) build=$2 ;;
  --plugin) plugin=$2 ;;
  --send-dev) sdev=$2 ;;
  --recv-dev) rdev=$2 ;;
  *)
    sed -n '2,19p' "$0"
    exit 2
    ;;
  esac
  shift 2 || exit 2
done
# shellcheck source=bench/perftest_lib.sh
. "$(dirname "$0")/perftest_lib.sh"
lib_setup net_vs_perftest
port=18700

ib_bw() { # $1 port -> BW average
  local -a f
  read -r -a f <<<"$(perftest ib_write_bw 4194304 "$bw_iters" "$1" -t 8)"
  echo "${f[1]:-}"
}
ib_lat() { # $1 port -> t_typical
  local -a f
  read -r -a f <<<"$(perftest ib_write_lat 8 "$lat_iters" "$1")"
  echo "${f[2]:-}"
}
nb_bw() { nb_run "$scratch/nb" --test bw --iters "$bw_iters" --warmup 2 --inflight 8 "$@" &&
  nb_get "$scratch/nb" MBps; }
nb_lat() { nb_run "$scratch/nb" --test lat --lat-iters "$lat_iters" --lat-warmup 100 &&
  nb_get "$scratch/nb" median_us; }

median() { # positive numbers on stdin -> their median, or "n/a" (blank, 0.00, inf, nan skipped:
  # perftest prints such values when the guest's unsynchronised TSC misleads it)
  sort -g | awk '$1 ~ /^[0-9.]+$/ && $1 > 0 {v[n++] = $1}
    END {if (!n) print "n/a"; else if (n % 2) print v[(n - 1) / 2];
         else printf "%.2f\n", (v[n / 2 - 1] + v[n / 2]) / 2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a > 0 && b > 0)
  printf "%.2f", a / b; else printf "n/a"}'; }

echo "net_vs_perftest: $rounds rounds, $sdev -> $rdev, plugin $plugin"
echo "  bandwidth: 4194304 B x $bw_iters, 8 outstanding; latency: 8 B x $lat_iters round trips"
declare -a IBW NBW NBS ILAT NLAT
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then
    ibw=$(ib_bw $((port + 2 * r))) nbw=$(nb_bw) nbs=$(nb_bw --recv-sleep 200)
    ilat=$(ib_lat $((port + 2 * r + 1))) nlat=$(nb_lat)
  else
    nbs=$(nb_bw --recv-sleep 200) nbw=$(nb_bw) ibw=$(ib_bw $((port + 2 * r)))
    nlat=$(nb_lat) ilat=$(ib_lat $((port + 2 * r + 1)))
  fi
  IBW+=("$ibw") NBW+=("$nbw") NBS+=("$nbs") ILAT+=("$ilat") NLAT+=("$nlat")
  printf 'round %d: MB/s ib_write_bw %s, netbench %s, netbench recv-sleep %s | one-way us ib_write_lat %s, netbench %s\n' \
    "$r" "${ibw:-?}" "${nbw:-?}" "${nbs:-?}" "${ilat:-?}" "${nlat:-?}"
done

pair_ratios() { # $1 name of the plugin array, $2 name of the perftest array
  local -n a=$1 b=$2
  local i
  for i in "${!a[@]}"; do ratio "${a[$i]}" "${b[$i]}" && echo; done | median
}
m_ibw=$(printf '%s\n' "${IBW[@]}" | median) m_nbw=$(printf '%s\n' "${NBW[@]}" | median)
m_nbs=$(printf '%s\n' "${NBS[@]}" | median)
m_ilat=$(printf '%s\n' "${ILAT[@]}" | median) m_nlat=$(printf '%s\n' "${NLAT[@]}" | median)
echo "medians over $rounds rounds (MB/s = 2^20 B/s, as perftest prints):"
printf '  bandwidth  ib_write_bw %s MB/s | plugin %s MB/s: %sx (per-round median %sx)' \
  "$m_ibw" "$m_nbw" "$(ratio "$m_nbw" "$m_ibw")" "$(pair_ratios NBW IBW)"
printf ' | plugin, receiver sleeping when idle %s MB/s: %sx (per-round %sx)\n' \
  "$m_nbs" "$(ratio "$m_nbs" "$m_ibw")" "$(pair_ratios NBS IBW)"
printf '  latency    ib_write_lat %s us | plugin %s us: %sx (per-round median %sx)\n' \
  "$m_ilat" "$m_nlat" "$(ratio "$m_nlat" "$m_ilat")" "$(pair_ratios NLAT ILAT)"
if [ "$(failures)" != 0 ]; then
  echo "net_vs_perftest: $(failures) run(s) failed (see above)"
  exit 1
fi
