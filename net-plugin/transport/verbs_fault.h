/* SPDX-License-Identifier: Apache-2.0 */
/* Fault injection at the verbs seam, pure part: the NCCL_RAIL_FAULT spec parser and the trigger
 * that decides, call by call, whether a call faults. No verbs and no I/O here (unit-tested in
 * test/unit/test_verbs_fault.c); verbs_fault_ops.c applies the decisions to an ops table.
 *
 * Spec: one or more rules separated by ';', each KIND[:KEY=VALUE[,KEY=VALUE...]].
 *   kinds   post_send post_recv reg_mr            the call fails (errno: err=, default EIO;
 *           create_qp create_cq                   reg_mr, create_qp, create_cq: ENOMEM;
 *           modify_qp                             modify_qp: ETIMEDOUT; only the transitions
 *                                                  to INIT, RTR and RTS, which NCCL retries)
 *           set_ece                               ibv_set_ece fails (default EINVAL; the
 *                                                  connection goes on without ECE)
 *           wc_retry wc_rem_access wc_flush       the matched send's completion arrives with
 *                                                  that status (the write itself really happened)
 *           cq_overrun                            the next poll of that send's CQ fails and a
 *                                                  CQ_ERR event follows
 *           port_err qp_fatal device_fatal        that asynchronous event is raised
 *           stall                                 the matched send is held (not executed) until
 *                                                  its QP is moved to the error state, then
 *                                                  flushed (a WR stuck behind a dead link)
 *   keys    dev=NAME    verbs device (default *: every device, counted per device)
 *           op=write|write_imm|read|any    opcode of the post_send (default any)
 *           min=BYTES max=BYTES       bytes of the matched call's first work request / region
 *           after=N     let N matching calls through first (per device, default 0)
 *           count=N     fault N times per device (default 1; 0: every matching call after)
 *           err=N       errno of post_send / post_recv / reg_mr faults (default EIO / ENOMEM)
 *           port=N      port of port_err (default 1)
 * Every kind but post_recv, reg_mr, create_qp, create_cq, modify_qp and set_ece triggers on
 * post_send calls
 * (the point of a transfer); min/max of create_qp are its send queue depth, of create_cq its
 * entries, of modify_qp the target state (1 INIT, 2 RTR, 3 RTS). */
#ifndef NCCL_RAIL_VERBS_FAULT_H
#define NCCL_RAIL_VERBS_FAULT_H

#include <stddef.h>
#include <stdint.h>

#define RAIL_FAULT_MAX_RULES 8
#define RAIL_FAULT_MAX_DEVS  16
#define RAIL_FAULT_DEV_LEN   64

enum rail_fault_kind {
    RAIL_FAULT_POST_SEND,
    RAIL_FAULT_POST_RECV,
    RAIL_FAULT_REG_MR,
    RAIL_FAULT_WC_RETRY,
    RAIL_FAULT_WC_REM_ACCESS,
    RAIL_FAULT_WC_FLUSH,
    RAIL_FAULT_CQ_OVERRUN,
    RAIL_FAULT_PORT_ERR,
    RAIL_FAULT_QP_FATAL,
    RAIL_FAULT_DEVICE_FATAL,
    RAIL_FAULT_STALL,
    RAIL_FAULT_CREATE_QP,
    RAIL_FAULT_CREATE_CQ,
    RAIL_FAULT_MODIFY_QP,
    RAIL_FAULT_SET_ECE,
    RAIL_FAULT_NKINDS
};

/* The calls a rule can trigger on. */
enum rail_fault_call {
    RAIL_FCALL_POST_SEND,
    RAIL_FCALL_POST_RECV,
    RAIL_FCALL_REG_MR,
    RAIL_FCALL_CREATE_QP,
    RAIL_FCALL_CREATE_CQ,
    RAIL_FCALL_MODIFY_QP,
    RAIL_FCALL_SET_ECE
};

/* Opcode classes of a post_send. */
enum rail_fault_op {
    RAIL_FOP_ANY,
    RAIL_FOP_WRITE,
    RAIL_FOP_WRITE_IMM,
    RAIL_FOP_READ,
    RAIL_FOP_OTHER
};

struct rail_fault_rule {
    enum rail_fault_kind kind;
    char dev[RAIL_FAULT_DEV_LEN]; /* "" = every device */
    enum rail_fault_op op;
    uint64_t min_len, max_len;
    uint64_t after, count;
    int err; /* positive errno */
    int port;
};

struct rail_fault_plan {
    int nrules;
    struct rail_fault_rule rule[RAIL_FAULT_MAX_RULES];
    int ndevs;
    char devs[RAIL_FAULT_MAX_DEVS][RAIL_FAULT_DEV_LEN];
    uint64_t seen[RAIL_FAULT_MAX_RULES][RAIL_FAULT_MAX_DEVS];
    uint64_t fired[RAIL_FAULT_MAX_RULES][RAIL_FAULT_MAX_DEVS];
};

/* Parses spec into plan (reset first). 0, or -EINVAL with a reason in err. */
int rail_fault_parse(const char *spec, struct rail_fault_plan *plan, char *err, size_t errlen);

/* One call on device dev: the index of the rule that faults it (counted as fired), or -1. Every
 * matching rule counts the call. op and len describe the call (post_recv / reg_mr: op ANY). */
int rail_fault_match(struct rail_fault_plan *plan, enum rail_fault_call call, const char *dev,
                     enum rail_fault_op op, uint64_t len);

/* The call a kind triggers on. */
enum rail_fault_call rail_fault_kind_call(enum rail_fault_kind kind);
const char *rail_fault_kind_name(enum rail_fault_kind kind);
const char *rail_fault_op_name(enum rail_fault_op op);

#endif
