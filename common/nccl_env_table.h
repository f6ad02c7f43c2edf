/* SPDX-License-Identifier: Apache-2.0 */
/* Every NCCL_IB_* and NCCL_NET_* variable NCCL 2.31.2 reads (its built-in IB transport and the
 * network core), with what the rail net plugin does with it. X(name, handling, knob,
 * nccl_default, as_if, meaning, plugin):
 *   handling  SAME:   honoured with NCCL's meaning and default (the name is in params_table.h);
 *             MAPPED: the plugin does not read it; knob (in params_table.h) covers the same need;
 *             NCCL:   read by NCCL itself, works unchanged with the plugin; the plugin ignores it;
 *             NA:     not applicable to the plugin (plugin says why).
 *   as_if     MAPPED/NA: the value the plugin behaves as ("" = none): setting exactly this value
 *             gives one INFO, any other value one WARN at net plugin init (compat_env.c).
 * docs/compatibility.md holds the table `nccl-rail params --compat-markdown` prints; a test fails
 * when the two differ, and another when a SAME or knob name is missing from params_table.h. */
/* clang-format off */

/* ---- device selection, merging ---- */
RAIL_NCCL_ENV("NCCL_IB_HCA", SAME, "", "all ports", "",
    "Which HCAs/ports to use: `[^][=]name[:port[:rail[:plane]]],...`; rail and plane fill net v12 railId/planeId (2.30)",
    "Same syntax and matching; railId/planeId reported as NCCL does, a multi-port device as NCCL's fused vNICs")
RAIL_NCCL_ENV("NCCL_IB_DISABLE", NA, "", "0", "0",
    "1 disables NCCL's built-in IB transport",
    "Does not disable this plugin: unset NCCL_NET_PLUGIN (or set NCCL_NET=Socket) for that")
RAIL_NCCL_ENV("NCCL_IB_MERGE_NICS", MAPPED, "NCCL_RAIL_RAILS", "1", "",
    "Let NCCL fuse ports into virtual NICs (makeVDevice)",
    "The plugin forms its own multi-port devices; choose them with NCCL_RAIL_RAILS (one port per group = no merging)")
RAIL_NCCL_ENV("NCCL_IB_MERGE_VFS", NA, "", "1", "",
    "Treat the virtual functions of one PF as one PCI device when fusing",
    "Ports are grouped by NCCL_RAIL_RAILS or GPU affinity, not by PCI function")
RAIL_NCCL_ENV("NCCL_IB_DEVICE_PCI_ORDER", NA, "", "1", "",
    "Sort IB devices by PCI path so indexes agree across nodes",
    "Devices keep the order libibverbs lists them (or the NCCL_RAIL_RAILS order)")
RAIL_NCCL_ENV("NCCL_IB_DATA_DIRECT", NA, "", "1", "",
    "mlx5 Data Direct: 1 exposes only the data-direct device, 2 both",
    "No mlx5dv: the plugin uses the plain verbs device")
RAIL_NCCL_ENV("NCCL_IB_WARN_RAIL_LOCAL", NA, "", "0", "0",
    "Warn when two fused NICs share fewer physical NICs than one side has",
    "NCCL does not fuse the plugin's devices (no makeVDevice)")
RAIL_NCCL_ENV("NCCL_IB_SUBNET_AWARE_ROUTING", NA, "", "0", "0",
    "RoCE multi-subnet: connect through a local device whose ports share a subnet with the peer",
    "Not implemented: both ends must reach each other on every rail")
RAIL_NCCL_ENV("NCCL_IB_SUBNET_PREFIX_LEN", NA, "", "24", "",
    "Subnet prefix length for NCCL_IB_SUBNET_AWARE_ROUTING",
    "Not implemented (see NCCL_IB_SUBNET_AWARE_ROUTING)")
RAIL_NCCL_ENV("NCCL_IBVERBS_LIB", SAME, "", "unset", "",
    "Path or soname of the libibverbs NCCL dlopens (2.30; unset: libibverbs.so, then libibverbs.so.1)",
    "Same: the plugin dlopens it at init (it links no libibverbs; unset: libibverbs.so.1). A value that cannot be loaded, or a library without a function the plugin needs, declines the plugin with one WARN where NCCL falls back to libibverbs.so[.1]; `nccl-rail doctor` names the file loaded")

/* ---- addressing ---- */
RAIL_NCCL_ENV("NCCL_IB_GID_INDEX", SAME, "", "-1", "",
    "RoCE GID index for every HCA; -1 selects one automatically",
    "Same; NCCL_RAIL_GID_INDEX sets it per HCA")
RAIL_NCCL_ENV("NCCL_IB_ADDR_FAMILY", SAME, "", "AF_INET", "",
    "Address family of the automatically selected GID", "Same")
RAIL_NCCL_ENV("NCCL_IB_ADDR_RANGE", SAME, "", "unset", "",
    "CIDR range the automatically selected GID must lie in", "Same")
RAIL_NCCL_ENV("NCCL_IB_ROCE_VERSION_NUM", SAME, "", "2", "",
    "RoCE version the automatic GID selection prefers", "Same")
RAIL_NCCL_ENV("NCCL_IB_ROUTABLE_FLID_GID_INDEX", NA, "", "1", "",
    "IB link layer: use this GID when it carries a FLID (IB routers)",
    "IB peers are addressed by LID within one subnet")
RAIL_NCCL_ENV("NCCL_IB_PKEY", SAME, "", "0", "",
    "Partition key index of the QPs", "Same")
RAIL_NCCL_ENV("NCCL_IB_PKEY_VALUE", SAME, "", "-1", "",
    "Partition key value, looked up in the port's PKey table (wins over NCCL_IB_PKEY) (2.31)",
    "Same; a port whose table lacks the value is not used (NCCL fails the connection); the QP's pkey index is read back (ibv_query_qp) after RTS: INFO, WARN if it differs")
RAIL_NCCL_ENV("NCCL_IB_SL", SAME, "", "-1", "",
    "Service level (-1: 0)", "Same")
RAIL_NCCL_ENV("NCCL_IB_TC", SAME, "", "-1", "",
    "Traffic class (-1: the communicator's trafficClass, else 0)", "Same")
RAIL_NCCL_ENV("NCCL_IB_FIFO_TC", SAME, "", "-1", "",
    "RoCE: traffic class of the receiver's QPs, which send the clear-to-send (FIFO) writes",
    "Same (the receiver's QPs); the sender's control QP (size records, eager data) keeps NCCL_IB_TC; read back (ibv_query_qp) after RTS: INFO, WARN if it differs")
RAIL_NCCL_ENV("NCCL_IB_TIMEOUT", SAME, "", "20", "",
    "QP ACK timeout exponent (4.096 us * 2^value)", "Same")
RAIL_NCCL_ENV("NCCL_IB_RETRY_CNT", SAME, "", "7", "",
    "QP retry count", "Same")
RAIL_NCCL_ENV("NCCL_IB_ECE_ENABLE", SAME, "", "1", "",
    "Negotiate Enhanced Connection Establishment (ibv_query_ece/ibv_set_ece)",
    "Same: the connecting side offers its QPs' ECE, the accepting side sets it before RTR and returns what it accepted, which the connecting side sets before RTR; a provider without ECE (rdma_rxe) or a set that fails (one WARN) connects without it. One INFO line per device: negotiated, not supported by provider, or disabled. A peer plugin older than ECE connects without it")
RAIL_NCCL_ENV("NCCL_IB_USE_INLINE", MAPPED, "NCCL_RAIL_EAGER_INLINE", "0", "",
    "Send the clear-to-send writes inline",
    "Small eager writes go inline up to NCCL_RAIL_EAGER_INLINE bytes")
RAIL_NCCL_ENV("NCCL_IB_MQP_RETRY_ALL", SAME, "", "0", "",
    "Retry ibv_modify_qp on any error, not only ETIMEDOUT",
    "Same, for the QP transitions to INIT, RTR and RTS; one INFO line per retry")
RAIL_NCCL_ENV("NCCL_IB_MQP_RETRY_CNT", SAME, "", "34", "",
    "How many times ibv_modify_qp is retried", "Same")
RAIL_NCCL_ENV("NCCL_IB_MQP_RETRY_SLEEP_MSEC", SAME, "", "100", "",
    "Sleep before retry k: k times this many milliseconds", "Same")

/* ---- data path ---- */
RAIL_NCCL_ENV("NCCL_IB_QPS_PER_CONNECTION", SAME, "", "1", "",
    "Data QPs per device and connection", "Same (per rail)")
RAIL_NCCL_ENV("NCCL_IB_SPLIT_DATA_ON_QPS", SAME, "", "0", "",
    "1 splits each message over all QPs, 0 rotates messages", "Same (per rail)")
RAIL_NCCL_ENV("NCCL_IB_EVENT_BASED_LB", MAPPED, "NCCL_RAIL_STRIPE_POLICY", "0", "",
    "Split a fused NIC's traffic by port speed, following speed-change events (2.31)",
    "Striping over a device's rails follows NCCL_RAIL_STRIPE_POLICY (weighted: by speed; adaptive: by measured throughput)")
RAIL_NCCL_ENV("NCCL_IB_EVENT_BASED_LB_REMOTE", MAPPED, "NCCL_RAIL_STRIPE_POLICY", "1", "",
    "With NCCL_IB_EVENT_BASED_LB: also weigh the remote port speeds (2.31)",
    "See NCCL_IB_EVENT_BASED_LB")
RAIL_NCCL_ENV("NCCL_IB_ADAPTIVE_ROUTING", SAME, "", "-2", "",
    "Adaptive routing: -2 auto (on for IB, off for RoCE; a fused NIC only if all members), 0 off, 1 on",
    "Same; the completion goes in the plugin's size record (a 16-byte write with immediate) instead of a 0-byte one, and eager messages are capped at NCCL_IB_AR_THRESHOLD")
RAIL_NCCL_ENV("NCCL_IB_AR_THRESHOLD", SAME, "", "8192", "",
    "With adaptive routing, messages above this many bytes go as RDMA writes plus a separate completion write",
    "Same")
RAIL_NCCL_ENV("NCCL_IB_OOO_RQ", NA, "", "0", "0",
    "mlx5 out-of-order receive queue (needs adaptive routing)",
    "No mlx5dv: receive queues are in order")
RAIL_NCCL_ENV("NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME", NA, "", "-2", "",
    "Match requests by index or by id on the receiver",
    "The plugin's wire protocol matches by its own sequence numbers")
RAIL_NCCL_ENV("NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", NA, "", "-2", "",
    "Pre-post receive work requests instead of posting them on demand",
    "The plugin keeps its receive queues posted itself")
RAIL_NCCL_ENV("NCCL_IB_PCI_RELAXED_ORDERING", SAME, "", "2", "",
    "PCIe relaxed ordering on registered memory", "Same")
RAIL_NCCL_ENV("NCCL_GDR_FLUSH_DISABLE", SAME, "", "0", "",
    "1 skips the flush after GPUDirect receives", "Same")
RAIL_NCCL_ENV("NCCL_IB_QUERY_PORT_SPEED", NA, "", "1", "",
    "Read the port speed with ibv_query_port_speed (XDR and faster)",
    "The speed comes from ibv_query_port and sysfs")

/* ---- errors, failover, monitoring ---- */
RAIL_NCCL_ENV("NCCL_IB_RETURN_ASYNC_EVENTS", SAME, "", "1", "",
    "After a fatal async event, later calls on the device return an error",
    "Same: 1 fails the connections the device, QP or CQ event concerns (NCCL_RAIL_FAILOVER: only that rail); 0 logs the event (WARN) only. Port events keep driving failover")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_FAILOVER", MAPPED, "NCCL_RAIL_FAILOVER", "0", "",
    "On a fused NIC member's error, replay the work on a surviving member (2.29)",
    "A multi-rail connection survives losing rails with NCCL_RAIL_FAILOVER=1 (default)")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS", MAPPED, "NCCL_RAIL_FAILOVER", "1", "",
    "Failover attempts", "See NCCL_IB_RESILIENCY_PORT_FAILOVER")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY", MAPPED, "NCCL_RAIL_FAILOVER", "10", "",
    "Milliseconds before probing delivery over a surviving member", "See NCCL_IB_RESILIENCY_PORT_FAILOVER")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY", MAPPED, "NCCL_RAIL_FAILOVER", "0", "",
    "Bring a failed port back into use (2.30)",
    "With NCCL_RAIL_FAILOVER=1 a rail whose port comes back rejoins")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY", MAPPED, "NCCL_RAIL_FAILOVER", "200", "",
    "Recovery: milliseconds before the first attempt", "See NCCL_IB_RESILIENCY_PORT_RECOVERY")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL", MAPPED, "NCCL_RAIL_FAILOVER", "500", "",
    "Recovery: interval between alive-message batches", "See NCCL_IB_RESILIENCY_PORT_RECOVERY")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE", MAPPED, "NCCL_RAIL_FAILOVER", "5", "",
    "Recovery: alive messages per batch", "See NCCL_IB_RESILIENCY_PORT_RECOVERY")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE", MAPPED, "NCCL_RAIL_FAILOVER", "5", "",
    "Recovery: alive-message sequence length", "See NCCL_IB_RESILIENCY_PORT_RECOVERY")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT", MAPPED, "NCCL_RAIL_FAILOVER", "4000", "",
    "Recovery: alive-message timeout (ms)", "See NCCL_IB_RESILIENCY_PORT_RECOVERY")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT", MAPPED, "NCCL_RAIL_FAILOVER", "5000", "",
    "Recovery: acknowledgement timeout (ms)", "See NCCL_IB_RESILIENCY_PORT_RECOVERY")
RAIL_NCCL_ENV("NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX", MAPPED, "NCCL_RAIL_FAILOVER", "20", "",
    "Recovery: most attempts (5 before 2.31)", "See NCCL_IB_RESILIENCY_PORT_RECOVERY")
RAIL_NCCL_ENV("NCCL_IB_WQE_LATENCY_THRESHOLD_NS", MAPPED, "NCCL_RAIL_STATS_FILE", "0", "0",
    "Log work requests slower than this many ns, and per-QP latency summaries (2.31)",
    "Per-rail latency and throughput telemetry goes to NCCL_RAIL_STATS_FILE")
RAIL_NCCL_ENV("NCCL_IB_WQE_LATENCY_REPORT", MAPPED, "NCCL_RAIL_STATS_FILE", "1", "",
    "With NCCL_IB_WQE_LATENCY_THRESHOLD_NS: print the per-QP summary (2.31)",
    "See NCCL_IB_WQE_LATENCY_THRESHOLD_NS")

/* ---- NCCL's network core ---- */
RAIL_NCCL_ENV("NCCL_NET", NCCL, "", "unset", "",
    "Name of the network NCCL uses (IB, Socket, or a plugin's name)",
    "Read by NCCL; this plugin's name is `RAIL`")
RAIL_NCCL_ENV("NCCL_NET_PLUGIN", NCCL, "", "unset", "",
    "Net plugin library to load", "Read by NCCL: `rail` loads libnccl-net-rail.so")
RAIL_NCCL_ENV("NCCL_NET_GDR_LEVEL", SAME, "", "PXB", "",
    "Farthest GPU-NIC path GPUDirect RDMA is used over",
    "Read by NCCL and by the plugin, which offers GPU pointers only within it")
RAIL_NCCL_ENV("NCCL_NET_GDR_READ", NCCL, "", "-2", "",
    "Send from GPU memory directly (GPUDirect read)", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_GDR_C2C", NCCL, "", "1", "",
    "GPUDirect over C2C-attached CPUs", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_GDR_MLOPART", NCCL, "", "0", "",
    "GPUDirect RDMA on multi-location (MLOPart) GPU memory", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_FORCE_FLUSH", SAME, "", "0", "",
    "Flush GPUDirect receives on Hopper and newer too", "Same (reported as forceFlush)")
RAIL_NCCL_ENV("NCCL_NET_DISABLE_INTRA", NCCL, "", "0", "",
    "Do not use the network between GPUs of one node", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_OVERHEAD", NCCL, "", "-2", "",
    "Per-message network overhead NCCL's model assumes", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_SHARED_BUFFERS", NCCL, "", "-2", "",
    "Share proxy buffers between peers", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_SHARED_COMMS", NCCL, "", "1", "",
    "Share network connections between channels (PXN)", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_OPTIONAL_RECV_COMPLETION", NCCL, "", "1", "",
    "Let NCCL skip waiting for receive completions the protocol does not need", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_PLUGIN_REF_COUNT", NCCL, "", "0", "",
    "Reference-count the net plugin across communicators", "Read by NCCL")
RAIL_NCCL_ENV("NCCL_NET_MERGE_LEVEL", MAPPED, "NCCL_RAIL_RAILS", "PORT", "",
    "How close NICs must be for NCCL to fuse them",
    "NCCL cannot fuse the plugin's devices (no makeVDevice); the plugin groups ports itself: NCCL_RAIL_RAILS")
RAIL_NCCL_ENV("NCCL_NET_FORCE_MERGE", MAPPED, "NCCL_RAIL_RAILS", "unset", "",
    "NIC groups NCCL must fuse", "Use NCCL_RAIL_RAILS (same idea: groups of ports)")
RAIL_NCCL_ENV("NCCL_NET_MERGE_POLICY", MAPPED, "NCCL_RAIL_RAILS", "ALL", "",
    "Which NICs NCCL fuses (ALL or RAIL)", "See NCCL_NET_MERGE_LEVEL")
RAIL_NCCL_ENV("NCCL_NETDEVS_POLICY", NCCL, "", "AUTO", "",
    "How many of the network devices each GPU uses (AUTO, ALL, MAX:n)", "Read by NCCL, over the plugin's devices")
RAIL_NCCL_ENV("NCCL_DMABUF_ENABLE", SAME, "", "1", "",
    "Register GPU memory through dma-buf", "Same")
