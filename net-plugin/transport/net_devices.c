/* SPDX-License-Identifier: Apache-2.0 */
/* Device discovery, once per process: every ACTIVE port with an InfiniBand or Ethernet (RoCE)
 * link layer that NCCL_IB_HCA selects is opened with its own verbs context, protection domain and
 * registration cache; the ports are then grouped into plugin devices of one or more rails
 * (rail_group.c: NCCL_RAIL_RAILS, or by GPU affinity, or all ports of a link layer). When nothing
 * is usable the plugin declines with one INFO line that says why and how to fix it. */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/gid_select.h"
#include "transport/hca_filter.h"
#include "ib_speed.h"
#include "log.h"
#include "transport/net_devices.h"
#include "transport/net_oob.h"
#include "transport/net_verbs.h"
#include "transport/verbs_lib.h"
#include "params.h"
#include "rails/rail_group.h"
#include "root_path.h"
#include "safe_file.h"
#include "topo.h"
#include "topo_sysfs.h"

#define RAIL_MAX_DEVS 64
#define GID_TBL_MAX   256

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool g_done; /* set once, after g_result/g_devs are final */
static int g_result;
static int g_ndevs; /* ports */
static struct rail_dev *g_devs[RAIL_MAX_DEVS];
static int g_ngroups;                 /* plugin devices */
static rail_port_init_fn g_port_init; /* set by the first rail_devices_init() */
static struct rail_netdev g_groups[RAIL_MAX_DEVS];

int rail_devices_count(void)
{
    return g_done && g_result > 0 ? g_ngroups : 0;
}

struct rail_netdev *rail_device_group(int index)
{
    if (!g_done || g_result <= 0 || index < 0 || index >= g_ngroups)
        return NULL;
    return &g_groups[index];
}

int rail_ports_count(void)
{
    return g_done && g_result > 0 ? g_ndevs : 0;
}

struct rail_dev *rail_port(int index)
{
    if (!g_done || index < 0 || index >= g_ndevs)
        return NULL;
    return g_devs[index];
}

static const char *sysfs_root(void)
{
    const char *r = rail_sysfs_root_param();
    return strcmp(r, "/") != 0 ? r : "";
}

/* CAP_IPC_LOCK (bit 14 of CapEff) lifts RLIMIT_MEMLOCK. */
static bool has_ipc_lock(void)
{
    char *text = NULL, *line;
    size_t len;
    bool cap = false;
    if (rail_file_read_all("/proc/self/status", 1 << 20, 0, &text, &len, NULL, 0) != 0)
        return false;
    line = strstr(text, "\nCapEff:");
    if (line) {
        unsigned long long v;
        if (sscanf(line + 1, "CapEff: %llx", &v) == 1)
            cap = (v >> 14) & 1;
    }
    free(text);
    return cap;
}

/* -ENOMEM with the reason when the locked-memory limit is too low to register buffers. */
static int check_memlock(char *why, size_t whylen)
{
    long long min_mb = rail_param_int(RAIL_PARAM_MEMLOCK_MIN_MB);
    struct rlimit rl;
    if (min_mb <= 0 || getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    if (rl.rlim_cur >= (rlim_t)min_mb << 20 || has_ipc_lock())
        return 0;
    snprintf(why, whylen,
             "RLIMIT_MEMLOCK is %llu KiB (< NCCL_RAIL_MEMLOCK_MIN_MB=%lld MiB) without "
             "CAP_IPC_LOCK: RDMA memory registration would fail (fix: `ulimit -l unlimited`, "
             "docker run --ulimit memlock=-1, or a memlock line in /etc/security/limits.conf; "
             "NCCL_RAIL_MEMLOCK_MIN_MB=0 skips this check)",
             (unsigned long long)rl.rlim_cur >> 10, min_mb);
    return -ENOMEM;
}

/* The device's PCI directory for NCCL (pciPath): resolved beneath the sysfs root, then given
 * with the root in front (a snapshot's links never lead out of it). */
static char *pci_path(const char *ibdev)
{
    char path[PATH_MAX], real[PATH_MAX];
    const char *root = sysfs_root();
    if (!rail_sysfs_name_ok(ibdev, 64))
        return NULL;
    snprintf(path, sizeof(path), "/sys/class/infiniband/%.63s/device", ibdev);
    if (rail_sysfs_realpath(root, path, real, sizeof(real)) != 0)
        return NULL;
    if (rail_root_is_live(root))
        return strdup(real);
    if (snprintf(path, sizeof(path), "%s%s", root, real) >= (int)sizeof(path))
        return NULL;
    return strdup(path);
}

static int sysfs_speed(const char *ibdev, int port)
{
    char path[PATH_MAX], buf[128];
    int mbps;
    if (!rail_sysfs_name_ok(ibdev, 64))
        return 0;
    snprintf(path, sizeof(path), "/sys/class/infiniband/%.63s/ports/%d/rate", ibdev, port);
    if (rail_sysfs_read(sysfs_root(), path, buf, sizeof(buf)) <= 0)
        return 0;
    mbps = rail_ib_rate_parse(buf);
    return mbps > 0 ? mbps : 0;
}

/* Picks the RoCE source GID of d and logs the choice once. -ENOENT when nothing is usable. */
static int pick_gid(struct rail_dev *d, int tbl_len, char *why, size_t whylen)
{
    static struct rail_gid_entry tbl[GID_TBL_MAX];
    struct rail_gid_overrides ov;
    char err[256], text[64], how[320];
    int idx = -1, version = 0, n;

    if (rail_gid_overrides_parse(rail_param_str(RAIL_PARAM_GID_INDEX), &ov, err, sizeof(err)))
        RAIL_WARN(NCCL_ENV | NCCL_NET, "NCCL_RAIL_GID_INDEX ignored: %s", err);
    n = rail_gid_read_sysfs(sysfs_root(), d->ibdev, d->port, tbl, GID_TBL_MAX);
    idx = rail_gid_override_for(&ov, d->ibdev);
    if (idx >= 0) {
        snprintf(how, sizeof(how), "NCCL_RAIL_GID_INDEX");
    } else if ((idx = (int)rail_param_int(RAIL_PARAM_IB_GID_INDEX)) >= 0) {
        snprintf(how, sizeof(how), "NCCL_IB_GID_INDEX");
    } else {
        int af = rail_param_enum(RAIL_PARAM_IB_ADDR_FAMILY) == 1 ? AF_INET6 : AF_INET;
        int ver = (int)rail_param_int(RAIL_PARAM_IB_ROCE_VERSION_NUM);
        char sel[200] = "";
        if (n <= 0) {
            snprintf(why, whylen, "%s:%d: cannot read its GID table from sysfs (%s)", d->ibdev,
                     d->port, strerror(n < 0 ? -n : ENOENT));
            return -ENOENT;
        }
        idx = rail_gid_select(tbl, n, af, ver, rail_param_str(RAIL_PARAM_IB_ADDR_RANGE), sel,
                              sizeof(sel));
        if (idx < 0) {
            snprintf(why, whylen, "%s:%d: no usable RoCE GID (%s; set NCCL_IB_GID_INDEX)", d->ibdev,
                     d->port, sel);
            return -ENOENT;
        }
        snprintf(how, sizeof(how), "auto: %s", sel);
    }
    /* An index the user set that does not work is a WARN; the automatic choice failing is not. */
    bool user_set = strncmp(how, "auto", 4) != 0;
    if (idx >= tbl_len || rail_ibv->query_gid(d->ctx, (uint8_t)d->port, idx, &d->gid) != 0) {
        snprintf(why, whylen, "%s:%d: GID index %d (%s) outside the port's %d-entry table",
                 d->ibdev, d->port, idx, how, tbl_len);
        if (user_set)
            RAIL_WARN(NCCL_INIT | NCCL_NET | NCCL_ENV, "%s; port skipped", why);
        return -ENOENT;
    }
    static const uint8_t zero[16];
    if (memcmp(d->gid.raw, zero, 16) == 0) {
        snprintf(why, whylen, "%s:%d: GID index %d (%s) is empty", d->ibdev, d->port, idx, how);
        if (user_set)
            RAIL_WARN(NCCL_INIT | NCCL_NET | NCCL_ENV, "%s; port skipped", why);
        return -ENOENT;
    }
    if (n > idx && tbl[idx].present)
        version = tbl[idx].roce_version;
    d->gid_index = idx;
    rail_gid_format(d->gid.raw, text, sizeof(text));
    RAIL_INFO(NCCL_INIT | NCCL_NET, "%s: RoCE GID index %d, %s, RoCE v%s (%s)", d->name, idx, text,
              version ? (version == 2 ? "2" : "1") : "?", how);
    return 0;
}

/* Appends to a bounded string; output past the end is dropped. */
/* NCCL_IB_PKEY_VALUE: its index in the port's PKey table; else the NCCL_IB_PKEY index. */
static int pick_pkey(struct rail_dev *d, int tbl_len, char *why, size_t whylen)
{
    long long value = rail_param_int(RAIL_PARAM_IB_PKEY_VALUE);
    d->pkey_index = (int)rail_param_int(RAIL_PARAM_IB_PKEY);
    if (value < 0)
        return 0;
    static uint16_t tbl[GID_TBL_MAX];
    int n = 0;
    for (; n < tbl_len && n < GID_TBL_MAX; n++) {
        __be16 pk = 0;
        if (!rail_ibv->query_pkey || rail_ibv->query_pkey(d->ctx, (uint8_t)d->port, n, &pk) != 0)
            break;
        tbl[n] = be16toh(pk);
    }
    int idx = rail_pkey_find(tbl, n, (long)value);
    if (idx < 0) {
        snprintf(why, whylen,
                 "%s: NCCL_IB_PKEY_VALUE=%#llx is not in the port's PKey table (%d "
                 "entries read)",
                 d->name, value, n);
        return -ENOENT;
    }
    d->pkey_index = idx;
    return 0;
}

static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    va_list ap;
    if (*used >= len)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used += (size_t)n;
}

struct candidate {
    char ibdev[64];
    int port;
    int rail, plane; /* from NCCL_IB_HCA */
    struct ibv_port_attr pa;
    struct ibv_device_attr da;
};

static int open_dev(const struct candidate *c, struct ibv_device *ibd, bool multiport,
                    struct rail_dev **out, char *why, size_t whylen)
{
    struct rail_dev *d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    snprintf(d->ibdev, sizeof(d->ibdev), "%.63s", c->ibdev);
    if (multiport)
        snprintf(d->name, sizeof(d->name), "%.63s:%d", c->ibdev, c->port);
    else
        snprintf(d->name, sizeof(d->name), "%.63s", c->ibdev);
    d->port = c->port;
    d->rail_id = c->rail;
    d->plane_id = c->plane;
    d->ctx = rail_ibv->open_device(ibd);
    if (!d->ctx) {
        snprintf(why, whylen, "%.63s: ibv_open_device failed: %s", c->ibdev, strerror(errno));
        free(d);
        return -ENODEV;
    }
    d->pd = rail_ibv->alloc_pd(d->ctx);
    if (!d->pd) {
        snprintf(why, whylen, "%.63s: ibv_alloc_pd failed: %s", c->ibdev, strerror(errno));
        rail_ibv->close_device(d->ctx);
        free(d);
        return -ENODEV;
    }
    d->link_layer = c->pa.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET
                                                                : IBV_LINK_LAYER_INFINIBAND;
    d->mtu = c->pa.active_mtu;
    d->lid = c->pa.lid;
    d->guid = be64toh(c->da.sys_image_guid);
    d->speed = rail_ib_speed_mbps(c->pa.active_speed, 0, c->pa.active_width);
    if (d->speed <= 0)
        d->speed = sysfs_speed(c->ibdev, c->port);
    if (d->speed <= 0)
        d->speed = 10000;
    d->max_qp = c->da.max_qp;
    d->max_qp_wr = c->da.max_qp_wr;
    d->max_cqe = c->da.max_cqe;
    d->max_sge = c->da.max_sge;
    d->max_msg = c->pa.max_msg_sz ? c->pa.max_msg_sz : (1u << 30);
    d->pci_path = pci_path(c->ibdev);
    pthread_mutex_init(&d->async_lock, NULL);
    int rc = pick_pkey(d, c->pa.pkey_tbl_len, why, whylen);
    if (rc == 0 && d->link_layer == IBV_LINK_LAYER_ETHERNET)
        rc = pick_gid(d, c->pa.gid_tbl_len, why, whylen);
    if (rc == 0)
        rc = g_port_init ? g_port_init(d, why, whylen) : 0;
    if (rc == 0 && rail_set_nonblock(d->ctx->async_fd) != 0)
        rc = -errno;
    if (rc < 0) {
        rail_ibv->dealloc_pd(d->pd);
        rail_ibv->close_device(d->ctx);
        free(d->pci_path);
        free(d);
        return rc;
    }
    *out = d;
    return 0;
}

static const char *ll_name(int ll)
{
    return ll == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB";
}

/* Fills cands with the ports NCCL_IB_HCA selects; notes what was skipped in `skipped`. */
static int list_ports(struct ibv_device **list, int n, const struct rail_hca_filter *f,
                      struct candidate *cands, int max, char *skipped, size_t sklen)
{
    int nc = 0;
    size_t used = 0;
    skipped[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *name = rail_ibv->get_device_name(list[i]);
        struct ibv_context *ctx = rail_ibv->open_device(list[i]);
        struct ibv_device_attr da;
        if (!ctx || rail_ibv->query_device(ctx, &da) != 0) {
            append(skipped, sklen, &used, " %s(cannot open)", name);
            if (ctx)
                rail_ibv->close_device(ctx);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt && nc < max; p++) {
            struct ibv_port_attr pa;
            const char *skip = NULL;
            int rail = -1, plane = -1;
            if (rail_ibv->query_port(ctx, (uint8_t)p, &pa) != 0)
                skip = "query failed";
            else if (pa.state != IBV_PORT_ACTIVE)
                skip = "not ACTIVE";
            else if (pa.link_layer != IBV_LINK_LAYER_INFINIBAND &&
                     pa.link_layer != IBV_LINK_LAYER_ETHERNET &&
                     pa.link_layer != IBV_LINK_LAYER_UNSPECIFIED)
                skip = "link layer";
            else if (!rail_hca_filter_lookup(f, name, p, &rail, &plane))
                skip = "NCCL_IB_HCA";
            if (skip) {
                append(skipped, sklen, &used, " %s:%d(%s)", name, p, skip);
                continue;
            }
            struct candidate *c = &cands[nc++];
            snprintf(c->ibdev, sizeof(c->ibdev), "%.63s", name);
            c->port = p;
            c->rail = rail;
            c->plane = plane;
            c->pa = pa;
            c->da = da;
        }
        rail_ibv->close_device(ctx);
    }
    return nc;
}

/* *user_fault: the failure comes from a value the user set (a WARN, not the INFO of "no RDMA"). */
static int discover(char *why, size_t whylen, bool *user_fault)
{
    static struct candidate cands[RAIL_MAX_DEVS];
    char failed[1024] = "";
    size_t fused = 0;
    struct rail_hca_filter filter;
    struct ibv_device **list;
    char err[256], skipped[1024];
    const char *hca = rail_param_str(RAIL_PARAM_IB_HCA);
    int n = 0, nc, rc;

    if (rail_hca_filter_parse(hca, &filter, err, sizeof(err)) != 0) {
        snprintf(why, whylen, "NCCL_IB_HCA='%.200s' is invalid: %s", hca, err);
        *user_fault = true;
        return -EINVAL;
    }
    /* libibverbs is loaded now, not linked: NCCL_IBVERBS_LIB names it (verbs_lib.h). A library
     * that cannot be used is the user's or the node's to fix: a WARN. */
    if (rail_ibv->kernel_devices && (rc = rail_verbs_load(why, whylen)) < 0) {
        *user_fault = true;
        return rc;
    }
    if (rail_ibv->kernel_devices && access("/dev/infiniband", F_OK) != 0) {
        snprintf(why, whylen,
                 "/dev/infiniband is missing: no RDMA user-space device nodes (fix: load "
                 "ib_uverbs and the HCA driver, or start the container with "
                 "--device=/dev/infiniband)");
        return -ENODEV;
    }
    errno = 0;
    list = rail_ibv->get_device_list(&n);
    if (!list || n <= 0) {
        snprintf(why, whylen,
                 "no RDMA devices (ibv_get_device_list: %s; fix: load the HCA driver, or "
                 "`rdma link add rxe0 type rxe netdev <if>` for soft RoCE)",
                 list ? "none found" : strerror(errno ? errno : ENODEV));
        if (list)
            rail_ibv->free_device_list(list);
        return -ENODEV;
    }
    nc = list_ports(list, n, &filter, cands, RAIL_MAX_DEVS, skipped, sizeof(skipped));
    if (nc == 0) {
        if (hca && *hca)
            snprintf(why, whylen, "NCCL_IB_HCA='%.200s' selects no usable RDMA port:%s", hca,
                     skipped);
        else
            snprintf(why, whylen, "no usable RDMA port:%s", skipped);
        *user_fault = hca && *hca;
        rail_ibv->free_device_list(list);
        return -ENODEV;
    }
    rc = check_memlock(why, whylen);
    for (int i = 0; i < nc && rc == 0; i++) {
        struct ibv_device *ibd = NULL;
        bool multiport = false;
        for (int k = 0; k < n; k++)
            if (strcmp(rail_ibv->get_device_name(list[k]), cands[i].ibdev) == 0)
                ibd = list[k];
        for (int k = 0; k < nc; k++)
            if (k != i && strcmp(cands[k].ibdev, cands[i].ibdev) == 0)
                multiport = true;
        struct rail_dev *d = NULL;
        char dwhy[512];
        if (!ibd || open_dev(&cands[i], ibd, multiport, &d, dwhy, sizeof(dwhy)) != 0) {
            append(failed, sizeof(failed), &fused, "%s%s", fused ? "; " : "",
                   ibd ? dwhy : "device vanished");
            continue;
        }
        d->index = g_ndevs;
        g_devs[g_ndevs++] = d;
    }
    rail_ibv->free_device_list(list);
    if (rc < 0)
        return rc;
    if (g_ndevs == 0) {
        snprintf(why, whylen, "no RDMA port could be opened: %s", failed);
        return -ENODEV;
    }
    if (fused)
        RAIL_INFO(NCCL_INIT | NCCL_NET, "skipped ports: %s", failed);
    return g_ndevs;
}

/* GPU affinity of the ports, when a topology with GPUs is at hand and the ports sit on PCI. */
static bool gpu_affinity(const struct rail_group_port *ports, struct rail_group_gpus *gpus)
{
    bool pci = false;
    for (int i = 0; i < g_ndevs; i++)
        pci = pci || ports[i].busid;
    if (!pci || g_ndevs < 2)
        return false;
    struct rail_topo *t = calloc(1, sizeof(*t));
    char err[512];
    bool ok = t && rail_topo_discover(t, err, sizeof(err)) == 0 && t->n_gpus > 0 &&
              rail_group_gpus_from_topo(t, ports, g_ndevs, gpus) == 0;
    free(t);
    return ok;
}

/* Groups the opened ports into plugin devices. */
static int make_groups(char *why, size_t whylen)
{
    static struct rail_group_port ports[RAIL_MAX_DEVS];
    static struct rail_group_gpus gpus;
    static struct rail_groups groups;
    char err[512];
    for (int i = 0; i < g_ndevs; i++) {
        struct rail_dev *d = g_devs[i];
        const char *slash = d->pci_path ? strrchr(d->pci_path, '/') : NULL;
        ports[i] = (struct rail_group_port){
            .name = d->name,
            .ibdev = d->ibdev,
            .port = d->port,
            .link_layer = d->link_layer == IBV_LINK_LAYER_ETHERNET ? RAIL_LINK_ETH : RAIL_LINK_IB,
            .speed_mbps = d->speed,
            .busid = slash && strlen(slash + 1) == 12 ? slash + 1 : NULL,
            .numa = -1,
        };
    }
    const struct rail_group_gpus *gp = gpu_affinity(ports, &gpus) ? &gpus : NULL;
    const char *spec = rail_param_str(RAIL_PARAM_RAILS);
    int rc = rail_group_build(ports, g_ndevs, gp, spec && *spec ? spec : NULL, &groups, err,
                              sizeof(err));
    if (rc < 0 && spec && *spec) {
        RAIL_WARN(NCCL_ENV | NCCL_NET, "NCCL_RAIL_RAILS='%s' ignored: %s; grouping automatically",
                  spec, err);
        rc = rail_group_build(ports, g_ndevs, gp, NULL, &groups, err, sizeof(err));
    }
    if (rc < 0) {
        snprintf(why, whylen, "cannot group the ports into devices: %s", err);
        return rc;
    }
    int all_planes[RAIL_MAX_DEVS];
    for (int i = 0; i < g_ndevs; i++)
        all_planes[i] = g_devs[i]->plane_id;
    g_ngroups = 0;
    for (int i = 0; i < groups.n; i++) {
        const struct rail_group *src = &groups.g[i];
        struct rail_netdev *g = &g_groups[g_ngroups];
        memset(g, 0, sizeof(*g));
        g->index = g_ngroups;
        snprintf(g->name, sizeof(g->name), "%.*s", (int)sizeof(g->name) - 1, src->name);
        snprintf(g->reason, sizeof(g->reason), "%s", rail_group_reason_name(src->reason));
        int rails[RAIL_MAX_RAILS], planes[RAIL_MAX_RAILS];
        for (int r = 0; r < src->nrails && r < RAIL_MAX_RAILS; r++) {
            rails[g->nrails] = g_devs[src->port[r]]->rail_id;
            planes[g->nrails] = g_devs[src->port[r]]->plane_id;
            g->rail[g->nrails++] = g_devs[src->port[r]];
            g->speed += g_devs[src->port[r]]->speed;
        }
        /* Several rails: NCCL's rule for a fused vNIC (hca_filter.h). */
        if (rail_hca_merge_ids(all_planes, g_ndevs, rails, planes, g->nrails, &g->rail_id,
                               &g->plane_id) != 0)
            g->rail_id = g->plane_id = -1;
        char line[512];
        if (rail_group_describe(src, g_ngroups, line, sizeof(line)) == 0)
            RAIL_INFO(NCCL_INIT | NCCL_NET, "device %s", line);
        g_ngroups++;
    }
    return g_ngroups;
}

int rail_devices_init(rail_port_init_fn port_init)
{
    char why[1536];
    pthread_mutex_lock(&g_lock);
    if (!g_done) {
        bool user_fault = false;
        why[0] = '\0';
        g_port_init = port_init;
        g_result = discover(why, sizeof(why), &user_fault);
        if (g_result > 0)
            g_result = make_groups(why, sizeof(why));
        atomic_store(&g_done, true);
        if (g_result < 0 && user_fault) {
            RAIL_WARN(NCCL_INIT | NCCL_NET | NCCL_ENV, "net plugin declines: %s", why);
        } else if (g_result < 0) {
            RAIL_INFO(NCCL_INIT | NCCL_NET, "net plugin declines: %s", why);
        } else {
            char list[1024];
            size_t used = 0;
            list[0] = '\0';
            for (int i = 0; i < g_ngroups; i++) {
                const struct rail_netdev *g = &g_groups[i];
                append(list, sizeof(list), &used, " [%d]%s/%s/%dMbps", i, g->name,
                       ll_name(g->rail[0]->link_layer), g->speed);
                if (g->rail_id >= 0 || g->plane_id >= 0) /* NCCL_IB_HCA's :rail:plane */
                    append(list, sizeof(list), &used, " rail=%d plane=%d", g->rail_id, g->plane_id);
            }
            struct rail_verbs_lib_info lib;
            rail_verbs_lib_info(&lib); /* rc 0: the libibverbs provider, loaded */
            RAIL_INFO(NCCL_INIT | NCCL_NET, "net plugin: %d device(s) over %d port(s):%s%s%s",
                      g_ngroups, g_ndevs, list, lib.rc == 0 ? "; libibverbs " : "",
                      lib.rc == 0 ? lib.path : "");
        }
    }
    pthread_mutex_unlock(&g_lock);
    return g_result;
}
