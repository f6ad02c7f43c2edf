#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Device check (a GPU node with PyTorch and its NCCL; not part of CI): loads the plugins of
# BUILD_DIR into real libnccl, two processes on GPU 0 that NCCL takes for two hosts
# (test/gpu/nccl_two_hosts.py), three ways: both plugins, the tuner alone, neither; and NCCL's
# data through the net plugin on the shm verbs provider against NCCL's Socket transport
# (test/gpu/nccl_shm.py: six collectives 8 B - 256 MiB checked exact, bus bandwidth, a rail's
# cable pulled mid-run); the profiler plugin's files calibrated and loaded by a second run. Each
# rank's NCCL log goes to $OUT; the lines that name the plugins are printed.
# usage: OUT=dir bash test/gpu/run.sh [BUILD_DIR] [LIBDIR: extra shared libraries the plugins need]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
libs=${2:-}
out=${OUT:-$(mktemp -d)}
export OUT=$out
nvidia-smi -L || true
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
# Only the libraries this node lacks come from LIBDIR (the system's own stay first).
extra=$(mktemp -d)
if [ -n "$libs" ]; then
  for f in "$libs"/*.so*; do
    n=$(basename "$f")
    ldconfig -p | grep -q " $n " || ln -s "$f" "$extra/$n"
  done
  echo "libraries taken from $libs: $(find "$extra" -mindepth 1 -printf '%f ')"
fi
export LD_LIBRARY_PATH=$build:$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for so in libnccl-net-rail.so libnccl-tuner-rail.so; do
  echo "== ldd $so (missing libraries only)"
  ldd "$build/$so" | grep 'not found' || echo "  all found"
done
rc=0
run() { # label env...
  local label=$1
  shift
  echo "== $label"
  env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING,ENV NCCL_DEBUG_FILE="$out/$label.%p.log" \
    "$@" timeout "${RAIL_GPU_TIMEOUT:-150}" python3 "$root/test/gpu/${RAIL_GPU_SCRIPT:-nccl_two_hosts.py}" "$label" || {
    echo "$label: FAIL"
    rc=1
  }
  grep -h -i -E 'rail|plugin' "$out/$label".*.log 2>/dev/null | sed 's/^[^ ]* [^ ]* //' | sort | uniq -c |
    sort -rn | head -25
  echo "-- NCCL's choices (one rank's log: count, collective, size, algorithm, protocol)"
  for f in "$out/$label".*.log; do
    grep -h -o -E '[A-Za-z]+: [0-9]+ Bytes -> Algo [A-Z_]+ proto [A-Z0-9_]+' "$f" | sort | uniq -c |
      sort -k2,2 -k3,3n | head -30
    break
  done
}
if [ -e /sys/class/infiniband/rxe0 ] && [ -e /sys/class/infiniband/rxe1 ]; then
  # rank 0 on rxe0, rank 1 on rxe1 (test/gpu/soft-roce.sh): NCCL's traffic through the plugin
  run rxe NCCL_TUNER_PLUGIN=rail NCCL_NET_PLUGIN=rail RAIL_GPU_RANK_HCA=rxe0,rxe1 \
    NCCL_SOCKET_IFNAME=lo
fi
# NCCL's data through the net plugin on the shm verbs provider (no RDMA needed): rank 0 on
# shm0+shm2, rank 1 on shm1+shm3, rail A's cable pulled for 2 s inside the 256 MiB all_reduce loop;
# then the same collectives over NCCL's Socket transport, for the bus bandwidth side by side.
fab=gpu-$$
RAIL_GPU_SCRIPT=nccl_shm.py RAIL_GPU_TIMEOUT=900 run shm NCCL_NET_PLUGIN=rail \
  NCCL_RAIL_VERBS_PROVIDER=shm NCCL_RAIL_SHM_FABRIC=$fab RAIL_GPU_RANK_RAILS='shm0+shm2;shm1+shm3' \
  RAIL_GPU_PULL_CABLE=1 NCCL_DEBUG_SUBSYS=INIT,NET,ENV
rm -f "/dev/shm/nccl-rail-shm-$(id -u)-$fab"
echo "-- which transport carried the shm run (NCCL's channel lines, one rank's log)"
for f in "$out"/shm.*.log; do
  grep -h -o -E 'via NET/[A-Za-z]+(/[0-9]+)?' "$f" | sort | uniq -c
  if ! grep -q 'via NET/RAIL' "$f" || grep -q 'via NET/Socket' "$f"; then
    echo "shm: NCCL's connections did not all go through NET/RAIL: FAIL"
    rc=1
  fi
  grep -h -E 'verbs provider shm|failed: its port went down|rejoined' "$f" | sed 's/^[^ ]* [^ ]* //' |
    sort | uniq -c
  break
done
RAIL_GPU_SCRIPT=nccl_shm.py RAIL_GPU_TIMEOUT=900 run socket NCCL_NET=Socket
echo "-- bus bandwidth: the plugin on the shm provider (shm) against NCCL's Socket transport"
paste -d '\n' "$out/shm.txt" "$out/socket.txt" 2>/dev/null || echo "(a table is missing)"
run both NCCL_TUNER_PLUGIN=rail NCCL_NET_PLUGIN=rail
# Issue 21: the profiler plugin on (the net plugin's library), its files turned into a
# calibration by `nccl-rail calibrate`, and a second run that loads it (the tuner's INFO line
# "calibration FILE ..."). The dgx-h100 profile makes the tuner choose on this node.
prof=$out/prof
mkdir -p "$prof"
run profiled NCCL_TUNER_PLUGIN=rail NCCL_NET_PLUGIN=rail NCCL_PROFILER_PLUGIN=rail \
  NCCL_RAIL_PROFILE_DIR="$prof" NCCL_RAIL_TOPO_PROFILE=dgx-h100 NCCL_RAIL_EXPLORE=0.05 \
  NCCL_DEBUG_SUBSYS=INIT,NET,TUNING,ENV,PROFILE
echo "-- profiler files: $(find "$prof" -name '*.prof' | wc -l)"
head -n 12 "$(find "$prof" -name '*.prof' | head -1)" 2>/dev/null
if "$build/tools/nccl-rail" calibrate -o "$out/job.cal" "$prof"; then
  grep -c -v '^#' "$out/job.cal" | sed 's/^/-- calibration rows (with the header lines): /'
  run calibrated NCCL_TUNER_PLUGIN=rail NCCL_NET_PLUGIN=rail NCCL_RAIL_TOPO_PROFILE=dgx-h100 \
    NCCL_RAIL_CALIBRATION_FILE="$out/job.cal"
  if ! grep -h -E "calibration $out/job.cal" "$out"/calibrated.*.log | head -2 | grep -q .; then
    echo "calibrated: the tuner did not say it loaded $out/job.cal: FAIL"
    rc=1
  fi
  "$build/tools/nccl-rail" explain --profile dgx-h100 --nranks 2 --nnodes 2 \
    --calibration "$out/job.cal" --coll AllReduce | head -30
else
  echo "calibrate on the profiler's files: FAIL"
  rc=1
fi
# A node of one GPU and no NIC leaves the tuner unsure (it abstains); a built-in profile makes it
# choose, and NCCL must run what it chose: the results are checked the same way.
run profile NCCL_TUNER_PLUGIN=rail NCCL_RAIL_TOPO_PROFILE=dgx-h100
run tuner NCCL_TUNER_PLUGIN=rail
run neither
exit $rc
