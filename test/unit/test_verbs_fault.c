/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_FAULT spec parser and trigger (transport/verbs_fault.c): every kind and key, the
 * defaults, every malformed spec refused with a reason (and an empty plan), then the trigger:
 * after/count per device, dev filter, op and length filters, which call each kind counts,
 * several rules, a full device table. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "transport/verbs_fault.h"

static struct rail_fault_plan g_p;
static char g_err[256];

static int parse(const char *spec)
{
    return rail_fault_parse(spec, &g_p, g_err, sizeof(g_err));
}

static int send_on(const char *dev, enum rail_fault_op op, uint64_t len)
{
    return rail_fault_match(&g_p, RAIL_FCALL_POST_SEND, dev, op, len);
}

static void kinds_and_defaults(void)
{
    static const char *names[] = {"post_send",     "post_recv",    "reg_mr",     "wc_retry",
                                  "wc_rem_access", "wc_flush",     "cq_overrun", "port_err",
                                  "qp_fatal",      "device_fatal", "stall",      "create_qp",
                                  "create_cq",     "modify_qp",    "set_ece"};
    for (int k = 0; k < RAIL_FAULT_NKINDS; k++) {
        CHECK_EQ_INT(parse(names[k]), 0);
        CHECK_EQ_INT(g_p.nrules, 1);
        CHECK_EQ_INT(g_p.rule[0].kind, k);
        CHECK_EQ_STR(rail_fault_kind_name((enum rail_fault_kind)k), names[k]);
        CHECK_EQ_STR(g_p.rule[0].dev, "");
        CHECK_EQ_INT(g_p.rule[0].after, 0);
        CHECK_EQ_INT(g_p.rule[0].count, 1);
        CHECK_EQ_INT(g_p.rule[0].op, RAIL_FOP_ANY);
        CHECK_EQ_INT(g_p.rule[0].err, k == RAIL_FAULT_REG_MR || k == RAIL_FAULT_CREATE_QP ||
                                              k == RAIL_FAULT_CREATE_CQ
                                          ? ENOMEM
                                      : k == RAIL_FAULT_MODIFY_QP ? ETIMEDOUT
                                      : k == RAIL_FAULT_SET_ECE   ? EINVAL
                                                                  : EIO);
        CHECK_EQ_INT(g_p.rule[0].port, 1);
        CHECK(g_p.rule[0].max_len == UINT64_MAX);
        CHECK_EQ_STR(g_err, "");
    }
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_POST_RECV), RAIL_FCALL_POST_RECV);
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_REG_MR), RAIL_FCALL_REG_MR);
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_DEVICE_FATAL), RAIL_FCALL_POST_SEND);
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_STALL), RAIL_FCALL_POST_SEND);
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_CREATE_QP), RAIL_FCALL_CREATE_QP);
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_MODIFY_QP), RAIL_FCALL_MODIFY_QP);
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_CREATE_CQ), RAIL_FCALL_CREATE_CQ);
    CHECK_EQ_INT(rail_fault_kind_call(RAIL_FAULT_SET_ECE), RAIL_FCALL_SET_ECE);
    /* set_ece: the second ibv_set_ece on shm1 fails (EPERM); other devices and calls pass. */
    CHECK_EQ_INT(parse("set_ece:dev=shm1,after=1,err=1"), 0);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_SET_ECE, "shm1", RAIL_FOP_ANY, 0), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_SET_ECE, "shm0", RAIL_FOP_ANY, 0), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_MODIFY_QP, "shm1", RAIL_FOP_ANY, 2), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_SET_ECE, "shm1", RAIL_FOP_ANY, 0), 0);
    CHECK_EQ_INT(g_p.rule[0].err, 1);
    /* The 1000th QP of shm0 fails, once; other devices and calls are not counted. */
    CHECK_EQ_INT(parse("create_qp:dev=shm0,after=999"), 0);
    for (int i = 0; i < 999; i++)
        CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_CREATE_QP, "shm0", RAIL_FOP_ANY, 512), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_CREATE_QP, "shm1", RAIL_FOP_ANY, 512), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_CREATE_CQ, "shm0", RAIL_FOP_ANY, 512), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_CREATE_QP, "shm0", RAIL_FOP_ANY, 512), 0);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_CREATE_QP, "shm0", RAIL_FOP_ANY, 512), -1);
    CHECK_EQ_STR(rail_fault_kind_name(RAIL_FAULT_NKINDS), "?");
}

static void keys(void)
{
    CHECK_EQ_INT(parse("wc_retry:dev=rxe0,op=write,min=4096,max=65536,after=3,count=2;"
                       "post_send:err=12,dev=*,op=write_imm,count=0;port_err:port=2,op=any"),
                 0);
    CHECK_EQ_INT(g_p.nrules, 3);
    const struct rail_fault_rule *r = &g_p.rule[0];
    CHECK_EQ_INT(r->kind, RAIL_FAULT_WC_RETRY);
    CHECK_EQ_STR(r->dev, "rxe0");
    CHECK_EQ_INT(r->op, RAIL_FOP_WRITE);
    CHECK_EQ_INT(r->min_len, 4096);
    CHECK_EQ_INT(r->max_len, 65536);
    CHECK_EQ_INT(r->after, 3);
    CHECK_EQ_INT(r->count, 2);
    r = &g_p.rule[1];
    CHECK_EQ_INT(r->kind, RAIL_FAULT_POST_SEND);
    CHECK_EQ_STR(r->dev, "");
    CHECK_EQ_INT(r->err, ENOMEM);
    CHECK_EQ_INT(r->op, RAIL_FOP_WRITE_IMM);
    CHECK_EQ_INT(r->count, 0);
    CHECK_EQ_INT(g_p.rule[2].port, 2);
    /* Empty rules between separators are skipped; a min equal to max is one length. */
    CHECK_EQ_INT(parse(";;reg_mr:min=8,max=8;"), 0);
    CHECK_EQ_INT(g_p.nrules, 1);
}

static void refused(const char *spec, const char *why)
{
    memset(&g_p, 0x5a, sizeof(g_p));
    int rc = parse(spec);
    CHECK_MSG(rc == -EINVAL, "'%s' gave %d", spec ? spec : "(null)", rc);
    CHECK_MSG(strstr(g_err, why) != NULL, "'%s': reason '%s' lacks '%s'", spec ? spec : "(null)",
              g_err, why);
    CHECK_EQ_INT(g_p.nrules, 0);
    CHECK_EQ_INT(send_on("rxe0", RAIL_FOP_WRITE, 1), -1);
}

static void malformed(void)
{
    char big[1100];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    refused(NULL, "empty");
    refused("", "empty");
    refused(";", "no fault rule");
    refused(big, "characters");
    refused("post_sned", "unknown fault kind 'post_sned'");
    refused("post_send:after", "expected KEY=VALUE");
    refused("post_send:after=", "after=");
    refused("post_send:after=-1", "after=-1");
    refused("post_send:after=1x", "after=1x");
    refused("post_send:after=99999999999999999999999", "after=");
    refused("post_send:colour=red", "unknown key 'colour'");
    refused("post_send:err=0", "must be positive");
    refused("post_send:err=5000", "err=5000");
    refused("port_err:port=256", "port=256");
    refused("post_send:op=recv", "op=recv");
    refused("reg_mr:op=write", "post_send only");
    refused("create_cq:op=read", "post_send only");
    refused("modify_qp:op=write", "post_send only");
    refused("post_recv:op=any", "post_send only");
    refused("post_send:dev=", "dev=");
    refused("post_send:dev=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "1..63");
    refused("post_send:min=10,max=9", "min=10 is above max=9");
    refused("post_send;post_send;post_send;post_send;post_send;post_send;post_send;post_send;"
            "post_send",
            "more than 8");
    /* One bad rule refuses the whole spec. */
    refused("post_send;qp_fatal:after=x", "after=x");
}

static void trigger_after_count(void)
{
    CHECK_EQ_INT(parse("post_send:after=2,count=2"), 0);
    int hits[8];
    for (int i = 0; i < 8; i++)
        hits[i] = send_on("rxe0", RAIL_FOP_WRITE, 100);
    /* Calls 1-2 pass, 3-4 fault, the rest pass. */
    CHECK_EQ_INT(hits[0], -1);
    CHECK_EQ_INT(hits[1], -1);
    CHECK_EQ_INT(hits[2], 0);
    CHECK_EQ_INT(hits[3], 0);
    for (int i = 4; i < 8; i++)
        CHECK_EQ_INT(hits[i], -1);
    /* Counted per device: rxe2 has its own after and count. */
    CHECK_EQ_INT(send_on("rxe2", RAIL_FOP_WRITE, 1), -1);
    CHECK_EQ_INT(send_on("rxe2", RAIL_FOP_WRITE, 1), -1);
    CHECK_EQ_INT(send_on("rxe2", RAIL_FOP_WRITE, 1), 0);
    /* count=0: every matching call after `after`. */
    CHECK_EQ_INT(parse("post_send:count=0,after=1"), 0);
    CHECK_EQ_INT(send_on("d", RAIL_FOP_OTHER, 0), -1);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(send_on("d", RAIL_FOP_OTHER, 0), 0);
}

static void trigger_filters(void)
{
    CHECK_EQ_INT(parse("wc_retry:dev=rxe0,op=write,min=1024,max=4096"), 0);
    CHECK_EQ_INT(send_on("rxe1", RAIL_FOP_WRITE, 2048), -1);     /* other device */
    CHECK_EQ_INT(send_on("rxe00", RAIL_FOP_WRITE, 2048), -1);    /* exact name */
    CHECK_EQ_INT(send_on("rxe0", RAIL_FOP_WRITE_IMM, 2048), -1); /* other opcode */
    CHECK_EQ_INT(send_on("rxe0", RAIL_FOP_WRITE, 1023), -1);     /* too short */
    CHECK_EQ_INT(send_on("rxe0", RAIL_FOP_WRITE, 4097), -1);     /* too long */
    /* Other calls never count for a post_send-triggered kind. */
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_POST_RECV, "rxe0", RAIL_FOP_ANY, 2048), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_REG_MR, "rxe0", RAIL_FOP_ANY, 2048), -1);
    CHECK_EQ_INT(send_on("rxe0", RAIL_FOP_WRITE, 1024), 0);
    CHECK_EQ_INT(send_on("rxe0", RAIL_FOP_WRITE, 1024), -1); /* count=1 spent */

    CHECK_EQ_INT(parse("reg_mr:min=1048576;post_recv:after=1"), 0);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_REG_MR, "mlx5_0", RAIL_FOP_ANY, 4096), -1);
    CHECK_EQ_INT(send_on("mlx5_0", RAIL_FOP_WRITE, 1 << 20), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_REG_MR, "mlx5_0", RAIL_FOP_ANY, 1 << 20), 0);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_POST_RECV, "mlx5_0", RAIL_FOP_ANY, 0), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_POST_RECV, "mlx5_0", RAIL_FOP_ANY, 0), 1);
    CHECK_EQ_INT(rail_fault_match(NULL, RAIL_FCALL_POST_RECV, "x", RAIL_FOP_ANY, 0), -1);
    CHECK_EQ_INT(rail_fault_match(&g_p, RAIL_FCALL_POST_RECV, NULL, RAIL_FOP_ANY, 0), -1);
}

static void trigger_several_rules(void)
{
    /* Both rules count each call; the first that fires wins, the other fires on a later call. */
    CHECK_EQ_INT(parse("port_err:after=1;qp_fatal:after=1"), 0);
    CHECK_EQ_INT(send_on("a", RAIL_FOP_WRITE, 1), -1);
    CHECK_EQ_INT(send_on("a", RAIL_FOP_WRITE, 1), 0);
    CHECK_EQ_INT(send_on("a", RAIL_FOP_WRITE, 1), 1);
    CHECK_EQ_INT(send_on("a", RAIL_FOP_WRITE, 1), -1);
    /* The device table holds 16 names; calls on more devices never fault (nor crash). */
    CHECK_EQ_INT(parse("post_send:count=0"), 0);
    char name[16];
    for (int i = 0; i < RAIL_FAULT_MAX_DEVS + 4; i++) {
        snprintf(name, sizeof(name), "dev%d", i);
        CHECK_EQ_INT(send_on(name, RAIL_FOP_WRITE, 1), i < RAIL_FAULT_MAX_DEVS ? 0 : -1);
    }
    CHECK_EQ_STR(rail_fault_op_name(RAIL_FOP_WRITE_IMM), "write_imm");
    CHECK_EQ_STR(rail_fault_op_name(RAIL_FOP_READ), "read");
    /* op=read (the GPUDirect flush reads) matches reads only. */
    CHECK_EQ_INT(parse("wc_retry:op=read"), 0);
    CHECK_EQ_INT(g_p.rule[0].op, RAIL_FOP_READ);
    CHECK_EQ_INT(send_on("a", RAIL_FOP_WRITE, 1), -1);
    CHECK_EQ_INT(send_on("a", RAIL_FOP_OTHER, 1), -1);
    CHECK_EQ_INT(send_on("a", RAIL_FOP_READ, 1), 0);
}

int main(void)
{
    kinds_and_defaults();
    keys();
    malformed();
    trigger_after_count();
    trigger_filters();
    trigger_several_rules();
    return check_report("test_verbs_fault");
}
