/* SPDX-License-Identifier: Apache-2.0 */
/* Regret of the tuner's choices against published nccl-tests measurements
 * (test/fixtures/measurements/published.csv, sources in its README.md).
 *
 * Every comparable set (same system, shape, collective and size, with at least two measured
 * algorithm/protocol alternatives) is replayed like an independent client of the tuner ABI would:
 * the tuner is built for the set's topology and communicator (rail_tuner_create), then offered a
 * cost table in which only the measured alternatives are not IGNORE, holding NCCL's own predicted
 * times (rail_tuner_apply). Its choice is the entry left at the lowest cost. NCCL's default is the
 * fastest offered alternative by NCCL 2.28's own model (rail_model_nccl_time). The regret of a
 * choice is its measured time over the best measured time, minus 1.
 *
 * usage: test_regret [--table] [--details] [CSV]
 *   --table: one line per set (bench/regret.sh); --details: measured vs predicted times. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "abi/tuner_core.h"

/* Documented bound on the project's mean regret over all sets (docs/cost-model.md §11). */
#define PROJECT_MEAN_REGRET_BOUND 0.01

#define MAX_SETS  64
#define MAX_ALTS  8
#define FIELD_LEN 96

struct alt {
    int algo, proto;
    double time_us;
    float proj_us, nccl_us; /* predictions: the project's model, NCCL's model */
    int nccl_default;       /* 1/0 when the source says which one NCCL picked, -1 unknown */
};

struct mset {
    char name[FIELD_LEN], system[FIELD_LEN], topology[FIELD_LEN], quality[16], source[FIELD_LEN];
    int gpn, nnodes, nranks, coll;
    size_t bytes;
    int n;
    struct alt alts[MAX_ALTS];
    /* Results. */
    int proj, nccl, best; /* indexes into alts */
    double proj_regret, nccl_regret, measured_default_regret;
};

static int find_name(const char *s, const char *(*name)(int), int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, name(i)) == 0)
            return i;
    return -1;
}

/* Splits a comma-separated line in place (no quoting: the fixture has none). */
static int split(char *line, char **f, int maxf)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p; p++) {
        if (*p == '\n' || *p == '\r') {
            *p = 0;
            break;
        }
        if (*p == ',') {
            *p = 0;
            if (n == maxf)
                return -1;
            f[n++] = p + 1;
        }
    }
    return n;
}

enum {
    F_SET,
    F_SYSTEM,
    F_TOPO,
    F_GPN,
    F_NNODES,
    F_NRANKS,
    F_COLL,
    F_BYTES,
    F_ALGO,
    F_PROTO,
    F_TIME,
    F_BUSBW,
    F_QUALITY,
    F_DEFAULT,
    F_VERSION,
    F_SOURCE,
    F_COUNT
};

static int load_sets(const char *path, struct mset *sets, int *nsets)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int lineno = 0;
    *nsets = 0;
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -errno;
    }
    while (fgets(line, sizeof(line), f)) {
        char *fl[F_COUNT + 1];
        lineno++;
        if (lineno == 1 || line[0] == '#' || line[0] == '\n')
            continue;
        if (split(line, fl, F_COUNT) != F_COUNT) {
            fprintf(stderr, "%s:%d: expected %d fields\n", path, lineno, F_COUNT);
            fclose(f);
            return -EINVAL;
        }
        struct mset *s = NULL;
        for (int i = 0; i < *nsets; i++)
            if (strcmp(sets[i].name, fl[F_SET]) == 0)
                s = &sets[i];
        if (!s) {
            if (*nsets == MAX_SETS) {
                fclose(f);
                return -E2BIG;
            }
            s = &sets[(*nsets)++];
            memset(s, 0, sizeof(*s));
            snprintf(s->name, sizeof(s->name), "%s", fl[F_SET]);
            snprintf(s->system, sizeof(s->system), "%s", fl[F_SYSTEM]);
            snprintf(s->topology, sizeof(s->topology), "%s", fl[F_TOPO]);
            snprintf(s->quality, sizeof(s->quality), "%s", fl[F_QUALITY]);
            snprintf(s->source, sizeof(s->source), "%s", fl[F_SOURCE]);
            s->gpn = atoi(fl[F_GPN]);
            s->nnodes = atoi(fl[F_NNODES]);
            s->nranks = atoi(fl[F_NRANKS]);
            s->coll = find_name(fl[F_COLL], rail_coll_name, RAIL_NUM_COLLS);
            s->bytes = (size_t)strtoull(fl[F_BYTES], NULL, 10);
        } else if (strcmp(s->topology, fl[F_TOPO]) != 0 || s->nranks != atoi(fl[F_NRANKS]) ||
                   s->bytes != (size_t)strtoull(fl[F_BYTES], NULL, 10) ||
                   s->coll != find_name(fl[F_COLL], rail_coll_name, RAIL_NUM_COLLS)) {
            fprintf(stderr, "%s:%d: set %s mixes shapes\n", path, lineno, s->name);
            fclose(f);
            return -EINVAL;
        }
        if (s->n == MAX_ALTS) {
            fclose(f);
            return -E2BIG;
        }
        struct alt *a = &s->alts[s->n++];
        a->algo = find_name(fl[F_ALGO], rail_algo_name, NCCL_NUM_ALGORITHMS);
        a->proto = find_name(fl[F_PROTO], rail_proto_name, NCCL_NUM_PROTOCOLS);
        a->time_us = strtod(fl[F_TIME], NULL);
        a->nccl_default = fl[F_DEFAULT][0] ? atoi(fl[F_DEFAULT]) : -1;
        if (s->coll < 0 || a->algo < 0 || a->proto < 0 || !(a->time_us > 0) || s->nranks < 1 ||
            s->nnodes < 1 || s->gpn * s->nnodes != s->nranks) {
            fprintf(stderr, "%s:%d: bad row\n", path, lineno);
            fclose(f);
            return -EINVAL;
        }
    }
    fclose(f);
    return 0;
}

/* GB200 NVL72 compute trays seen as NCCL nodes (one NVLink partition each): B200-class GPUs
 * (sm100) with 18 NVLink5 links through NVSwitch, one ConnectX-7 400G InfiniBand NIC per GPU
 * reached through the Grace CPU (NCCL's P2C path, GPUDirect over C2C), Arm CPUs. */
static void topo_gb200(struct rail_topo *t, int gpus)
{
    memset(t, 0, sizeof(*t));
    t->source = RAIL_TOPO_SRC_PROFILE;
    snprintf(t->origin, sizeof(t->origin), "test-gb200-nvl%d", gpus);
    t->n_gpus = gpus;
    t->n_nics = gpus;
    for (int g = 0; g < gpus; g++) {
        struct rail_gpu *gpu = &t->gpus[g];
        snprintf(gpu->busid, sizeof(gpu->busid), "0000:%02x:00.0", (0x10 + g) & 0xff);
        gpu->sm = 100;
        gpu->numa = g / 2;
        gpu->nvlinks = 18;
        gpu->pcie_gen = 5;
        gpu->pcie_width = 16;
        gpu->pcie_gbps = rail_pcie_gbps(5, 16);
        gpu->gdr = true;
        struct rail_nic *nic = &t->nics[g];
        snprintf(nic->name, sizeof(nic->name), "mlx5_%d", g);
        snprintf(nic->busid, sizeof(nic->busid), "0000:%02x:00.0", (0x80 + g) & 0xff);
        nic->port = 1;
        nic->speed_mbps = 400000;
        nic->link_layer = RAIL_LINK_IB;
        nic->numa = g / 2;
        nic->pcie_gbps = rail_pcie_gbps(5, 16);
        nic->active = true;
        nic->gdr = true;
    }
    for (int g = 0; g < gpus; g++)
        for (int n = 0; n < gpus; n++)
            t->path[g][n] =
                n == g ? RAIL_PATH_P2C : (n / 2 == g / 2 ? RAIL_PATH_PHB : RAIL_PATH_SYS);
    t->nvswitch = true;
    t->nvlink_gen = 5;
    t->nvlink_bw = 18 * rail_nvlink_bw_per_link(100);
    t->cpu_vendor = RAIL_CPU_ARM;
    t->n_numa = (gpus + 1) / 2;
    t->gdr = true;
}

/* 8x H100 with 4x 400G RoCE NICs, one per GPU pair behind the pair's PCIe switch (nccl#1368). */
static int topo_h100_4nic_roce(struct rail_topo *t, char *err, size_t errlen)
{
    int rc = rail_topo_load_profile("dgx-h100", t, err, errlen);
    if (rc < 0)
        return rc;
    t->n_nics = 4;
    for (int n = 0; n < 4; n++) {
        t->nics[n].link_layer = RAIL_LINK_ETH;
        t->nics[n].numa = t->gpus[2 * n].numa;
    }
    for (int g = 0; g < t->n_gpus; g++)
        for (int n = 0; n < 4; n++)
            t->path[g][n] = g / 2 == n                           ? RAIL_PATH_PXB
                            : t->gpus[g].numa == t->nics[n].numa ? RAIL_PATH_PHB
                                                                 : RAIL_PATH_SYS;
    snprintf(t->origin, sizeof(t->origin), "test-h100-4x400g-roce");
    return 0;
}

static int build_topo(const struct mset *s, struct rail_topo *t, char *err, size_t errlen)
{
    const char *k = s->topology;
    if (strncmp(k, "profile:", 8) == 0)
        return rail_topo_load_profile(k + 8, t, err, errlen);
    if (strncmp(k, "xml:", 4) == 0) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", RAIL_FIXTURES, k + 4);
        return rail_topo_load_nccl_xml(path, t, err, errlen);
    }
    if (strcmp(k, "hand:gb200") == 0) {
        topo_gb200(t, s->gpn);
        return 0;
    }
    if (strcmp(k, "hand:h100-4nic-roce") == 0)
        return topo_h100_4nic_roce(t, err, errlen);
    snprintf(err, errlen, "unknown topology key '%s'", k);
    return -EINVAL;
}

/* Replays one set; returns 0, or a negative errno when the tuner could not be built. */
static int evaluate(struct mset *s, const char *topo_override)
{
    static struct rail_topo topo;
    struct mset copy = *s;
    char err[256];
    if (topo_override)
        snprintf(copy.topology, sizeof(copy.topology), "%s", topo_override);
    if (build_topo(&copy, &topo, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s\n", s->name, err);
        return -EINVAL;
    }
    struct rail_tuner_opts opts = {.topo = &topo, .rules_path = NULL, .lenient = 0};
    struct rail_tuner *tu = NULL;
    if (rail_tuner_create(&tu, 1, (size_t)s->nranks, (size_t)s->nnodes, NULL, &opts) < 0 || !tu)
        return -EINVAL;
    CHECK_MSG(tu->model_active, "%s: model not active (%s)", s->name, tu->model.why);

    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            table[a][p] = NCCL_ALGO_PROTO_IGNORE;
    s->best = s->nccl = 0;
    float nccl_best = -1.0f;
    for (int i = 0; i < s->n; i++) {
        const struct alt *a = &s->alts[i];
        float t = rail_model_nccl_time(&tu->model, s->coll, a->algo, a->proto, s->bytes, 1);
        s->alts[i].nccl_us = t;
        s->alts[i].proj_us = rail_model_time(&tu->model, s->coll, a->algo, a->proto, s->bytes, 1);
        /* Measured, so NCCL offered it even where the emulated model thinks otherwise. */
        table[a->algo][a->proto] = t >= 0.0f ? t : 1e30f;
        if (t >= 0.0f && (nccl_best < 0.0f || t < nccl_best)) {
            nccl_best = t;
            s->nccl = i;
        }
        if (a->time_us < s->alts[s->best].time_us)
            s->best = i;
    }
    int nch = 0;
    rail_tuner_apply(tu, s->coll, s->bytes, 1, 0, table, &nch);
    s->proj = -1;
    for (int i = 0; i < s->n; i++) {
        float v = table[s->alts[i].algo][s->alts[i].proto];
        if (v >= 0.0f && (s->proj < 0 || v < table[s->alts[s->proj].algo][s->alts[s->proj].proto]))
            s->proj = i;
    }
    rail_tuner_destroy(tu);
    const double best = s->alts[s->best].time_us;
    s->proj_regret = s->alts[s->proj].time_us / best - 1.0;
    s->nccl_regret = s->alts[s->nccl].time_us / best - 1.0;
    s->measured_default_regret = -1.0;
    for (int i = 0; i < s->n; i++)
        if (s->alts[i].nccl_default == 1)
            s->measured_default_regret = s->alts[i].time_us / best - 1.0;
    return 0;
}

static const char *alt_name(const struct alt *a)
{
    static char buf[4][32];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", rail_algo_name(a->algo), rail_proto_name(a->proto));
    return buf[k];
}

static void print_details(const struct mset *sets, int n)
{
    printf("%-26s %-16s %12s %12s %12s\n", "set", "alternative", "measured_us", "project_us",
           "nccl_us");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < sets[i].n; k++) {
            const struct alt *a = &sets[i].alts[k];
            printf("%-26s %-16s %12.1f %12.1f %12.1f\n", sets[i].name, alt_name(a), a->time_us,
                   (double)a->proj_us, (double)a->nccl_us);
        }
}

static void print_table(const struct mset *sets, int n)
{
    printf("%-26s %-5s %-18s %-16s %-16s %-16s %8s %8s %8s\n", "set", "qual", "topology", "best",
           "project", "nccl-model", "r_proj", "r_nccl", "r_meas");
    for (int i = 0; i < n; i++) {
        const struct mset *s = &sets[i];
        char meas[16] = "-";
        if (s->measured_default_regret >= 0.0)
            snprintf(meas, sizeof(meas), "%.3f", s->measured_default_regret);
        printf("%-26s %-5s %-18s %-16s %-16s %-16s %8.3f %8.3f %8s\n", s->name, s->quality,
               s->topology, alt_name(&s->alts[s->best]), alt_name(&s->alts[s->proj]),
               alt_name(&s->alts[s->nccl]), s->proj_regret, s->nccl_regret, meas);
    }
}

/* Means per system prefix (the set name up to its first '-') and overall. */
static void summarize(const struct mset *sets, int n, double *proj_mean, double *nccl_mean,
                      bool print)
{
    double p = 0, q = 0;
    for (int i = 0; i < n; i++) {
        p += sets[i].proj_regret;
        q += sets[i].nccl_regret;
    }
    *proj_mean = n ? p / n : 0;
    *nccl_mean = n ? q / n : 0;
    if (!print)
        return;
    const char *groups[][2] = {{"h100-g", "H100 single node (slices of an HGX/DGX H100)"},
                               {"gb200-", "GB200 NVL partitions, 3 nodes"},
                               {"h100-5n", "H100 5 nodes, 4x400G RoCE"},
                               {"", "all sets"}};
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
        for (int table_only = 0; table_only < 2; table_only++) {
            double a = 0, b = 0;
            int k = 0;
            for (int i = 0; i < n; i++) {
                if (strncmp(sets[i].name, groups[g][0], strlen(groups[g][0])) != 0)
                    continue;
                if (table_only && strcmp(sets[i].quality, "table") != 0)
                    continue;
                a += sets[i].proj_regret;
                b += sets[i].nccl_regret;
                k++;
            }
            if (k)
                printf("mean regret %-46s %-11s %2d sets: project %.4f, NCCL default %.4f\n",
                       groups[g][1], table_only ? "(tables)" : "(all)", k, a / k, b / k);
        }
    }
}

int main(int argc, char **argv)
{
    static struct mset sets[MAX_SETS];
    const char *path = RAIL_FIXTURES "/measurements/published.csv";
    bool table = false, details = false;
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--table") == 0)
            table = true;
        else if (strcmp(argv[i], "--details") == 0)
            details = true;
        else
            path = argv[i];
    }
    /* The replay must see the model alone: no rules file, no user override. */
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    unsetenv("NCCL_ALGO");
    unsetenv("NCCL_PROTO");
    unsetenv("NCCL_RAIL_TUNER_ENABLE");
    unsetenv("NCCL_RAIL_TOPO_PROFILE");

    int rc = load_sets(path, sets, &n);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0)
        return check_report("test_regret");
    CHECK_MSG(n >= 20, "%d sets", n);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(sets[i].n >= 2, "set %s has %d alternative(s)", sets[i].name, sets[i].n);
        CHECK_EQ_INT(evaluate(&sets[i], NULL), 0);
        /* Where the source logged NCCL's own pick, the emulated NCCL model agrees with it. */
        for (int k = 0; k < sets[i].n; k++)
            if (sets[i].alts[k].nccl_default == 1)
                CHECK_MSG(sets[i].nccl == k, "%s: NCCL picked %s, the emulation %s", sets[i].name,
                          alt_name(&sets[i].alts[k]), alt_name(&sets[i].alts[sets[i].nccl]));
    }
    if (table)
        print_table(sets, n);
    if (details)
        print_details(sets, n);
    /* The checker passes the system as NCCL_TOPO_FILE: the NCCL-dump-style XML of the same HGX
     * H100 node must give the same choices as the built-in profile. */
    for (int i = 0; i < n; i++) {
        if (strcmp(sets[i].topology, "profile:dgx-h100") != 0)
            continue;
        struct mset x = sets[i];
        CHECK_EQ_INT(evaluate(&x, "xml:measurements/hgx-h100-8gpu-topo.xml"), 0);
        CHECK_MSG(x.proj == sets[i].proj, "%s: XML topology chose %s, profile %s", x.name,
                  alt_name(&x.alts[x.proj]), alt_name(&sets[i].alts[sets[i].proj]));
        CHECK_EQ_INT(x.nccl, sets[i].nccl);
    }
    double proj, nccl;
    summarize(sets, n, &proj, &nccl, true);
    /* How far the predicted times are from the measured ones (not asserted: regret is what
     * matters; shown so model drift is visible). */
    double ep = 0, en = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < sets[i].n; j++) {
            if (sets[i].alts[j].proj_us < 0.0f || sets[i].alts[j].nccl_us < 0.0f)
                continue;
            k++;
            ep += fabs(sets[i].alts[j].proj_us / sets[i].alts[j].time_us - 1.0);
            en += fabs(sets[i].alts[j].nccl_us / sets[i].alts[j].time_us - 1.0);
        }
    printf("mean |predicted/measured - 1| over %d measurements: project model %.3f, NCCL model "
           "%.3f\n",
           k, k ? ep / k : 0.0, k ? en / k : 0.0);
    CHECK_MSG(proj <= nccl, "project mean regret %.4f above NCCL's %.4f", proj, nccl);
    CHECK_MSG(proj <= 0.5 * nccl, "project mean regret %.4f not well under NCCL's %.4f", proj,
              nccl);
    CHECK_MSG(proj <= PROJECT_MEAN_REGRET_BOUND, "project mean regret %.4f above the bound %.2f",
              proj, PROJECT_MEAN_REGRET_BOUND);
    return check_report("test_regret");
}
