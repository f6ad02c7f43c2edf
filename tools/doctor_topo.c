/* SPDX-License-Identifier: Apache-2.0 */
/* Topology for the doctor: hwloc (an XML file, or the live node) or a sysfs-only walk of a root
 * prefix, and the GPU<->NIC placement checks (topo.*).
 *
 * The sysfs walk classifies paths as NCCL's sysfs walk does (and as topo_hwloc.c does from hwloc):
 * a device's switch chain is the list of its grand-parent PCI functions (switch upstream ports),
 * walked upwards from realpath(/sys/bus/pci/devices/<bdf>), with Broadcom PEX double levels
 * flattened; no common switch means PHB on the same NUMA node, SYS otherwise. */
#include "doctor_checks.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "topo_internal.h"
#include "topo_sysfs.h"

#define MAX_PCI_DEVS 1024
#define MAX_KEYS     256
#define MAX_PORTS    16

struct keys {
    int n;
    char path[MAX_KEYS][160];
};

/* Small interning table: the same sysfs path always gives the same non-zero key. */
static uintptr_t key_of(struct keys *k, const char *path)
{
    for (int i = 0; i < k->n; i++)
        if (strcmp(k->path[i], path) == 0)
            return (uintptr_t)i + 1;
    size_t len = strlen(path);
    /* A path that does not fit would collide with another after truncation: no key of its own. */
    if (k->n == MAX_KEYS || len >= sizeof(k->path[0]))
        return (uintptr_t)MAX_KEYS + 1;
    memcpy(k->path[k->n], path, len + 1);
    return (uintptr_t)++k->n;
}

static bool is_bdf(const char *s)
{
    char tmp[16];
    return rail_busid_normalize(s, tmp) == 0;
}

static long read_hex(const char *root, const char *dir, const char *file)
{
    char path[PATH_MAX], buf[32];
    long v;
    if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path) ||
        rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0 ||
        rail_parse_long(buf, 16, 0, 0xffffff, &v) != 0)
        return -1;
    return v;
}

static uint64_t bridge_id(const char *root, const char *dir)
{
    long v = read_hex(root, dir, "vendor"), d = read_hex(root, dir, "device"),
         sv = read_hex(root, dir, "subsystem_vendor"), sd = read_hex(root, dir, "subsystem_device");
    if (v < 0 || d < 0)
        return 0;
    return (uint64_t)v << 48 | (uint64_t)d << 32 | (uint64_t)(sv < 0 ? 0 : sv) << 16 |
           (uint64_t)(sd < 0 ? 0 : sd);
}

/* Chain of the PCI device whose resolved sysfs path is devpath ("/sys/devices/pci.../<bdf>"). */
static void chain_of(const char *root, const char *devpath, int numa, struct keys *k,
                     struct rail_pci_chain *out)
{
    char comp[RAIL_TOPO_MAX_CHAIN * 3 + 8][160], raw[RAIL_TOPO_MAX_CHAIN][PATH_MAX / 4];
    int nc = 0, n = 0, o;
    bool dropped[RAIL_TOPO_MAX_CHAIN + 1] = {false};
    const char *p = devpath;
    /* prefixes of devpath, one per component */
    while (*p && nc < (int)(sizeof(comp) / sizeof(comp[0]))) {
        const char *slash = strchr(p + 1, '/');
        size_t len = slash ? (size_t)(slash - devpath) : strlen(devpath);
        snprintf(comp[nc++], sizeof(comp[0]), "%.*s", (int)len, devpath);
        if (!slash)
            break;
        p = slash;
    }
    o = nc - 1;
    while (o >= 2 && n < RAIL_TOPO_MAX_CHAIN) {
        const char *port = strrchr(comp[o - 1], '/') + 1, *sw = strrchr(comp[o - 2], '/') + 1;
        if (!is_bdf(port) || !is_bdf(sw))
            break;
        snprintf(raw[n++], sizeof(raw[0]), "%s", comp[o - 2]);
        o -= 2;
    }
    for (int i = n - 1; i >= 0; i--) {
        int pgen = i + 1 < n ? rail_bcm_switch_gen(bridge_id(root, raw[i + 1]), 0) : 0;
        dropped[i] =
            pgen && !dropped[i + 1] && rail_bcm_switch_gen(bridge_id(root, raw[i]), 1) == pgen;
    }
    out->n = 0;
    for (int i = 0; i < n; i++)
        if (!dropped[i])
            out->sw[out->n++] = key_of(k, raw[i]);
    /* CPU node: the NUMA node, else the host bridge (first component under /sys/devices). */
    out->cpu = numa >= 0 ? numa : 10000 + (int)key_of(k, nc > 2 ? comp[2] : devpath);
}

struct sysfs_walk {
    struct keys keys;
    char names[MAX_PCI_DEVS][RAIL_SYSFS_NAME_LEN];
    struct rail_pci_chain gpu_chain[RAIL_TOPO_MAX_GPUS], nic_chain[RAIL_TOPO_MAX_NICS];
};

static void load_gpus(const char *root, struct sysfs_walk *w, struct rail_topo *t)
{
    int n = rail_sysfs_list(root, "/sys/bus/pci/devices", w->names, MAX_PCI_DEVS);
    for (int i = 0; i < n && t->n_gpus < RAIL_TOPO_MAX_GPUS; i++) {
        char dir[PATH_MAX], real[PATH_MAX];
        struct rail_gpu *g = &t->gpus[t->n_gpus];
        long vendor, cls, dev;
        if (!is_bdf(w->names[i]))
            continue;
        snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%.255s", w->names[i]);
        vendor = read_hex(root, dir, "vendor");
        cls = read_hex(root, dir, "class");
        dev = read_hex(root, dir, "device");
        if (vendor != 0x10de || (cls >> 16) != 0x03 ||
            rail_sysfs_realpath(root, dir, real, sizeof(real)))
            continue;
        rail_busid_normalize(w->names[i], g->busid);
        g->pci_vendor = (uint16_t)vendor;
        g->pci_device = (uint16_t)(dev < 0 ? 0 : dev);
        g->sm = rail_sm_from_pci_device(g->pci_vendor, g->pci_device);
        g->numa = rail_sysfs_pci_numa(root, w->names[i]);
        g->gdr = true;
        if (rail_sysfs_pcie_link(root, w->names[i], &g->pcie_gen, &g->pcie_width) == 0)
            g->pcie_gbps = rail_pcie_gbps(g->pcie_gen, g->pcie_width);
        chain_of(root, real, g->numa, &w->keys, &w->gpu_chain[t->n_gpus]);
        t->n_gpus++;
    }
}

static void load_nics(const char *root, struct sysfs_walk *w, struct rail_topo *t)
{
    static char ports[MAX_PORTS][RAIL_SYSFS_NAME_LEN];
    bool peermem = rail_sysfs_peermem(root);
    int n = rail_sysfs_list(root, "/sys/class/infiniband", w->names, MAX_PCI_DEVS);
    for (int i = 0; i < n; i++) {
        char dir[PATH_MAX], real[PATH_MAX] = "";
        const char *bdf = NULL;
        int np;
        if (strlen(w->names[i]) >= sizeof(t->nics[0].name))
            continue; /* no verbs device name is this long: not one to truncate */
        snprintf(dir, sizeof(dir), "/sys/class/infiniband/%.255s/ports", w->names[i]);
        np = rail_sysfs_list(root, dir, ports, MAX_PORTS);
        snprintf(dir, sizeof(dir), "/sys/class/infiniband/%.255s/device", w->names[i]);
        if (rail_sysfs_realpath(root, dir, real, sizeof(real)) == 0 && strrchr(real, '/') &&
            is_bdf(strrchr(real, '/') + 1))
            bdf = strrchr(real, '/') + 1;
        for (int p = 0; p < np && t->n_nics < RAIL_TOPO_MAX_NICS; p++) {
            struct rail_nic *nic = &t->nics[t->n_nics];
            struct rail_sysfs_ib_port sp;
            long port;
            if (rail_parse_long(ports[p], 10, 1, 255, &port) != 0)
                continue;
            snprintf(nic->name, sizeof(nic->name), "%.*s", (int)sizeof(nic->name) - 1, w->names[i]);
            nic->port = (int)port;
            nic->active = true;
            nic->virtual_nic = bdf == NULL;
            nic->numa = -1;
            if (bdf) {
                char pdir[PATH_MAX];
                rail_busid_normalize(bdf, nic->busid);
                snprintf(pdir, sizeof(pdir), "/sys/bus/pci/devices/%.255s", bdf);
                nic->pci_vendor = (uint16_t)(read_hex(root, pdir, "vendor") & 0xffff);
                nic->pci_device = (uint16_t)(read_hex(root, pdir, "device") & 0xffff);
                nic->numa = rail_sysfs_pci_numa(root, bdf);
                if (rail_sysfs_pcie_link(root, bdf, &nic->pcie_gen, &nic->pcie_width) == 0)
                    nic->pcie_gbps = rail_pcie_gbps(nic->pcie_gen, nic->pcie_width);
                chain_of(root, real, nic->numa, &w->keys, &w->nic_chain[t->n_nics]);
            } else {
                w->nic_chain[t->n_nics].n = 0;
                w->nic_chain[t->n_nics].cpu = -2;
            }
            if (rail_sysfs_ib_port(root, nic->name, nic->port, &sp) == 0) {
                nic->speed_mbps = sp.speed_mbps;
                nic->link_layer = sp.link_layer;
                nic->active = sp.active;
            }
            nic->gdr = peermem && bdf;
            t->n_nics++;
        }
    }
}

int doctor_topo_from_sysfs(const char *root, struct rail_topo *t, char *err, size_t errlen)
{
    struct sysfs_walk *w = calloc(1, sizeof(*w));
    char origin[256];
    if (!w) {
        rail_set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    snprintf(origin, sizeof(origin), "sysfs under %s", root);
    rail_topo_reset(t, RAIL_TOPO_SRC_NONE, origin);
    load_gpus(root, w, t);
    load_nics(root, w, t);
    for (int g = 0; g < t->n_gpus; g++)
        for (int n = 0; n < t->n_nics; n++)
            t->path[g][n] = (uint8_t)(t->nics[n].virtual_nic
                                          ? RAIL_PATH_SYS
                                          : rail_path_classify(&w->gpu_chain[g], &w->nic_chain[n]));
    rail_topo_finalize(t);
    free(w);
    rail_clear_err(err, errlen);
    return 0;
}

void doctor_load_topo(struct doctor_ctx *c, struct doctor_report *r)
{
    int rc;
    c->topo = calloc(1, sizeof(*c->topo));
    c->topo_err[0] = '\0';
    if (!c->topo) {
        doctor_add(r, "topo.source", DOCTOR_WARN, "topology", NULL,
                   "out of memory: GPU<->NIC checks skipped");
        return;
    }
    if (c->hwloc_xml)
        rc = rail_topo_load_hwloc(c->hwloc_xml, c->root, c->topo, c->topo_err, sizeof(c->topo_err));
    else if (strcmp(c->root, "/") == 0)
        rc = rail_topo_load_hwloc(NULL, "/", c->topo, c->topo_err, sizeof(c->topo_err));
    else
        rc = doctor_topo_from_sysfs(c->root, c->topo, c->topo_err, sizeof(c->topo_err));
    if (rc < 0) {
        doctor_add(r, "topo.source", DOCTOR_WARN, "topology",
                   "check the --hwloc-xml file (lstopo --whole-io --of xml) or the --root tree",
                   "cannot load the topology (%s): GPU<->NIC checks skipped", c->topo_err);
        free(c->topo);
        c->topo = NULL;
        return;
    }
    doctor_add(r, "topo.source", DOCTOR_INFO, "topology", NULL, "%s: %d GPU(s), %d NIC port(s)",
               c->topo->origin, c->topo->n_gpus, c->topo->n_nics);
}

void doctor_check_topo(const struct doctor_ctx *c, struct doctor_report *r)
{
    const struct rail_topo *t = c->topo;
    bool any_active = false;
    if (!t)
        return;
    if (t->n_gpus == 0) {
        doctor_add(r, "topo.gpus", DOCTOR_INFO, "GPUs", NULL,
                   "no NVIDIA GPU in the topology: GPU<->NIC placement not checked");
        return;
    }
    for (int n = 0; n < t->n_nics; n++)
        any_active |= t->nics[n].active;
    if (!any_active)
        return; /* rdma.* already says there is no usable port */
    for (int g = 0; g < t->n_gpus; g++) {
        int best = rail_topo_gpu_best_path(t, g), same_numa = 0, known_numa = 0;
        char subj[64], names[256] = "", nic_numa[64] = "";
        size_t used = 0;
        enum doctor_sev sev = DOCTOR_OK;
        const char *fix = NULL;
        snprintf(subj, sizeof(subj), "GPU%d %s", g, t->gpus[g].busid);
        for (int n = 0; n < t->n_nics; n++) {
            const struct rail_nic *nic = &t->nics[n];
            if (!nic->active || t->path[g][n] != best)
                continue;
            if (used < sizeof(names))
                used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s:%d",
                                         used ? "," : "", nic->name, nic->port);
            if (nic->numa >= 0 && t->gpus[g].numa >= 0) {
                known_numa++;
                same_numa += nic->numa == t->gpus[g].numa;
                snprintf(nic_numa, sizeof(nic_numa), "%d", nic->numa);
            }
        }
        if (best == RAIL_PATH_SYS) {
            sev = DOCTOR_WARN;
            fix = "move the job to GPUs/NICs under the same CPU socket, or install a NIC on this "
                  "GPU's PCIe switch; traffic crosses the CPU interconnect and GDR is off";
        } else if (best == RAIL_PATH_PHB) {
            sev = DOCTOR_INFO;
            fix = "GDR is off at PHB by default (NCCL_NET_GDR_LEVEL=PXB): expect host staging";
        }
        if (known_numa && !same_numa) {
            sev = DOCTOR_WARN;
            fix = fix ? fix
                      : "bind each rank to the NUMA node of its NIC, or use a NIC on the GPU's "
                        "NUMA node";
        }
        doctor_add(r, "topo.gpu_nic", sev, subj, fix, "nearest NIC %s at %s; GPU NUMA %d%s%s%s",
                   names, rail_path_name((enum rail_path)best), t->gpus[g].numa,
                   known_numa && !same_numa ? ", NIC NUMA " : "",
                   known_numa && !same_numa ? nic_numa : "",
                   known_numa && !same_numa ? " (cross-NUMA)" : "");
    }
}
