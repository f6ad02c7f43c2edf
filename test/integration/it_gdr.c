/* SPDX-License-Identifier: Apache-2.0 */
/* GPUDirect scenarios on SoftRoCE with the fake libcuda (test/fakecuda, whose "device memory" is
 * host memory the plugin can register on rxe):
 * - gdr_off:   no peer memory; rxe's dma-buf probe says EOPNOTSUPP, so ptrSupport is HOST only,
 *              regMr(CUDA) and regMrDmaBuf(CUDA) fail cleanly, host registration still works.
 * - gdr_flush: peer memory (a sysfs root that links the real /sys/class/infiniband and adds
 *              /sys/module/nvidia_peermem/version), an Ampere GPU (8.0): ptrSupport HOST|CUDA,
 *              forceFlush 0, regMr(CUDA) on both sides, data into fake device memory, iflush
 *              returns a request that completes, every byte checked; host buffers and empty
 *              receives need no flush (NULL request).
 * - gdr_hopper: the same on a Hopper GPU (9.0): no flush, iflush returns NULL.
 * - gdr_force_flush: Hopper with NCCL_NET_FORCE_FLUSH=1: forceFlush 1 and flush requests.
 * - vf_gdr_flush_*: (fault-injection builds, docs/fault-injection.md) the flush read of the first
 *              receive faults (refused post or an error completion): iflush or the flush
 *              request's test returns an error within 30 s, naming the flush, after the data
 *              itself arrived byte-exact; close returns within 5 s. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "it_scenarios.h"

typedef int (*mem_alloc_fn)(unsigned long long *, size_t);
typedef int (*mem_free_fn)(unsigned long long);

static char g_fake[4096];
static char g_root[64];

/* NCCL_RAIL_CUDA_LIBRARY: the fake next to the plugin's build tree. */
static int use_fake_cuda(const char *plugin, const char *cc)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", plugin);
    snprintf(g_fake, sizeof(g_fake), "%s/test/fakecuda/libcuda.so.1", dirname(dir));
    if (access(g_fake, R_OK) != 0)
        return it_fail("fake libcuda %s missing: build the fake_cuda target", g_fake);
    setenv("NCCL_RAIL_CUDA_LIBRARY", g_fake, 1);
    setenv("RAIL_FAKE_CUDA_CC", cc, 1);
    return 0;
}

/* Copies one small sysfs file (a missing or unreadable one is skipped: not every GID exists). */
static void copy_small(const char *src, const char *dst)
{
    char buf[4096];
    int in = open(src, O_RDONLY | O_CLOEXEC), out;
    ssize_t n;
    if (in < 0)
        return;
    n = read(in, buf, sizeof(buf));
    close(in);
    if (n < 0 || (out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return;
    if (write(out, buf, (size_t)n) != n)
        fprintf(stderr, "[%s] short write to %s\n", g_it_role, dst);
    close(out);
}

static int mkdirs(const char *path)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* out = a "/" b, false when it does not fit. */
static bool join(char *out, size_t len, const char *a, const char *b)
{
    int n = snprintf(out, len, "%s/%s", a, b);
    return n > 0 && (size_t)n < len;
}

/* Port files the plugin reads, and the first 16 GIDs with their attributes (rxe has 1024 entries,
 * slow to read under TCG; the used ones come first). Counters are left out. */
static int copy_port(const char *src, const char *dst)
{
    static const char *const files[] = {"state", "phys_state", "rate",     "link_layer",
                                        "lid",   "sm_lid",     "cap_mask", "lid_mask_count",
                                        "sm_sl"};
    static const char *const gid_dirs[] = {"gids", "gid_attrs/types", "gid_attrs/ndevs"};
    char a[1024], b[1024], k_name[8];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (join(a, sizeof(a), src, files[i]) && join(b, sizeof(b), dst, files[i]))
            copy_small(a, b);
    for (size_t d = 0; d < sizeof(gid_dirs) / sizeof(gid_dirs[0]); d++) {
        char sd[1024], dd[1024];
        if (!join(sd, sizeof(sd), src, gid_dirs[d]) || !join(dd, sizeof(dd), dst, gid_dirs[d]) ||
            mkdirs(dd) != 0)
            return -1;
        for (int k = 0; k < 16; k++) {
            snprintf(k_name, sizeof(k_name), "%d", k);
            if (join(a, sizeof(a), sd, k_name) && join(b, sizeof(b), dd, k_name))
                copy_small(a, b);
        }
    }
    return 0;
}

/* A sysfs root where peer memory is loaded: a copy of the real IB devices' port files (device
 * discovery reads GIDs and port state from the same root; a link out of the root would be
 * refused, docs/input-limits.md) plus the nvidia_peermem module file. */
static int use_peermem_root(void)
{
    char path[1024], src[256];
    DIR *devs;
    struct dirent *e;
    snprintf(g_root, sizeof(g_root), "/tmp/rail-gdr-XXXXXX");
    if (!mkdtemp(g_root))
        return it_fail("mkdtemp: %s", strerror(errno));
    if (!(devs = opendir("/sys/class/infiniband")))
        return it_fail("/sys/class/infiniband: %s", strerror(errno));
    while ((e = readdir(devs)))
        for (int port = 1; e->d_name[0] != '.' && port <= 2; port++) {
            snprintf(src, sizeof(src), "/sys/class/infiniband/%.63s/ports/%d", e->d_name, port);
            snprintf(path, sizeof(path), "%s%s", g_root, src);
            if (access(src, F_OK) == 0 && (mkdirs(path) != 0 || copy_port(src, path) != 0)) {
                closedir(devs);
                return it_fail("cannot copy %s into %s", src, g_root);
            }
        }
    closedir(devs);
    snprintf(path, sizeof(path), "%s/sys/module/nvidia_peermem", g_root);
    if (mkdirs(path) != 0)
        return it_fail("mkdir %s: %s", path, strerror(errno));
    snprintf(path, sizeof(path), "%s/sys/module/nvidia_peermem/version", g_root);
    FILE *f = fopen(path, "w");
    if (!f || fputs("fake\n", f) < 0 || fclose(f) != 0)
        return it_fail("cannot write %s", path);
    setenv("NCCL_RAIL_SYSFS_ROOT", g_root, 1);
    return 0;
}

/* The plugin took its GPUDirect decisions when the harness looked the devices up: the fixture
 * root can go. */
static void drop_root(void)
{
    char cmd[128];
    if (!g_root[0])
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
    if (system(cmd) != 0)
        fprintf(stderr, "[%s] could not remove %s\n", g_it_role, g_root);
    g_root[0] = '\0';
}

int it_gdr_setup_off(const char *plugin)
{
    return use_fake_cuda(plugin, "8.0");
}

int it_gdr_setup_ampere(const char *plugin)
{
    return use_fake_cuda(plugin, "8.0") || use_peermem_root();
}

int it_gdr_setup_hopper(const char *plugin)
{
    return use_fake_cuda(plugin, "9.0") || use_peermem_root();
}

/* ---- fake device memory ---- */

struct gbuf {
    unsigned long long d;
    uint8_t *p;
    size_t size;
    void *mh;
};

static int gbuf_alloc(struct it_plugin *p, void *comm, struct gbuf *b, size_t size, int type)
{
    void *lib = dlopen(g_fake, RTLD_NOW | RTLD_LOCAL);
    mem_alloc_fn alloc = lib ? (mem_alloc_fn)dlsym(lib, "cuMemAlloc_v2") : NULL;
    memset(b, 0, sizeof(*b));
    if (!alloc || alloc(&b->d, size) != 0)
        return it_fail("cuMemAlloc_v2(%zu) in the fake failed", size);
    b->p = (uint8_t *)(uintptr_t)b->d;
    b->size = size;
    memset(b->p, 0xEE, size);
    ncclResult_t r = p->net->regMr(comm, b->p, size, type, &b->mh);
    if (r != ncclSuccess || !b->mh)
        return it_fail("regMr(%s, %zu bytes of fake device memory) returned %d",
                       type == NCCL_PTR_CUDA ? "CUDA" : "HOST", size, r);
    return 0;
}

static void gbuf_free(struct it_plugin *p, void *comm, struct gbuf *b)
{
    void *lib = dlopen(g_fake, RTLD_NOW | RTLD_LOCAL);
    mem_free_fn release = lib ? (mem_free_fn)dlsym(lib, "cuMemFree_v2") : NULL;
    if (b->mh)
        p->net->deregMr(comm, b->mh);
    if (release && b->d)
        release(b->d);
    memset(b, 0, sizeof(*b));
}

static int check_props(struct it_side *s, int want_ptr, int want_force)
{
    ncclNetProperties_v11_t props;
    if (s->p->net->getProperties(s->dev, &props) != ncclSuccess)
        return it_fail("getProperties(%d) failed", s->dev);
    if (props.ptrSupport != want_ptr)
        return it_fail("%s: ptrSupport %#x, expected %#x", props.name, props.ptrSupport, want_ptr);
    if (props.forceFlush != want_force)
        return it_fail("%s: forceFlush %d, expected %d", props.name, props.forceFlush, want_force);
    return 0;
}

/* ---- gdr_off ---- */

static int off_checks(struct it_side *s, void *comm)
{
    struct it_plugin *p = s->p;
    struct gbuf g;
    void *mh = (void *)0x1;
    if (check_props(s, NCCL_PTR_HOST, 0))
        return 1;
    void *lib = dlopen(g_fake, RTLD_NOW | RTLD_LOCAL);
    mem_alloc_fn alloc = lib ? (mem_alloc_fn)dlsym(lib, "cuMemAlloc_v2") : NULL;
    unsigned long long d = 0;
    if (!alloc || alloc(&d, 65536) != 0)
        return it_fail("cuMemAlloc_v2 in the fake failed");
    if (p->net->regMr(comm, (void *)(uintptr_t)d, 65536, NCCL_PTR_CUDA, &mh) == ncclSuccess)
        return it_fail("regMr(CUDA) succeeded without any GPUDirect path");
    if (mh != NULL)
        return it_fail("failed regMr left *mhandle = %p", mh);
    /* NCCL's dma-buf path on rxe: the HCA cannot import it; a clean error, no handle. */
    int fd = memfd_create("it-dmabuf", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, 65536) != 0)
        return it_fail("memfd: %s", strerror(errno));
    mh = (void *)0x1;
    if (p->net->regMrDmaBuf(comm, (void *)(uintptr_t)d, 65536, NCCL_PTR_CUDA, 0, fd, &mh) ==
        ncclSuccess)
        return it_fail("regMrDmaBuf succeeded on an HCA without dma-buf");
    if (mh != NULL)
        return it_fail("failed regMrDmaBuf left *mhandle = %p", mh);
    close(fd);
    /* Host memory is unaffected, including fake device memory registered as HOST. */
    if (gbuf_alloc(p, comm, &g, 8192, NCCL_PTR_HOST))
        return 1;
    gbuf_free(p, comm, &g);
    return 0;
}

int it_gdr_off_recv(struct it_side *s)
{
    void *rc;
    if (it_accept(s->p, s->dev, s->ctl, NULL, &rc) || off_checks(s, rc))
        return 1;
    return s->p->net->closeRecv(rc) != ncclSuccess;
}

int it_gdr_off_send(struct it_side *s)
{
    void *sc;
    if (it_connect(s->p, s->dev, s->ctl, &sc) || off_checks(s, sc))
        return 1;
    return s->p->net->closeSend(sc) != ncclSuccess;
}

/* ---- data into fake device memory, then iflush ---- */

static const size_t k_gdr_sizes[] = {1, 4096 + 13, 1 << 20, 0};
#define NGDR (sizeof(k_gdr_sizes) / sizeof(k_gdr_sizes[0]))

/* want_flush: iflush must return a request (else NULL). */
static int gdr_recv(struct it_side *s, int want_ptr, int want_force, int want_flush)
{
    struct it_plugin *p = s->p;
    void *rc;
    drop_root();
    if (check_props(s, want_ptr, want_force) || it_accept(p, s->dev, s->ctl, NULL, &rc))
        return 1;
    for (size_t i = 0; i < NGDR; i++) {
        struct gbuf g;
        size_t want = k_gdr_sizes[i], cap = (2 << 20);
        int tag = 7, sizes[64] = {0};
        void *req;
        if (gbuf_alloc(p, rc, &g, cap, NCCL_PTR_CUDA))
            return 1;
        void *data = g.p;
        if (it_irecv(p, rc, 1, &data, &cap, &tag, &g.mh, &req) || it_ctl_signal(s->ctl, 'R'))
            return 1;
        int r = it_wait(p, req, sizes);
        if (r)
            return it_fail("receive of %zu bytes into fake device memory: %d", want, r);
        if ((size_t)sizes[0] != want)
            return it_fail("received %d bytes, sender sent %zu", sizes[0], want);
        void *freq = (void *)0x1;
        if (p->net->iflush(rc, 1, &data, sizes, &g.mh, &freq) != ncclSuccess)
            return it_fail("iflush after %zu bytes failed", want);
        if (want > 0 && want_flush && !freq)
            return it_fail("iflush after %zu bytes returned no request", want);
        if ((want == 0 || !want_flush) && freq)
            return it_fail("iflush after %zu bytes returned %p, expected NULL", want, freq);
        if (freq && (r = it_wait(p, freq, NULL)) != 0)
            return it_fail("flush request of a %zu-byte receive did not complete: %d", want, r);
        long bad = it_check(g.p, want, 1000 + i);
        if (bad >= 0)
            return it_fail("%zu-byte GDR receive differs at byte %ld", want, bad);
        for (size_t k = want; k < cap; k++)
            if (g.p[k] != 0xEE)
                return it_fail("byte %zu after a %zu-byte receive was overwritten", k, want);
        gbuf_free(p, rc, &g);
    }
    /* A host receive buffer never needs a flush. */
    struct it_buf h;
    int hsize = 4096;
    void *hreq = (void *)0x1, *hdata;
    if (it_buf_alloc(p, rc, &h, 4096))
        return 1;
    hdata = h.p;
    if (p->net->iflush(rc, 1, &hdata, &hsize, &h.mh, &hreq) != ncclSuccess || hreq)
        return it_fail("iflush of a host buffer returned %p, expected NULL", hreq);
    it_buf_free(p, rc, &h);
    if (it_ctl_wait(s->ctl, 'D'))
        return 1;
    return p->net->closeRecv(rc) != ncclSuccess;
}

static int gdr_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    void *sc;
    drop_root();
    if (it_connect(p, s->dev, s->ctl, &sc))
        return 1;
    for (size_t i = 0; i < NGDR; i++) {
        struct gbuf g;
        size_t size = k_gdr_sizes[i];
        int sizes[1] = {-1};
        void *req;
        /* The sender's buffer is fake device memory too (regMr CUDA through peer memory). */
        if (gbuf_alloc(p, sc, &g, size ? size : 1, NCCL_PTR_CUDA))
            return 1;
        it_fill(g.p, size, 1000 + i);
        if (it_ctl_wait(s->ctl, 'R') || it_isend(p, sc, g.p, size, 7, g.mh, &req))
            return 1;
        int r = it_wait(p, req, sizes);
        if (r || (size_t)sizes[0] != size)
            return it_fail("send of %zu bytes from fake device memory: %d, size %d", size, r,
                           sizes[0]);
        gbuf_free(p, sc, &g);
    }
    if (it_ctl_signal(s->ctl, 'D'))
        return 1;
    return p->net->closeSend(sc) != ncclSuccess;
}

int it_gdr_flush_recv(struct it_side *s)
{
    return gdr_recv(s, NCCL_PTR_HOST | NCCL_PTR_CUDA, 0, 1);
}

int it_gdr_hopper_recv(struct it_side *s)
{
    return gdr_recv(s, NCCL_PTR_HOST | NCCL_PTR_CUDA, 0, 0);
}

int it_gdr_force_recv(struct it_side *s)
{
    return gdr_recv(s, NCCL_PTR_HOST | NCCL_PTR_CUDA, 1, 1);
}

int it_gdr_send(struct it_side *s)
{
    return gdr_send(s);
}

/* ---- injected faults on the flush read (fault-injection builds) ---- */

static unsigned g_flush_warns; /* the plugin's lines naming the failed flush read */

static void flush_hook(ncclDebugLogLevel level, const char *msg)
{
    if (level == NCCL_LOG_WARN && strstr(msg, "flush read failed"))
        g_flush_warns++;
}

int it_gdr_flush_fault_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct gbuf g;
    void *rc, *req, *data;
    size_t cap = 4096;
    int tag = 7, sizes[64] = {0}, r;
#ifndef RAIL_FAULT_INJECTION
    drop_root();
    fprintf(stderr, "[recv] note: not a fault-injection build: skipped\n");
    return it_ctl_signal(s->ctl, 'S');
#endif
    g_it_log_hook = flush_hook;
    alarm(150);
    drop_root();
    if (it_ctl_signal(s->ctl, 'G') || it_accept(p, s->dev, s->ctl, NULL, &rc) ||
        gbuf_alloc(p, rc, &g, cap, NCCL_PTR_CUDA))
        return 1;
    data = g.p;
    if (it_irecv(p, rc, 1, &data, &cap, &tag, &g.mh, &req) || it_ctl_signal(s->ctl, 'R'))
        return 1;
    if ((r = it_wait(p, req, sizes)) != 0 || sizes[0] != 4096)
        return it_fail("receive into fake device memory: %d, %d bytes", r, sizes[0]);
    long bad = it_check(g.p, 4096, 1000);
    if (bad >= 0)
        return it_fail("GDR receive differs at byte %ld", bad);
    void *freq = NULL;
    double t0 = it_now();
    r = p->net->iflush(rc, 1, &data, sizes, &g.mh, &freq);
    while (r == ncclSuccess && freq) {
        int done = 0;
        r = p->net->test(freq, &done, NULL);
        if (r == ncclSuccess && done)
            return it_fail("the faulted flush completed without an error");
        if (it_now() - t0 > 30.0)
            return it_fail("the faulted flush neither completed nor failed in 30 s");
    }
    if (r == ncclSuccess)
        return it_fail("iflush returned no request and no error");
    fprintf(stderr, "[recv] flush failed with %d after %.2f s (expected)\n", r, it_now() - t0);
    if (!g_flush_warns)
        return it_fail("no WARN names the failed flush read");
    gbuf_free(p, rc, &g);
    t0 = it_now();
    p->net->closeRecv(rc);
    if (it_now() - t0 > 5.0)
        return it_fail("closeRecv took %.2f s", it_now() - t0);
    alarm(0);
    return it_ctl_signal(s->ctl, 'D');
}

int it_gdr_flush_fault_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct gbuf g;
    void *sc, *req;
    int sizes[1] = {-1};
    uint8_t go = 0;
    drop_root();
    if (it_ctl_recv(s->ctl, &go, 1))
        return 1;
    if (go == 'S')
        return 0; /* skipped (not a fault build) */
    alarm(150);
    if (it_connect(p, s->dev, s->ctl, &sc) || gbuf_alloc(p, sc, &g, 4096, NCCL_PTR_CUDA))
        return 1;
    it_fill(g.p, 4096, 1000);
    if (it_ctl_wait(s->ctl, 'R') || it_isend(p, sc, g.p, 4096, 7, g.mh, &req))
        return 1;
    int r = it_wait(p, req, sizes);
    if (r || sizes[0] != 4096)
        return it_fail("send of 4096 bytes from fake device memory: %d, size %d", r, sizes[0]);
    gbuf_free(p, sc, &g);
    if (it_ctl_wait(s->ctl, 'D'))
        return 1;
    alarm(0);
    return p->net->closeSend(sc) != ncclSuccess;
}
