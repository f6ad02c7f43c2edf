/* SPDX-License-Identifier: Apache-2.0 */
#include "cli_topo.h"

#include <errno.h>
#include <string.h>

int cli_topo_load(const struct cli_topo_opts *o, struct rail_topo *t, char *err, size_t errlen)
{
    int given = !!o->profile + !!o->topo_file + !!o->hwloc_xml;
    if (given > 1) {
        snprintf(err, errlen, "choose one of --profile, --topo-file and --hwloc-xml");
        return -EINVAL;
    }
    if (o->profile)
        return rail_topo_load_profile(o->profile, t, err, errlen);
    if (o->topo_file)
        return rail_topo_load_nccl_xml(o->topo_file, t, err, errlen);
    if (o->hwloc_xml)
        return rail_topo_load_hwloc(o->hwloc_xml, o->sysfs_root ? o->sysfs_root : "/", t, err,
                                    errlen);
    if (o->sysfs_root)
        return rail_topo_load_hwloc(NULL, o->sysfs_root, t, err, errlen);
    return rail_topo_discover(t, err, errlen);
}

static const char *link_name(int ll)
{
    return ll == RAIL_LINK_IB ? "IB" : ll == RAIL_LINK_ETH ? "RoCE/Eth" : "net";
}

void cli_topo_print_summary(FILE *f, const struct rail_topo *t)
{
    int sm = 0;
    for (int g = 0; g < t->n_gpus; g++)
        if (t->gpus[g].sm && (!sm || t->gpus[g].sm < sm))
            sm = t->gpus[g].sm;
    fprintf(f, "topology: %s%s%s%s\n", t->origin, t->inferred ? " (completed from PCI ids:" : "",
            t->inferred & RAIL_TOPO_INFERRED_NVLINK ? " NVLink" : "",
            t->inferred ? (t->inferred & RAIL_TOPO_INFERRED_NIC_SPEED ? " NIC speed)" : ")") : "");
    fprintf(f, "  GPUs: %d (sm%d)", t->n_gpus, sm);
    if (t->nvlink_gen)
        fprintf(f, ", NVLink%d %.1f GB/s per GPU%s", t->nvlink_gen, (double)t->nvlink_bw,
                t->nvswitch ? " through NVSwitch" : "");
    else
        fprintf(f, ", no NVLink");
    fprintf(f, "\n  NICs: %d", t->n_nics);
    for (int n = 0; n < t->n_nics && n < 8; n++)
        fprintf(f, "%s %s %d Gb/s %s", n ? "," : "", t->nics[n].name, t->nics[n].speed_mbps / 1000,
                link_name(t->nics[n].link_layer));
    if (t->n_nics > 8)
        fprintf(f, ", ...");
    fprintf(f, "\n");
    for (int g = 0; g < t->n_gpus && g < RAIL_TOPO_MAX_GPUS; g++) {
        struct rail_gpu_net gn;
        if (rail_topo_gpu_net(t, g, &gn) == 0)
            fprintf(f, "  GPU%d %s: %d nearest NIC(s) at %s, %.1f GB/s of network\n", g,
                    t->gpus[g].busid, gn.n_nearest, rail_path_name((enum rail_path)gn.best_path),
                    (double)gn.nearest_gbps);
    }
}
