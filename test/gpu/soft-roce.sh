#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU node without RDMA hardware (device check only, as root): two SoftRoCE devices,
# rxe0 and rxe1, on the two ends of a veth pair (10.77.0.1/24, 10.77.0.2/24), so that
# test/gpu/run.sh can move NCCL's traffic through the net plugin. TOOLDIR may hold the rxe
# provider (librxe-rdmav34.so, rxe.driver) and an `rdma` binary with its libraries, used where
# the node has none. Prints why and exits 1 when the kernel has no rdma_rxe.
# usage: bash test/gpu/soft-roce.sh [TOOLDIR]
set -uo pipefail
tools=${1:-}
modprobe rdma_rxe 2>&1 || true
if [ ! -d /sys/module/rdma_rxe ]; then
  echo "soft-roce: this kernel ($(uname -r)) has no rdma_rxe module"
  exit 1
fi
rdma_cmd=rdma
if ! command -v rdma >/dev/null && [ -x "$tools/rdma" ]; then
  rdma_cmd="env LD_LIBRARY_PATH=$tools $tools/rdma"
fi
if [ -n "$tools" ] && [ -f "$tools/librxe-rdmav34.so" ]; then
  for d in /usr/lib/x86_64-linux-gnu/libibverbs /usr/lib64/libibverbs; do
    mkdir -p "$d"
    if [ ! -f "$d/librxe-rdmav34.so" ]; then cp "$tools/librxe-rdmav34.so" "$d/"; fi
  done
  mkdir -p /etc/libibverbs.d
  [ -f /etc/libibverbs.d/rxe.driver ] || cp "$tools/rxe.driver" /etc/libibverbs.d/
fi
ip link add rva type veth peer name rvb || exit 1
ip addr add 10.77.0.1/24 dev rva && ip addr add 10.77.0.2/24 dev rvb || exit 1
ip link set rva up && ip link set rvb up || exit 1
$rdma_cmd link add rxe0 type rxe netdev rva || exit 1
$rdma_cmd link add rxe1 type rxe netdev rvb || exit 1
sleep 1
ls /sys/class/infiniband
