/* SPDX-License-Identifier: Apache-2.0 */
/* Pure topology helpers: path names, NCCL's bandwidth units, the PCI-id -> compute capability
 * table, path classification and the per-GPU network summary. No I/O here. */
#include "topo.h"
#include "topo_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const g_path_names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                           "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

const char *rail_path_name(enum rail_path p)
{
    if ((int)p < 0 || (int)p > RAIL_PATH_DIS)
        return "?";
    return g_path_names[p];
}

int rail_path_parse(const char *s)
{
    /* NCCL's legacy numeric levels: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS. */
    static const int legacy[] = {RAIL_PATH_LOC, RAIL_PATH_PIX, RAIL_PATH_PXB, RAIL_PATH_PHB,
                                 RAIL_PATH_SYS};
    if (!s || !*s)
        return -1;
    if (s[1] == '\0' && s[0] >= '0' && s[0] <= '4')
        return legacy[s[0] - '0'];
    for (int i = 0; i <= RAIL_PATH_DIS; i++)
        if (strcasecmp(s, g_path_names[i]) == 0)
            return i;
    return -1;
}

float rail_pcie_gbps(int gen, int width)
{
    /* NCCL: width x kvDictPciGen[speed] / 80, with 15/30/60/120/240/480 per lane for Gen1..6. */
    static const int per_lane[] = {0, 15, 30, 60, 120, 240, 480};
    if (gen < 1 || gen > 6 || width < 1 || width > 32)
        return 0.0f;
    return (float)width * (float)per_lane[gen] / 80.0f;
}

/* NVLink generation by compute capability (the first sm of each generation) with NCCL's per-link
 * bandwidth for it (topo.h ncclTopoNVLinkBw), newest first. */
static const struct {
    int sm_min, gen;
    float bw;
} g_nvlink_gens[] = {
    {100, 5, 40.1f}, {90, 4, 20.6f}, {80, 3, 20.0f}, {70, 2, 20.0f}, {60, 1, 18.0f}};

static int nvlink_gen_index(int sm)
{
    for (size_t i = 0; i < sizeof(g_nvlink_gens) / sizeof(g_nvlink_gens[0]); i++)
        if (sm >= g_nvlink_gens[i].sm_min)
            return (int)i;
    return -1;
}

float rail_nvlink_bw_per_link(int sm)
{
    /* NCCL: SM86 has 12 GB/s links; unknown or pre-Pascal falls back to SM80's 20. */
    int i = nvlink_gen_index(sm);
    if (sm == 86)
        return 12.0f;
    return i < 0 ? 20.0f : g_nvlink_gens[i].bw;
}

int rail_nvlink_gen_from_sm(int sm)
{
    int i = nvlink_gen_index(sm);
    return i < 0 ? 0 : g_nvlink_gens[i].gen;
}

/* NVIDIA PCI device ids (pci.ids names in comments) -> compute capability x 10. */
static const struct {
    uint16_t device;
    uint8_t sm;
} g_nvidia_sm[] = {
    {0x06d2, 20},  /* GF100GL Tesla M2070 */
    {0x1094, 20},  /* GF110GL Tesla M2075 */
    {0x15f7, 60},  /* GP100GL Tesla P100 PCIe 12GB */
    {0x15f8, 60},  /* GP100GL Tesla P100 PCIe 16GB */
    {0x15f9, 60},  /* GP100GL Tesla P100 SXM2 16GB */
    {0x1db1, 70},  /* GV100GL Tesla V100 SXM2 16GB */
    {0x1db2, 70},  /* V100 DGXS 16GB */
    {0x1db3, 70},  /* V100 FHHL 16GB */
    {0x1db4, 70},  /* V100 PCIe 16GB */
    {0x1db5, 70},  /* V100 SXM2 32GB */
    {0x1db6, 70},  /* V100 PCIe 32GB */
    {0x1db7, 70},  /* V100 DGXS 32GB */
    {0x1db8, 70},  /* V100 SXM3 32GB (DGX-2) */
    {0x1df5, 70},  /* V100 SXM2 16GB */
    {0x1df6, 70},  /* V100S PCIe 32GB */
    {0x1eb8, 75},  /* TU104GL Tesla T4 */
    {0x20b0, 80},  /* GA100 A100 SXM4 40GB */
    {0x20b1, 80},  /* A100 PCIe 40GB */
    {0x20b2, 80},  /* A100 SXM4 80GB */
    {0x20b3, 80},  /* A100-SXM-64GB */
    {0x20b5, 80},  /* A100 PCIe 80GB */
    {0x20b6, 80},  /* GA100GL PG506-232 */
    {0x20b7, 80},  /* GA100GL A30 PCIe */
    {0x20f1, 80},  /* A100 PCIe 40GB */
    {0x20f3, 80},  /* A800-SXM4-80GB */
    {0x20f5, 80},  /* A800 80GB PCIe */
    {0x20f6, 80},  /* A800 40GB PCIe */
    {0x2230, 86},  /* GA102GL RTX A6000 */
    {0x2231, 86},  /* RTX A5000 */
    {0x2235, 86},  /* GA102GL A40 */
    {0x2236, 86},  /* GA102GL A10 */
    {0x2237, 86},  /* GA102GL A10G */
    {0x25b6, 86},  /* GA107GL A2 / A16 */
    {0x26b5, 89},  /* AD102GL L40 */
    {0x26b9, 89},  /* AD102GL L40S */
    {0x27b8, 89},  /* AD104GL L4 */
    {0x2321, 90},  /* GH100 H100L 94GB (H100 NVL) */
    {0x2322, 90},  /* H800 PCIe */
    {0x2324, 90},  /* H800 */
    {0x2329, 90},  /* H20 */
    {0x2330, 90},  /* H100 SXM5 80GB */
    {0x2331, 90},  /* H100 PCIe */
    {0x2335, 90},  /* H200 SXM 141GB */
    {0x2336, 90},  /* H100 */
    {0x2339, 90},  /* H100 */
    {0x233b, 90},  /* H200 NVL */
    {0x2342, 90},  /* GH200 */
    {0x2348, 90},  /* GH200 144G HBM3e */
    {0x2901, 100}, /* GB100 B200 */
    {0x2941, 100}, /* GB100 HGX GB200 */
    {0x29bc, 100}, /* GB102 B100 */
    {0x31c2, 103}, /* GB110 GB300 */
    {0x31c3, 103}, /* GB110 GB300 */
};

int rail_sm_from_pci_device(uint16_t vendor, uint16_t device)
{
    if (vendor != 0x10de)
        return 0;
    for (size_t i = 0; i < sizeof(g_nvidia_sm) / sizeof(g_nvidia_sm[0]); i++)
        if (g_nvidia_sm[i].device == device)
            return g_nvidia_sm[i].sm;
    return 0;
}

int rail_pcie_gen_from_text(const char *s)
{
    /* Kernel strings: "2.5 GT/s", "8 GT/s" (<= 5.6), "16.0 GT/s PCIe" (newer), "Unknown". */
    static const struct {
        double gts;
        int gen;
    } gens[] = {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}};
    char *end;
    double v;
    if (!s)
        return 0;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    v = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (strncmp(end, "GT/s", 4) != 0)
        return 0;
    for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
        if (fabs(v - gens[i].gts) < 0.01)
            return gens[i].gen;
    return 0;
}

float rail_pcie_gbps_from_hwloc(float hwloc_gbps)
{
    /* hwloc: lanes x GT/s x encoding / 8 (8b/10b for Gen1-2, 128b/130b Gen3-5, 242/256 Gen6).
     * Gen3 x16 and Gen4 x8 give the same number in both unit systems, so matching any
     * (gen, width) of the same encoding gives NCCL's value exactly. */
    static const double enc[] = {0, 0.8, 0.8, 128.0 / 130, 128.0 / 130, 128.0 / 130, 242.0 / 256};
    static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
    static const int widths[] = {16, 8, 4, 2, 1, 32, 12};
    if (!(hwloc_gbps > 0.0f) || !isfinite(hwloc_gbps))
        return 0.0f;
    for (int g = 1; g <= 6; g++)
        for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
            double v = widths[w] * gts[g] * enc[g] / 8.0;
            if (fabs(v - hwloc_gbps) <= 0.005 * v)
                return rail_pcie_gbps(g, widths[w]);
        }
    return hwloc_gbps * (float)(130.0 / 128.0 * 0.75); /* not a standard link: Gen3+ ratio */
}

float rail_inter_cpu_bw(int vendor, int family, int model)
{
    switch (vendor) {
    case RAIL_CPU_POWER:
        return 32.0f; /* P9_BW */
    case RAIL_CPU_ARM:
        return 6.0f; /* ARM_BW */
    case RAIL_CPU_AMD:
        return 16.0f; /* AMD_BW */
    case RAIL_CPU_INTEL:
        if (family == 6 && model >= 0xCF)
            return 40.0f; /* ERP_QPI_BW (Emerald Rapids) */
        if (family == 6 && model >= 0x8F)
            return 22.0f; /* SRP_QPI_BW (Sapphire Rapids) */
        if (family == 6 && model >= 0x55)
            return 10.0f; /* SKL_QPI_BW */
        return 6.0f;      /* BDW_QPI_BW */
    default:
        return 0.0f;
    }
}

int rail_cpu_vendor_from_strings(const char *arch, const char *vendor)
{
    if (arch && strncmp(arch, "ppc64", 5) == 0)
        return RAIL_CPU_POWER;
    if (arch && (strncmp(arch, "arm64", 5) == 0 || strncmp(arch, "aarch64", 7) == 0))
        return RAIL_CPU_ARM;
    if (vendor && strcmp(vendor, "GenuineIntel") == 0)
        return RAIL_CPU_INTEL;
    if (vendor && strcmp(vendor, "AuthenticAMD") == 0)
        return RAIL_CPU_AMD;
    return RAIL_CPU_UNKNOWN;
}

int rail_busid_normalize(const char *in, char out[16])
{
    /* dddd:bb:dd.f, hex digits */
    static const char pattern[] = "xxxx:xx:xx.x";
    if (!in || strlen(in) != sizeof(pattern) - 1)
        return -EINVAL;
    for (size_t i = 0; i < sizeof(pattern) - 1; i++) {
        if (pattern[i] == 'x') {
            if (!isxdigit((unsigned char)in[i]))
                return -EINVAL;
            out[i] = (char)tolower((unsigned char)in[i]);
        } else {
            if (in[i] != pattern[i])
                return -EINVAL;
            out[i] = in[i];
        }
    }
    out[sizeof(pattern) - 1] = '\0';
    return 0;
}

int rail_bcm_switch_gen(uint64_t id, int level)
{
    uint64_t masked = id & ~(uint64_t)0xfff;
    if (masked == 0x1000c0101000a000ULL)
        return 4;
    if (masked == (0x1000c03010000000ULL | ((uint64_t)level * 0x1000)))
        return 5;
    return 0;
}

enum rail_path rail_path_classify(const struct rail_pci_chain *a, const struct rail_pci_chain *b)
{
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if (a->sw[i] == b->sw[j])
                return (i == 0 && j == 0) ? RAIL_PATH_PIX : RAIL_PATH_PXB;
    return a->cpu == b->cpu ? RAIL_PATH_PHB : RAIL_PATH_SYS;
}

void rail_topo_reset(struct rail_topo *t, int source, const char *origin)
{
    memset(t, 0, sizeof(*t));
    t->source = source;
    snprintf(t->origin, sizeof(t->origin), "%s", origin ? origin : "");
    memset(t->path, RAIL_PATH_DIS, sizeof(t->path));
}

void rail_topo_finalize(struct rail_topo *t)
{
    float min_bw = -1.0f;
    int gen = 0;
    t->inferred = rail_topo_complete(t);
    for (int g = 0; g < t->n_gpus; g++) {
        const struct rail_gpu *gpu = &t->gpus[g];
        float bw = gpu->nvlinks > 0 ? (float)gpu->nvlinks * rail_nvlink_bw_per_link(gpu->sm) : 0;
        if (min_bw < 0 || bw < min_bw)
            min_bw = bw;
        if (gpu->nvlinks > 0 && !gen)
            gen = rail_nvlink_gen_from_sm(gpu->sm);
    }
    /* The slowest GPU bounds every intra-node ring: a GPU without NVLink means no NVLink fabric. */
    t->nvlink_bw = min_bw > 0 ? min_bw : 0.0f;
    t->nvlink_gen = t->nvlink_bw > 0 ? gen : 0;
    t->gdr = false;
    for (int g = 0; g < t->n_gpus; g++)
        for (int n = 0; n < t->n_nics; n++)
            if (t->gpus[g].gdr && t->nics[n].gdr && t->path[g][n] <= RAIL_PATH_PXB)
                t->gdr = true;
}

int rail_topo_gpu_best_path(const struct rail_topo *t, int g)
{
    int best = RAIL_PATH_DIS;
    for (int n = 0; n < t->n_nics && n < RAIL_TOPO_MAX_NICS; n++)
        if (t->nics[n].active && t->path[g][n] < best)
            best = t->path[g][n];
    return best;
}

int rail_topo_gpu_net(const struct rail_topo *t, int gpu, struct rail_gpu_net *out)
{
    int best[RAIL_TOPO_MAX_GPUS];
    if (!t || !out || gpu < 0 || gpu >= t->n_gpus || t->n_gpus > RAIL_TOPO_MAX_GPUS ||
        t->n_nics < 0 || t->n_nics > RAIL_TOPO_MAX_NICS)
        return -EINVAL;
    for (int g = 0; g < t->n_gpus; g++)
        best[g] = rail_topo_gpu_best_path(t, g);
    out->best_path = best[gpu];
    out->n_nearest = 0;
    out->nearest_gbps = 0.0f;
    if (best[gpu] == RAIL_PATH_DIS)
        return 0;
    for (int n = 0; n < t->n_nics; n++) {
        int sharers = 0;
        if (!t->nics[n].active || t->path[gpu][n] != best[gpu])
            continue;
        for (int g = 0; g < t->n_gpus; g++)
            if (best[g] != RAIL_PATH_DIS && t->path[g][n] == best[g])
                sharers++;
        out->n_nearest++;
        out->nearest_gbps += (float)t->nics[n].speed_mbps / 8000.0f / (float)sharers;
    }
    return 0;
}
