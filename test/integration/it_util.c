/* SPDX-License-Identifier: Apache-2.0 */
#include "it_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *g_it_role = "main";
void (*g_it_log_hook)(ncclDebugLogLevel level, const char *msg);
void (*g_it_handle_hook)(void *handle);

int it_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[%s %d] FAIL: ", g_it_role, (int)getpid());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

const char *it_fabric_text(const char *text)
{
    const char *p = getenv("NCCL_RAIL_VERBS_PROVIDER");
    if (!text || !p || strcmp(p, "shm") != 0)
        return text;
    size_t n = strlen(text);
    char *out = malloc(n + 1), *o = out; /* "veth3" -> "lo" only shortens */
    if (!out)
        return text;
    for (const char *t = text; *t;) {
        if (strncmp(t, "rxe", 3) == 0) {
            memcpy(o, "shm", 3);
            o += 3, t += 3;
        } else if (strncmp(t, "veth3", 5) == 0) {
            memcpy(o, "lo", 2);
            o += 2, t += 5;
        } else {
            *o++ = *t++;
        }
    }
    *o = '\0';
    return out; /* kept for the process's life (scenario texts are few) */
}

double it_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char g_last_info[2048]; /* the last INFO or WARN line, and its level */
static ncclDebugLogLevel g_last_level;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    static int verbose = -1;
    va_list ap;
    (void)flags;
    if (verbose < 0) {
        const char *v = getenv("RAIL_IT_VERBOSE");
        verbose = v && *v == '1';
    }
    if (level == NCCL_LOG_INFO || level == NCCL_LOG_WARN) {
        va_start(ap, fmt);
        vsnprintf(g_last_info, sizeof(g_last_info), fmt, ap);
        va_end(ap);
        g_last_level = level;
    }
    if (g_it_log_hook && level <= NCCL_LOG_INFO) {
        char msg[2048];
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        g_it_log_hook(level, msg);
    }
    if (level > NCCL_LOG_WARN && !verbose)
        return;
    fprintf(stderr, "[%s %d] %s %s:%d ", g_it_role, (int)getpid(),
            level == NCCL_LOG_WARN ? "WARN" : "INFO", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int it_load(struct it_plugin *p, const char *path)
{
    ncclNetCommConfig_v11_t cfg = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
    memset(p, 0, sizeof(*p));
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl)
        return it_fail("dlopen %s: %s", path, dlerror());
    p->net = dlsym(p->dl, "ncclNetPlugin_v11");
    if (!p->net)
        return it_fail("no ncclNetPlugin_v11 in %s", path);
    if (p->net->init(&p->ctx, 0x1234, &cfg, logger, NULL) != ncclSuccess)
        return it_fail("init failed");
    if (p->net->devices(&p->ndev) != ncclSuccess || p->ndev <= 0)
        return it_fail("devices() gave %d", p->ndev);
    return 0;
}

int it_load_declines(const char *path, const char *why, int want_warn)
{
    ncclNetCommConfig_v11_t cfg = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL), *ctx = NULL;
    const ncclNet_v11_t *net = dl ? dlsym(dl, "ncclNetPlugin_v11") : NULL;
    if (!net)
        return it_fail("cannot load %s", path);
    g_last_info[0] = '\0';
    if (net->init(&ctx, 1, &cfg, logger, NULL) == ncclSuccess)
        return it_fail("init succeeded, expected a decline (%s)", why);
    if (net->finalize(ctx) != ncclSuccess)
        return it_fail("finalize after the failed init");
    if (!strstr(g_last_info, why))
        return it_fail("decline message '%s' does not mention '%s'", g_last_info, why);
    if (want_warn != (g_last_level == NCCL_LOG_WARN))
        return it_fail("decline message '%s' is %s, expected %s", g_last_info,
                       g_last_level == NCCL_LOG_WARN ? "a WARN" : "an INFO",
                       want_warn ? "a WARN (a value the user set)" : "an INFO");
    fprintf(stderr, "[%s] declined: %s\n", g_it_role, g_last_info);
    return 0;
}

int it_dev(const struct it_plugin *p, const char *name)
{
    for (int d = 0; d < p->ndev; d++) {
        ncclNetProperties_v11_t props;
        if (p->net->getProperties(d, &props) == ncclSuccess && strcmp(props.name, name) == 0)
            return d;
    }
    return -1;
}

void it_unload(struct it_plugin *p)
{
    if (p->net && p->ctx)
        p->net->finalize(p->ctx);
    /* The library stays loaded: NCCL never unloads a net plugin either. */
}

int it_ctl_send(int fd, const void *buf, size_t len)
{
    const uint8_t *b = buf;
    while (len) {
        ssize_t n = write(fd, b, len);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return it_fail("control channel write: %s", n ? strerror(errno) : "closed");
        }
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

int it_ctl_recv(int fd, void *buf, size_t len)
{
    uint8_t *b = buf;
    while (len) {
        ssize_t n = read(fd, b, len);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return it_fail("control channel read: %s", n ? strerror(errno) : "peer gone");
        }
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

int it_ctl_signal(int fd, uint8_t v)
{
    return it_ctl_send(fd, &v, 1);
}

int it_ctl_wait(int fd, uint8_t want)
{
    uint8_t v = 0;
    if (it_ctl_recv(fd, &v, 1))
        return 1;
    return v == want ? 0 : it_fail("control channel: got %u, expected %u", v, want);
}

int it_accept(struct it_plugin *p, int dev, int ctl, void **lcp, void **rc)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL;
    *rc = NULL;
    if (p->net->listen(p->ctx, dev, handle, &lc) != ncclSuccess || !lc)
        return it_fail("listen failed");
    if (it_ctl_send(ctl, handle, sizeof(handle)))
        return 1;
    double end = it_now() + IT_DEADLINE_S;
    while (!*rc) {
        ncclResult_t r = p->net->accept(lc, rc, NULL);
        if (r != ncclSuccess)
            return it_fail("accept returned %d", r);
        if (it_now() > end)
            return it_fail("accept did not complete within %.0f s", IT_DEADLINE_S);
    }
    if (lcp)
        *lcp = lc;
    else
        p->net->closeListen(lc);
    return 0;
}

int it_connect_handle(struct it_plugin *p, int dev, void *handle, void **sc, double timeout_s)
{
    double end = it_now() + timeout_s;
    *sc = NULL;
    while (!*sc) {
        ncclResult_t r = p->net->connect(p->ctx, dev, handle, sc, NULL);
        if (r != ncclSuccess)
            return r;
        if (it_now() > end)
            return -1;
    }
    return 0;
}

int it_connect(struct it_plugin *p, int dev, int ctl, void **sc)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    if (it_ctl_recv(ctl, handle, sizeof(handle)))
        return 1;
    if (g_it_handle_hook)
        g_it_handle_hook(handle);
    int r = it_connect_handle(p, dev, handle, sc, IT_DEADLINE_S);
    return r ? it_fail("connect returned %d", r) : 0;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

void it_fill(void *buf, size_t size, uint64_t seed)
{
    uint8_t *b = buf;
    uint64_t s = mix(seed + 1);
    for (size_t i = 0; i < size; i++) {
        if ((i & 7) == 0)
            s = mix(s + i);
        b[i] = (uint8_t)(s >> (8 * (i & 7)));
    }
}

long it_check(const void *buf, size_t size, uint64_t seed)
{
    const uint8_t *b = buf;
    uint64_t s = mix(seed + 1);
    for (size_t i = 0; i < size; i++) {
        if ((i & 7) == 0)
            s = mix(s + i);
        if (b[i] != (uint8_t)(s >> (8 * (i & 7))))
            return (long)i;
    }
    return -1;
}

int it_buf_alloc(struct it_plugin *p, void *comm, struct it_buf *b, size_t size)
{
    size_t alloc = (size + 4095) & ~(size_t)4095;
    b->size = size;
    b->p = aligned_alloc(4096, alloc ? alloc : 4096);
    b->mh = NULL;
    if (!b->p)
        return it_fail("out of memory for %zu bytes", size);
    memset(b->p, 0xEE, alloc ? alloc : 4096);
    if (p->net->regMr(comm, b->p, alloc ? alloc : 4096, NCCL_PTR_HOST, &b->mh) != ncclSuccess)
        return it_fail("regMr of %zu bytes failed", alloc);
    return 0;
}

void it_buf_free(struct it_plugin *p, void *comm, struct it_buf *b)
{
    if (b->mh)
        p->net->deregMr(comm, b->mh);
    free(b->p);
    b->p = NULL;
    b->mh = NULL;
}

int it_isend(struct it_plugin *p, void *sc, void *data, size_t size, int tag, void *mh, void **req)
{
    double end = it_now() + IT_DEADLINE_S;
    *req = NULL;
    while (!*req) {
        ncclResult_t r = p->net->isend(sc, data, size, tag, mh, NULL, req);
        if (r != ncclSuccess)
            return it_fail("isend(%zu bytes, tag %d) returned %d", size, tag, r) ? (int)r : 0;
        if (!*req && it_now() > end)
            return it_fail("isend(%zu bytes, tag %d) found no receive for %.0f s", size, tag,
                           IT_DEADLINE_S);
    }
    return 0;
}

int it_irecv(struct it_plugin *p, void *rc, int n, void **data, size_t *sizes, int *tags,
             void **mhs, void **req)
{
    double end = it_now() + IT_DEADLINE_S;
    *req = (void *)0x1; /* NCCL's optional-completion marker: must be overwritten */
    for (;;) {
        ncclResult_t r = p->net->irecv(rc, n, data, sizes, tags, mhs, NULL, req);
        if (r != ncclSuccess)
            return it_fail("irecv(n=%d) returned %d", n, r) ? (int)r : 0;
        if (*req == (void *)0x1)
            return it_fail("irecv left *request == 0x1");
        if (*req)
            return 0;
        if (it_now() > end)
            return it_fail("irecv could not post for %.0f s", IT_DEADLINE_S);
    }
}

int it_wait(struct it_plugin *p, void *req, int *sizes)
{
    double end = it_now() + IT_DEADLINE_S;
    int done = 0;
    while (!done) {
        ncclResult_t r = p->net->test(req, &done, sizes);
        if (r != ncclSuccess)
            return r;
        if (!done && it_now() > end)
            return -1;
    }
    return 0;
}
