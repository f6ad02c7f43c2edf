/* SPDX-License-Identifier: Apache-2.0 */
/* Environment checks (env.*): NCCL variables that make init fail or silently take the fast path
 * away, and every knob of the params table validated the way the plugins parse it. The
 * environment is the injectable doctor_env, never getenv(). */
#include "doctor_checks.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat_env.h"
#include "model/cost_model.h"
#include "transport/gid_select.h"
#include "transport/hca_filter.h"
#include "transport/net_ifname.h"
#include "rails/rail_group.h"
#include "telemetry/rail_stats_format.h"
#include "decide/rules.h"
#include "safe_file.h"
#include "topo_sysfs.h"

/* ---- NCCL_ALGO / NCCL_PROTO ---- */

static bool in_list(const char *tok, size_t n, const char *(*name)(int), int count)
{
    for (int i = 0; i < count; i++)
        if (strlen(name(i)) == n && strncasecmp(name(i), tok, n) == 0)
            return true;
    return false;
}

int doctor_check_algo_list(const char *spec, bool proto, char *err, size_t errlen)
{
    const char *p = spec;
    bool first = true;
    if (!spec)
        return 0;
    while (*p) {
        size_t glen = strcspn(p, ";");
        const char *colon = memchr(p, ':', glen), *list = p;
        size_t llen = glen;
        if (colon) {
            if (!in_list(p, (size_t)(colon - p), rail_coll_name, RAIL_NUM_COLLS)) {
                snprintf(err, errlen, "unknown collective '%.*s'", (int)(colon - p), p);
                return -EINVAL;
            }
            list = colon + 1;
            llen = glen - (size_t)(list - p);
        } else if (!first && glen) {
            snprintf(err, errlen, "'%.*s' needs a collective prefix (AllReduce:...)", (int)glen, p);
            return -EINVAL;
        }
        if (llen && *list == '^') {
            list++;
            llen--;
        }
        while (llen) {
            size_t tlen = strcspn(list, ",;");
            if (tlen > llen)
                tlen = llen;
            if (tlen && !(proto ? in_list(list, tlen, rail_proto_name, NCCL_NUM_PROTOCOLS)
                                : in_list(list, tlen, rail_algo_name, NCCL_NUM_ALGORITHMS))) {
                snprintf(err, errlen, "unknown %s '%.*s'", proto ? "protocol" : "algorithm",
                         (int)tlen, list);
                return -EINVAL;
            }
            list += tlen;
            llen -= tlen;
            if (llen && *list == ',') {
                list++;
                llen--;
            }
        }
        first = false;
        p += glen;
        if (*p == ';')
            p++;
    }
    return 0;
}

static void check_algo_proto(const struct doctor_ctx *c, struct doctor_report *r, bool proto)
{
    const char *name = proto ? "NCCL_PROTO" : "NCCL_ALGO";
    const char *v = doctor_env_get(&c->env, name);
    char err[160];
    if (!v)
        return;
    if (doctor_check_algo_list(v, proto, err, sizeof(err)) != 0)
        doctor_add(r, proto ? "env.proto" : "env.algo", DOCTOR_ERROR, name,
                   proto ? "use LL, LL128, Simple (comma list, optional ^ to exclude, "
                           "per collective as AllReduce:LL128;Broadcast:Simple), or unset it"
                         : "use Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT "
                           "(NVLink is not an algorithm: NVLS is), or unset it",
                   "'%s': %s: NCCL fails communicator init (ncclInvalidUsage)", v, err);
    else
        doctor_add(r, proto ? "env.proto" : "env.algo", DOCTOR_INFO, name,
                   "unset it unless a measurement shows NCCL's choice is wrong",
                   "'%s' restricts what NCCL and the tuner may choose", v);
}

/* ---- transport switches ---- */

static bool truthy(const char *v)
{
    return v && strtol(v, NULL, 0) != 0;
}

static void check_transport(const struct doctor_ctx *c, struct doctor_report *r)
{
    const char *v;
    if (truthy(doctor_env_get(&c->env, "NCCL_IB_DISABLE")))
        doctor_add(r, "env.ib_disable", DOCTOR_WARN, "NCCL_IB_DISABLE", "unset NCCL_IB_DISABLE",
                   "=1 turns NCCL's built-in IB transport off: when the rail net plugin is not "
                   "loaded or declines, NCCL falls back to TCP sockets");
    if (truthy(doctor_env_get(&c->env, "NCCL_P2P_DISABLE")))
        doctor_add(r, "env.p2p_disable", DOCTOR_WARN, "NCCL_P2P_DISABLE",
                   "unset NCCL_P2P_DISABLE (if P2P hangs, look at ACS/IOMMU instead)",
                   "=1 turns GPU peer-to-peer (NVLink/PCIe) off: intra-node traffic goes "
                   "through host memory");
    if ((v = doctor_env_get(&c->env, "NCCL_NET")) != NULL) {
        if (strcasecmp(v, "Socket") == 0)
            doctor_add(r, "env.net", DOCTOR_WARN, "NCCL_NET", "unset NCCL_NET, or NCCL_NET=RAIL",
                       "=Socket forces the TCP socket transport: no RDMA at all");
        else if (strcasecmp(v, "IB") == 0)
            doctor_add(r, "env.net", DOCTOR_WARN, "NCCL_NET", "unset NCCL_NET, or NCCL_NET=RAIL",
                       "=IB selects NCCL's built-in IB transport: the rail net plugin is bypassed");
        else if (strcasecmp(v, "RAIL") != 0)
            doctor_add(r, "env.net", DOCTOR_WARN, "NCCL_NET", "unset NCCL_NET, or NCCL_NET=RAIL",
                       "='%s' names neither RAIL nor NCCL's IB/Socket: only another plugin of "
                       "that name can serve it, otherwise init fails",
                       v);
        else
            doctor_add(r, "env.net", DOCTOR_OK, "NCCL_NET", NULL, "=RAIL selects the rail plugin");
    }
}

static void check_gdr_level(const struct doctor_ctx *c, struct doctor_report *r)
{
    const char *v = doctor_env_get(&c->env, "NCCL_NET_GDR_LEVEL");
    const struct rail_topo *t = c->topo;
    int level, off = 0, worst = RAIL_PATH_LOC;
    if (!v)
        return;
    level = rail_path_parse(v);
    if (level < 0) {
        doctor_add(r, "env.gdr_level", DOCTOR_WARN, "NCCL_NET_GDR_LEVEL",
                   "use a path class (LOC, PIX, PXB, PHB, SYS) or unset it (default PXB)",
                   "'%s' is not a path class", v);
        return;
    }
    for (int g = 0; t && g < t->n_gpus; g++) {
        int best = rail_topo_gpu_best_path(t, g);
        if (best < RAIL_PATH_DIS && best > level) {
            off++;
            worst = best > worst ? best : worst;
        }
    }
    if (level < RAIL_PATH_PIX || off)
        doctor_add(r, "env.gdr_level", DOCTOR_WARN, "NCCL_NET_GDR_LEVEL",
                   "unset it (default PXB) or raise it to the GPUs' NIC path class",
                   "=%s: GPUDirect RDMA is off for %s (nearest NIC at %s)", v,
                   level < RAIL_PATH_PIX ? "every GPU" : "some GPUs",
                   off ? rail_path_name((enum rail_path)worst) : "any class");
    else if (level > RAIL_PATH_PXB)
        doctor_add(r, "env.gdr_level", DOCTOR_INFO, "NCCL_NET_GDR_LEVEL",
                   "keep it only if GDR through the CPU root complex was measured to be faster",
                   "=%s allows GDR beyond a PCIe switch, through the CPU", v);
}

/* NCCL_IB_HCA: valid syntax, and some ACTIVE port selected. */
static void check_ib_hca(const struct doctor_ctx *c, struct doctor_report *r)
{
    static char devs[64][RAIL_SYSFS_NAME_LEN], ports[16][RAIL_SYSFS_NAME_LEN];
    static struct rail_hca_filter f;
    const char *v = doctor_env_get(&c->env, "NCCL_IB_HCA");
    char err[200], sel[400] = "";
    size_t used = 0;
    int nd, matched = 0, matched_active = 0, total = 0;
    if (!v)
        return;
    if (rail_hca_filter_parse(v, &f, err, sizeof(err)) != 0) {
        doctor_add(r, "env.ib_hca", DOCTOR_ERROR, "NCCL_IB_HCA",
                   "syntax: [^][=]name[:port],... e.g. =mlx5_0:1,mlx5_3:1",
                   "'%s' is invalid (%s): the net plugin declines", v, err);
        return;
    }
    nd = rail_sysfs_list(c->root, "/sys/class/infiniband", devs, 64);
    for (int d = 0; d < nd; d++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "/sys/class/infiniband/%.255s/ports", devs[d]);
        int np = rail_sysfs_list(c->root, dir, ports, 16);
        for (int p = 0; p < np; p++) {
            struct rail_sysfs_ib_port sp;
            int pn = atoi(ports[p]);
            if (pn <= 0 || rail_sysfs_ib_port(c->root, devs[d], pn, &sp) != 0)
                continue;
            total++;
            if (!rail_hca_filter_match(&f, devs[d], pn))
                continue;
            matched++;
            if (sp.active) {
                matched_active++;
                if (used < sizeof(sel))
                    used += (size_t)snprintf(sel + used, sizeof(sel) - used, "%s%s:%d",
                                             used ? "," : "", devs[d], pn);
            }
        }
    }
    if (total == 0)
        return; /* rdma.devices reports the missing devices */
    if (matched_active == 0)
        doctor_add(r, "env.ib_hca", DOCTOR_ERROR, "NCCL_IB_HCA",
                   "list existing ACTIVE ports (see rdma.port), or unset NCCL_IB_HCA",
                   "'%s' selects %s of the %d port(s): the net plugin declines", v,
                   matched ? "only ports that are not ACTIVE" : "none", total);
    else
        doctor_add(r, "env.ib_hca", DOCTOR_OK, "NCCL_IB_HCA", NULL, "'%s' selects %s", v, sel);
}

/* ---- the params table ---- */

/* NCCL_RAIL_RAILS parsed by the plugin's own grouping against the node's ports (topology NICs;
 * a device with several ports is named device:port). */
static bool rails_valid(const struct doctor_ctx *c, const char *v, char *why, size_t len)
{
    static struct rail_group_port ports[RAIL_GROUP_MAX_PORTS];
    static char names[RAIL_GROUP_MAX_PORTS][RAIL_GROUP_PORT_NAME_MAX];
    static struct rail_groups groups;
    const struct rail_topo *t = c->topo;
    int n = 0;
    for (int i = 0; t && i < t->n_nics && n < RAIL_GROUP_MAX_PORTS; i++) {
        const struct rail_nic *nic = &t->nics[i];
        bool multi = false;
        for (int j = 0; j < t->n_nics; j++)
            multi |= j != i && strcmp(t->nics[j].name, nic->name) == 0;
        snprintf(names[n], sizeof(names[n]), multi ? "%.60s:%d" : "%.60s", nic->name,
                 nic->port > 0 ? nic->port : 1);
        ports[n] = (struct rail_group_port){.name = names[n],
                                            .ibdev = nic->name,
                                            .port = nic->port > 0 ? nic->port : 1,
                                            .link_layer = nic->link_layer,
                                            .speed_mbps = nic->speed_mbps,
                                            .busid = nic->busid[0] ? nic->busid : NULL,
                                            .numa = nic->numa};
        n++;
    }
    return rail_group_build(ports, n, NULL, v, &groups, why, len) == 0;
}

static bool knob_valid(const struct doctor_ctx *c, const struct rail_param_def *d,
                       enum rail_param_id id, const char *v, char *why, size_t len)
{
    long long out;
    if (d->type == RAIL_PT_INT || d->type == RAIL_PT_BOOL)
        return rail_param_parse_int(d, v, &out, why, len) == 0;
    if (d->type == RAIL_PT_ENUM)
        return rail_param_parse_enum(d, v, why, len) >= 0;
    if (d->type == RAIL_PT_FRACTION) {
        double f;
        return rail_param_parse_fraction(d, v, &f, why, len) == 0;
    }
    if (id == RAIL_PARAM_GID_INDEX) {
        struct rail_gid_overrides ov;
        return rail_gid_overrides_parse(v, &ov, why, len) == 0;
    }
    if (id == RAIL_PARAM_IB_ADDR_RANGE) {
        struct rail_gid_range rg;
        int af = doctor_env_enum(&c->env, RAIL_PARAM_IB_ADDR_FAMILY) == 1 ? AF_INET6 : AF_INET;
        return rail_gid_range_parse(v, af, &rg, why, len) == 0;
    }
    if (id == RAIL_PARAM_TOPO_FILE || id == RAIL_PARAM_HWLOC_XMLFILE)
        return doctor_path_file_ok(doctor_env_root(c, d->name), v, why, len);
    if (id == RAIL_PARAM_SYSFS_ROOT || id == RAIL_PARAM_PROFILE_DIR)
        return doctor_path_dir_ok(doctor_env_root(c, d->name), v, why, len);
    if (id == RAIL_PARAM_SOCKET_IFNAME)
        return rail_ifname_spec_check(v, why, len) == 0;
    if (id == RAIL_PARAM_RAILS)
        return rails_valid(c, v, why, len);
    if (id == RAIL_PARAM_STATS_FILE)
        return doctor_path_stats_ok(doctor_env_root(c, d->name), v, why, len);
    return true;
}

static void check_knobs(const struct doctor_ctx *c, struct doctor_report *r)
{
    int set = 0, bad = 0;
    for (int i = 0; i < RAIL_PARAM_COUNT; i++) {
        const struct rail_param_def *d = rail_param_def((enum rail_param_id)i);
        const char *v = doctor_env_get(&c->env, d->name);
        char why[256] = "", fix[320];
        if (!v || i == RAIL_PARAM_IB_HCA)
            continue;
        set++;
        if (i == RAIL_PARAM_TUNER_CONFIG_FILE) {
            bool lenient = doctor_env_int(&c->env, RAIL_PARAM_CONFIG_LENIENT, NULL) != 0;
            if (doctor_rules_check(doctor_env_root(c, d->name), v, lenient, why, sizeof(why)) !=
                0) {
                bad++;
                doctor_add(r, "env.knob", DOCTOR_ERROR, d->name,
                           "fix the file (docs/rules.md) or NCCL_RAIL_CONFIG_LENIENT=1",
                           "%s: the tuner plugin fails to initialise", why);
            }
            continue;
        }
        if (knob_valid(c, d, (enum rail_param_id)i, v, why, sizeof(why)))
            continue;
        bad++;
        if (d->type == RAIL_PT_ENUM)
            snprintf(fix, sizeof(fix), "one of %s", d->choices);
        else if (d->type == RAIL_PT_INT || d->type == RAIL_PT_BOOL)
            snprintf(fix, sizeof(fix), "an integer in [%lld, %lld] (default %s)", d->min, d->max,
                     d->def);
        else if (d->type == RAIL_PT_FRACTION)
            snprintf(fix, sizeof(fix), "a fraction in [%g, %g] (default %s)", (double)d->min / 1e6,
                     (double)d->max / 1e6, d->def);
        else
            snprintf(fix, sizeof(fix), "see docs/configuration.md");
        doctor_add(r, "env.knob", DOCTOR_WARN, d->name, fix,
                   "'%s' is invalid (%s): the plugins warn and use %s%s", v, why,
                   *d->def ? "the default " : "no value", d->def);
    }
    for (char *const *e = c->env.vars; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        bool known = false;
        if (strncmp(*e, "NCCL_RAIL_", 10) != 0)
            continue;
        for (int i = 0; i < RAIL_PARAM_COUNT && !known; i++) {
            const char *name = rail_param_def((enum rail_param_id)i)->name;
            known = strlen(name) == n && strncmp(name, *e, n) == 0;
        }
        if (!known) {
            char subj[DOCTOR_SUBJECT_LEN];
            snprintf(subj, sizeof(subj), "%.*s", (int)(n < 90 ? n : 90), *e);
            doctor_add(r, "env.unknown", DOCTOR_WARN, subj,
                       "nccl-rail params lists every knob; check the spelling",
                       "not a knob of nccl-rail: it is ignored");
            bad++;
        }
    }
    if (set && !bad)
        doctor_add(r, "env.knob", DOCTOR_OK, "knobs", NULL,
                   "%d knob(s) of the table set, all valid", set);
}

/* ---- NCCL's NCCL_IB_* / NCCL_NET_* variables (docs/compatibility.md) ---- */

static void compat_finding(void *arg, const struct rail_env_finding *f)
{
    char line[512];
    rail_env_finding_text(f, line, sizeof(line));
    doctor_add(arg, "env.nccl_compat", f->kind == RAIL_ENV_AS_IF ? DOCTOR_INFO : DOCTOR_WARN,
               f->name,
               f->kind == RAIL_ENV_UNKNOWN
                   ? (f->suggestion ? "correct the name" : "remove it")
                   : (f->kind == RAIL_ENV_AS_IF ? NULL : "unset it (docs/compatibility.md)"),
               "%s", line);
}

/* Each NCCL_IB_* / NCCL_NET_* variable set (environment and nccl.conf, merged as NCCL merges
 * them): honoured or read by NCCL as INFO; set but not honoured, or unknown, as the WARN the net
 * plugin logs at init. */
static void check_nccl_compat(const struct doctor_ctx *c, struct doctor_report *r)
{
    for (int i = 0; c->env.vars && c->env.vars[i]; i++) {
        const char *eq = strchr(c->env.vars[i], '=');
        char name[96];
        if (!eq || (size_t)(eq - c->env.vars[i]) >= sizeof(name))
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(eq - c->env.vars[i]), c->env.vars[i]);
        const struct rail_compat_var *v = rail_compat_find(name);
        if (!v || !eq[1] || doctor_env_get(&c->env, name) != eq + 1)
            continue; /* unknown or not applicable: the audit below; a duplicate: the first */
        if (v->handling == RAIL_COMPAT_SAME)
            doctor_add(r, "env.nccl_compat", DOCTOR_INFO, name, NULL,
                       "%s=%.64s: honoured by the net plugin with NCCL's meaning", name, eq + 1);
        else if (v->handling == RAIL_COMPAT_NCCL)
            doctor_add(r, "env.nccl_compat", DOCTOR_INFO, name, NULL,
                       "%s=%.64s: read by NCCL itself, unchanged with the plugin", name, eq + 1);
    }
    (void)rail_env_audit(c->env.vars, compat_finding, r);
}

void doctor_check_env(const struct doctor_ctx *c, struct doctor_report *r)
{
    check_nccl_compat(c, r);
    check_algo_proto(c, r, false);
    check_algo_proto(c, r, true);
    check_transport(c, r);
    check_gdr_level(c, r);
    check_ib_hca(c, r);
    check_knobs(c, r);
}
