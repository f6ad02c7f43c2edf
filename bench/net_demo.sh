#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's demo: real data through libnccl-net-rail.so on rail A of the SoftRoCE fabric,
# every byte checked, next to perftest on the same devices. Runs INSIDE the fabric VM (about
# 20 s of VM time on a quiet machine):
#   bash test/fabric/run-in-vm.sh -- bash bench/net_demo.sh [--build DIR]
# One round each: netbench bandwidth (10 x 4 MiB, 8 in flight, every byte compared), the same
# over both rails (one device of two ports per side, striped), netbench
# 8-byte ping-pong (500 round trips), ib_write_bw -s 4194304 -t 8 and ib_write_lat -s 8.
# Prints one block; exit status 1 when a transfer failed or did not verify. Figures only.
set -uo pipefail
build=${RAIL_BUILD_DIR:-build} plugin=''
sdev=${FABRIC_DEV0:-rxe0} rdev=${FABRIC_DEV1:-rxe1}
# One plugin device per rxe port unless the caller groups them (multi-rail runs do).
export NCCL_RAIL_RAILS=${NCCL_RAIL_RAILS-${FABRIC_DEV0:-rxe0},${FABRIC_DEV1:-rxe1},${FABRIC_DEV2:-rxe2},${FABRIC_DEV3:-rxe3}}
case ${1:-} in
--build) build=${2:?--build DIR} ;;
'') ;;
*)
  sed -n '2,8p' "$0"
  exit 2
  ;;
esac
# shellcheck source=bench/perftest_lib.sh
. "$(dirname "$0")/perftest_lib.sh"
lib_setup net_demo

ok=1
nb_run "$scratch/bw" --test bw --iters 8 --warmup 2 --inflight 8 --verify-all || ok=0
nb_run "$scratch/lat" --test lat --lat-iters 500 --lat-warmup 50 || ok=0
# The same bandwidth run over both rails: one plugin device per side made of two ports.
dual_s=${FABRIC_DEV0:-rxe0}+${FABRIC_DEV2:-rxe2} dual_r=${FABRIC_DEV1:-rxe1}+${FABRIC_DEV3:-rxe3}
(
  export NCCL_RAIL_RAILS=$dual_s,$dual_r
  sdev=$dual_s rdev=$dual_r
  nb_run "$scratch/bw2" --test bw --iters 8 --warmup 2 --inflight 8 --verify-all
) || ok=0
read -r -a ibw <<<"$(perftest ib_write_bw 4194304 8 18690 -t 8)"
read -r -a ilat <<<"$(perftest ib_write_lat 8 500 18691)"

bw_bytes=$(nb_get "$scratch/bw" bytes) bw_msgs=$(nb_get "$scratch/bw" msgs)
lat_msgs=$(nb_get "$scratch/lat" msgs) mbps=$(nb_get "$scratch/bw" MBps)
lat=$(nb_get "$scratch/lat" median_us) abi=''
mbps2=$(nb_get "$scratch/bw2" MBps) bw2_bytes=$(nb_get "$scratch/bw2" bytes)
while read -r line; do
  case $line in "netbench plugin="*) abi=${line#* abi=} abi=${abi%% *} ;; esac
done <"$scratch/bw"
x() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.2fx", a / b; else print "n/a"}'; }
echo "== nccl-rail net plugin demo: $sdev -> $rdev (rail A, SoftRoCE in a TCG VM)"
echo "   plugin         ${plugin##*/} through ncclNetPlugin_${abi:-?}, host memory"
echo "   bytes moved    ${bw_bytes:-0} in ${bw_msgs:-0} x 4 MiB + $((${lat_msgs:-0} * 8)) in ${lat_msgs:-0} x 8 B + ${bw2_bytes:-0} over two rails"
if ((ok)); then
  echo "   verified       OK (every byte of every message)"
else
  echo "   verified       FAILED (see above)"
fi
echo "   bandwidth      ${mbps:-n/a} MB/s    ib_write_bw ${ibw[1]:-n/a} MB/s    ($(x "${mbps:-0}" "${ibw[1]:-0}"))"
echo "   two rails      ${mbps2:-n/a} MB/s    $dual_s -> $dual_r, striped   ($(x "${mbps2:-0}" "${mbps:-0}") of one rail)"
echo "   8 B latency    ${lat:-n/a} us       ib_write_lat ${ilat[2]:-n/a} us   ($(x "${lat:-0}" "${ilat[2]:-0}")) one-way, median"
echo "   (MB/s = 2^20 B/s as perftest prints; one round each, SoftRoCE under emulation is noisy)"
((ok)) && [ "$(failures)" = 0 ]
