/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_FAULT: spec parser and per-call trigger (see verbs_fault.h). */
#include "transport/verbs_fault.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "strutil.h"

#define SPEC_MAX 1024

static const char *const k_kind_names[RAIL_FAULT_NKINDS] = {
    [RAIL_FAULT_POST_SEND] = "post_send",
    [RAIL_FAULT_POST_RECV] = "post_recv",
    [RAIL_FAULT_REG_MR] = "reg_mr",
    [RAIL_FAULT_WC_RETRY] = "wc_retry",
    [RAIL_FAULT_WC_REM_ACCESS] = "wc_rem_access",
    [RAIL_FAULT_WC_FLUSH] = "wc_flush",
    [RAIL_FAULT_CQ_OVERRUN] = "cq_overrun",
    [RAIL_FAULT_PORT_ERR] = "port_err",
    [RAIL_FAULT_QP_FATAL] = "qp_fatal",
    [RAIL_FAULT_DEVICE_FATAL] = "device_fatal",
    [RAIL_FAULT_STALL] = "stall",
    [RAIL_FAULT_CREATE_QP] = "create_qp",
    [RAIL_FAULT_CREATE_CQ] = "create_cq",
    [RAIL_FAULT_MODIFY_QP] = "modify_qp",
    [RAIL_FAULT_SET_ECE] = "set_ece",
};

const char *rail_fault_kind_name(enum rail_fault_kind kind)
{
    return (unsigned)kind < RAIL_FAULT_NKINDS ? k_kind_names[kind] : "?";
}

const char *rail_fault_op_name(enum rail_fault_op op)
{
    switch (op) {
    case RAIL_FOP_ANY:
        return "any";
    case RAIL_FOP_WRITE:
        return "write";
    case RAIL_FOP_WRITE_IMM:
        return "write_imm";
    case RAIL_FOP_READ:
        return "read";
    case RAIL_FOP_OTHER:
        return "other";
    }
    return "?";
}

enum rail_fault_call rail_fault_kind_call(enum rail_fault_kind kind)
{
    if (kind == RAIL_FAULT_POST_RECV)
        return RAIL_FCALL_POST_RECV;
    if (kind == RAIL_FAULT_REG_MR)
        return RAIL_FCALL_REG_MR;
    if (kind == RAIL_FAULT_CREATE_QP)
        return RAIL_FCALL_CREATE_QP;
    if (kind == RAIL_FAULT_CREATE_CQ)
        return RAIL_FCALL_CREATE_CQ;
    if (kind == RAIL_FAULT_MODIFY_QP)
        return RAIL_FCALL_MODIFY_QP;
    if (kind == RAIL_FAULT_SET_ECE)
        return RAIL_FCALL_SET_ECE;
    return RAIL_FCALL_POST_SEND;
}

static int parse_u64(const char *v, uint64_t max, uint64_t *out)
{
    return rail_parse_digits(v, strlen(v), 20, max, out);
}

static int parse_key(struct rail_fault_rule *r, const char *key, const char *val, char *err,
                     size_t errlen)
{
    uint64_t n = 0;
    if (!strcmp(key, "dev")) {
        size_t len = strlen(val);
        if (len == 0 || len >= RAIL_FAULT_DEV_LEN)
            return rail_fail(err, errlen, "dev= needs a device name of 1..%d characters",
                             RAIL_FAULT_DEV_LEN - 1);
        if (strcmp(val, "*") != 0)
            memcpy(r->dev, val, len + 1);
        return 0;
    }
    if (!strcmp(key, "op")) {
        if (!strcmp(val, "any"))
            r->op = RAIL_FOP_ANY;
        else if (!strcmp(val, "write"))
            r->op = RAIL_FOP_WRITE;
        else if (!strcmp(val, "write_imm"))
            r->op = RAIL_FOP_WRITE_IMM;
        else if (!strcmp(val, "read"))
            r->op = RAIL_FOP_READ;
        else
            return rail_fail(err, errlen, "op=%s: expected write, write_imm, read or any", val);
        if (rail_fault_kind_call(r->kind) != RAIL_FCALL_POST_SEND)
            return rail_fail(err, errlen, "op= applies to rules that trigger on post_send only");
        return 0;
    }
    static const char *const numeric[] = {"min", "max", "after", "count", "err", "port"};
    int known = 0;
    for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++)
        known |= !strcmp(key, numeric[i]);
    if (!known)
        return rail_fail(err, errlen,
                         "unknown key '%s' (dev, op, min, max, after, count, err, port)", key);
    uint64_t max = UINT64_MAX;
    if (!strcmp(key, "err"))
        max = 4095;
    else if (!strcmp(key, "port"))
        max = 255;
    if (parse_u64(val, max, &n) < 0)
        return rail_fail(err, errlen, "%s=%s: expected a number up to %llu", key, val,
                         (unsigned long long)max);
    if (!strcmp(key, "min"))
        r->min_len = n;
    else if (!strcmp(key, "max"))
        r->max_len = n;
    else if (!strcmp(key, "after"))
        r->after = n;
    else if (!strcmp(key, "count"))
        r->count = n;
    else if (!strcmp(key, "err") && n > 0)
        r->err = (int)n;
    else if (!strcmp(key, "port") && n > 0)
        r->port = (int)n;
    else
        return rail_fail(err, errlen, "%s=0: err and port must be positive", key);
    return 0;
}

static int parse_rule(char *text, struct rail_fault_rule *r, char *err, size_t errlen)
{
    char *opts = strchr(text, ':');
    if (opts)
        *opts++ = '\0';
    memset(r, 0, sizeof(*r));
    r->kind = RAIL_FAULT_NKINDS;
    for (int k = 0; k < RAIL_FAULT_NKINDS; k++)
        if (!strcmp(text, k_kind_names[k]))
            r->kind = (enum rail_fault_kind)k;
    if (r->kind == RAIL_FAULT_NKINDS)
        return rail_fail(err, errlen,
                         "unknown fault kind '%s' (post_send, post_recv, reg_mr, wc_retry, "
                         "wc_rem_access, wc_flush, cq_overrun, port_err, qp_fatal, device_fatal, "
                         "stall, create_qp, create_cq, modify_qp, set_ece)",
                         text);
    r->count = 1;
    r->max_len = UINT64_MAX;
    r->err = r->kind == RAIL_FAULT_REG_MR || r->kind == RAIL_FAULT_CREATE_QP ||
                     r->kind == RAIL_FAULT_CREATE_CQ
                 ? ENOMEM
             : r->kind == RAIL_FAULT_MODIFY_QP ? ETIMEDOUT
             : r->kind == RAIL_FAULT_SET_ECE   ? EINVAL
                                               : EIO;
    r->port = 1;
    char *save = NULL;
    for (char *kv = opts ? strtok_r(opts, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return rail_fail(err, errlen, "'%s' in rule %s: expected KEY=VALUE", kv,
                             k_kind_names[r->kind]);
        *eq = '\0';
        char why[200];
        if (parse_key(r, kv, eq + 1, why, sizeof(why)) < 0)
            return rail_fail(err, errlen, "rule %s: %s", k_kind_names[r->kind], why);
    }
    if (r->min_len > r->max_len)
        return rail_fail(err, errlen, "rule %s: min=%llu is above max=%llu", k_kind_names[r->kind],
                         (unsigned long long)r->min_len, (unsigned long long)r->max_len);
    return 0;
}

int rail_fault_parse(const char *spec, struct rail_fault_plan *plan, char *err, size_t errlen)
{
    char buf[SPEC_MAX];
    memset(plan, 0, sizeof(*plan));
    rail_clear_err(err, errlen);
    if (!spec || !*spec)
        return rail_fail(err, errlen, "empty fault spec");
    size_t len = strlen(spec);
    if (len >= sizeof(buf))
        return rail_fail(err, errlen, "fault spec of %zu characters (at most %zu)", len,
                         sizeof(buf) - 1);
    memcpy(buf, spec, len + 1);
    char *save = NULL;
    for (char *rule = strtok_r(buf, ";", &save); rule; rule = strtok_r(NULL, ";", &save)) {
        if (plan->nrules == RAIL_FAULT_MAX_RULES) {
            memset(plan, 0, sizeof(*plan));
            return rail_fail(err, errlen, "more than %d fault rules", RAIL_FAULT_MAX_RULES);
        }
        if (parse_rule(rule, &plan->rule[plan->nrules], err, errlen) < 0) {
            memset(plan, 0, sizeof(*plan));
            return -EINVAL;
        }
        plan->nrules++;
    }
    if (!plan->nrules)
        return rail_fail(err, errlen, "no fault rule in '%s'", spec);
    return 0;
}

/* The counter slot of dev (added on first sight), or -1 when the table is full. */
static int dev_slot(struct rail_fault_plan *plan, const char *dev)
{
    for (int i = 0; i < plan->ndevs; i++)
        if (!strncmp(plan->devs[i], dev, RAIL_FAULT_DEV_LEN - 1))
            return i;
    if (plan->ndevs == RAIL_FAULT_MAX_DEVS)
        return -1;
    snprintf(plan->devs[plan->ndevs], RAIL_FAULT_DEV_LEN, "%s", dev);
    return plan->ndevs++;
}

static int rule_matches(const struct rail_fault_rule *r, enum rail_fault_call call, const char *dev,
                        enum rail_fault_op op, uint64_t len)
{
    if (rail_fault_kind_call(r->kind) != call)
        return 0;
    if (r->dev[0] && strncmp(r->dev, dev, RAIL_FAULT_DEV_LEN) != 0)
        return 0;
    if (r->op != RAIL_FOP_ANY && r->op != op)
        return 0;
    return len >= r->min_len && len <= r->max_len;
}

int rail_fault_match(struct rail_fault_plan *plan, enum rail_fault_call call, const char *dev,
                     enum rail_fault_op op, uint64_t len)
{
    int hit = -1;
    if (!plan || !dev)
        return -1;
    int slot = dev_slot(plan, dev);
    if (slot < 0)
        return -1;
    for (int i = 0; i < plan->nrules; i++) {
        const struct rail_fault_rule *r = &plan->rule[i];
        if (!rule_matches(r, call, dev, op, len))
            continue;
        uint64_t n = ++plan->seen[i][slot];
        if (hit >= 0 || n <= r->after || (r->count && plan->fired[i][slot] >= r->count))
            continue;
        plan->fired[i][slot]++;
        hit = i;
    }
    return hit;
}
