/* SPDX-License-Identifier: Apache-2.0 */
/* mr_onepiece: one-piece rendezvous messages (120 KiB: above the eager limit, below the stripe
 * minimum, so each goes whole to one rail as data + record back to back) on a dual-rail device
 * with failover. In one batch rail A drops the receiver's acknowledgements (the messages on it
 * land, the sender never hears of it), in another every packet from the sender (they do not
 * land); the port stays up, so the sender learns of the failure only by the retry limit and does
 * not know whether those messages landed: it must ask. Every message
 * must still complete byte-exact, no call may fail, and nothing may be written again into a
 * buffer the receiver already completed: after each batch the receiver poisons its buffers and,
 * before the next batch, checks that they are still poisoned (a late duplicate would show).
 * Runs only on rail groups in the fabric VM as root or on the shm fabric (passes with a note
 * otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it_link.h"
#include "it_scenarios.h"

#define NP      32
#define SZ      (120 << 10)
#define BATCHES 6
#define POISON  0x5A

static uint64_t seed_of(int batch, int i)
{
    return 70000 + (uint64_t)batch * NP + (uint64_t)i;
}

static long poisoned_until(const uint8_t *p)
{
    for (size_t k = 0; k < SZ; k++)
        if (p[k] != POISON)
            return (long)k;
    return -1;
}

static int wait_all(struct it_plugin *p, void **req, struct it_buf *b, int batch, int recv)
{
    for (int i = 0; i < NP; i++) {
        int sz[8] = {0};
        if (it_wait(p, req[i], sz) != 0)
            return it_fail("batch %d message %d: test failed or timed out", batch, i);
        if (sz[0] != SZ)
            return it_fail("batch %d message %d: %d bytes, want %d", batch, i, sz[0], SZ);
        long bad = recv ? it_check(b[i].p, SZ, seed_of(batch, i)) : -1;
        if (bad >= 0)
            return it_fail("batch %d message %d: first wrong byte at %ld", batch, i, bad);
    }
    return 0;
}

int it_mr_onepiece_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b[NP];
    void *rc, *req[NP];
    int err = 0;
    if (!it_mr_applicable(s))
        return 0;
    memset(b, 0, sizeof(b));
    if (it_accept(p, s->dev, s->ctl, NULL, &rc))
        return 1;
    for (int i = 0; i < NP && !err; i++) {
        err = it_buf_alloc(p, rc, &b[i], SZ);
        if (!err)
            memset(b[i].p, POISON, SZ);
    }
    for (int batch = 0; batch < BATCHES && !err; batch++) {
        if (it_ctl_wait(s->ctl, 'B'))
            return 1;
        for (int i = 0; i < NP && !err; i++) {
            long at = poisoned_until(b[i].p);
            if (at >= 0)
                err = it_fail("before batch %d: buffer %d changed at byte %ld after its receive "
                              "completed (a late duplicate write)",
                              batch, i, at);
        }
        for (int i = 0; i < NP && !err; i++) {
            void *data = b[i].p;
            size_t cap = SZ;
            int tag = i;
            err = it_irecv(p, rc, 1, &data, &cap, &tag, &b[i].mh, &req[i]);
        }
        if (!err)
            err = wait_all(p, req, b, batch, 1);
        for (int i = 0; i < NP; i++)
            memset(b[i].p, POISON, SZ);
        if (it_ctl_signal(s->ctl, err ? 'F' : 'R'))
            return 1;
    }
    for (int i = 0; i < NP; i++)
        it_buf_free(p, NULL, &b[i]);
    return (p->net->closeRecv(rc) != ncclSuccess) || err;
}

int it_mr_onepiece_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    const char *if_a0 = getenv("FABRIC_IF0"), *if_a1 = getenv("FABRIC_IF1");
    struct it_buf b[NP];
    void *sc, *req[NP];
    int err = 0;
    if (!it_mr_applicable(s))
        return 0;
    if_a0 = if_a0 && *if_a0 ? if_a0 : "veth0";
    if_a1 = if_a1 && *if_a1 ? if_a1 : "veth1";
    memset(b, 0, sizeof(b));
    if (it_connect(p, s->dev, s->ctl, &sc))
        return 1;
    for (int i = 0; i < NP && !err; i++)
        err = it_buf_alloc(p, sc, &b[i], SZ);
    for (int batch = 0; batch < BATCHES && !err; batch++) {
        /* Batch 1: rail A loses the receiver's acknowledgements: the messages on it land, the
         * sender never sees them complete. Batch 3: rail A loses everything the sender sends:
         * they do not land. */
        const char *lossy = batch == 1 ? if_a1 : batch == 3 ? if_a0 : NULL;
        if (lossy && it_link_drop(lossy, batch == 1 ? IT_DROP_ACKS : IT_DROP_ALL))
            err = 1;
        if (err || it_ctl_signal(s->ctl, 'B'))
            break;
        for (int i = 0; i < NP && !err; i++) {
            it_fill(b[i].p, SZ, seed_of(batch, i));
            err = it_isend(p, sc, b[i].p, SZ, i, b[i].mh, &req[i]);
        }
        if (!err)
            err = wait_all(p, req, b, batch, 0);
        if (!err && it_ctl_wait(s->ctl, 'R'))
            err = it_fail("batch %d: the receiver failed", batch);
        if (lossy) {
            err |= it_link_drop(lossy, IT_PASS_ALL);
            usleep(300000); /* time for a wrong late write to land before the receiver checks */
        }
    }
    if (it_links_restore(s))
        err = 1;
    for (int i = 0; i < NP; i++)
        it_buf_free(p, NULL, &b[i]);
    if (p->net->closeSend(sc) != ncclSuccess)
        err = err ? err : it_fail("closeSend failed");
    return err;
}
