/* SPDX-License-Identifier: Apache-2.0 */
/* The one table of every knob the project reads: X(id, name, type, default, min, max, choices,
 * doc). Types: INT (range min..max), BOOL (0/1), STRING (free text), ENUM (one of choices,
 * '|'-separated). The configuration reference docs/configuration.md is generated from this table
 * (`nccl-rail params --markdown`) and a test fails when the two differ.
 * NCCL_* knobs that are NCCL's own are listed with NCCL's default: the plugins honour them. */
/* clang-format off */

/* ---- topology ---- */
RAIL_PARAM(TOPO_FILE, "NCCL_TOPO_FILE", STRING, "", 0, 0, NULL,
           "NCCL topology XML; when set the tuner reads the node's topology from it (NCCL's own variable)")
RAIL_PARAM(TOPO_PROFILE, "NCCL_RAIL_TOPO_PROFILE", ENUM, "", 0, 0,
           "dgx-a100|dgx-h100|hgx-b200|aws-p5|azure-ndv5",
           "Use a built-in topology profile instead of discovering the node (overrides NCCL_TOPO_FILE)")
RAIL_PARAM(SYSFS_ROOT, "NCCL_RAIL_SYSFS_ROOT", STRING, "/", 0, 0, NULL,
           "Root prefix for every /sys and /proc read (tests and offline analysis)")
RAIL_PARAM(HWLOC_XMLFILE, "HWLOC_XMLFILE", STRING, "", 0, 0, NULL,
           "hwloc XML used instead of the live node by hwloc discovery (hwloc's own variable)")

/* ---- tuner ---- */
RAIL_PARAM(TUNER_ENABLE, "NCCL_RAIL_TUNER_ENABLE", BOOL, "1", 0, 1, NULL,
           "0 makes the tuner leave every NCCL cost table untouched (NCCL's own choice wins)")
RAIL_PARAM(TUNER_CONSTANTS, "NCCL_RAIL_TUNER_CONSTANTS", BOOL, "1", 0, 1, NULL,
           "1 lets the v5/v6 tuner refine NCCL's tuning constants from the topology at init")
RAIL_PARAM(TUNER_NCHANNELS, "NCCL_RAIL_TUNER_NCHANNELS", BOOL, "1", 0, 1, NULL,
           "1 lets the tuner suggest a channel count where its model is confident")
RAIL_PARAM(TUNER_CONFIG_FILE, "NCCL_TUNER_CONFIG_FILE", STRING, "", 0, 0, NULL,
           "Rules file in NCCL's example-tuner CSV format; rules override the model")
RAIL_PARAM(CALIBRATION_FILE, "NCCL_RAIL_CALIBRATION_FILE", STRING, "", 0, 0, NULL,
           "Calibration file written by `nccl-rail calibrate` from nccl-tests logs (docs/calibration.md): the tuner uses its measured times for this communicator's shape, the model elsewhere; a bad file WARNs and the model is used. Every rank must read the same file")
RAIL_PARAM(MODEL_TABLE, "NCCL_RAIL_MODEL_TABLE", STRING, "", 0, 0, NULL,
           "Trained tuner table (docs/cost-model.md §12): empty for the one embedded in the build, `none` for the model without a table (NCCL's choices stand wherever the prior alone does not clear the margins), or a file written by `nccl-rail fit` (a platform's own sweeps). Read like a calibration file (bounded, regular files only); a bad file WARNs and the embedded table is used. The tuner's first INFO line and `nccl-rail explain` name the table in use. Every rank must use the same table")
RAIL_PARAM(EXPLORE, "NCCL_RAIL_EXPLORE", FRACTION, "0", 0, 50000, NULL,
           "Share of calls (0..0.05; 0: off) on which the tuner runs the runner-up (algorithm, protocol) instead of its choice, so that the next calibration from job measurements sees the alternative (docs/calibration.md §7). Deterministic per communicator: every rank explores the same calls. Never with a rules file loaded, with NCCL_ALGO/NCCL_PROTO set, or where the runner-up is predicted more than NCCL_RAIL_EXPLORE_MAX_SLOWDOWN slower")
RAIL_PARAM(EXPLORE_MAX_SLOWDOWN, "NCCL_RAIL_EXPLORE_MAX_SLOWDOWN", INT, "25", 1, 100, NULL,
           "Percent: NCCL_RAIL_EXPLORE never runs a pair predicted more than this much slower than the tuner's choice")
RAIL_PARAM(NCCL_BUFFSIZE, "NCCL_BUFFSIZE", INT, "-2", -2, 2147483647, NULL,
           "NCCL's Simple-protocol buffer per channel and peer (-2: NCCL's 4 MiB). The tuner reads it only to bound the chunk sizes it answers (docs/rules.md); 0, -1 or an invalid value: it answers none on Simple (NCCL's own variable)")
RAIL_PARAM(NCCL_LL_BUFFSIZE, "NCCL_LL_BUFFSIZE", INT, "-2", -2, 2147483647, NULL,
           "NCCL's LL buffer (-2: NCCL's 512 KiB); bounds the tuner's LL chunk sizes like NCCL_BUFFSIZE (NCCL's own variable)")
RAIL_PARAM(NCCL_LL128_BUFFSIZE, "NCCL_LL128_BUFFSIZE", INT, "-2", -2, 2147483647, NULL,
           "NCCL's LL128 buffer (-2: NCCL's 4800 KiB); bounds the tuner's LL128 chunk sizes like NCCL_BUFFSIZE (NCCL's own variable)")
RAIL_PARAM(CONFIG_LENIENT, "NCCL_RAIL_CONFIG_LENIENT", BOOL, "0", 0, 1, NULL,
           "1 skips malformed rules-file lines with a WARN instead of failing init")
RAIL_PARAM(LOG_STDERR, "NCCL_RAIL_LOG_STDERR", BOOL, "0", 0, 1, NULL,
           "Outside NCCL (CLI, tests): 1 also prints INFO messages on stderr")

/* ---- profiler plugin (profiler-plugin/, docs/calibration.md §7) ---- */
RAIL_PARAM(PROFILE_DIR, "NCCL_RAIL_PROFILE_DIR", STRING, "", 0, 0, NULL,
           "Directory the profiler plugin (NCCL_PROFILER_PLUGIN=rail with NCCL_NET_PLUGIN=rail, or =libnccl-tuner-rail.so) writes one file per rank of each communicator to: the collectives with their algorithm, protocol, channels and GPU time, for `nccl-rail calibrate`. Unset: the profiler asks NCCL for no event; not a directory: WARN, nothing recorded")
RAIL_PARAM(PROFILE_INTERVAL, "NCCL_RAIL_PROFILE_INTERVAL", INT, "0", 0, 86400, NULL,
           "Seconds between two rewrites of the profiler's files (one thread per process); 0: written at communicator finalize only")
RAIL_PARAM(PROFILE_RING, "NCCL_RAIL_PROFILE_RING", INT, "4096", 16, 1048576, NULL,
           "Completed collectives the profiler keeps per communicator (32 bytes each, allocated at init): the file holds the last ones")

/* ---- net plugin: NCCL's IB knobs, honoured with NCCL's defaults ---- */
RAIL_PARAM(IB_HCA, "NCCL_IB_HCA", STRING, "", 0, 0, NULL,
           "HCA filter: [^][=]name[:port[:rail[:plane]]],... (^ excludes, = exact match, otherwise prefix match; rail and plane are reported to NCCL 2.30+ as the net v12 railId/planeId of the ports the entry selects, the first matching entry's; empty fields are unset)")
RAIL_PARAM(IBVERBS_LIB, "NCCL_IBVERBS_LIB", STRING, "", 0, 0, NULL,
           "The libibverbs the net plugin loads at init (dlopen RTLD_NOW|RTLD_LOCAL; the plugin is not linked against it): a path or a soname the dynamic loader finds; unset: libibverbs.so.1. A library that cannot be loaded, or that lacks a function the plugin needs, declines the net plugin with one WARN naming it (NCCL 2.30 falls back to libibverbs.so, libibverbs.so.1 instead); `nccl-rail doctor` names the file loaded. Not read with NCCL_RAIL_VERBS_PROVIDER=shm")
RAIL_PARAM(IB_TIMEOUT, "NCCL_IB_TIMEOUT", INT, "20", 1, 31, NULL,
           "QP timeout exponent: 4.096 us * 2^value per retry")
RAIL_PARAM(IB_RETRY_CNT, "NCCL_IB_RETRY_CNT", INT, "7", 0, 7, NULL, "QP retry count")
RAIL_PARAM(IB_RETURN_ASYNC_EVENTS, "NCCL_IB_RETURN_ASYNC_EVENTS", BOOL, "1", 0, 1, NULL,
           "1: a fatal asynchronous event (device, QP or CQ) fails the connections it concerns (with NCCL_RAIL_FAILOVER, only their rail); 0: it is logged (WARN) and nothing fails because of it")
RAIL_PARAM(IB_MQP_RETRY_ALL, "NCCL_IB_MQP_RETRY_ALL", BOOL, "0", 0, 1, NULL,
           "1 retries a failed ibv_modify_qp (QP to INIT, RTR, RTS) whatever the error; 0 only on ETIMEDOUT")
RAIL_PARAM(IB_MQP_RETRY_CNT, "NCCL_IB_MQP_RETRY_CNT", INT, "34", 0, 1000, NULL,
           "Retries of a failed ibv_modify_qp (0: none)")
RAIL_PARAM(IB_MQP_RETRY_SLEEP_MSEC, "NCCL_IB_MQP_RETRY_SLEEP_MSEC", INT, "100", 0, 60000, NULL,
           "Sleep before ibv_modify_qp retry k: k times this many milliseconds (NCCL's linear backoff)")
RAIL_PARAM(IB_ECE_ENABLE, "NCCL_IB_ECE_ENABLE", BOOL, "1", 0, 1, NULL,
           "1 negotiates Enhanced Connection Establishment on the connections this process opens (ibv_query_ece, ibv_set_ece before RTR; the accepting side takes what the connecting side offers); a provider without ECE (rdma_rxe) connects without it. 0: never offered")
RAIL_PARAM(IB_GID_INDEX, "NCCL_IB_GID_INDEX", INT, "-1", -1, 255, NULL,
           "RoCE GID index for every HCA; -1 selects the first RoCE v2 IPv4-mapped GID")
RAIL_PARAM(IB_SL, "NCCL_IB_SL", INT, "-1", -1, 15, NULL, "InfiniBand service level (-1: 0)")
RAIL_PARAM(IB_TC, "NCCL_IB_TC", INT, "-1", -1, 255, NULL, "Traffic class (-1: 0)")
RAIL_PARAM(IB_PKEY, "NCCL_IB_PKEY", INT, "0", 0, 65535, NULL, "Partition key index")
RAIL_PARAM(IB_PKEY_VALUE, "NCCL_IB_PKEY_VALUE", INT, "-1", -1, 65535, NULL,
           "Partition key value (-1: unset), looked up in each port's PKey table (low 15 bits; the membership bit is ignored); wins over NCCL_IB_PKEY. A port whose table lacks it is not used (the plugin declines when none is left)")
RAIL_PARAM(IB_FIFO_TC, "NCCL_IB_FIFO_TC", INT, "-1", -1, 255, NULL,
           "RoCE: traffic class of the receiver's QPs, which carry the clear-to-send writes (and the ACKs of the data); -1: NCCL_IB_TC. The sender's QPs, size records and eager data included, keep NCCL_IB_TC")
RAIL_PARAM(IB_QPS_PER_CONNECTION, "NCCL_IB_QPS_PER_CONNECTION", INT, "1", 1, 128, NULL,
           "Data queue pairs per connection on each rail (a multi-rail send side adds one control QP per rail)")
RAIL_PARAM(IB_SPLIT_DATA_ON_QPS, "NCCL_IB_SPLIT_DATA_ON_QPS", BOOL, "0", 0, 1, NULL,
           "1 splits every message over all data QPs of its rail; 0 rotates messages over them")
RAIL_PARAM(SOCKET_IFNAME, "NCCL_SOCKET_IFNAME", STRING, "", 0, 0, NULL,
           "Interface(s) for the out-of-band TCP exchange, NCCL syntax")
RAIL_PARAM(IB_ROCE_VERSION_NUM, "NCCL_IB_ROCE_VERSION_NUM", INT, "2", 1, 2, NULL,
           "RoCE version the automatic GID selection prefers")
RAIL_PARAM(IB_ADDR_FAMILY, "NCCL_IB_ADDR_FAMILY", ENUM, "", 0, 0, "AF_INET|AF_INET6",
           "Address family of the automatically selected RoCE GID (unset: AF_INET)")
RAIL_PARAM(IB_ADDR_RANGE, "NCCL_IB_ADDR_RANGE", STRING, "", 0, 0, NULL,
           "CIDR range the automatically selected RoCE GID must lie in (unset: any)")
RAIL_PARAM(NET_GDR_LEVEL, "NCCL_NET_GDR_LEVEL", STRING, "", 0, 0, NULL,
           "Farthest GPU-NIC path GPUDirect RDMA is used over: LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or legacy 0-4 (unset: PXB)")
RAIL_PARAM(DMABUF_ENABLE, "NCCL_DMABUF_ENABLE", BOOL, "1", 0, 1, NULL,
           "0 never offers dma-buf registration of GPU memory (NCCL_PTR_DMABUF)")
RAIL_PARAM(GDR_FLUSH_DISABLE, "NCCL_GDR_FLUSH_DISABLE", BOOL, "0", 0, 1, NULL,
           "1 skips the RDMA-read flush after GPUDirect receives (iflush completes at once)")
RAIL_PARAM(NET_FORCE_FLUSH, "NCCL_NET_FORCE_FLUSH", BOOL, "0", 0, 1, NULL,
           "1 flushes GPUDirect receives on Hopper and newer GPUs too (reported as forceFlush)")
RAIL_PARAM(IB_ADAPTIVE_ROUTING, "NCCL_IB_ADAPTIVE_ROUTING", INT, "-2", -2, 1, NULL,
           "Adaptive routing: -2 auto (on when every port of the device has the InfiniBand link layer, off for RoCE), 0 off, 1 on. On: a message above NCCL_IB_AR_THRESHOLD bytes goes as plain RDMA writes the fabric may route adaptively, its completion as a separate write with immediate (the size record), and eager messages are capped at the threshold. Set it the same on every rank")
RAIL_PARAM(IB_AR_THRESHOLD, "NCCL_IB_AR_THRESHOLD", INT, "8192", 0, 2147483647, NULL,
           "With adaptive routing: messages of more than this many bytes carry no data in a write with immediate")
RAIL_PARAM(IB_PCI_RELAXED_ORDERING, "NCCL_IB_PCI_RELAXED_ORDERING", INT, "2", 0, 2, NULL,
           "PCIe relaxed ordering on registered memory: 0 off, 1 or 2 on where the device accepts it")

/* ---- net plugin: the project's own knobs ---- */
RAIL_PARAM(GID_INDEX, "NCCL_RAIL_GID_INDEX", STRING, "", 0, 0, NULL,
           "Per-HCA GID index overrides: mlx5_0:3,mlx5_1:5 (wins over NCCL_IB_GID_INDEX)")
RAIL_PARAM(EAGER_MAX, "NCCL_RAIL_EAGER_MAX", INT, "8192", 0, 65536, NULL,
           "Largest message in bytes sent eagerly into pre-registered bounce buffers (0 disables)")
RAIL_PARAM(EAGER_INLINE, "NCCL_RAIL_EAGER_INLINE", INT, "256", 0, 1024, NULL,
           "Largest eager write in bytes (its 64-byte header + the payload, or a flagged image: 24 bytes + twice the payload rounded up to 8) sent inline (IBV_SEND_INLINE) when the payload is in host memory: the bytes are copied into the work request when it is posted, so the HCA reads no local memory for it. 0 never; a device that refuses the size gets QPs without inline data (INFO line)")
RAIL_PARAM(EAGER_POLL_MAX, "NCCL_RAIL_EAGER_POLL_MAX", INT, "256", 0, 512, NULL,
           "Largest eager message in bytes from host memory written as a flagged image (8-byte words of 4 payload bytes and a 4-byte flag, as NCCL's LL protocol) that the receiver finds by polling memory: no receive work request, no completion, so less latency, for twice the bytes on the wire. 0 never (every eager message is a write with immediate)")
RAIL_PARAM(EAGER_SLOTS, "NCCL_RAIL_EAGER_SLOTS", INT, "4", 1, 16, NULL,
           "Eager bounce slots per receive comm, registered at connect time (NCCL_RAIL_EAGER_MAX + 64 bytes and a 1,088-byte image slot each: 37 KiB at 4, 75 KiB at 8): how many eager messages a sender may have written before the receiver consumes the first (more wait for a returned slot or go by rendezvous, as NCCL's IB transport sends every message). 8 covers NCCL's whole pipeline of NCCL_STEPS = 8 messages per connection; the default 4 halves the ring, which at thousands of connections per process is most of what a connection holds beyond NCCL's layout (docs/scale.md). The receiving side announces its count in the handshake, so the ranks need not agree")
RAIL_PARAM(SEND_QUEUE_DEPTH, "NCCL_RAIL_SEND_QUEUE_DEPTH", INT, "126", 32, 4096, NULL,
           "Send work requests per QP of a send comm (the device's max_qp_wr caps it; its CQ holds as many plus one per QP). Work requests that find no room wait for completions and are posted by a later isend or test. 126 covers NCCL's pipeline (8 messages in flight per connection, grouped receives of up to 8, a few work requests each); NCCL's IB transport sizes 512. Providers round queues up to a power of two of entries + 1 (rdma_rxe, mlx5 CQs): 126 keeps the send queue at 128 slots and the CQ (127 entries per QP) at 128, where 128 takes 256 of each (80 KiB more per connection on SoftRoCE). Each entry is memory per connection: a work-queue entry of ~64 bytes, plus NCCL_RAIL_EAGER_INLINE bytes of inline data, in the provider's queue")
RAIL_PARAM(CUDA_LIBRARY, "NCCL_RAIL_CUDA_LIBRARY", STRING, "libcuda.so.1", 0, 0, NULL,
           "CUDA driver library the net plugin dlopens for GPU buffer queries (tests point it at a fake)")
RAIL_PARAM(MEMLOCK_MIN_MB, "NCCL_RAIL_MEMLOCK_MIN_MB", INT, "64", 0, 1048576, NULL,
           "Decline the net plugin when RLIMIT_MEMLOCK is below this many MiB and the process lacks CAP_IPC_LOCK (0: no check)")
RAIL_PARAM(STRIPE_MIN, "NCCL_RAIL_STRIPE_MIN", INT, "131072", 0, 1073741824, NULL,
           "Messages smaller than this many bytes go whole to one rail (round-robin); from this size up they are split over the rails on 128-byte boundaries (docs/striping.md)")
RAIL_PARAM(STRIPE_POLICY, "NCCL_RAIL_STRIPE_POLICY", ENUM, "adaptive", 0, 0, "equal|weighted|adaptive",
           "How a striped message is shared between rails: equally, by rail speed, or by each rail's measured completion throughput")
RAIL_PARAM(CONTROL_QP, "NCCL_RAIL_CONTROL_QP", BOOL, "1", 0, 1, NULL,
           "1: each rail of a multi-rail send comm gets a QP of its own for size records, queries and eager writes, so a striped message's record does not queue behind later messages' data (one QP more per rail at both ends). 0: they rotate over the data QPs (fewer QPs)")
RAIL_PARAM(FAILOVER, "NCCL_RAIL_FAILOVER", BOOL, "1", 0, 1, NULL,
           "1: a multi-rail connection survives losing rails (work in flight is re-sent on the others, a rail whose port comes back rejoins); costs one completion round trip per rendezvous message before its size record. 0: any rail error fails the connection. Set it the same on every rank")
RAIL_PARAM(RAILS, "NCCL_RAIL_RAILS", STRING, "", 0, 0, NULL,
           "Rail groups, one NCCL device each: groups separated by ',', the ports of a group by '+', a port named device or device:port (mlx5_0+mlx5_1,mlx5_2:1+mlx5_3:1; at most 8 ports of one link layer per group; ports not named are not used). Unset: each GPU's nearest ports form a group (docs/striping.md, Rails); an invalid value WARNs and uses the automatic grouping")
RAIL_PARAM(FAULT, "NCCL_RAIL_FAULT", STRING, "", 0, 0, NULL,
           "Tests only: verbs faults to inject, KIND[:KEY=VALUE,...][;...] (docs/fault-injection.md). Honoured only by a build configured with -DRAIL_FAULT_INJECTION=ON; any other build WARNs and ignores it. A malformed spec WARNs and injects nothing")
RAIL_PARAM(VERBS_PROVIDER, "NCCL_RAIL_VERBS_PROVIDER", ENUM, "libibverbs", 0, 0, "libibverbs|shm",
           "Tests and machines without RDMA: shm moves data between processes of one host through a userspace verbs provider (devices shm0..shm3, two rails, host memory only; needs ptrace access between the processes: docs/net-plugin.md, The shm verbs provider). The first INFO line names it")
RAIL_PARAM(SHM_FABRIC, "NCCL_RAIL_SHM_FABRIC", STRING, "default", 0, 0, NULL,
           "With NCCL_RAIL_VERBS_PROVIDER=shm: the name of the shared-memory fabric (/dev/shm/nccl-rail-shm-UID-NAME, 1-64 of [A-Za-z0-9_.-]); processes that name the same fabric see each other's ports and their up/down states")
RAIL_PARAM(SHM_ECE, "NCCL_RAIL_SHM_ECE", INT, "13", 0, 2147483647, NULL,
           "With NCCL_RAIL_VERBS_PROVIDER=shm: the ECE option bits this process's shm devices report (ibv_query_ece, vendor 0x5348); ibv_set_ece keeps the intersection with the peer's offer. 0: the devices have no ECE (EOPNOTSUPP, as rdma_rxe). Tests of NCCL_IB_ECE_ENABLE")

/* ---- net plugin: multi-rail telemetry (net-plugin/rail_stats.h, docs/striping.md) ---- */
RAIL_PARAM(STATS_FILE, "NCCL_RAIL_STATS_FILE", STRING, "", 0, 0, NULL,
           "Write per-connection, per-rail telemetry snapshots to this file (%p = pid), atomically replaced every NCCL_RAIL_STATS_INTERVAL_MS; read it with `nccl-rail stats FILE`")
RAIL_PARAM(STATS_INTERVAL_MS, "NCCL_RAIL_STATS_INTERVAL_MS", INT, "1000", 10, 3600000, NULL,
           "Milliseconds between two telemetry snapshots written to NCCL_RAIL_STATS_FILE")
RAIL_PARAM(STATS_FORMAT, "NCCL_RAIL_STATS_FORMAT", ENUM, "json", 0, 0, "json|prometheus",
           "Format of NCCL_RAIL_STATS_FILE: JSON (read by `nccl-rail stats`) or Prometheus text exposition format (node_exporter textfile collector)")
