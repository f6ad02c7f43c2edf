/* SPDX-License-Identifier: Apache-2.0 */
/* Version dispatch for netbench (see netbench_abi.h). Slots 0..16 of every ncclNet_vN table sit
 * at the same offsets (asserted in nccl_net.h), so calls whose signature never changed go
 * through the v6 layout; the others switch on the version. */
#include "netbench_abi.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nccl/nccl_net.h"

#define V6(n)  ((const ncclNet_v6_t *)(n)->table)
#define V7(n)  ((const ncclNet_v7_t *)(n)->table)
#define V8(n)  ((const ncclNet_v8_t *)(n)->table)
#define V9(n)  ((const ncclNet_v9_t *)(n)->table)
#define V10(n) ((const ncclNet_v10_t *)(n)->table)
#define V11(n) ((const ncclNet_v11_t *)(n)->table)
#define V12(n) ((const ncclNet_v12_t *)(n)->table)

static int g_verbose;
static ncclDebugLogger_t g_user_logger; /* nb_net_set_logger: replaces netbench's own */

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    va_list ap;
    (void)flags;
    if (level > NCCL_LOG_WARN && !((g_verbose & NB_LOG_INFO) && level == NCCL_LOG_INFO))
        return;
    fprintf(stderr, "netbench[%d] plugin %s %s:%d ", (int)getpid(),
            level == NCCL_LOG_WARN ? "WARN" : "INFO", file, line);
    if (g_verbose & NB_LOG_RAW) {
        fprintf(stderr, "%s (arguments not formatted)\n", fmt ? fmt : "");
        return;
    }
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int init_table(struct nb_net *n)
{
    ncclNetCommConfig_v11_t cfg = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
    ncclDebugLogger_t log = g_user_logger ? g_user_logger : logger;
    switch (n->version) {
    case 12:
        return V12(n)->init(&n->ctx, 0x6e62, &cfg, log, NULL);
    case 11:
        return V11(n)->init(&n->ctx, 0x6e62, &cfg, log, NULL);
    case 10:
        return V10(n)->init(log, NULL);
    default:
        return V6(n)->init(log);
    }
}

void nb_net_set_logger(ncclDebugLogger_t log)
{
    g_user_logger = log;
}

int nb_net_attach(struct nb_net *n, const void *table, int version, const char *name, char *err,
                  size_t errlen)
{
    memset(n, 0, sizeof(*n));
    if (!table || version < 6 || version > 12) {
        snprintf(err, errlen, "no ncclNetPlugin_v%d table", version);
        return -1;
    }
    n->table = table;
    n->version = version;
    n->name = name;
    int rc = init_table(n);
    if (rc != ncclSuccess) {
        snprintf(err, errlen, "ncclNetPlugin_v%d init returned %d", n->version, rc);
        return -1;
    }
    return 0;
}

int nb_net_load(struct nb_net *n, const char *path, int want, int verbose, char *err, size_t errlen)
{
    static const int order[] = {11, 12, 10, 9, 8, 7, 6};
    memset(n, 0, sizeof(*n));
    g_verbose = verbose;
    n->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->dl) {
        snprintf(err, errlen, "dlopen: %s", dlerror());
        return -1;
    }
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        char sym[32];
        if (want && order[i] != want)
            continue;
        snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", order[i]);
        n->table = dlsym(n->dl, sym);
        if (n->table) {
            n->version = order[i];
            break;
        }
    }
    if (!n->table) {
        if (want)
            snprintf(err, errlen, "%s exports no ncclNetPlugin_v%d", path, want);
        else
            snprintf(err, errlen, "%s exports no ncclNetPlugin_v6 .. v12 table", path);
        return -1;
    }
    n->name = V6(n)->name ? V6(n)->name : "?";
    int rc = init_table(n);
    if (rc != ncclSuccess) {
        snprintf(err, errlen, "ncclNetPlugin_v%d init returned %d", n->version, rc);
        return -1;
    }
    return 0;
}

void nb_net_finalize(struct nb_net *n)
{
    if (n->version == 11 && n->ctx)
        V11(n)->finalize(n->ctx);
    else if (n->version == 12 && n->ctx)
        V12(n)->finalize(n->ctx);
    n->ctx = NULL;
    /* Like NCCL, the library stays loaded. */
}

int nb_net_devices(const struct nb_net *n, int *ndev)
{
    return V6(n)->devices(ndev);
}

int nb_net_dev_info(const struct nb_net *n, int dev, char *name, size_t namelen, int *ptr_support)
{
    /* name and ptrSupport sit at the same offsets in every property layout; the buffer is large
     * enough for the biggest one. */
    union {
        ncclNetProperties_v6_t v6;
        ncclNetProperties_v7_t v7;
        ncclNetProperties_v8_t v8;
        ncclNetProperties_v9_t v9;
        ncclNetProperties_v11_t v11;
        ncclNetProperties_v12_t v12;
    } p;
    int rc;
    memset(&p, 0, sizeof(p));
    switch (n->version) {
    case 12:
        rc = V12(n)->getProperties(dev, &p.v12);
        break;
    case 11:
        rc = V11(n)->getProperties(dev, &p.v11);
        break;
    case 10:
        rc = V10(n)->getProperties(dev, &p.v9);
        break;
    case 9:
        rc = V9(n)->getProperties(dev, &p.v9);
        break;
    case 8:
        rc = V8(n)->getProperties(dev, &p.v8);
        break;
    case 7:
        rc = V7(n)->getProperties(dev, &p.v7);
        break;
    default:
        rc = V6(n)->getProperties(dev, &p.v6);
        break;
    }
    if (rc != ncclSuccess)
        return rc;
    snprintf(name, namelen, "%s", p.v6.name ? p.v6.name : "?");
    *ptr_support = p.v6.ptrSupport;
    return 0;
}

int nb_net_make_vdev(const struct nb_net *n, const int *devs, int ndevs, int *d)
{
    if (n->version == 12) {
        ncclNetVDeviceProps_v12_t p;
        if (!V12(n)->makeVDevice || ndevs < 1 || ndevs > NCCL_NET_MAX_DEVS_PER_NIC_V12)
            return ncclInvalidUsage;
        memset(&p, 0, sizeof(p));
        p.ndevs = ndevs;
        memcpy(p.devs, devs, (size_t)ndevs * sizeof(int));
        return V12(n)->makeVDevice(d, &p);
    }
    if (n->version >= 9) { /* v9 .. v11: same props layout and slot */
        ncclNetVDeviceProps_v9_t p;
        if (!V9(n)->makeVDevice || ndevs < 1 || ndevs > NCCL_NET_MAX_DEVS_PER_NIC_V11)
            return ncclInvalidUsage;
        memset(&p, 0, sizeof(p));
        p.ndevs = ndevs;
        memcpy(p.devs, devs, (size_t)ndevs * sizeof(int));
        return V9(n)->makeVDevice(d, &p);
    }
    return ncclInvalidUsage;
}

/* The index of the device called name (length len), or -1. */
static int dev_index(const struct nb_net *n, const char *name, size_t len, int ndev, int *ptr)
{
    for (int d = 0; d < ndev; d++) {
        char dn[256];
        if (nb_net_dev_info(n, d, dn, sizeof(dn), ptr) == 0 && strlen(dn) == len &&
            strncmp(dn, name, len) == 0)
            return d;
    }
    return -1;
}

int nb_net_find_dev(const struct nb_net *n, const char *name, int *dev, char *err, size_t errlen)
{
    int ndev = 0, ptr = 0, d;
    if (nb_net_devices(n, &ndev) != 0) {
        snprintf(err, errlen, "devices() failed");
        return -1;
    }
    d = dev_index(n, name, strlen(name), ndev, &ptr);
    if (d < 0 && strchr(name, '+')) {
        int devs[NCCL_NET_MAX_DEVS_PER_NIC_V12], k = 0;
        const char *s = name;
        while (*s && k < NCCL_NET_MAX_DEVS_PER_NIC_V12) {
            size_t len = strcspn(s, "+");
            int x = dev_index(n, s, len, ndev, &ptr);
            if (x < 0) {
                snprintf(err, errlen, "the plugin has no device named %.*s", (int)len, s);
                return -1;
            }
            devs[k++] = x;
            s += len + (s[len] == '+');
        }
        char dn[256];
        if (*s || nb_net_make_vdev(n, devs, k, &d) != 0) {
            snprintf(err, errlen, "makeVDevice(%s) failed", name);
            return -1;
        }
        if (nb_net_dev_info(n, d, dn, sizeof(dn), &ptr) != 0) {
            snprintf(err, errlen, "getProperties of virtual device %d failed", d);
            return -1;
        }
    }
    if (d < 0) {
        snprintf(err, errlen, "the plugin has no device named %s (%d devices)", name, ndev);
        return -1;
    }
    if (!(ptr & NCCL_PTR_HOST)) {
        snprintf(err, errlen, "device %s does not support host memory", name);
        return -1;
    }
    *dev = d;
    return 0;
}

int nb_net_listen(const struct nb_net *n, int dev, void *handle, void **lc)
{
    if (n->version >= 11) /* same signature in v11 and v12 */
        return V11(n)->listen(n->ctx, dev, handle, lc);
    return V6(n)->listen(dev, handle, lc);
}

int nb_net_connect(const struct nb_net *n, int dev, void *handle, void **sc)
{
    ncclNetDeviceHandle_v7_t *dh = NULL;
    ncclNetCommConfig_v10_t cfg = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
    if (n->version >= 11)
        return V11(n)->connect(n->ctx, dev, handle, sc, &dh);
    if (n->version == 10)
        return V10(n)->connect(dev, &cfg, handle, sc, &dh);
    if (n->version >= 7)
        return V7(n)->connect(dev, handle, sc, &dh);
    return V6(n)->connect(dev, handle, sc);
}

int nb_net_accept(const struct nb_net *n, void *lc, void **rc)
{
    ncclNetDeviceHandle_v7_t *dh = NULL;
    if (n->version >= 7)
        return V7(n)->accept(lc, rc, &dh);
    return V6(n)->accept(lc, rc);
}

int nb_net_reg(const struct nb_net *n, void *comm, void *data, size_t size, void **mh)
{
    if (n->version >= 8)
        return V8(n)->regMr(comm, data, size, NCCL_PTR_HOST, mh);
    if (size > INT_MAX)
        return ncclInvalidArgument;
    return V6(n)->regMr(comm, data, (int)size, NCCL_PTR_HOST, mh);
}

int nb_net_dereg(const struct nb_net *n, void *comm, void *mh)
{
    return V6(n)->deregMr(comm, mh);
}

int nb_net_isend(const struct nb_net *n, void *sc, void *data, size_t size, int tag, void *mh,
                 void **req)
{
    if (n->version >= 10)
        return V10(n)->isend(sc, data, size, tag, mh, NULL, req);
    if (n->version == 9)
        return V9(n)->isend(sc, data, size, tag, mh, req);
    if (size > INT_MAX)
        return ncclInvalidArgument;
    return V6(n)->isend(sc, data, (int)size, tag, mh, req);
}

int nb_net_irecv(const struct nb_net *n, void *rc, void *data, size_t size, int tag, void *mh,
                 void **req)
{
    void *datas[1] = {data}, *mhs[1] = {mh}, *phs[1] = {NULL};
    int tags[1] = {tag};
    size_t sizes[1] = {size};
    int isizes[1] = {(int)size};
    if (n->version >= 10)
        return V10(n)->irecv(rc, 1, datas, sizes, tags, mhs, phs, req);
    if (n->version == 9)
        return V9(n)->irecv(rc, 1, datas, sizes, tags, mhs, req);
    if (size > INT_MAX)
        return ncclInvalidArgument;
    return V6(n)->irecv(rc, 1, datas, isizes, tags, mhs, req);
}

int nb_net_test(const struct nb_net *n, void *req, int *done, int *size)
{
    return V6(n)->test(req, done, size);
}

int nb_net_close_send(const struct nb_net *n, void *sc)
{
    return V6(n)->closeSend(sc);
}

int nb_net_close_recv(const struct nb_net *n, void *rc)
{
    return V6(n)->closeRecv(rc);
}

int nb_net_close_listen(const struct nb_net *n, void *lc)
{
    return V6(n)->closeListen(lc);
}
