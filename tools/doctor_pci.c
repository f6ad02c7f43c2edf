/* SPDX-License-Identifier: Apache-2.0 */
/* PCIe checks: negotiated vs maximum link of GPUs and NICs (pcie.link), ACS redirection on the
 * bridges between a GPU and its nearest NICs (pcie.acs), and GPU BAR1 size (gpu.bar1).
 *
 * ACS is read from the `config` file of each bridge: the extended capability list starts at
 * 0x100, capability id 0x000D is ACS, its control register is at +6 (little endian). Only root
 * can read past the first 64 bytes of config space; a shorter file means "unreadable". */
#include "doctor_checks.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_file.h"
#include "strutil.h"
#include "topo_internal.h"
#include "topo_sysfs.h"

#define ACS_CAP_ID   0x000d
#define ACS_RR       0x04 /* P2P request redirect */
#define ACS_CR       0x08 /* P2P completion redirect */
#define ACS_EC       0x20 /* P2P egress control */
#define MAX_BRIDGES  64
#define MAX_NIC_FUNS 64

int doctor_acs_ctrl(const unsigned char *cfg, size_t len)
{
    size_t off = 0x100;
    if (!cfg || len < 0x104)
        return -ENODATA;
    for (int hops = 0; hops < 1024; hops++) {
        unsigned hdr;
        if (off + 4 > len)
            return -EINVAL;
        hdr = (unsigned)cfg[off] | (unsigned)cfg[off + 1] << 8 | (unsigned)cfg[off + 2] << 16 |
              (unsigned)cfg[off + 3] << 24;
        if (hdr == 0 || hdr == 0xffffffffu)
            return -ENOENT;
        if ((hdr & 0xffff) == ACS_CAP_ID) {
            if (off + 8 > len)
                return -EINVAL;
            return (int)(cfg[off + 6] | cfg[off + 7] << 8);
        }
        size_t next = (hdr >> 20) & 0xffc;
        if (next == 0)
            return -ENOENT;
        if (next < 0x100 || next <= off)
            return -EINVAL; /* the list must move forward: no loops */
        off = next;
    }
    return -EINVAL;
}

long long doctor_bar1_bytes(const char *text)
{
    unsigned long long start, end, flags;
    const char *line = text ? strchr(text, '\n') : NULL;
    int used = 0;
    if (!line)
        return text && *text ? 0 : -EINVAL; /* a single line: no BAR1 */
    if (sscanf(line + 1, " %llx %llx %llx%n", &start, &end, &flags, &used) != 3)
        return line[1] == '\0' ? 0 : -EINVAL;
    if (start == 0 && end == 0)
        return 0;
    if (end < start || end - start >= (1ULL << 62))
        return -EINVAL;
    return (long long)(end - start + 1);
}

static int read_config(const char *root, const char *devpath, unsigned char *buf, size_t len)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/config", devpath) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    /* The first len bytes of config space; non-blocking, regular files only, beneath the root
     * (safe_file.h). */
    return (int)rail_file_read_fixed_in(root, path, buf, len,
                                        RAIL_FILE_NOFOLLOW | RAIL_FILE_PARTIAL);
}

static void fmt_size(long long b, char *buf, size_t len)
{
    if (b >= (1LL << 30) && b % (1LL << 30) == 0)
        snprintf(buf, len, "%lld GiB", b >> 30);
    else
        snprintf(buf, len, "%lld MiB", b >> 20);
}

/* ---- pcie.link ---- */

static void check_link(const char *root, const char *label, const char *busid, bool gpu,
                       struct doctor_report *r)
{
    char path[PATH_MAX], buf[64], subj[96];
    int cur_gen, max_gen, max_w;
    long cur_w;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.255s/current_link_speed", busid);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0 ||
        !(cur_gen = rail_pcie_gen_from_text(buf)))
        return;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.255s/current_link_width", busid);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0 ||
        rail_parse_long(buf, 10, 1, 32, &cur_w) != 0)
        return;
    if (rail_sysfs_pcie_link(root, busid, &max_gen, &max_w) != 0)
        return;
    snprintf(subj, sizeof(subj), "%s %s", label, busid);
    if (cur_w < max_w || (!gpu && cur_gen < max_gen))
        doctor_add(r, "pcie.link", DOCTOR_WARN, subj,
                   "reseat the card, check the slot/riser and the BIOS PCIe settings; lspci -vv "
                   "shows LnkSta/LnkCap",
                   "link downtrained: Gen%d x%ld, capable of Gen%d x%d", cur_gen, cur_w, max_gen,
                   max_w);
    else if (cur_gen < max_gen)
        doctor_add(r, "pcie.link", DOCTOR_INFO, subj,
                   "check again under load (nvidia-smi -q -d PCI shows the current link)",
                   "Gen%d x%ld now, capable of Gen%d x%d: idle GPUs lower their link speed",
                   cur_gen, cur_w, max_gen, max_w);
    else
        doctor_add(r, "pcie.link", DOCTOR_OK, subj, NULL, "Gen%d x%ld (its maximum)", cur_gen,
                   cur_w);
}

void doctor_check_pcie(const struct doctor_ctx *c, struct doctor_report *r)
{
    static char devs[MAX_NIC_FUNS][RAIL_SYSFS_NAME_LEN];
    char seen[MAX_NIC_FUNS][16];
    int nd = rail_sysfs_list(c->root, "/sys/class/infiniband", devs, MAX_NIC_FUNS), ns = 0;
    for (int g = 0; c->topo && g < c->topo->n_gpus; g++) {
        char label[16];
        snprintf(label, sizeof(label), "GPU%d", g);
        check_link(c->root, label, c->topo->gpus[g].busid, true, r);
    }
    for (int d = 0; d < nd; d++) {
        char path[PATH_MAX], real[PATH_MAX], bdf[16];
        const char *base;
        bool dup = false;
        snprintf(path, sizeof(path), "/sys/class/infiniband/%.255s/device", devs[d]);
        if (rail_sysfs_realpath(c->root, path, real, sizeof(real)) != 0 ||
            !(base = strrchr(real, '/')) || rail_busid_normalize(base + 1, bdf) != 0)
            continue;
        for (int i = 0; i < ns; i++)
            dup |= strcmp(seen[i], bdf) == 0;
        if (dup)
            continue;
        snprintf(seen[ns++], sizeof(seen[0]), "%s", bdf);
        check_link(c->root, devs[d], base + 1, false, r);
    }
}

/* ---- pcie.acs ---- */

struct bridges {
    int n;
    char path[MAX_BRIDGES][PATH_MAX / 4];
};

static void add_bridge(struct bridges *b, const char *path)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->path[i], path) == 0)
            return;
    if (b->n < MAX_BRIDGES)
        snprintf(b->path[b->n++], sizeof(b->path[0]), "%s", path);
}

/* Bridges (PCI functions) strictly between each device and the deepest common ancestor. */
static void bridges_between(const char *a, const char *b, struct bridges *out)
{
    size_t common = 0, i = 0;
    while (a[i] && a[i] == b[i]) {
        if (a[i] == '/')
            common = i;
        i++;
    }
    if ((!a[i] || a[i] == '/') && (!b[i] || b[i] == '/'))
        common = i; /* one is an ancestor of the other, or identical */
    for (int side = 0; side < 2; side++) {
        const char *p = side ? b : a;
        size_t len = strlen(p);
        for (size_t k = common + 1; k < len; k++) {
            char comp[PATH_MAX / 4], bdf[16];
            const char *name;
            if (p[k] != '/')
                continue;
            snprintf(comp, sizeof(comp), "%.*s", (int)k, p);
            name = strrchr(comp, '/') + 1;
            if (rail_busid_normalize(name, bdf) == 0)
                add_bridge(out, comp);
        }
    }
}

static bool dev_path(const char *root, const char *busid, char *out, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.255s", busid);
    return busid[0] && rail_sysfs_realpath(root, path, out, len) == 0;
}

void doctor_check_acs(const struct doctor_ctx *c, struct doctor_report *r)
{
    const struct rail_topo *t = c->topo;
    static struct bridges b;
    static unsigned char cfg[4096];
    int unreadable = 0, clean = 0, redirected = 0;
    b.n = 0;
    for (int g = 0; t && g < t->n_gpus; g++) {
        char gp[PATH_MAX], np[PATH_MAX];
        int best = rail_topo_gpu_best_path(t, g);
        if (!dev_path(c->root, t->gpus[g].busid, gp, sizeof(gp)))
            continue;
        for (int n = 0; n < t->n_nics; n++)
            if (t->nics[n].active && t->path[g][n] == best &&
                dev_path(c->root, t->nics[n].busid, np, sizeof(np)))
                bridges_between(gp, np, &b);
    }
    for (int i = 0; i < b.n; i++) {
        int got = read_config(c->root, b.path[i], cfg, sizeof(cfg));
        int ctrl = got < 0 ? got : doctor_acs_ctrl(cfg, (size_t)got);
        const char *bdf = strrchr(b.path[i], '/') + 1;
        if (got < 0 || ctrl == -ENODATA || ctrl == -EINVAL) {
            unreadable++;
        } else if (ctrl >= 0 && (ctrl & (ACS_RR | ACS_CR | ACS_EC))) {
            char fix[200];
            snprintf(
                fix, sizeof(fix),
                "bare metal: disable ACS in the BIOS or run `setpci -s %s ECAP_ACS+0x6.w=0000` "
                "at boot; in a VM keep ACS and enable ATS on the NIC",
                bdf);
            doctor_add(r, "pcie.acs", DOCTOR_WARN, bdf, fix,
                       "ACS control 0x%04x:%s%s%s set on a bridge between a GPU and its NIC: P2P "
                       "and GPUDirect RDMA traffic is redirected through the root complex",
                       ctrl, ctrl & ACS_RR ? " ReqRedir" : "", ctrl & ACS_CR ? " CmpltRedir" : "",
                       ctrl & ACS_EC ? " EgressCtrl" : "");
            redirected++;
        } else {
            clean++; /* ACS redirect bits clear, or no ACS capability */
        }
    }
    if (unreadable)
        doctor_add(r, "pcie.acs", DOCTOR_INFO, "bridges",
                   "run doctor as root, or check `sudo lspci -vvv | grep ACSCtl`",
                   "ACS state of %d bridge(s) between GPUs and their NICs is unreadable: config "
                   "space past 64 bytes needs root",
                   unreadable);
    if (clean && !redirected && !unreadable)
        doctor_add(r, "pcie.acs", DOCTOR_OK, "bridges", NULL,
                   "no ACS P2P redirection on the %d bridge(s) between GPUs and their NICs", clean);
}

/* ---- gpu.bar1 ---- */

/* Memory of the product a PCI device id names (only ids of a single memory size). */
static long long gpu_mem_gib(unsigned device)
{
    static const struct {
        unsigned dev;
        int gib;
    } tbl[] = {{0x1db1, 16}, {0x1db5, 32}, {0x1eb8, 16}, {0x20b0, 40},
               {0x20b2, 80}, {0x2330, 80}, {0x2331, 80}};
    for (size_t i = 0; i < sizeof(tbl) / sizeof(tbl[0]); i++)
        if (tbl[i].dev == device)
            return tbl[i].gib;
    return 0;
}

void doctor_check_bar1(const struct doctor_ctx *c, struct doctor_report *r)
{
    for (int g = 0; c->topo && g < c->topo->n_gpus; g++) {
        const struct rail_gpu *gpu = &c->topo->gpus[g];
        char path[PATH_MAX], text[2048], subj[64], sz[32], mem[32];
        long long bar1, gib = gpu->pci_vendor == 0x10de ? gpu_mem_gib(gpu->pci_device) : 0;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.255s/resource", gpu->busid);
        snprintf(subj, sizeof(subj), "GPU%d %s", g, gpu->busid);
        if (rail_sysfs_read(c->root, path, text, sizeof(text)) <= 0)
            continue;
        bar1 = doctor_bar1_bytes(text);
        if (bar1 < 0) {
            doctor_add(r, "gpu.bar1", DOCTOR_INFO, subj, NULL, "cannot parse %s", path);
            continue;
        }
        if (bar1 == 0) {
            doctor_add(r, "gpu.bar1", DOCTOR_WARN, subj,
                       "enable 'Above 4G decoding' / large BARs in the BIOS or the VM config",
                       "BAR1 is not assigned: GPUDirect RDMA cannot map GPU memory");
            continue;
        }
        fmt_size(bar1, sz, sizeof(sz));
        snprintf(mem, sizeof(mem), "%lld GiB", gib);
        if (bar1 <= (256LL << 20))
            doctor_add(r, "gpu.bar1", DOCTOR_WARN, subj,
                       "enable Resizable BAR / 'Above 4G decoding' in the BIOS (or the VM's "
                       "64-bit MMIO size)",
                       "BAR1 is %s: GPUDirect RDMA can map only that much GPU memory at a time",
                       sz);
        else if (gib && bar1 < (gib << 30))
            doctor_add(r, "gpu.bar1", DOCTOR_INFO, subj, NULL,
                       "BAR1 %s is smaller than the GPU's %s: at most %s of GPU memory can be "
                       "registered for GDR at once",
                       sz, mem, sz);
        else
            doctor_add(r, "gpu.bar1", DOCTOR_OK, subj, NULL, "BAR1 %s%s%s", sz,
                       gib ? ", covers the GPU's " : "", gib ? mem : "");
    }
}
