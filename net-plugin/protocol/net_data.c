/* SPDX-License-Identifier: Apache-2.0 */
/* Data-path entry points shared by both directions: completion polling and test(), which
 * dispatches send, receive and flush requests (iflush: net_flush.c). */
#include "protocol/net_data.h"

#include <errno.h>
#include <pthread.h>

#include "log.h"
#include "protocol/net_health.h"
#include "transport/net_verbs.h"

#define HELP_MAX 64

/* The help list. A multi-rail send comm goes into it with its first two-phase message and stays
 * until it is closed; what changes per message is only its `helped` flag (two-phase work in
 * flight), counted in g_help_count: no lock per message. A help pass (any comm's progress, any
 * thread) polls a listed comm that is helped and that nobody is inside, and only when its owner
 * has not entered it since the pass before: an owner that keeps calling polls its own CQs (every
 * test does, and an isend that cannot post does), and a caller that waits on a receive without
 * touching its send comm gets that comm polled by every second pass.
 * A full list makes room by dropping the comms not helped (help_evict_idle).
 * busy: 0 free, RAIL_BUSY_HELPER (a help pass polls it), RAIL_BUSY_OWNER (its owner is inside):
 * rail_send_help_unlist called by the owner inside (n2ph back to 0) only clears the flag; called
 * outside (the comm's quiesce, before it is freed) it also takes the comm out of the list. */
#define RAIL_BUSY_HELPER 1
#define RAIL_BUSY_OWNER  2

static pthread_mutex_t g_help_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rail_send_comm *g_help[HELP_MAX];
static int g_nhelp;
static atomic_int g_help_count; /* listed comms with `helped` set */
/* Enters of a helped comm by its owner, and the count the last look without the lock saw. */
static atomic_uint g_help_enters, g_help_enters_seen;

void rail_send_enter(struct rail_send_comm *s)
{
    int expected = 0;
    while (!atomic_compare_exchange_weak_explicit(&s->busy, &expected, RAIL_BUSY_OWNER,
                                                  memory_order_acquire, memory_order_relaxed))
        expected = 0; /* a helper is polling it: that takes microseconds */
    /* Written by the owner alone; help passes read it without entering. */
    __atomic_store_n(&s->owner_calls, s->owner_calls + 1, __ATOMIC_RELAXED);
    if (s->helped)
        atomic_fetch_add_explicit(&g_help_enters, 1, memory_order_relaxed);
}

void rail_send_leave(struct rail_send_comm *s)
{
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}

/* The list is full: the comms in it with no two-phase work in flight (not helped) leave it, and
 * their owners list them again with their next two-phase message. So the list is full only with
 * HELP_MAX comms helped at once, however many comms a process has. Under the list's lock; the
 * release store pairs with the owner's acquire load in rail_send_help_unlist (a comm read as
 * unlisted may be freed at once: this pass no longer touches it). */
static void help_evict_idle(void)
{
    int k = 0;
    for (int i = 0; i < g_nhelp; i++) {
        struct rail_send_comm *c = g_help[i];
        if (__atomic_load_n(&c->helped, __ATOMIC_RELAXED))
            g_help[k++] = c;
        else
            __atomic_store_n(&c->help_listed, false, __ATOMIC_RELEASE);
    }
    g_nhelp = k;
}

/* Once per comm (out of line): into the list, under its lock. */
static __attribute__((noinline)) void help_add(struct rail_send_comm *s)
{
    pthread_mutex_lock(&g_help_lock);
    if (g_nhelp == HELP_MAX)
        help_evict_idle();
    if (g_nhelp < HELP_MAX) {
        g_help[g_nhelp++] = s;
        __atomic_store_n(&s->help_listed, true, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&g_help_lock);
}

static __attribute__((noinline)) void help_remove(struct rail_send_comm *s)
{
    pthread_mutex_lock(&g_help_lock); /* waits for a help pass that may be polling it */
    for (int i = 0; i < g_nhelp; i++) {
        if (g_help[i] == s) {
            g_help[i] = g_help[--g_nhelp];
            break;
        }
    }
    __atomic_store_n(&s->help_listed, false, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_help_lock);
}

void rail_send_help_list(struct rail_send_comm *s)
{
    if (s->helped)
        return;
    if (!__atomic_load_n(&s->help_listed, __ATOMIC_RELAXED)) {
        help_add(s);
        if (!__atomic_load_n(&s->help_listed, __ATOMIC_RELAXED))
            return; /* HELP_MAX comms helped at once: not helped (tried again with its next
                     * message) */
    }
    __atomic_store_n(&s->helped, true, __ATOMIC_RELAXED);
    atomic_fetch_add(&g_help_count, 1);
}

/* Called by the owner (inside enter/leave, or when freeing the comm: then outside). */
void rail_send_help_unlist(struct rail_send_comm *s)
{
    if (s->helped) {
        __atomic_store_n(&s->helped, false, __ATOMIC_RELAXED);
        atomic_fetch_sub(&g_help_count, 1);
    }
    if (__atomic_load_n(&s->help_listed, __ATOMIC_ACQUIRE) &&
        atomic_load_explicit(&s->busy, memory_order_relaxed) != RAIL_BUSY_OWNER)
        help_remove(s);
}

static int poll_comm(struct rail_comm *c);
/* Polls the helped send comms nobody is inside right now whose owner has not entered them since
 * the last pass (the list's lock taken). */
static __attribute__((noinline)) void help_pass(const struct rail_comm *self)
{
    if (pthread_mutex_trylock(&g_help_lock) != 0)
        return;
    for (int i = 0; i < g_nhelp; i++) {
        struct rail_send_comm *s = g_help[i];
        if (&s->base == self || !__atomic_load_n(&s->helped, __ATOMIC_RELAXED))
            continue;
        /* Its owner called since the last pass (help_seen: written under the list's lock): it
         * polls itself. */
        unsigned calls = __atomic_load_n(&s->owner_calls, __ATOMIC_RELAXED);
        if (calls != s->help_seen) {
            s->help_seen = calls;
            continue;
        }
        int expected = 0;
        if (!atomic_compare_exchange_strong_explicit(&s->busy, &expected, RAIL_BUSY_HELPER,
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        (void)poll_comm(&s->base);
        /* Records NCCL no longer waits for (held, net_send.c): a failed rail must still be found
         * (async events, the peer's DOWN frame) for them to go again, whoever calls. */
        if (s->nheld)
            rail_health_tick_due(&s->base, true);
        rail_send_leave(s);
    }
    pthread_mutex_unlock(&g_help_lock);
}

void rail_comm_help_others(const struct rail_comm *self)
{
    int listed = atomic_load_explicit(&g_help_count, memory_order_relaxed);
    /* Nobody helped, or only self (its owner is polling it now): no lock to take, no frame. */
    if (listed == 0 ||
        (listed == 1 && rail_comm_is_send(self) && ((const struct rail_send_comm *)self)->helped))
        return;
    if (listed == 1) {
        /* One comm helped, and an owner entered a helped comm since the last look: mostly that
         * one's, which polls itself (else the next look goes on to the pass). No lock. */
        unsigned e = atomic_load_explicit(&g_help_enters, memory_order_relaxed);
        if (e != atomic_load_explicit(&g_help_enters_seen, memory_order_relaxed)) {
            atomic_store_explicit(&g_help_enters_seen, e, memory_order_relaxed);
            return;
        }
    }
    help_pass(self);
}

int rail_comm_progress(struct rail_comm *c)
{
    int rc = poll_comm(c);
    rail_comm_help_others(c);
    return rc;
}

void rail_comm_poll_failed(struct rail_comm *c, int r)
{
    rail_comm_fail(c, -EIO, "%s: ibv_poll_cq failed", c->link[r].dev->name);
}

void rail_comm_wc_foreign(struct rail_comm *c, const struct ibv_wc *wc)
{
    rail_comm_fail(c, -EIO, "completion with a foreign work request id %#llx",
                   (unsigned long long)wc->wr_id);
}

/* Polls only the CQs that can hold a completion (rail_link.cq_work): a send comm's QPs take no
 * incoming completions, and every WR it posts is signalled and counted until its completion
 * (flushed ones included), so a rail with none out is skipped. A receive comm's CQs take the
 * peer's writes with immediate at any time: always polled. */
static int poll_comm(struct rail_comm *c)
{
    if (c->ops->poll)
        c->ops->poll(c);
    for (int r = 0; r < c->nrails; r++)
        if (c->link[r].cq_work)
            rail_comm_drain(c, r, c->ops->on_wc);
    c->ops->retry(c);
    return atomic_load(&c->error);
}

/* The health tick of test(), for a send or receive still in flight, when due (the count
 * itself is the owner's alone): a multi-rail send comm may be polled by other threads' progress
 * (listed above), so its due work runs entered like the rest of its calls. */
static __attribute__((noinline)) void tick_due(struct rail_comm *c)
{
    if (rail_comm_is_send(c) && c->nrails > 1) {
        struct rail_send_comm *s = (struct rail_send_comm *)c;
        rail_send_enter(s);
        rail_health_tick_due(c, true);
        rail_send_leave(s);
    } else {
        rail_health_tick_due(c, true);
    }
}

int rail_net_test(void *request, int *done, int *sizes)
{
    struct rail_req_head *h = request;

    if (!h || !done) {
        if (done)
            *done = 0;
        RAIL_WARN(NCCL_NET, "test: NULL %s", h ? "done pointer" : "request");
        return -EINVAL;
    }
    *done = 0;
    if (h->ops) { /* send, receive or GPUDirect flush (iflush) */
        int rc = h->ops->test(h, done, sizes);
        if (h->ops && h->ops->ticks_health) { /* still in flight (a request ends freed) */
            struct rail_comm *c = h->comm;
            if (rail_health_due(c))
                tick_due(c);
            rc = rail_comm_error(c); /* the comm's error after the tick */
        }
        return rc;
    }
    RAIL_WARN(NCCL_NET, "test: %p is not a request in flight (completed or never issued)", request);
    return -EINVAL;
}
