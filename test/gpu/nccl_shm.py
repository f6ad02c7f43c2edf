#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Real libnccl moving its data through the net plugin on the shm verbs provider (issue 20).

Two processes on GPU 0 with distinct NCCL_HOSTID (NCCL takes them for two nodes and connects
them through its net transport). With the plugin (NCCL_NET_PLUGIN=rail,
NCCL_RAIL_VERBS_PROVIDER=shm) rank r uses the r-th rail group of RAIL_GPU_RANK_RAILS
("shm0+shm2;shm1+shm3": two rails each, cabled shm0-shm1 and shm2-shm3); with NCCL_NET=Socket the
same collectives run over NCCL's Socket transport for comparison.

Per collective (all_reduce, all_gather, reduce_scatter, broadcast, send/recv, all_to_all) and size
(8 B .. 256 MiB) the result is checked element-exact (integer-valued floats) and the bus bandwidth
printed (nccl-tests' definitions). With RAIL_GPU_PULL_CABLE=1 rank 0 pulls rail A's cable (the
shm fabric's port shm0) for 2 s in the middle of the 256 MiB all_reduce loop, and every result
must still be exact. Writes LABEL.txt (the table) into $OUT.
usage: nccl_shm.py LABEL   (needs PyTorch with CUDA and NCCL; not part of CI)
"""
import mmap
import os
import stat
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20]  # bytes per rank's buffer
ITERS = {8: 20, 1 << 10: 20, 64 << 10: 20, 1 << 20: 10, 16 << 20: 5, 256 << 20: 3}
PORT_OFF = 16  # struct rail_shm_fabric: magic u64, version u32, size u32, then the ports
PORT_SIZE = 16  # struct rail_shm_port: down u32, drop u32, tx_bytes u64


def fabric_port_set_down(port, down):
    """Pulls (or plugs back) the cable end of shmN in this run's fabric file."""
    name = os.environ.get("NCCL_RAIL_SHM_FABRIC", "default")
    base = f"/dev/shm/nccl-rail-shm-{os.geteuid()}-{name}"
    # The provider skips a file of another user at the name for NAME+1..+7 (docs/net-plugin.md).
    for path in [base] + [f"{base}+{k}" for k in range(1, 8)]:
        st = os.lstat(path) if os.path.lexists(path) else None
        if st and stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
            break
    else:
        raise SystemExit(f"no fabric file of this user at {base} (or +1..+7)")
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        off = PORT_OFF + PORT_SIZE * port
        m[off:off + 4] = (1 if down else 0).to_bytes(4, "little")
        tx = int.from_bytes(m[off + 8:off + 16], "little")
        m.close()
    return tx


def check(name, got, want):
    if not torch.equal(got, want):
        bad = (got != want).nonzero()[0].item()
        raise SystemExit(f"{name}: element {bad} is {got[bad].item()}, expected {want[bad].item()}")


def timed(fn, iters):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters


def rank_main(rank, label, port, out):
    os.environ["NCCL_HOSTID"] = f"rail-gpu-host-{rank}"
    groups = os.environ.get("RAIL_GPU_RANK_RAILS")  # "A;B": rank r uses the r-th group only
    if groups:
        os.environ["NCCL_RAIL_RAILS"] = groups.split(";")[rank]
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2, device_id=torch.device("cuda", 0))
    pull = os.environ.get("RAIL_GPU_PULL_CABLE") == "1" and rank == 0
    other = 1 - rank
    rows = []
    for size in SIZES:
        n = max(size // 4, 2)
        n -= n % 2
        it = ITERS[size]
        base = torch.arange(n, device="cuda", dtype=torch.float32).remainder_(1000)
        x = base * (rank + 1)

        t = x.clone()
        dist.all_reduce(t)
        check(f"all_reduce {size} B", t, base * 3)
        puller = None
        if pull and size == SIZES[-1]:
            def cut():
                time.sleep(0.5)
                tx = fabric_port_set_down(0, True)
                print(f"{label}: cable of rail A (shm0) pulled (shm0 had sent {tx} B)", flush=True)
                time.sleep(2.0)
                fabric_port_set_down(0, False)
                print(f"{label}: cable of rail A plugged back", flush=True)
            puller = threading.Thread(target=cut)
            puller.start()
        y = x.clone()
        ar = timed(lambda: dist.all_reduce(y), it if not puller else 12)
        if puller:
            puller.join()
        t = x.clone()
        dist.all_reduce(t)
        check(f"all_reduce {size} B (after the loop)", t, base * 3)

        g = torch.empty(2 * n, device="cuda")
        dist.all_gather_into_tensor(g, x)
        check(f"all_gather {size} B", g, torch.cat([base, base * 2]))
        ag = timed(lambda: dist.all_gather_into_tensor(g, x), it)

        rs = torch.empty(n // 2, device="cuda")
        dist.reduce_scatter_tensor(rs, x)
        half = base[rank * (n // 2):(rank + 1) * (n // 2)]
        check(f"reduce_scatter {size} B", rs, half * 3)
        rst = timed(lambda: dist.reduce_scatter_tensor(rs, x), it)

        b = base.clone() if rank == 0 else torch.zeros_like(base)
        dist.broadcast(b, 0)
        check(f"broadcast {size} B", b, base)
        bc = timed(lambda: dist.broadcast(b, 0), it)

        r = torch.zeros_like(base)
        def sendrecv():
            ops = [dist.P2POp(dist.isend, x, other), dist.P2POp(dist.irecv, r, other)]
            for w in dist.batch_isend_irecv(ops):
                w.wait()
        sendrecv()
        check(f"send/recv {size} B", r, base * (other + 1))
        sr = timed(sendrecv, it)

        a2a_in = torch.cat([base[: n // 2] * (rank + 1) + 10 * k for k in range(2)])
        a2a_out = torch.empty_like(a2a_in)
        dist.all_to_all_single(a2a_out, a2a_in)
        want = torch.cat([base[: n // 2] * (k + 1) + 10 * rank for k in range(2)])
        check(f"all_to_all {size} B", a2a_out, want)
        aa = timed(lambda: dist.all_to_all_single(a2a_out, a2a_in), it)

        # nccl-tests' bus bandwidth (2 ranks): factors 2(n-1)/n = 1, (n-1)/n = 0.5, 1
        gbs = lambda nbytes, s, f: nbytes * f / s / 1e9
        rows.append(f"{label} {size:>10} B: busbw GB/s all_reduce {gbs(size, ar, 1):7.3f} "
                    f"all_gather {gbs(2 * size, ag, 0.5):7.3f} "
                    f"reduce_scatter {gbs(size, rst, 0.5):7.3f} broadcast {gbs(size, bc, 1):7.3f} "
                    f"send/recv {gbs(size, sr, 1):7.3f} all_to_all {gbs(size, aa, 0.5):7.3f}; "
                    "every result exact")
        if rank == 0:
            print(rows[-1], flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        with open(os.path.join(out, f"{label}.txt"), "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    label = sys.argv[1] if len(sys.argv) > 1 else "shm"
    out = os.environ.get("OUT", "/tmp")
    port = 29500 + (os.getpid() % 1000)
    mp.spawn(rank_main, args=(label, port, out), nprocs=2, join=True)
    print(f"{label}: PASS", flush=True)
