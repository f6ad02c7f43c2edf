#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Device check (a GPU node with PyTorch and its NCCL; not part of CI): loads the plugins of
# BUILD_DIR into real libnccl, two processes on GPU 0 that NCCL takes for two hosts
# (test/gpu/nccl_two_hosts.py), three ways: both plugins, the tuner alone, neither. Each rank's
# NCCL log goes to $OUT; the lines that name the plugins are printed.
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
    "$@" timeout 150 python3 "$root/test/gpu/nccl_two_hosts.py" "$label" || {
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
run both NCCL_TUNER_PLUGIN=rail NCCL_NET_PLUGIN=rail
# A node of one GPU and no NIC leaves the tuner unsure (it abstains); a built-in profile makes it
# choose, and NCCL must run what it chose: the results are checked the same way.
run profile NCCL_TUNER_PLUGIN=rail NCCL_RAIL_TOPO_PROFILE=dgx-h100
run tuner NCCL_TUNER_PLUGIN=rail
run neither
exit $rc
