/* SPDX-License-Identifier: Apache-2.0 */
/* reg_cache: containment hits, overlapping misses, refcounts, exactly-once dereg, zero length,
 * page math, per-context keys, dma-buf path, reg failures, destroy with leftovers, and a
 * multi-threaded get/put run checked against fake verbs callbacks. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "fuzz.h"
#include "transport/reg_cache.h"

#define PAGE   4096u
#define MAXREG 65536

/* Fake verbs: every registration gets a numbered handle; deregistration marks it. */
struct fake {
    pthread_mutex_t lock;
    int nreg, ndereg;
    int fail_errno; /* next reg fails with -fail_errno when non-zero */
    int fail_positive;
    struct {
        uintptr_t start;
        size_t len;
        int type;
        void *ctx;
        int fd;
        uint64_t offset;
        int deregs;
    } r[MAXREG];
};

static struct fake g_fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void fake_reset(void)
{
    pthread_mutex_lock(&g_fake.lock);
    g_fake.nreg = g_fake.ndereg = 0;
    g_fake.fail_errno = 0;
    g_fake.fail_positive = 0;
    memset(g_fake.r, 0, sizeof(g_fake.r));
    pthread_mutex_unlock(&g_fake.lock);
}

static int fake_reg_common(void *ctx, uintptr_t start, size_t len, int type, int fd,
                           uint64_t offset, void **handle)
{
    pthread_mutex_lock(&g_fake.lock);
    if (g_fake.fail_errno) {
        int e = g_fake.fail_errno;
        g_fake.fail_errno = 0;
        pthread_mutex_unlock(&g_fake.lock);
        return g_fake.fail_positive ? e : -e;
    }
    if (g_fake.nreg == MAXREG) {
        pthread_mutex_unlock(&g_fake.lock);
        return -ENOSPC;
    }
    int h = g_fake.nreg++;
    g_fake.r[h].start = start;
    g_fake.r[h].len = len;
    g_fake.r[h].type = type;
    g_fake.r[h].ctx = ctx;
    g_fake.r[h].fd = fd;
    g_fake.r[h].offset = offset;
    pthread_mutex_unlock(&g_fake.lock);
    *handle = (void *)(uintptr_t)(h + 1); /* never NULL */
    return 0;
}

static int fake_reg(void *ctx, uintptr_t start, size_t len, int type, void **handle)
{
    return fake_reg_common(ctx, start, len, type, -1, 0, handle);
}

static int fake_reg_dmabuf(void *ctx, uintptr_t start, size_t len, int type, int fd,
                           uint64_t offset, void **handle)
{
    return fake_reg_common(ctx, start, len, type, fd, offset, handle);
}

static void fake_dereg(void *ctx, void *handle)
{
    int h = (int)(uintptr_t)handle - 1;
    pthread_mutex_lock(&g_fake.lock);
    if (h >= 0 && h < g_fake.nreg) {
        g_fake.r[h].deregs++;
        if (g_fake.r[h].ctx != ctx)
            g_fake.r[h].deregs += 1000; /* wrong context: make the check fail loudly */
    }
    g_fake.ndereg++;
    pthread_mutex_unlock(&g_fake.lock);
}

static const struct rail_reg_cache_ops ops = {fake_reg, fake_dereg, NULL};
static const struct rail_reg_cache_ops ops_dmabuf = {fake_reg, fake_dereg, fake_reg_dmabuf};

/* Every registration deregistered exactly once. */
static void check_all_dereg_once(void)
{
    for (int h = 0; h < g_fake.nreg; h++)
        CHECK_MSG(g_fake.r[h].deregs == 1, "registration %d deregistered %d times", h,
                  g_fake.r[h].deregs);
    CHECK_EQ_INT(g_fake.ndereg, g_fake.nreg);
}

static int handle_no(const struct rail_reg_entry *e)
{
    return (int)(uintptr_t)rail_reg_entry_handle(e) - 1;
}

/* Fake addresses: the cache never touches the memory. */
#define A(x) ((const void *)(uintptr_t)(x))

static void test_basic(void)
{
    fake_reset();
    int ctx0;
    struct rail_reg_cache *c = rail_reg_cache_create_ex(&ops, &ctx0, PAGE);
    CHECK(c != NULL);
    struct rail_reg_entry *a, *b, *d, *e;

    /* Widened to pages: [0x10010, +0x2000) -> [0x10000, 0x13000). */
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x10010), 0x2000, 0, &a), 0);
    CHECK_EQ_INT(g_fake.nreg, 1);
    CHECK_EQ_INT(g_fake.r[0].start, 0x10000);
    CHECK_EQ_INT(g_fake.r[0].len, 0x3000);
    CHECK(g_fake.r[0].ctx == &ctx0);
    CHECK_EQ_INT(rail_reg_entry_start(a), 0x10000);
    CHECK_EQ_INT(rail_reg_entry_len(a), 0x3000);
    CHECK_EQ_INT(handle_no(a), 0);

    /* Contained requests hit, whatever their alignment. */
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x10000), 0x3000, 0, &b), 0);
    CHECK(b == a);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x12fff), 1, 0, &b), 0);
    CHECK(b == a);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x11234), 0x100, 0, &b), 0);
    CHECK(b == a);
    CHECK_EQ_INT(g_fake.nreg, 1);
    struct rail_reg_cache_stats st;
    rail_reg_cache_get_stats(c, &st);
    CHECK_EQ_INT(st.hits, 3);
    CHECK_EQ_INT(st.regs, 1);
    CHECK_EQ_INT(st.entries, 1);

    /* Overlapping but not contained: a new entry, the old one stays. */
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x12000), 0x2000, 0, &d), 0);
    CHECK(d != a);
    CHECK_EQ_INT(g_fake.nreg, 2);
    CHECK_EQ_INT(g_fake.r[1].start, 0x12000);
    CHECK_EQ_INT(g_fake.r[1].len, 0x2000);
    /* Crossing one byte past the first entry's end. */
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x10000), 0x3001, 0, &e), 0);
    CHECK(e != a && e != d);
    CHECK_EQ_INT(g_fake.r[2].len, 0x4000);
    /* Now [0x10000,0x14000) exists, so a request inside it may hit either containing entry. */
    struct rail_reg_entry *f;
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x13000), 0x1000, 0, &f), 0);
    CHECK(f == d || f == e);
    CHECK_EQ_INT(g_fake.nreg, 3);
    rail_reg_cache_put(c, f);

    /* Different type: never shared. */
    struct rail_reg_entry *t1;
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x10000), 0x1000, 1, &t1), 0);
    CHECK(t1 != a);
    CHECK_EQ_INT(g_fake.r[3].type, 1);

    /* Refcounts: a holds 4 references; dereg only on the last put. */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(rail_reg_cache_put(c, a), 0);
        CHECK_EQ_INT(g_fake.r[0].deregs, 0);
    }
    CHECK_EQ_INT(rail_reg_cache_put(c, a), 0);
    CHECK_EQ_INT(g_fake.r[0].deregs, 1);
    /* A stale put is refused, not a second dereg. */
    CHECK_EQ_INT(rail_reg_cache_put(c, a), -ENOENT);
    CHECK_EQ_INT(g_fake.r[0].deregs, 1);
    CHECK_EQ_INT(rail_reg_cache_put(c, NULL), 0);
    CHECK_EQ_INT(rail_reg_cache_put(NULL, d), 0);

    /* After release the same range registers again. */
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x10010), 0x1000, 0, &a), 0);
    CHECK(handle_no(a) == 2 || handle_no(a) == 4); /* hit on e, which contains it */
    rail_reg_cache_put(c, a);

    rail_reg_cache_put(c, d);
    rail_reg_cache_put(c, e);
    rail_reg_cache_put(c, t1);
    rail_reg_cache_get_stats(c, &st);
    CHECK_EQ_INT(st.entries, 0);
    CHECK_EQ_INT(st.regs, st.deregs);
    CHECK_EQ_INT(rail_reg_cache_destroy(c), 0);
    check_all_dereg_once();
}

static void test_page_math(void)
{
    fake_reset();
    struct rail_reg_cache *c = rail_reg_cache_create_ex(&ops, NULL, PAGE);
    struct rail_reg_entry *e;
    const struct {
        uintptr_t addr;
        size_t len;
        uintptr_t start, plen;
    } cases[] = {
        {0x1000, 0x1000, 0x1000, 0x1000},                              /* exact page */
        {0x1000, 1, 0x1000, 0x1000},      {0x1fff, 1, 0x1000, 0x1000}, /* last byte of a page */
        {0x1fff, 2, 0x1000, 0x2000},                                   /* straddles */
        {0x1001, 0x1000, 0x1000, 0x2000}, {0x1000, 0x1001, 0x1000, 0x2000},
        {0x5000, 0, 0x5000, 0x1000}, /* zero length: the page holding addr */
        {0x5abc, 0, 0x5000, 0x1000},      {0x100000, 0x100000, 0x100000, 0x100000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        CHECK_EQ_INT(rail_reg_cache_get_ctx(c, (void *)(uintptr_t)(i + 1), A(cases[i].addr),
                                            cases[i].len, 0, &e),
                     0);
        CHECK_MSG(rail_reg_entry_start(e) == cases[i].start &&
                      rail_reg_entry_len(e) == cases[i].plen,
                  "case %zu: [%#lx,+%#lx) -> [%#lx,+%#zx), expected [%#lx,+%#lx)", i,
                  (unsigned long)cases[i].addr, (unsigned long)cases[i].len,
                  (unsigned long)rail_reg_entry_start(e), rail_reg_entry_len(e),
                  (unsigned long)cases[i].start, (unsigned long)cases[i].plen);
        rail_reg_cache_put(c, e);
    }
    /* Zero length hits an entry holding its page. */
    struct rail_reg_entry *big, *z;
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x20000), 0x4000, 0, &big), 0);
    int before = g_fake.nreg;
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x23fff), 0, 0, &z), 0);
    CHECK(z == big);
    CHECK_EQ_INT(g_fake.nreg, before);
    rail_reg_cache_put(c, z);
    rail_reg_cache_put(c, big);

    /* Address space end: the last page works, past it is -EINVAL, *out cleared. */
    uintptr_t top = UINTPTR_MAX & ~(uintptr_t)(PAGE - 1);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(top), PAGE - 1, 0, &e), -EINVAL); /* rounds to 2^64 */
    CHECK(e == NULL);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(top - PAGE), PAGE, 0, &e), 0);
    CHECK_EQ_INT(rail_reg_entry_start(e), top - PAGE);
    rail_reg_cache_put(c, e);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x1000), SIZE_MAX, 0, &e), -EINVAL);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(UINTPTR_MAX), 1, 0, &e), -EINVAL);
    /* Other page sizes. */
    struct rail_reg_cache *c64 = rail_reg_cache_create_ex(&ops, NULL, 65536);
    CHECK_EQ_INT(rail_reg_cache_get(c64, A(0x12345), 0x10, 0, &e), 0);
    CHECK_EQ_INT(rail_reg_entry_start(e), 0x10000);
    CHECK_EQ_INT(rail_reg_entry_len(e), 0x10000);
    rail_reg_cache_put(c64, e);
    rail_reg_cache_destroy(c64);
    struct rail_reg_cache *c1 = rail_reg_cache_create_ex(&ops, NULL, 1);
    CHECK_EQ_INT(rail_reg_cache_get(c1, A(0x12345), 0x10, 0, &e), 0);
    CHECK_EQ_INT(rail_reg_entry_start(e), 0x12345);
    CHECK_EQ_INT(rail_reg_entry_len(e), 0x10);
    rail_reg_cache_put(c1, e);
    rail_reg_cache_destroy(c1);

    CHECK_EQ_INT(rail_reg_cache_destroy(c), 0);
    check_all_dereg_once();
}

static void test_args_and_failures(void)
{
    fake_reset();
    CHECK(rail_reg_cache_create(NULL, NULL) == NULL);
    const struct rail_reg_cache_ops no_reg = {NULL, fake_dereg, NULL};
    const struct rail_reg_cache_ops no_dereg = {fake_reg, NULL, NULL};
    CHECK(rail_reg_cache_create(&no_reg, NULL) == NULL);
    CHECK(rail_reg_cache_create(&no_dereg, NULL) == NULL);
    CHECK(rail_reg_cache_create_ex(&ops, NULL, 0) == NULL);
    CHECK(rail_reg_cache_create_ex(&ops, NULL, 3000) == NULL);
    struct rail_reg_cache *c = rail_reg_cache_create(&ops, NULL); /* system page size */
    CHECK(c != NULL);
    struct rail_reg_entry *e = (struct rail_reg_entry *)1;
    CHECK_EQ_INT(rail_reg_cache_get(c, NULL, 10, 0, &e), -EINVAL);
    CHECK(e == NULL);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x1000), 10, 0, NULL), -EINVAL);
    CHECK_EQ_INT(rail_reg_cache_get(NULL, A(0x1000), 10, 0, &e), -EINVAL);
    CHECK(rail_reg_entry_handle(NULL) == NULL);
    CHECK_EQ_INT(rail_reg_entry_len(NULL), 0);
    CHECK_EQ_INT(rail_reg_entry_start(NULL), 0);
    CHECK_EQ_INT(rail_reg_cache_destroy(NULL), 0);
    struct rail_reg_cache_stats st;
    rail_reg_cache_get_stats(NULL, &st);
    CHECK_EQ_INT(st.entries, 0);
    rail_reg_cache_get_stats(c, NULL);

    /* reg failure: errno propagates, nothing is cached, the next get registers. */
    g_fake.fail_errno = EFAULT;
    e = (struct rail_reg_entry *)1;
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x40000), 100, 0, &e), -EFAULT);
    CHECK(e == NULL);
    rail_reg_cache_get_stats(c, &st);
    CHECK_EQ_INT(st.entries, 0);
    CHECK_EQ_INT(st.reg_fails, 1);
    CHECK_EQ_INT(g_fake.nreg, 0);
    g_fake.fail_errno = ENOMEM;
    g_fake.fail_positive = 1; /* a callback returning +errno is normalised */
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x40000), 100, 0, &e), -ENOMEM);
    g_fake.fail_positive = 0;
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x40000), 100, 0, &e), 0);
    CHECK_EQ_INT(g_fake.nreg, 1);
    /* A failure while another entry exists leaves that entry alone. */
    g_fake.fail_errno = EACCES;
    struct rail_reg_entry *e2;
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x80000), 100, 0, &e2), -EACCES);
    rail_reg_cache_get_stats(c, &st);
    CHECK_EQ_INT(st.entries, 1);
    /* dmabuf without the callback. */
    CHECK_EQ_INT(rail_reg_cache_get_dmabuf(c, NULL, A(0x90000), 100, 0, 5, 0, &e2), -ENOTSUP);
    CHECK(e2 == NULL);
    /* ...but a dmabuf get that hits needs no callback. */
    CHECK_EQ_INT(rail_reg_cache_get_dmabuf(c, NULL, A(0x40000), 100, 0, 5, 0, &e2), 0);
    CHECK(e2 == e);
    rail_reg_cache_put(c, e2);
    rail_reg_cache_put(c, e);
    CHECK_EQ_INT(rail_reg_cache_destroy(c), 0);
    check_all_dereg_once();
}

static void test_ctx_and_dmabuf(void)
{
    fake_reset();
    int pd0, pd1, def;
    struct rail_reg_cache *c = rail_reg_cache_create_ex(&ops_dmabuf, &def, PAGE);
    struct rail_reg_entry *a, *b, *d, *x;
    CHECK_EQ_INT(rail_reg_cache_get_ctx(c, &pd0, A(0x10000), 0x1000, 0, &a), 0);
    CHECK_EQ_INT(rail_reg_cache_get_ctx(c, &pd1, A(0x10000), 0x1000, 0, &b), 0);
    CHECK(a != b); /* per-PD keys never share */
    CHECK(g_fake.r[0].ctx == &pd0 && g_fake.r[1].ctx == &pd1);
    CHECK_EQ_INT(rail_reg_cache_get(c, A(0x10000), 0x1000, 0, &d), 0);
    CHECK(d != a && d != b && g_fake.r[2].ctx == &def);
    CHECK_EQ_INT(rail_reg_cache_get_ctx(c, &pd1, A(0x10800), 0x10, 0, &x), 0);
    CHECK(x == b);
    rail_reg_cache_put(c, x);
    /* dmabuf: fd and the caller's offset reach the callback with the page-aligned start. */
    struct rail_reg_entry *m;
    CHECK_EQ_INT(rail_reg_cache_get_dmabuf(c, &pd0, A(0x7f0000123), 0x2000, 3, 42, 0x123, &m), 0);
    CHECK_EQ_INT(g_fake.r[3].fd, 42);
    CHECK_EQ_INT(g_fake.r[3].offset, 0x123);
    CHECK_EQ_INT(g_fake.r[3].start, 0x7f0000000);
    CHECK_EQ_INT(g_fake.r[3].len, 0x3000);
    CHECK_EQ_INT(g_fake.r[3].type, 3);
    /* A plain get of a contained range of the same type/context hits the dmabuf entry. */
    CHECK_EQ_INT(rail_reg_cache_get_ctx(c, &pd0, A(0x7f0001000), 0x100, 3, &x), 0);
    CHECK(x == m);
    rail_reg_cache_put(c, x);
    /* destroy deregisters leftovers (each once, with its own context) and counts them. */
    CHECK_EQ_INT(rail_reg_cache_destroy(c), 4);
    check_all_dereg_once();
}

/* ---- concurrency ---- */

struct worker {
    struct rail_reg_cache *c;
    uint32_t seed;
    int iters;
    int errors;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct rail_reg_entry *held[8] = {0};
    for (int i = 0; i < w->iters; i++) {
        unsigned r = fuzz_step(&w->seed) >> 8;
        int slot = (int)(r % 8);
        if (held[slot]) {
            if (rail_reg_cache_put(w->c, held[slot]) != 0)
                w->errors++;
            held[slot] = NULL;
            continue;
        }
        /* A few overlapping windows so there are hits, misses and frees in every order. */
        uintptr_t addr = 0x100000 + (uintptr_t)((r >> 3) % 16) * 0x800;
        size_t len = 1 + (size_t)((r >> 7) % 0x3000);
        int type = (int)((r >> 20) % 2);
        struct rail_reg_entry *e;
        if (rail_reg_cache_get(w->c, A(addr), len, type, &e) != 0) {
            w->errors++;
            continue;
        }
        if (rail_reg_entry_start(e) > addr ||
            rail_reg_entry_start(e) + rail_reg_entry_len(e) < addr + len)
            w->errors++;
        held[slot] = e;
    }
    for (int s = 0; s < 8; s++)
        if (held[s] && rail_reg_cache_put(w->c, held[s]) != 0)
            w->errors++;
    return NULL;
}

static void test_threads(void)
{
    fake_reset();
    struct rail_reg_cache *c = rail_reg_cache_create_ex(&ops, NULL, PAGE);
    enum { NT = 4 };
    pthread_t th[NT];
    struct worker w[NT];
    for (int i = 0; i < NT; i++) {
        w[i] = (struct worker){.c = c, .seed = 17u * (unsigned)i + 1, .iters = 5000};
        CHECK_EQ_INT(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(w[i].errors, 0);
    }
    struct rail_reg_cache_stats st;
    rail_reg_cache_get_stats(c, &st);
    CHECK_EQ_INT(st.entries, 0);
    CHECK_EQ_INT(st.regs, st.deregs);
    CHECK(st.hits > 0 && st.regs > 1);
    CHECK_EQ_INT((long long)st.regs, g_fake.nreg);
    CHECK_EQ_INT(rail_reg_cache_destroy(c), 0);
    check_all_dereg_once();
}

int main(void)
{
    test_basic();
    test_page_math();
    test_args_and_failures();
    test_ctx_and_dmabuf();
    test_threads();
    return check_report("test_net_reg_cache");
}
