/* SPDX-License-Identifier: Apache-2.0 */
/* hwloc 2.x (live node, HWLOC_XMLFILE/HWLOC_FSROOT, or an XML file) + sysfs -> struct rail_topo.
 *
 * GPUs are NVIDIA PCI functions of display class (0x03xx); NICs are OpenFabrics OS devices, one
 * entry per port. Path classes follow NCCL: the switch chain of a device is the list of its
 * grand-parent PCI bridges (switch upstream ports) walked upwards, as NCCL's sysfs walk removes
 * two path components at a time; no common switch means PHB on the same NUMA node set, SYS
 * otherwise. hwloc_get_common_ancestor_obj() is never used on I/O objects (negative depths).
 * NVLink comes from the NVLinkBandwidth distances matrix when the export has one (hwloc built
 * with NVML). Facts hwloc does not keep (IB rate, link layer, max PCIe link, peermem) come from
 * sysfs under sysfs_root, read only when that root describes the same machine as the topology:
 * the live node, or an explicit non-"/" root (a fixture next to its XML or HWLOC_FSROOT). */
#include "log.h"
#include "safe_file.h"
#include "strutil.h"
#include "topo.h"
#include "topo_hwloc_xml_check.h"
#include "topo_internal.h"
#include "topo_sysfs.h"

#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#define MAX_CPU_KEYS  64
#define MAX_PORTS     16
#define MAX_XML_BYTES (32 << 20) /* hwloc XML of a large node is a few MiB */

struct hw_ctx {
    hwloc_topology_t topo;
    const char *root;
    bool use_sysfs;
    hwloc_bitmap_t cpu_sets[MAX_CPU_KEYS];
    int n_cpu_sets;
    hwloc_obj_t gpu_obj[RAIL_TOPO_MAX_GPUS];
    struct rail_pci_chain gpu_chain[RAIL_TOPO_MAX_GPUS];
    struct rail_pci_chain nic_chain[RAIL_TOPO_MAX_NICS];
};

static bool is_pci_bridge(hwloc_obj_t o)
{
    return o && o->type == HWLOC_OBJ_BRIDGE &&
           o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

static uint64_t bridge_id(hwloc_obj_t b)
{
    const struct hwloc_pcidev_attr_s *p = &b->attr->bridge.upstream.pci;
    return (uint64_t)p->vendor_id << 48 | (uint64_t)p->device_id << 32 |
           (uint64_t)p->subvendor_id << 16 | (uint64_t)p->subdevice_id;
}

/* Key of the NUMA node set the device's PCI tree is attached to (-1 when none). */
static int cpu_key(struct hw_ctx *c, hwloc_obj_t dev)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(c->topo, dev);
    if (!anc || !anc->nodeset)
        return -1;
    for (int i = 0; i < c->n_cpu_sets; i++)
        if (hwloc_bitmap_isequal(c->cpu_sets[i], anc->nodeset))
            return i;
    if (c->n_cpu_sets == MAX_CPU_KEYS)
        return MAX_CPU_KEYS;
    c->cpu_sets[c->n_cpu_sets] = hwloc_bitmap_dup(anc->nodeset);
    return c->cpu_sets[c->n_cpu_sets] ? c->n_cpu_sets++ : -1;
}

static int numa_of(struct hw_ctx *c, hwloc_obj_t dev, const char *busid)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(c->topo, dev);
    if (anc && anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
        return hwloc_bitmap_first(anc->nodeset);
    return (c->use_sysfs && busid) ? rail_sysfs_pci_numa(c->root, busid) : -1;
}

static void build_chain(struct hw_ctx *c, hwloc_obj_t dev, struct rail_pci_chain *out)
{
    hwloc_obj_t raw[RAIL_TOPO_MAX_CHAIN], o = dev;
    bool dropped[RAIL_TOPO_MAX_CHAIN];
    int n = 0;
    while (o && n < RAIL_TOPO_MAX_CHAIN) {
        hwloc_obj_t port = o->parent; /* downstream or root port */
        if (!is_pci_bridge(port) || !is_pci_bridge(port->parent))
            break;
        raw[n++] = port->parent; /* switch upstream port */
        o = port->parent;
    }
    /* NCCL's Broadcom flattening, top-down: a child level merges into a kept parent level. */
    for (int i = n - 1; i >= 0; i--) {
        int pgen = i + 1 < n ? rail_bcm_switch_gen(bridge_id(raw[i + 1]), 0) : 0;
        dropped[i] = pgen && !dropped[i + 1] && rail_bcm_switch_gen(bridge_id(raw[i]), 1) == pgen;
    }
    out->n = 0;
    for (int i = 0; i < n; i++)
        if (!dropped[i])
            out->sw[out->n++] = (uintptr_t)raw[i];
    out->cpu = dev ? cpu_key(c, dev) : -1;
}

static void busid_of(hwloc_obj_t pci, char out[16])
{
    snprintf(out, 16, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain & 0xffff,
             pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func & 0xf);
}

static void pcie_of(struct hw_ctx *c, hwloc_obj_t pci, const char *busid, int *gen, int *width,
                    float *gbps)
{
    *gen = *width = 0;
    *gbps = 0.0f;
    if (c->use_sysfs && rail_sysfs_pcie_link(c->root, busid, gen, width) == 0) {
        *gbps = rail_pcie_gbps(*gen, *width);
        return;
    }
    /* hwloc keeps only the current aggregate GB/s (idle GPUs downtrain): last resort. */
    *gbps = rail_pcie_gbps_from_hwloc(pci->attr->pcidev.linkspeed);
}

static bool is_nvidia_gpu(hwloc_obj_t o)
{
    return o->attr->pcidev.vendor_id == 0x10de && (o->attr->pcidev.class_id >> 8) == 0x03;
}

static bool is_nvswitch(hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_OS_DEVICE)
        return false;
    if (o->subtype && strcmp(o->subtype, "NVSwitch") == 0)
        return true;
    return o->type == HWLOC_OBJ_PCI_DEVICE && o->attr->pcidev.vendor_id == 0x10de &&
           o->attr->pcidev.class_id == 0x0680;
}

static int cmp_obj_busid(const void *a, const void *b)
{
    char x[16], y[16];
    busid_of(*(hwloc_obj_t const *)a, x);
    busid_of(*(hwloc_obj_t const *)b, y);
    return strcmp(x, y);
}

static void load_gpus(struct hw_ctx *c, struct rail_topo *t)
{
    hwloc_obj_t o = NULL, found[RAIL_TOPO_MAX_GPUS];
    int n = 0, skipped = 0;
    while ((o = hwloc_get_next_pcidev(c->topo, o)) != NULL) {
        if (is_nvswitch(o))
            t->nvswitch = true;
        if (!is_nvidia_gpu(o))
            continue;
        if (n == RAIL_TOPO_MAX_GPUS) {
            skipped++;
            continue;
        }
        found[n++] = o;
    }
    if (skipped)
        RAIL_WARN(NCCL_INIT, "hwloc: %d GPUs beyond the first %d ignored", skipped,
                  RAIL_TOPO_MAX_GPUS);
    qsort(found, (size_t)n, sizeof(found[0]), cmp_obj_busid);
    for (int g = 0; g < n; g++) {
        struct rail_gpu *gpu = &t->gpus[g];
        busid_of(found[g], gpu->busid);
        gpu->pci_vendor = found[g]->attr->pcidev.vendor_id;
        gpu->pci_device = found[g]->attr->pcidev.device_id;
        gpu->sm = rail_sm_from_pci_device(found[g]->attr->pcidev.vendor_id,
                                          found[g]->attr->pcidev.device_id);
        gpu->numa = numa_of(c, found[g], gpu->busid);
        gpu->gdr = true;
        pcie_of(c, found[g], gpu->busid, &gpu->pcie_gen, &gpu->pcie_width, &gpu->pcie_gbps);
        c->gpu_obj[g] = found[g];
        build_chain(c, found[g], &c->gpu_chain[g]);
    }
    t->n_gpus = n;
}

static int gpu_index(const struct hw_ctx *c, const struct rail_topo *t, hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_OS_DEVICE)
        o = o->parent;
    for (int g = 0; o && g < t->n_gpus; g++)
        if (c->gpu_obj[g] == o)
            return g;
    return -1;
}

/* NVLink from hwloc's NVLinkBandwidth matrix (MB/s per pair; NVML plugin: 20000 per NVLink1
 * link, 25000 per NVLink2-4 link, 50000 per NVLink5 link). Links to CPUs are not counted. */
static void load_nvlinks(struct hw_ctx *c, struct rail_topo *t)
{
    struct hwloc_distances_s *d[4];
    unsigned nr = 4;
    if (hwloc_distances_get_by_name(c->topo, "NVLinkBandwidth", &nr, d, 0) < 0)
        return;
    for (unsigned k = 0; k < nr; k++) {
        unsigned n = d[k]->nbobjs;
        for (unsigned i = 0; i < n; i++) {
            int g = gpu_index(c, t, d[k]->objs[i]);
            double sum = 0, per_link;
            if (g < 0)
                continue;
            per_link = t->gpus[g].sm >= 100 ? 50000 : t->gpus[g].sm >= 70 ? 25000 : 20000;
            for (unsigned j = 0; j < n; j++) {
                hwloc_uint64_t v = d[k]->values[i * n + j];
                if (j == i || v == 0)
                    continue;
                if (is_nvswitch(d[k]->objs[j])) {
                    t->nvswitch = true;
                    sum += (double)v;
                } else if (gpu_index(c, t, d[k]->objs[j]) >= 0) {
                    sum += (double)v;
                }
            }
            if ((int)lround(sum / per_link) > t->gpus[g].nvlinks)
                t->gpus[g].nvlinks = (int)lround(sum / per_link);
        }
        hwloc_distances_release(c->topo, d[k]);
    }
}

/* Port numbers of an OpenFabrics device: sysfs ports/ when readable, else hwloc's PortNState. */
static int ports_of(struct hw_ctx *c, hwloc_obj_t os, int *ports)
{
    int n = 0;
    if (c->use_sysfs && rail_sysfs_name_ok(os->name, RAIL_SYSFS_NAME_LEN)) {
        char dir[320], names[MAX_PORTS][RAIL_SYSFS_NAME_LEN];
        int got;
        snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports", os->name);
        got = rail_sysfs_list(c->root, dir, names, MAX_PORTS);
        for (int i = 0; i < got; i++)
            if (atoi(names[i]) > 0)
                ports[n++] = atoi(names[i]);
        if (n)
            return n;
    }
    for (unsigned i = 0; i < os->infos_count && n < MAX_PORTS; i++) {
        unsigned p;
        int end = 0;
        if (sscanf(os->infos[i].name, "Port%u%n", &p, &end) == 1 &&
            strcmp(os->infos[i].name + end, "State") == 0 && p > 0 && p < 256)
            ports[n++] = (int)p;
    }
    if (!n)
        ports[n++] = 1;
    return n;
}

static int cmp_osdev_name(const void *a, const void *b)
{
    return strverscmp((*(hwloc_obj_t const *)a)->name, (*(hwloc_obj_t const *)b)->name);
}

static int load_nics(struct hw_ctx *c, struct rail_topo *t)
{
    hwloc_obj_t o = NULL, *devs;
    int count = 0, skipped = 0;
    bool peermem = c->use_sysfs && rail_sysfs_peermem(c->root);
    while ((o = hwloc_get_next_osdev(c->topo, o)) != NULL)
        count++;
    devs = calloc((size_t)count + 1, sizeof(*devs));
    if (!devs)
        return -ENOMEM;
    count = 0;
    while ((o = hwloc_get_next_osdev(c->topo, o)) != NULL)
        if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && o->name) {
            /* The name becomes a sysfs path component: "../../etc" from an XML file must not. */
            if (!rail_sysfs_name_ok(o->name, sizeof(t->nics[0].name))) {
                RAIL_WARN(NCCL_INIT,
                          "hwloc: OpenFabrics device name \"%.64s\" is not a plain device name; "
                          "device skipped",
                          o->name);
                continue;
            }
            devs[count++] = o;
        }
    qsort(devs, (size_t)count, sizeof(devs[0]), cmp_osdev_name);
    for (int i = 0; i < count; i++) {
        hwloc_obj_t pci = devs[i]->parent && devs[i]->parent->type == HWLOC_OBJ_PCI_DEVICE
                              ? devs[i]->parent
                              : NULL;
        int ports[MAX_PORTS], np = ports_of(c, devs[i], ports);
        for (int p = 0; p < np; p++) {
            struct rail_nic *nic;
            struct rail_sysfs_ib_port sp;
            char key[32];
            const char *state;
            if (t->n_nics == RAIL_TOPO_MAX_NICS) {
                skipped++;
                continue;
            }
            nic = &t->nics[t->n_nics];
            snprintf(nic->name, sizeof(nic->name), "%s", devs[i]->name);
            nic->port = ports[p];
            nic->active = true;
            nic->virtual_nic = pci == NULL;
            if (pci) {
                nic->pci_vendor = pci->attr->pcidev.vendor_id;
                nic->pci_device = pci->attr->pcidev.device_id;
                busid_of(pci, nic->busid);
                pcie_of(c, pci, nic->busid, &nic->pcie_gen, &nic->pcie_width, &nic->pcie_gbps);
            }
            nic->numa = numa_of(c, pci ? pci : devs[i], pci ? nic->busid : NULL);
            snprintf(key, sizeof(key), "Port%dState", ports[p]);
            state = hwloc_obj_get_info_by_name(devs[i], key);
            if (state)
                nic->active = atoi(state) == 4;
            if (c->use_sysfs && rail_sysfs_ib_port(c->root, nic->name, nic->port, &sp) == 0) {
                nic->speed_mbps = sp.speed_mbps;
                nic->link_layer = sp.link_layer;
                if (sp.state >= 0)
                    nic->active = sp.active;
            }
            nic->gdr = peermem && pci;
            build_chain(c, pci ? pci : devs[i], &c->nic_chain[t->n_nics]);
            t->n_nics++;
        }
    }
    if (skipped)
        RAIL_WARN(NCCL_INIT, "hwloc: %d NIC ports beyond the first %d ignored", skipped,
                  RAIL_TOPO_MAX_NICS);
    free(devs);
    return 0;
}

static void load_cpu(struct hw_ctx *c, struct rail_topo *t)
{
    hwloc_obj_t root = hwloc_get_root_obj(c->topo);
    hwloc_obj_t pkg = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE, 0);
    const char *arch = hwloc_obj_get_info_by_name(root, "Architecture");
    const char *vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    const char *family = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUFamilyNumber") : NULL;
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModelNumber") : NULL;
    if (!vendor)
        vendor = hwloc_obj_get_info_by_name(root, "CPUVendor");
    t->cpu_vendor = rail_cpu_vendor_from_strings(arch, vendor);
    t->n_numa = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_NUMANODE);
    if (t->n_numa > 1)
        t->inter_cpu_bw =
            rail_inter_cpu_bw(t->cpu_vendor, family ? atoi(family) : -1, model ? atoi(model) : -1);
}

/* An hwloc XML file read the one safe way (safe_file.h), then checked with libxml2 so a malformed
 * file gets "path:line: reason" instead of hwloc's bare EINVAL. */
static int read_xml(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    const char *zip;
    xmlParserCtxtPtr pctx;
    xmlDocPtr doc;
    int rc = rail_file_read_all(path, MAX_XML_BYTES, 0, text, len, err, errlen);
    if (rc)
        return rc == -EFBIG
                   ? rail_fail(err, errlen, "hwloc XML %s: larger than the %d bytes accepted", path,
                               MAX_XML_BYTES)
                   : -EINVAL;
    if (*len == 0)
        rc = rail_fail(err, errlen, "hwloc XML %s: empty file", path);
    else if ((zip = rail_file_compression(*text, *len)) != NULL)
        rc = rail_fail(err, errlen, "hwloc XML %s: %s-compressed; decompress it first", path, zip);
    else if (*len > INT_MAX - 1)
        rc = rail_fail(err, errlen, "hwloc XML %s: too large", path);
    else if (!(pctx = xmlNewParserCtxt()))
        rc = rail_fail(err, errlen, "hwloc XML %s: out of memory", path);
    else {
        doc = xmlCtxtReadMemory(pctx, *text, (int)*len, path, NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        if (!doc) {
            char msg[200];
            int line = rail_xml_last_error(pctx, msg, sizeof(msg));
            rc =
                rail_fail(err, errlen, "hwloc XML %s:%d: not well-formed XML: %s", path, line, msg);
        } else {
            const xmlNode *root = xmlDocGetRootElement(doc);
            if (!root || strcmp((const char *)root->name, "topology") != 0)
                rc = rail_fail(
                    err, errlen, "hwloc XML %s:%ld: root element is <%.32s>, expected <topology>",
                    path, root ? xmlGetLineNo(root) : 0L, root ? (const char *)root->name : "");
            else
                rc = rail_hwloc_xml_check(doc, path, err, errlen);
            xmlFreeDoc(doc);
        }
        xmlFreeParserCtxt(pctx);
    }
    if (rc) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

int rail_topo_load_hwloc(const char *xml_path_or_null, const char *sysfs_root, struct rail_topo *t,
                         char *err, size_t errlen)
{
    struct hw_ctx *c;
    const char *xml = xml_path_or_null && *xml_path_or_null ? xml_path_or_null : NULL;
    const char *env_xml = getenv("HWLOC_XMLFILE");
    char origin[256], *text = NULL;
    size_t text_len = 0;
    int rc = 0;

    if (!t)
        return rail_fail(err, errlen, "no topology to fill");
    if (!sysfs_root || !*sysfs_root)
        sysfs_root = "/";
    /* hwloc would open HWLOC_XMLFILE itself (blocking on a FIFO, unbounded): read it here. */
    if (!xml && env_xml && *env_xml)
        xml = env_xml;
    if (xml && (rc = read_xml(xml, &text, &text_len, err, errlen)) != 0)
        return rc;
    c = calloc(1, sizeof(*c));
    if (!c) {
        free(text);
        return rail_fail(err, errlen, "out of memory");
    }
    c->root = sysfs_root;
    if (hwloc_topology_init(&c->topo) != 0) {
        free(c);
        free(text);
        return rail_fail(err, errlen, "hwloc_topology_init failed");
    }
    /* I/O objects are filtered out by default, for XML loads too. */
    hwloc_topology_set_io_types_filter(c->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* The buffer hwloc gets includes its terminating NUL. */
    if (xml && hwloc_topology_set_xmlbuffer(c->topo, text, (int)text_len + 1) != 0)
        rc = rail_fail(err, errlen, "hwloc cannot read %s: %s", xml, strerror(errno));
    else if (hwloc_topology_load(c->topo) != 0)
        rc = rail_fail(err, errlen, "hwloc could not load the topology of %s: %s",
                       xml ? xml : (env_xml && *env_xml ? env_xml : "this node"), strerror(errno));
    if (rc == 0) {
        c->use_sysfs = hwloc_topology_is_thissystem(c->topo) || strcmp(sysfs_root, "/") != 0;
        const char *fsroot = getenv("HWLOC_FSROOT");
        if (xml || (env_xml && *env_xml))
            snprintf(origin, sizeof(origin), "%s", xml ? xml : env_xml);
        else if (fsroot && *fsroot && strcmp(fsroot, "/") != 0)
            snprintf(origin, sizeof(origin), "HWLOC_FSROOT=%s", fsroot);
        else
            snprintf(origin, sizeof(origin), "live node");
        rail_topo_reset(t, RAIL_TOPO_SRC_HWLOC, origin);
        load_cpu(c, t);
        load_gpus(c, t);
        load_nvlinks(c, t);
        rc = load_nics(c, t);
        if (rc)
            rail_fail(err, errlen, "out of memory");
    }
    if (rc == 0) {
        for (int g = 0; g < t->n_gpus; g++)
            for (int n = 0; n < t->n_nics; n++)
                t->path[g][n] = (uint8_t)rail_path_classify(&c->gpu_chain[g], &c->nic_chain[n]);
        rail_topo_finalize(t);
        if (!c->use_sysfs)
            RAIL_INFO(NCCL_INIT,
                      "hwloc: %s is not this node and no NCCL_RAIL_SYSFS_ROOT was "
                      "given: NIC speed, link layer and GDR are unknown",
                      origin);
    }
    for (int i = 0; i < c->n_cpu_sets; i++)
        hwloc_bitmap_free(c->cpu_sets[i]);
    hwloc_topology_destroy(c->topo);
    free(c);
    free(text);
    return rc ? -EINVAL : 0;
}
