/* SPDX-License-Identifier: Apache-2.0 */
/* The freed receive's removal from the held-back list (rail_recv_undefer_req,
 * protocol/net_recv_cts.h: its usual case, the one receive held back, without the loop) against
 * the loop it stands for (every entry naming the receive removed, rail_recv_undefer), over
 * 200,000 random lists: 0-6 entries (0-2 most often) of 4 receives (repeats included, as a
 * corrupted list would have them), the freed receive in it once, several times or not at all.
 * The whole list (count and every byte of it) must be the same after either. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "protocol/net_recv_cts.h"

#define XORSHIFT_SEED 0x6a09e667f3bcc909ull
#include "xorshift.h"

/* The loop req_free ran before (net_recv.c). */
static void undefer_loop(struct rail_recv_comm *r, uint8_t idx)
{
    for (int k = 0; k < r->ndeferred; k++)
        if (r->deferred[k] == idx)
            rail_recv_undefer(r, k--);
}

int main(void)
{
    static struct rail_recv_comm a, b;
    int one = 0, other = 0, differ = 0;
    for (int it = 0; it < 200000; it++) {
        memset(&a, 0, sizeof(a));
        static const int lens[] = {0, 1, 1, 1, 2, 2, 3, 6};
        a.ndeferred = lens[rnd(8)];
        for (int k = 0; k < RAIL_RECV_REQS; k++) /* past the count too: must stay as it is */
            a.deferred[k] = (uint8_t)rnd(4);
        uint8_t idx = (uint8_t)rnd(4);
        b = a;
        rail_recv_undefer_req(&a, idx);
        undefer_loop(&b, idx);
        bool same =
            a.ndeferred == b.ndeferred && memcmp(a.deferred, b.deferred, sizeof(a.deferred)) == 0;
        differ += !same;
        if (b.ndeferred == 0 && a.ndeferred == 0)
            one++;
        else
            other++;
    }
    fprintf(stderr, "lists: %d emptied, %d not; %d differ\n", one, other, differ);
    CHECK_EQ_INT(differ, 0);
    CHECK(one > 20000 && other > 20000);
    return check_report("test_recv_undefer");
}
