#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Both plugins inside real libnccl on one GPU: two processes that NCCL takes for two nodes.

Each rank sets its own NCCL_HOSTID, so NCCL sees two hosts and connects the ranks through the
net transport; both use GPU 0. Per collective and size the result is checked exactly (integer
valued floats) and the time per call printed. NCCL_TUNER_PLUGIN / NCCL_NET_PLUGIN and the rest
come from the environment (test/gpu/run.sh sets them); NCCL_DEBUG_FILE gets one log per rank.
usage: nccl_two_hosts.py LABEL  (needs PyTorch with CUDA and NCCL; not part of CI)
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [8, 1024, 65536, 1 << 20, 16 << 20, 128 << 20]  # bytes
ITERS = 5


def check(name, got, want):
    if not torch.equal(got, want):
        bad = (got != want).nonzero()[0].item()
        raise SystemExit(f"{name}: element {bad} is {got[bad].item()}, expected {want[bad].item()}")


def rank_main(rank, label, port, out):
    os.environ["NCCL_HOSTID"] = f"rail-gpu-host-{rank}"
    hcas = os.environ.get("RAIL_GPU_RANK_HCA")  # "devA,devB": rank r uses the r-th only
    if hcas:
        os.environ["NCCL_IB_HCA"] = "=" + hcas.split(",")[rank]
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2, device_id=torch.device("cuda", 0))
    rows = []
    for size in SIZES:
        n = max(size // 4, 1)
        base = torch.arange(n, device="cuda", dtype=torch.float32).remainder_(1000)
        x = base * (rank + 1)
        want = base * 3
        t = x.clone()
        dist.all_reduce(t)
        check(f"all_reduce {size} B", t, want)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(ITERS):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        ar = (time.perf_counter() - t0) / ITERS * 1e6
        g = torch.empty(2 * n, device="cuda")
        dist.all_gather_into_tensor(g, base * (rank + 1))
        check(f"all_gather {size} B", g, torch.cat([base, base * 2]))
        b = base.clone() if rank == 0 else torch.zeros_like(base)
        dist.broadcast(b, 0)
        check(f"broadcast {size} B", b, base)
        rows.append(f"{label} rank {rank} {size} B: all_reduce {ar:.1f} us/call; "
                    "all_gather, broadcast exact")
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        with open(os.path.join(out, f"{label}.txt"), "w") as f:
            f.write("\n".join(rows) + "\n")
    print("\n".join(rows), flush=True)


if __name__ == "__main__":
    label = sys.argv[1] if len(sys.argv) > 1 else "run"
    out = os.environ.get("OUT", "/tmp")
    port = 29500 + (os.getpid() % 1000)
    mp.spawn(rank_main, args=(label, port, out), nprocs=2, join=True)
    print(f"{label}: PASS", flush=True)
