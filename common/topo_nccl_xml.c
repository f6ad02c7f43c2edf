/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE) -> struct rail_topo, with libxml2.
 *
 *   <system version="1">
 *     <cpu numaid arch vendor familyid modelid>
 *       <pci busid class vendor device subsystem_vendor subsystem_device link_speed link_width>
 *         <pci ...>                                  nested <pci> = PCI switch (upstream port)
 *           <pci busid ...><gpu dev sm rank gdr><nvlink target count tclass/></gpu></pci>
 *           <pci busid ...><nic><net name dev speed port guid maxconn gdr/></nic></pci>
 *       <nic><net .../></nic>                        NIC attached to the CPU (not PCI)
 *
 * Devices are recognised the way NCCL's ncclTopoAddPci does: a <pci> with <gpu> children is a
 * GPU, one with a <nic> child holds NICs, anything else of PCI-bridge or unknown class is a
 * switch. Cloud files (Azure NDv4/NDv5, AWS p4d) list GPUs and NICs as bare <pci class=...>
 * entries that NCCL completes from the live node; they are taken as GPUs (class 0x03xxxx) and
 * NICs (class 0x02xxxx) with the facts the file gives. A leaf <pci> without class is skipped.
 * Path classes follow NCCL's ncclTopoSetPaths on the resulting tree, including the flattening
 * of two-level Broadcom PEX switches. */
#include "log.h"
#include "strutil.h"
#include "topo.h"
#include "safe_file.h"
#include "topo_internal.h"
#include "topo_nccl_xml_check.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES      (8 << 20)
#define MAX_NUMA_IDS        64
#define MAX_NVLINKS_PER_GPU 64
#define MAX_SPEED_MBPS      10000000 /* 10 Tb/s */

struct parse_ctx {
    const char *path;
    char *err;
    size_t errlen;
    struct rail_gpu gpus[RAIL_TOPO_MAX_GPUS];
    struct rail_pci_chain gpu_chain[RAIL_TOPO_MAX_GPUS];
    int n_gpus;
    struct rail_nic nics[RAIL_TOPO_MAX_NICS];
    struct rail_pci_chain nic_chain[RAIL_TOPO_MAX_NICS];
    bool nic_gdr_known[RAIL_TOPO_MAX_NICS];
    int n_nics;
    int skipped_gpus, skipped_nics, unclassified;
    int numa_ids[MAX_NUMA_IDS];
    int n_numa;
    bool nvswitch;
    bool cpu_seen;
    int cpu_vendor;
    float inter_cpu_bw;
    int ignored;              /* attribute values NCCL would also not use */
    char first_ignored[128];  /* the first of them, for the INFO line */
    int nvswitch_placeholder; /* <nvlink> targets NCCL reads as "NVSwitch not visible here" */
};

/* Where the walk is: the switch chain so far and the switch directly above (for flattening). */
struct walk_pos {
    struct rail_pci_chain chain;
    bool has_parent_sw;
    bool parent_dropped;
    uint64_t parent_id;
};

static int fail_at(struct parse_ctx *c, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(struct parse_ctx *c, const xmlNode *n, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return rail_fail(c->err, c->errlen, "%s:%ld: %s", c->path, n ? xmlGetLineNo(n) : 0L, msg);
}

static bool is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* 1 present (copied), 0 absent, -1 longer than buf. */
static int attr(const xmlNode *n, const char *name, char *buf, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    int rc;
    if (!v)
        return 0;
    rc = strlen((const char *)v) < len ? 1 : -1;
    if (rc == 1)
        snprintf(buf, len, "%s", (const char *)v);
    xmlFree(v);
    return rc;
}

/* NCCL reads integer attributes with strtol and bus ids with busIdToInt64, so a value it cannot
 * parse never rejects its file: such a value is ignored here too (counted, first one named in one
 * INFO line). Integer attribute in [lo, hi] (decimal or 0x hex): 0 absent or ignored (*out
 * untouched), 1 ok. */
static void note_ignored(struct parse_ctx *c, const xmlNode *n, const char *name, const char *val)
{
    if (c->ignored++ == 0)
        snprintf(c->first_ignored, sizeof(c->first_ignored), "line %ld: <%s> %s=\"%.40s\"",
                 xmlGetLineNo(n), (const char *)n->name, name, val);
}

static int attr_int(struct parse_ctx *c, const xmlNode *n, const char *name, long lo, long hi,
                    long *out)
{
    char buf[64];
    int rc = attr(n, name, buf, sizeof(buf));
    if (rc == 0)
        return 0;
    if (rc < 0 || rail_parse_long(buf, 0, lo, hi, out) != 0) {
        note_ignored(c, n, name, rc < 0 ? "(too long)" : buf);
        return 0;
    }
    return 1;
}

/* NCCL's busIdToInt64: the hex digits of the string up to the first character that is neither a
 * hex digit nor ':' or '.', at most 16 of them. Never fails (an empty string is 0). */
uint64_t rail_busid_to_u64(const char *s)
{
    uint64_t v = 0;
    int digits = 0;
    for (; *s && digits < 16; s++) {
        if (*s == ':' || *s == '.')
            continue;
        if (!isxdigit((unsigned char)*s))
            break;
        v = (v << 4) | (uint64_t)(isdigit((unsigned char)*s) ? *s - '0' : (tolower(*s) - 'a' + 10));
        digits++;
    }
    return v;
}

/* A bus id in the canonical dddd:bb:dd.f form; anything else NCCL would read as a number is
 * rewritten from that number (domain, bus, device, function). */
static int attr_busid(struct parse_ctx *c, const xmlNode *n, const char *name, char out[16])
{
    char buf[64];
    int rc = attr(n, name, buf, sizeof(buf));
    if (rc == 0)
        return fail_at(c, n, "<%s> without %s", (const char *)n->name, name);
    if (rc > 0 && rail_busid_normalize(buf, out) == 0)
        return 0;
    {
        uint64_t v = rc > 0 ? rail_busid_to_u64(buf) : UINT64_MAX;
        snprintf(out, 16, "%04x:%02x:%02x.%x", (unsigned)((v >> 20) & 0xffff),
                 (unsigned)((v >> 12) & 0xff), (unsigned)((v >> 4) & 0xff), (unsigned)(v & 0xf));
        return 1; /* not canonical */
    }
}

static void note_numa(struct parse_ctx *c, int numa)
{
    for (int i = 0; i < c->n_numa; i++)
        if (c->numa_ids[i] == numa)
            return;
    if (c->n_numa < MAX_NUMA_IDS)
        c->numa_ids[c->n_numa++] = numa;
}

/* PCIe facts of a <pci> element (absent attributes leave 0 = unknown). */
static int pci_link(struct parse_ctx *c, const xmlNode *pci, int *gen, int *width, float *gbps)
{
    char speed[64];
    long w = 0;
    int rc = attr_int(c, pci, "link_width", 0, 32, &w);
    if (rc < 0)
        return rc;
    *gen = attr(pci, "link_speed", speed, sizeof(speed)) > 0 ? rail_pcie_gen_from_text(speed) : 0;
    *width = (int)w;
    *gbps = rail_pcie_gbps(*gen, *width);
    return 0;
}

static uint64_t pci_id(struct parse_ctx *c, const xmlNode *pci, int *rc)
{
    static const char *const names[] = {"vendor", "device", "subsystem_vendor", "subsystem_device"};
    uint64_t id = 0;
    for (int i = 0; i < 4; i++) {
        long v = 0;
        int r = attr_int(c, pci, names[i], 0, 0xffff, &v);
        if (r < 0)
            *rc = r;
        id = (id << 16) | (uint64_t)v;
    }
    return id;
}

/* One <nvlink> of a GPU, read as NCCL's ncclTopoAddNvLinks does: tclass 0x068000 (or a target
 * that is not a visible PCI device, e.g. the "fffffff:ffff:ff" NCCL writes inside VMs) is an
 * NVSwitch; 0x03xxxx a GPU peer (itself: no link); anything else (the CPU, a bridge) is not part of
 * the GPU fabric. A missing count is an error in NCCL too. */
static int add_nvlink(struct parse_ctx *c, const xmlNode *l, struct rail_gpu *g, const char *busid)
{
    char target[16], tclass[32] = "";
    long count = 0;
    int canon = attr_busid(c, l, "target", target), rc;
    if (canon < 0)
        return canon;
    if ((rc = attr_int(c, l, "count", 0, MAX_NVLINKS_PER_GPU, &count)) < 0)
        return rc;
    if (rc == 0 && !xmlHasProp(l, (const xmlChar *)"count"))
        return fail_at(c, l, "<nvlink> without count");
    if (attr(l, "tclass", tclass, sizeof(tclass)) <= 0 && canon == 1)
        snprintf(tclass, sizeof(tclass), "0x068000"); /* not a visible device: NVSwitch */
    if (canon == 1 && strncmp(tclass, "0x068000", 8) == 0)
        c->nvswitch_placeholder++;
    if (strncmp(tclass, "0x068000", 8) == 0) {
        if (count > 0)
            c->nvswitch = true;
    } else if (strncmp(tclass, "0x03", 4) != 0 || strcmp(target, busid) == 0) {
        return 0; /* NVLink to the CPU (POWER9, Grace) or a GPU listed as its own peer */
    }
    g->nvlinks += (int)count;
    if (g->nvlinks > MAX_NVLINKS_PER_GPU)
        return fail_at(c, l, "GPU %s has more than %d NVLinks", busid, MAX_NVLINKS_PER_GPU);
    return 0;
}

static int add_gpu(struct parse_ctx *c, const xmlNode *pci, const xmlNode *gpu_el,
                   const struct walk_pos *pos, const char *busid, int numa, uint64_t id)
{
    struct rail_gpu *g;
    long sm = 0, gdr = 1;
    int rc = 0;
    if (c->n_gpus == RAIL_TOPO_MAX_GPUS) {
        c->skipped_gpus++;
        return 0;
    }
    g = &c->gpus[c->n_gpus];
    memset(g, 0, sizeof(*g));
    snprintf(g->busid, sizeof(g->busid), "%s", busid);
    g->numa = numa;
    if ((rc = pci_link(c, pci, &g->pcie_gen, &g->pcie_width, &g->pcie_gbps)) < 0)
        return rc;
    if (gpu_el) {
        if ((rc = attr_int(c, gpu_el, "sm", 0, 1000, &sm)) < 0 ||
            (rc = attr_int(c, gpu_el, "gdr", 0, 1, &gdr)) < 0)
            return rc;
        for (const xmlNode *l = gpu_el->children; l; l = l->next) {
            if (is_elem(l, "nvlink") && (rc = add_nvlink(c, l, g, busid)) < 0)
                return rc;
        }
    }
    g->pci_vendor = (uint16_t)(id >> 48);
    g->pci_device = (uint16_t)(id >> 32);
    g->sm = sm ? (int)sm : rail_sm_from_pci_device(g->pci_vendor, g->pci_device);
    g->gdr = gdr != 0;
    c->gpu_chain[c->n_gpus] = pos->chain;
    c->n_gpus++;
    return 0;
}

static int add_nic(struct parse_ctx *c, const xmlNode *pci, const xmlNode *net,
                   const struct walk_pos *pos, const char *busid, int numa, uint64_t id,
                   const char *class_str)
{
    struct rail_nic *n;
    long speed = 0, port = 0, gdr = -1;
    int rc;
    if (c->n_nics == RAIL_TOPO_MAX_NICS) {
        c->skipped_nics++;
        return 0;
    }
    n = &c->nics[c->n_nics];
    memset(n, 0, sizeof(*n));
    n->numa = numa;
    n->active = true;
    if (busid)
        snprintf(n->busid, sizeof(n->busid), "%s", busid);
    if (pci && (rc = pci_link(c, pci, &n->pcie_gen, &n->pcie_width, &n->pcie_gbps)) < 0)
        return rc;
    n->virtual_nic = pci == NULL;
    n->pci_vendor = (uint16_t)(id >> 48);
    n->pci_device = (uint16_t)(id >> 32);
    if (strncmp(class_str, "0x0207", 6) == 0)
        n->link_layer = RAIL_LINK_IB;
    else if (strncmp(class_str, "0x0200", 6) == 0 && (id >> 48) != 0x1d0f) /* not EFA */
        n->link_layer = RAIL_LINK_ETH;
    if (net) {
        if (attr(net, "name", n->name, sizeof(n->name)) < 0)
            return fail_at(c, net, "<net> name longer than %d bytes", RAIL_TOPO_NAME_LEN - 1);
        if ((rc = attr_int(c, net, "speed", 0, MAX_SPEED_MBPS, &speed)) < 0 ||
            (rc = attr_int(c, net, "port", 0, 255, &port)) < 0 ||
            (rc = attr_int(c, net, "gdr", 0, 1, &gdr)) < 0)
            return rc;
    }
    if (!n->name[0])
        snprintf(n->name, sizeof(n->name), "%s", busid ? busid : "net");
    n->speed_mbps = (int)speed;
    n->port = (int)port;
    n->gdr = gdr == 1;
    c->nic_gdr_known[c->n_nics] = gdr >= 0;
    c->nic_chain[c->n_nics] = pos->chain;
    c->n_nics++;
    return 0;
}

static int walk_pci(struct parse_ctx *c, const xmlNode *pci, const struct walk_pos *pos, int numa,
                    int depth);

static int walk_children(struct parse_ctx *c, const xmlNode *parent, const struct walk_pos *pos,
                         int numa, int depth)
{
    for (const xmlNode *ch = parent->children; ch; ch = ch->next) {
        int rc = is_elem(ch, "pci") ? walk_pci(c, ch, pos, numa, depth) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

static int walk_pci(struct parse_ctx *c, const xmlNode *pci, const struct walk_pos *pos, int numa,
                    int depth)
{
    char busid[16], class_str[32] = "";
    const xmlNode *nic = NULL;
    bool has_gpu = false, has_sub = false;
    int rc = 0;
    uint64_t id;

    if (depth > RAIL_TOPO_MAX_CHAIN)
        return fail_at(c, pci, "<pci> nested deeper than %d levels", RAIL_TOPO_MAX_CHAIN);
    if ((rc = attr_busid(c, pci, "busid", busid)) < 0)
        return rc;
    rc = 0;
    if (attr(pci, "class", class_str, sizeof(class_str)) < 0)
        return fail_at(c, pci, "<pci> class too long");
    id = pci_id(c, pci, &rc);
    if (rc < 0)
        return rc;
    for (const xmlNode *ch = pci->children; ch; ch = ch->next) {
        has_gpu |= is_elem(ch, "gpu");
        has_sub |= is_elem(ch, "pci");
        if (is_elem(ch, "nic") && !nic)
            nic = ch;
    }
    if (has_gpu) {
        for (const xmlNode *ch = pci->children; ch && !rc; ch = ch->next)
            if (is_elem(ch, "gpu"))
                rc = add_gpu(c, pci, ch, pos, busid, numa, id);
        return rc;
    }
    if (nic) {
        bool any = false;
        for (const xmlNode *ch = nic->children; ch && !rc; ch = ch->next)
            if (is_elem(ch, "net")) {
                any = true;
                rc = add_nic(c, pci, ch, pos, busid, numa, id, class_str);
            }
        return (rc || any) ? rc : add_nic(c, pci, NULL, pos, busid, numa, id, class_str);
    }
    if (strncmp(class_str, "0x03", 4) == 0) {
        uint16_t vendor = (uint16_t)(id >> 48);
        if (vendor == 0 || vendor == 0x10de)
            return add_gpu(c, pci, NULL, pos, busid, numa, id);
        c->unclassified++; /* a display device of another vendor (BMC VGA) */
        return 0;
    }
    if (strncmp(class_str, "0x02", 4) == 0)
        return add_nic(c, pci, NULL, pos, busid, numa, id, class_str);
    if (strncmp(class_str, "0x068", 5) == 0)
        return 0; /* NVSwitch or CPU entries are not PCI switches */
    if (!has_sub) {
        c->unclassified++;
        return 0;
    }
    /* A PCI switch. NCCL merges the child level of a 2-level Broadcom switch into its parent. */
    {
        struct walk_pos sub = *pos;
        int pgen = pos->has_parent_sw ? rail_bcm_switch_gen(pos->parent_id, 0) : 0;
        bool dropped = pgen && !pos->parent_dropped && rail_bcm_switch_gen(id, 1) == pgen;
        if (!dropped) {
            if (sub.chain.n >= RAIL_TOPO_MAX_CHAIN)
                return fail_at(c, pci, "more than %d PCI switch levels", RAIL_TOPO_MAX_CHAIN);
            memmove(&sub.chain.sw[1], &sub.chain.sw[0], sizeof(sub.chain.sw[0]) * sub.chain.n);
            sub.chain.sw[0] = (uintptr_t)pci;
            sub.chain.n++;
        }
        sub.has_parent_sw = true;
        sub.parent_dropped = dropped;
        sub.parent_id = id;
        return walk_children(c, pci, &sub, numa, depth + 1);
    }
}

static int walk_cpu(struct parse_ctx *c, const xmlNode *cpu)
{
    char arch[64] = "", vendor[64] = "";
    long numaid = 0, family = -1, model = -1;
    struct walk_pos pos;
    int rc = attr_int(c, cpu, "numaid", -1, 4095, &numaid);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return fail_at(c, cpu, "<cpu> without numaid");
    if ((rc = attr_int(c, cpu, "familyid", 0, 0xffff, &family)) < 0 ||
        (rc = attr_int(c, cpu, "modelid", 0, 0xffff, &model)) < 0)
        return rc;
    attr(cpu, "arch", arch, sizeof(arch));
    attr(cpu, "vendor", vendor, sizeof(vendor));
    note_numa(c, (int)numaid);
    if (!c->cpu_seen) {
        c->cpu_seen = true;
        c->cpu_vendor = rail_cpu_vendor_from_strings(arch, vendor);
        c->inter_cpu_bw = rail_inter_cpu_bw(c->cpu_vendor, (int)family, (int)model);
    }
    memset(&pos, 0, sizeof(pos));
    pos.chain.cpu = (int)numaid;
    rc = 0;
    for (const xmlNode *ch = cpu->children; ch; ch = ch->next) {
        if (is_elem(ch, "pci")) {
            rc = walk_pci(c, ch, &pos, (int)numaid, 1);
        } else if (is_elem(ch, "nic")) {
            for (const xmlNode *net = ch->children; net && !rc; net = net->next)
                if (is_elem(net, "net"))
                    rc = add_nic(c, NULL, net, &pos, NULL, (int)numaid, 0, "");
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_file(struct parse_ctx *c)
{
    xmlParserCtxtPtr pctx;
    xmlDocPtr doc;
    const xmlNode *root;
    const char *zip;
    char *text = NULL;
    size_t len = 0;
    int rc = 0;

    /* Bounded, non-blocking, regular files only; parsed from memory so libxml2 never opens (and
     * never inflates) anything itself. */
    rc = rail_file_read_all(c->path, MAX_FILE_BYTES, 0, &text, &len, c->err, c->errlen);
    if (rc)
        return rc == -EFBIG ? rail_fail(c->err, c->errlen, "%s: larger than the %d bytes accepted",
                                        c->path, MAX_FILE_BYTES)
                            : -EINVAL;
    if (len == 0) {
        free(text);
        return rail_fail(c->err, c->errlen, "%s: empty file", c->path);
    }
    if ((zip = rail_file_compression(text, len)) != NULL) {
        free(text);
        return rail_fail(c->err, c->errlen,
                         "%s: %s-compressed; NCCL reads plain XML only (decompress it first)",
                         c->path, zip);
    }
    pctx = xmlNewParserCtxt();
    if (!pctx) {
        free(text);
        return rail_fail(c->err, c->errlen, "%s: out of memory", c->path);
    }
    /* No network, no entity substitution, no DTD loading, no XInclude, no huge-document mode,
     * no libxml2 output on stderr. */
    doc = xmlCtxtReadMemory(pctx, text, (int)len, c->path, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    free(text);
    if (!doc) {
        char msg[200];
        int line = rail_xml_last_error(pctx, msg, sizeof(msg));
        rc = rail_fail(c->err, c->errlen, "%s:%d: not well-formed XML: %s", c->path, line, msg);
        xmlFreeParserCtxt(pctx);
        return rc;
    }
    rail_nccl_xml_check(doc, c->path);
    root = xmlDocGetRootElement(doc);
    if (!root)
        rc = rail_fail(c->err, c->errlen, "%s: no root element", c->path);
    else if (!is_elem(root, "system"))
        rc = fail_at(c, root, "root element is <%s>, expected <system> (NCCL topology XML)",
                     (const char *)root->name);
    for (const xmlNode *ch = root && !rc ? root->children : NULL; ch && !rc; ch = ch->next)
        if (is_elem(ch, "cpu"))
            rc = walk_cpu(c, ch);
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(pctx);
    return rc;
}

int rail_xml_last_error(void *parser_ctxt, char *msg, size_t len)
{
    const xmlError *e = xmlCtxtGetLastError((xmlParserCtxtPtr)parser_ctxt);
    snprintf(msg, len, "%s", e && e->message ? e->message : "malformed XML");
    msg[strcspn(msg, "\n")] = '\0';
    return e ? e->line : 0;
}

static int cmp_gpu_order(const void *a, const void *b, void *arg)
{
    const struct parse_ctx *c = arg;
    int ia = *(const int *)a, ib = *(const int *)b;
    int r = strcmp(c->gpus[ia].busid, c->gpus[ib].busid);
    return r ? r : ia - ib;
}

int rail_topo_load_nccl_xml_ex(const char *path, struct rail_topo *t, uint64_t *nic_gdr_unknown,
                               char *err, size_t errlen)
{
    struct parse_ctx *c;
    int order[RAIL_TOPO_MAX_GPUS], rc;
    if (!path || !*path || !t)
        return rail_fail(err, errlen, "no NCCL topology file given");
    c = calloc(1, sizeof(*c));
    if (!c)
        return rail_fail(err, errlen, "out of memory");
    c->path = path;
    c->err = err;
    c->errlen = errlen;
    rc = parse_file(c);
    if (rc) {
        free(c);
        return rc;
    }
    if (c->skipped_gpus || c->skipped_nics)
        RAIL_WARN(NCCL_INIT | NCCL_TUNING,
                  "%s: only the first %d GPUs and %d NICs are kept (%d GPUs, %d NICs ignored)",
                  path, RAIL_TOPO_MAX_GPUS, RAIL_TOPO_MAX_NICS, c->skipped_gpus, c->skipped_nics);
    if (c->ignored)
        RAIL_INFO(NCCL_INIT,
                  "%s: %d attribute value(s) NCCL would not use either were ignored (%s)", path,
                  c->ignored, c->first_ignored);
    if (c->nvswitch_placeholder)
        RAIL_INFO(
            NCCL_INIT,
            "%s: %d <nvlink> target(s) are not visible PCI devices: read as NVSwitch, as NCCL "
            "does inside VMs",
            path, c->nvswitch_placeholder);
    if (c->unclassified)
        RAIL_INFO(NCCL_INIT, "%s: %d <pci> entries without a GPU/NIC class were skipped", path,
                  c->unclassified);
    rail_topo_reset(t, RAIL_TOPO_SRC_NCCL_XML, path);
    /* GPUs in bus-id order (CUDA's PCI order); NICs in file order (NCCL's net device order). */
    for (int i = 0; i < c->n_gpus; i++)
        order[i] = i;
    qsort_r(order, (size_t)c->n_gpus, sizeof(order[0]), cmp_gpu_order, c);
    t->n_gpus = c->n_gpus;
    t->n_nics = c->n_nics;
    for (int g = 0; g < c->n_gpus; g++)
        t->gpus[g] = c->gpus[order[g]];
    if (nic_gdr_unknown)
        *nic_gdr_unknown = 0;
    for (int n = 0; n < c->n_nics; n++) {
        t->nics[n] = c->nics[n];
        if (nic_gdr_unknown && !c->nic_gdr_known[n])
            *nic_gdr_unknown |= 1ULL << n;
    }
    for (int g = 0; g < c->n_gpus; g++)
        for (int n = 0; n < c->n_nics; n++)
            t->path[g][n] = (uint8_t)rail_path_classify(&c->gpu_chain[order[g]], &c->nic_chain[n]);
    t->nvswitch = c->nvswitch;
    t->cpu_vendor = c->cpu_vendor;
    t->n_numa = c->n_numa;
    t->inter_cpu_bw = c->n_numa > 1 ? c->inter_cpu_bw : 0.0f;
    rail_topo_finalize(t);
    free(c);
    return 0;
}

int rail_topo_load_nccl_xml(const char *path, struct rail_topo *t, char *err, size_t errlen)
{
    return rail_topo_load_nccl_xml_ex(path, t, NULL, err, errlen);
}
