/* SPDX-License-Identifier: Apache-2.0 */
/* netbench helpers: control socket, byte patterns, plugin calls with deadlines, buffers. */
#include "netbench_util.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl/nccl_net.h"

#define TAG 0x4e42

double nb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t nb_ticks(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return (uint64_t)(nb_now() * 1e9);
#endif
}

static void count_call(struct peer *p, int kind, uint64_t t0)
{
    if (p->calls.on) {
        p->calls.ticks[kind] += nb_ticks() - t0;
        p->calls.n[kind]++;
    }
}

int nb_fail(struct report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->ok)
        vsnprintf(r->why, sizeof(r->why), fmt, ap);
    va_end(ap);
    r->ok = 0;
    return -1;
}

/* ---- control socket ---- */

int nb_ctl_io(int fd, void *buf, size_t len, int wr)
{
    uint8_t *b = buf;
    while (len) {
        ssize_t n = wr ? write(fd, b, len) : read(fd, b, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

int nb_barrier(struct peer *p)
{
    uint8_t v = 0xB7;
    return nb_ctl_io(p->ctl, &v, 1, 1) || nb_ctl_io(p->ctl, &v, 1, 0) || v != 0xB7 ? -1 : 0;
}

/* ---- byte patterns ---- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    return x ^ (x >> 33);
}

static uint8_t pat_byte(uint64_t seed, size_t i)
{
    return (uint8_t)(mix(seed * 0x100000001b3ull + (i >> 3)) >> (8 * (i & 7)));
}

void nb_fill(uint8_t *b, size_t size, uint64_t seed)
{
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w = mix(seed * 0x100000001b3ull + (i >> 3));
        memcpy(b + i, &w, 8);
    }
    for (; i < size; i++)
        b[i] = pat_byte(seed, i);
}

/* First differing offset in [from, to), or -1. */
long nb_compare(const uint8_t *b, size_t from, size_t to, uint64_t seed)
{
    for (size_t i = from; i < to; i++) {
        if ((i & 7) == 0 && i + 8 <= to) {
            uint64_t w = mix(seed * 0x100000001b3ull + (i >> 3)), got;
            memcpy(&got, b + i, 8);
            if (got == w) {
                i += 7;
                continue;
            }
        }
        if (b[i] != pat_byte(seed, i))
            return (long)i;
    }
    return -1;
}

/* Bandwidth messages: buffer k holds pattern k; message g carries g at both ends (>= 16 B) or
 * is pattern (g) throughout (smaller). */
void nb_stamp(uint8_t *b, size_t size, uint64_t g)
{
    if (size < 16) {
        nb_fill(b, size, g + 1000003);
        return;
    }
    uint64_t a = g ^ 0x5354414d50ull, z = ~a;
    memcpy(b, &a, 8);
    memcpy(b + size - 8, &z, 8);
}

long nb_check_msg(const uint8_t *b, size_t size, int k, uint64_t g, int full)
{
    if (size < 16)
        return nb_compare(b, 0, size, g + 1000003);
    uint64_t a, z;
    memcpy(&a, b, 8);
    memcpy(&z, b + size - 8, 8);
    if (a != (g ^ 0x5354414d50ull))
        return 0;
    if (z != ~(g ^ 0x5354414d50ull))
        return (long)size - 8;
    return full ? nb_compare(b, 8, size - 8, (uint64_t)k) : -1;
}

/* ---- plugin calls with deadlines ---- */

/* A call that made no progress. Default: keep polling (as perftest does). --yield gives the CPU
 * away (as NCCL's proxy thread does when idle); --recv-sleep US lets the receiving process sleep,
 * so that it, like perftest's passive server, leaves the CPUs to the transport: under SoftRoCE
 * the "NIC" is kernel work on the same CPUs. */
static void idle(const struct peer *p)
{
    if (p->recv && p->o->recv_sleep_us > 0)
        usleep((useconds_t)p->o->recv_sleep_us);
    else if (p->o->yield)
        sched_yield();
}

int nb_post_send(struct peer *p, void *sc, void *data, size_t size, void *mh, void **req,
                 struct report *r)
{
    double end = nb_now() + p->o->timeout;
    *req = NULL;
    for (;;) {
        uint64_t t0 = nb_ticks();
        int rc = nb_net_isend(&p->net, sc, data, size, TAG, mh, req);
        count_call(p, NB_CALL_ISEND, t0);
        if (rc != 0)
            return nb_fail(r, "isend(%zu bytes) returned %d", size, rc);
        if (*req)
            return 0;
        idle(p);
        if (nb_now() > end)
            return nb_fail(r, "isend found no matching receive for %.0f s", p->o->timeout);
    }
}

int nb_post_recv(struct peer *p, void *rc_, void *data, size_t size, void *mh, void **req,
                 struct report *r)
{
    double end = nb_now() + p->o->timeout;
    for (;;) {
        *req = (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION; /* as NCCL may pass it */
        uint64_t t0 = nb_ticks();
        int rc = nb_net_irecv(&p->net, rc_, data, size, TAG, mh, req);
        count_call(p, NB_CALL_IRECV, t0);
        if (rc != 0)
            return nb_fail(r, "irecv(%zu bytes) returned %d", size, rc);
        if (*req == (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION)
            return nb_fail(r, "irecv left the request marker in place");
        if (*req)
            return 0;
        idle(p);
        if (nb_now() > end)
            return nb_fail(r, "irecv could not post for %.0f s", p->o->timeout);
    }
}

/* Waits for req; *size gets the reported size (receives). */
int nb_wait(struct peer *p, void *req, int *size, struct report *r)
{
    double end = 0;
    int done = 0;
    for (unsigned spins = 0;; spins++) {
        uint64_t t0 = nb_ticks();
        int rc = nb_net_test(&p->net, req, &done, size);
        count_call(p,
                   size ? (done ? NB_CALL_RECV_DONE : NB_CALL_RECV_IDLE)
                        : (done ? NB_CALL_SEND_DONE : NB_CALL_SEND_IDLE),
                   t0);
        if (rc != 0)
            return nb_fail(r, "test returned %d", rc);
        if (done)
            return 0;
        idle(p);
        if ((spins & 1023) == 0) {
            double t = nb_now();
            if (end == 0)
                end = t + p->o->timeout;
            else if (t > end)
                return nb_fail(r, "a transfer did not complete within %.0f s", p->o->timeout);
        }
    }
}

/* ---- connection setup ---- */

int nb_listen_send(struct peer *p, void **lc, struct report *r)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    memset(handle, 0, sizeof(handle));
    if (nb_net_listen(&p->net, p->dev, handle, lc) != 0 || !*lc)
        return nb_fail(r, "listen on device %d failed", p->dev);
    return nb_ctl_io(p->ctl, handle, sizeof(handle), 1) ? nb_fail(r, "control socket closed") : 0;
}

int nb_accept(struct peer *p, void *lc, void **rcomm, struct report *r)
{
    double end = nb_now() + p->o->timeout;
    *rcomm = NULL;
    while (!*rcomm) {
        if (nb_net_accept(&p->net, lc, rcomm) != 0)
            return nb_fail(r, "accept failed");
        if (!*rcomm && nb_now() > end)
            return nb_fail(r, "accept did not complete within %.0f s", p->o->timeout);
    }
    return 0;
}

int nb_connect(struct peer *p, void **sc, struct report *r)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    if (nb_ctl_io(p->ctl, handle, sizeof(handle), 0))
        return nb_fail(r, "control socket closed before the listen handle came");
    double end = nb_now() + p->o->timeout;
    *sc = NULL;
    while (!*sc) {
        if (nb_net_connect(&p->net, p->dev, handle, sc) != 0)
            return nb_fail(r, "connect failed");
        if (!*sc && nb_now() > end)
            return nb_fail(r, "connect did not complete within %.0f s", p->o->timeout);
    }
    return 0;
}

/* ---- buffers ---- */

int nb_buf_alloc(struct peer *p, void *comm, struct buf *b, size_t size, struct report *r)
{
    size_t alloc = (size + 4095) & ~(size_t)4095;
    b->mh = NULL;
    b->p = aligned_alloc(4096, alloc ? alloc : 4096);
    if (!b->p)
        return nb_fail(r, "out of memory (%zu bytes)", alloc);
    memset(b->p, 0xEE, alloc ? alloc : 4096);
    if (nb_net_reg(&p->net, comm, b->p, alloc ? alloc : 4096, &b->mh) != 0)
        return nb_fail(r, "regMr of %zu bytes failed", alloc);
    return 0;
}

void nb_buf_free(struct peer *p, void *comm, struct buf *b)
{
    if (b->mh)
        nb_net_dereg(&p->net, comm, b->mh);
    free(b->p);
}
