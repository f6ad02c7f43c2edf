/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL's IB/NET variables (common/nccl_env_table.h, compat_env.c): every variable NCCL 2.31.2
 * reads is in the table, the table agrees with params_table.h, and the environment audit finds
 * exactly the variables set but not honoured and the unknown names, with the closest known one. */
#include <string.h>

#include "check.h"
#include "compat_env.h"
#include "params.h"

/* Every NCCL_IB_* / NCCL_NET_* (and the related GDR/DMABUF/IBVERBS) variable NCCL 2.31.2 reads:
 * NCCL_PARAM and ncclGetEnv names under src/ of the 2.31.2 tree. */
static const char *const k_nccl_231[] = {
    "NCCL_IB_HCA",
    "NCCL_IB_DISABLE",
    "NCCL_IB_MERGE_NICS",
    "NCCL_IB_MERGE_VFS",
    "NCCL_IB_DEVICE_PCI_ORDER",
    "NCCL_IB_DATA_DIRECT",
    "NCCL_IB_WARN_RAIL_LOCAL",
    "NCCL_IB_SUBNET_AWARE_ROUTING",
    "NCCL_IB_SUBNET_PREFIX_LEN",
    "NCCL_IBVERBS_LIB",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_ADDR_RANGE",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_ROUTABLE_FLID_GID_INDEX",
    "NCCL_IB_PKEY",
    "NCCL_IB_PKEY_VALUE",
    "NCCL_IB_SL",
    "NCCL_IB_TC",
    "NCCL_IB_FIFO_TC",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_ECE_ENABLE",
    "NCCL_IB_USE_INLINE",
    "NCCL_IB_MQP_RETRY_ALL",
    "NCCL_IB_MQP_RETRY_CNT",
    "NCCL_IB_MQP_RETRY_SLEEP_MSEC",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_EVENT_BASED_LB",
    "NCCL_IB_EVENT_BASED_LB_REMOTE",
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_OOO_RQ",
    "NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME",
    "NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_GDR_FLUSH_DISABLE",
    "NCCL_IB_QUERY_PORT_SPEED",
    "NCCL_IB_RETURN_ASYNC_EVENTS",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX",
    "NCCL_IB_WQE_LATENCY_THRESHOLD_NS",
    "NCCL_IB_WQE_LATENCY_REPORT",
    "NCCL_NET",
    "NCCL_NET_PLUGIN",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",
    "NCCL_NET_GDR_C2C",
    "NCCL_NET_GDR_MLOPART",
    "NCCL_NET_FORCE_FLUSH",
    "NCCL_NET_DISABLE_INTRA",
    "NCCL_NET_OVERHEAD",
    "NCCL_NET_SHARED_BUFFERS",
    "NCCL_NET_SHARED_COMMS",
    "NCCL_NET_OPTIONAL_RECV_COMPLETION",
    "NCCL_NET_PLUGIN_REF_COUNT",
    "NCCL_NET_MERGE_LEVEL",
    "NCCL_NET_FORCE_MERGE",
    "NCCL_NET_MERGE_POLICY",
    "NCCL_NETDEVS_POLICY"};

static int param_index(const char *name)
{
    for (int i = 0; i < RAIL_PARAM_COUNT; i++)
        if (strcmp(rail_param_def((enum rail_param_id)i)->name, name) == 0)
            return i;
    return -1;
}

static void test_table(void)
{
    int n = (int)(sizeof(k_nccl_231) / sizeof(k_nccl_231[0]));
    for (int i = 0; i < n; i++)
        CHECK_MSG(rail_compat_find(k_nccl_231[i]) != NULL, "%s missing from nccl_env_table.h",
                  k_nccl_231[i]);
    for (int i = 0; i < rail_compat_count(); i++) {
        const struct rail_compat_var *v = rail_compat_at(i);
        for (int k = 0; k < i; k++)
            CHECK_MSG(strcmp(rail_compat_at(k)->name, v->name) != 0, "%s twice", v->name);
        CHECK_MSG(*v->meaning && *v->plugin && *v->nccl_default, "%s: empty field", v->name);
        /* SAME: the plugin reads it through the params table, with NCCL's default. */
        if (v->handling == RAIL_COMPAT_SAME)
            CHECK_MSG(param_index(v->name) >= 0, "%s is SAME but not in params_table.h", v->name);
        else
            CHECK_MSG(param_index(v->name) < 0, "%s is read (params_table.h) but not SAME",
                      v->name);
        if (v->handling == RAIL_COMPAT_MAPPED)
            CHECK_MSG(strncmp(v->knob, "NCCL_RAIL_", 10) == 0 && param_index(v->knob) >= 0,
                      "%s: knob '%s' not in params_table.h", v->name, v->knob);
        else
            CHECK_MSG(*v->knob == '\0', "%s: knob set but not MAPPED", v->name);
        if (v->handling == RAIL_COMPAT_SAME || v->handling == RAIL_COMPAT_NCCL)
            CHECK_MSG(*v->as_if == '\0', "%s: as_if only for MAPPED/NA", v->name);
    }
    /* Every NCCL variable the params table reads is accounted for as SAME. */
    for (int i = 0; i < RAIL_PARAM_COUNT; i++) {
        const char *name = rail_param_def((enum rail_param_id)i)->name;
        if (strncmp(name, "NCCL_IB", 7) == 0 || strncmp(name, "NCCL_NET", 8) == 0) {
            const struct rail_compat_var *v = rail_compat_find(name);
            CHECK_MSG(v && v->handling == RAIL_COMPAT_SAME, "%s not SAME in the compat table",
                      name);
        }
    }
    /* The Markdown has one row per variable. */
    char buf[65536];
    size_t len = rail_compat_markdown(buf, sizeof(buf));
    CHECK(len < sizeof(buf));
    int rows = 0;
    for (const char *p = buf; (p = strstr(p, "\n| `")) != NULL; p++)
        rows++;
    CHECK_EQ_INT(rows, rail_compat_count());
    CHECK(strstr(buf, "| `NCCL_IB_MERGE_NICS` | 1 |") != NULL);
    CHECK(strstr(buf, "mapped to `NCCL_RAIL_RAILS`") != NULL);
    /* Too small a buffer: truncated, NUL-terminated, the full size returned. */
    char small[32];
    CHECK_EQ_INT(rail_compat_markdown(small, sizeof(small)), len);
    CHECK_EQ_INT(strlen(small), sizeof(small) - 1);
}

static void test_closest(void)
{
    CHECK_EQ_STR(rail_env_closest("NCCL_IB_GID_INDX"), "NCCL_IB_GID_INDEX");
    CHECK_EQ_STR(rail_env_closest("NCCL_RAIL_STRIPE_MN"), "NCCL_RAIL_STRIPE_MIN");
    CHECK_EQ_STR(rail_env_closest("NCCL_IB_ADAPTIVE_ROUTNG"), "NCCL_IB_ADAPTIVE_ROUTING");
    CHECK(rail_env_closest("NCCL_IB_SOMETHING_ELSE") == NULL);
    CHECK(rail_env_closest(NULL) == NULL);
    CHECK(rail_env_known("NCCL_IB_HCA") && rail_env_known("NCCL_RAIL_RAILS"));
    CHECK(!rail_env_known("NCCL_IB_GID_INDX"));
}

struct seen {
    int n;
    struct rail_env_finding f[16];
    char text[16][512];
};

static void collect(void *arg, const struct rail_env_finding *f)
{
    struct seen *s = arg;
    if (s->n < 16) {
        s->f[s->n] = *f;
        rail_env_finding_text(f, s->text[s->n], sizeof(s->text[0]));
        s->n++;
    }
}

static const struct rail_env_finding *find(const struct seen *s, const char *name)
{
    const struct rail_env_finding *hit = NULL;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->f[i].name, name) == 0) {
            CHECK_MSG(hit == NULL, "%s reported twice", name);
            hit = &s->f[i];
        }
    return hit;
}

static void test_audit(void)
{
    char *env[] = {"PATH=/bin",
                   "NCCL_DEBUG=INFO",                 /* NCCL's, not ours: nothing */
                   "NCCL_IB_HCA=mlx5_0",              /* honoured */
                   "NCCL_IB_MQP_RETRY_CNT=5",         /* honoured (issue 28) */
                   "NCCL_NET_SHARED_BUFFERS=0",       /* NCCL's own */
                   "NCCL_IB_SUBNET_AWARE_ROUTING=1",  /* not honoured */
                   "NCCL_IB_GID_INDX=3",              /* misspelt */
                   "NCCL_IB_OOO_RQ=0",                /* the plugin behaves so */
                   "NCCL_IB_MERGE_NICS=0",            /* mapped */
                   "NCCL_IB_DISABLE=0x0",             /* as 0, numerically */
                   "NCCL_IB_ECE_ENABLE=1",            /* honoured (issue 28) */
                   "NCCL_RAIL_STRIPE_MIN=1",          /* ours */
                   "NCCL_RAIL_NO_SUCH_KNOB_AT_ALL=1", /* unknown, nothing close */
                   "NCCL_IB_SUBNET_AWARE_ROUTING=0",  /* a duplicate: reported once */
                   "NCCL_IB_BROKEN",                  /* no '=': skipped */
                   NULL};
    struct seen s = {0};
    int n = rail_env_audit(env, collect, &s);
    CHECK_EQ_INT(n, 6);
    CHECK_EQ_INT(s.n, 6);
    const struct rail_env_finding *f = find(&s, "NCCL_IB_SUBNET_AWARE_ROUTING");
    CHECK(f && f->kind == RAIL_ENV_NOT_HONOURED && strcmp(f->value, "1") == 0);
    f = find(&s, "NCCL_IB_GID_INDX");
    CHECK(f && f->kind == RAIL_ENV_UNKNOWN && f->suggestion &&
          strcmp(f->suggestion, "NCCL_IB_GID_INDEX") == 0);
    f = find(&s, "NCCL_IB_OOO_RQ");
    CHECK(f && f->kind == RAIL_ENV_AS_IF);
    f = find(&s, "NCCL_IB_DISABLE");
    CHECK(f && f->kind == RAIL_ENV_AS_IF);
    CHECK(find(&s, "NCCL_IB_ECE_ENABLE") == NULL);
    f = find(&s, "NCCL_IB_MERGE_NICS");
    CHECK(f && f->kind == RAIL_ENV_NOT_HONOURED);
    f = find(&s, "NCCL_RAIL_NO_SUCH_KNOB_AT_ALL");
    CHECK(f && f->kind == RAIL_ENV_UNKNOWN && f->suggestion == NULL);
    CHECK(find(&s, "NCCL_IB_HCA") == NULL && find(&s, "NCCL_DEBUG") == NULL);
    CHECK(find(&s, "NCCL_IB_MQP_RETRY_CNT") == NULL);
    for (int i = 0; i < s.n; i++) {
        CHECK_MSG(strstr(s.text[i], s.f[i].name) == s.text[i], "line names the variable: %s",
                  s.text[i]);
        if (s.f[i].kind == RAIL_ENV_NOT_HONOURED)
            CHECK(strstr(s.text[i], "not honoured") != NULL);
    }
    for (int i = 0; i < s.n; i++)
        if (strcmp(s.f[i].name, "NCCL_IB_GID_INDX") == 0)
            CHECK(strstr(s.text[i], "did you mean NCCL_IB_GID_INDEX?") != NULL);
        else if (strcmp(s.f[i].name, "NCCL_IB_MERGE_NICS") == 0)
            CHECK(strstr(s.text[i], "NCCL_RAIL_RAILS") != NULL);
    CHECK_EQ_INT(rail_env_audit(NULL, collect, &s), 0);
}

int main(void)
{
    test_table();
    test_closest();
    test_audit();
    return check_report("test_compat_env");
}
