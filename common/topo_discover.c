/* SPDX-License-Identifier: Apache-2.0 */
/* The plugins' topology source order: NCCL_RAIL_TOPO_PROFILE, then NCCL_TOPO_FILE, then hwloc
 * (HWLOC_XMLFILE or the live node) with sysfs under NCCL_RAIL_SYSFS_ROOT. Every decision is
 * logged (INFO, NCCL_INIT|NCCL_TUNING) so that a user can see why a source was skipped. */
#include "log.h"
#include "params.h"
#include "strutil.h"
#include "topo.h"
#include "topo_internal.h"
#include "topo_sysfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_FLAGS (NCCL_INIT | NCCL_TUNING)

static const char *source_name(int source)
{
    switch (source) {
    case RAIL_TOPO_SRC_NCCL_XML:
        return "NCCL topology XML";
    case RAIL_TOPO_SRC_HWLOC:
        return "hwloc";
    case RAIL_TOPO_SRC_PROFILE:
        return "built-in profile";
    default:
        return "none";
    }
}

static void log_summary(const struct rail_topo *t)
{
    int best = RAIL_PATH_DIS;
    struct rail_gpu_net gn;
    if (t->n_gpus > 0 && rail_topo_gpu_net(t, 0, &gn) == 0)
        best = gn.best_path;
    RAIL_INFO(LOG_FLAGS,
              "topology from %s '%s': %d GPUs (sm%d), %d NICs, GPU0 nearest NIC %s, NVSwitch %s, "
              "NVLink gen %d %.1f GB/s, %d NUMA nodes, GDR %s",
              source_name(t->source), t->origin, t->n_gpus, t->n_gpus ? t->gpus[0].sm : 0,
              t->n_nics, rail_path_name((enum rail_path)best), t->nvswitch ? "yes" : "no",
              t->nvlink_gen, (double)t->nvlink_bw, t->n_numa, t->gdr ? "yes" : "no");
}

static int try_profile(struct rail_topo *t, const char *topo_file)
{
    const char *name = rail_param_str(RAIL_PARAM_TOPO_PROFILE);
    char err[256];
    if (!name)
        return -ENOENT;
    if (rail_param_enum(RAIL_PARAM_TOPO_PROFILE) < 0)
        return -EINVAL; /* rail_param_enum said why, naming the variable */
    if (rail_topo_load_profile(name, t, err, sizeof(err)) != 0) {
        RAIL_WARN(LOG_FLAGS, "NCCL_RAIL_TOPO_PROFILE='%s' cannot be loaded (%s): ignored", name,
                  err);
        return -EINVAL;
    }
    if (topo_file)
        RAIL_INFO(LOG_FLAGS, "NCCL_TOPO_FILE=%s not read: NCCL_RAIL_TOPO_PROFILE=%s overrides it",
                  topo_file, name);
    RAIL_INFO(LOG_FLAGS, "hwloc discovery skipped: NCCL_RAIL_TOPO_PROFILE=%s is set", name);
    return 0;
}

/* 0 when the file gave a usable topology; 1 when it parsed but lists no GPU (a partial file
 * that NCCL completes from the node), kept in *t as a fallback; <0 when it failed. */
static int try_nccl_xml(struct rail_topo *t, const char *file, const char *sysfs_root)
{
    uint64_t gdr_unknown = 0;
    char err[512];
    if (rail_topo_load_nccl_xml_ex(file, t, &gdr_unknown, err, sizeof(err)) != 0) {
        RAIL_WARN(LOG_FLAGS, "NCCL_TOPO_FILE not used: %s", err);
        return -EINVAL;
    }
    /* NICs the file does not mark: GDR as NCCL's peermem check on this node says. */
    if (gdr_unknown && rail_sysfs_peermem(sysfs_root)) {
        for (int n = 0; n < t->n_nics; n++)
            if ((gdr_unknown >> n) & 1 && !t->nics[n].virtual_nic)
                t->nics[n].gdr = true;
        rail_topo_finalize(t);
    }
    rail_topo_fill_sm_from_cuda(t); /* what the file leaves out, NCCL takes from the GPUs */
    if (t->n_gpus == 0) {
        RAIL_INFO(LOG_FLAGS,
                  "NCCL_TOPO_FILE=%s lists no GPU (a partial file NCCL merges with its own "
                  "discovery): trying hwloc",
                  file);
        return 1;
    }
    return 0;
}

int rail_topo_discover(struct rail_topo *t, char *err, size_t errlen)
{
    const char *topo_file = rail_param_str(RAIL_PARAM_TOPO_FILE);
    const char *hwloc_xml = rail_param_str(RAIL_PARAM_HWLOC_XMLFILE);
    const char *sysfs_root = rail_sysfs_root_param();
    struct rail_topo *partial = NULL;
    char herr[512];
    int rc;

    if (!t)
        return rail_fail(err, errlen, "no topology to fill");
    if (!sysfs_root)
        sysfs_root = "/";
    if (try_profile(t, topo_file) == 0) {
        log_summary(t);
        return 0;
    }
    if (topo_file) {
        rc = try_nccl_xml(t, topo_file, sysfs_root);
        if (rc == 0) {
            RAIL_INFO(LOG_FLAGS, "hwloc discovery skipped: NCCL_TOPO_FILE=%s is used", topo_file);
            log_summary(t);
            return 0;
        }
        if (rc == 1) {
            partial = malloc(sizeof(*partial));
            if (partial)
                *partial = *t;
        }
    } else {
        RAIL_INFO(LOG_FLAGS, "NCCL_RAIL_TOPO_PROFILE and NCCL_TOPO_FILE unset: using hwloc");
    }
    rc = rail_topo_load_hwloc(hwloc_xml, sysfs_root, t, herr, sizeof(herr));
    if (rc == 0 && (t->n_gpus > 0 || !partial)) {
        RAIL_INFO(LOG_FLAGS, "hwloc source: %s, sysfs root %s", hwloc_xml ? hwloc_xml : "live node",
                  sysfs_root);
        free(partial);
        log_summary(t);
        return 0;
    }
    if (partial) {
        if (rc && hwloc_xml) /* a file the user named that does not load: not a quiet fallback */
            RAIL_WARN(LOG_FLAGS, "HWLOC_XMLFILE not used: %s; keeping the partial NCCL_TOPO_FILE",
                      herr);
        else
            RAIL_INFO(LOG_FLAGS, "hwloc gave no GPU (%s): keeping the partial NCCL_TOPO_FILE",
                      rc ? herr : "none found");
        *t = *partial;
        free(partial);
        log_summary(t);
        return 0;
    }
    RAIL_WARN(LOG_FLAGS, "no topology: %s", herr);
    return rail_fail(err, errlen, "%s", herr);
}
