/* SPDX-License-Identifier: Apache-2.0 */
/* The doctor's driver: the preparations (configuration files, topology) and then the table of
 * checks, in order. The only module that calls the checks; no check calls back into it. */
#include "doctor.h"

#include <stdlib.h>

#include "doctor_deploy.h"

/* Steps that fill the context every later check reads: the merged environment first (every
 * check sees NCCL's view of the configuration files), then the topology. */
static void (*const preparations[])(struct doctor_ctx *, struct doctor_report *) = {
    doctor_read_conf,
    doctor_load_topo,
};

/* The checks, in report order: each reads the context and appends findings. */
static const struct doctor_check {
    const char *ids; /* the finding ids it owns (docs/doctor.md) */
    void (*run)(const struct doctor_ctx *, struct doctor_report *);
} checks[] = {
    {"rdma.*", doctor_check_rdma},     {"roce.gid", doctor_check_gid},
    {"pcie.link", doctor_check_pcie},  {"topo.*", doctor_check_topo},
    {"pcie.acs", doctor_check_acs},    {"gpu.bar1", doctor_check_bar1},
    {"gdr.*", doctor_check_gdr},       {"sys.*", doctor_check_system},
    {"env.*", doctor_check_env},       {"plugin.*", doctor_check_plugins},
    {"recommend.*", doctor_recommend},
};

void doctor_ctx_release(struct doctor_ctx *c)
{
    free(c->topo);
    c->topo = NULL;
    doctor_conf_release(c);
}

int doctor_run(struct doctor_ctx *c, struct doctor_report *r)
{
    if (!c->root || !*c->root)
        c->root = "/";
    for (size_t i = 0; i < sizeof(preparations) / sizeof(preparations[0]); i++)
        preparations[i](c, r);
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
        checks[i].run(c, r);
    return doctor_count(r, DOCTOR_ERROR) > 0 || r->oom ? 1 : 0;
}
