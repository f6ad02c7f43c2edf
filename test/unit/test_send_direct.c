/* SPDX-License-Identifier: Apache-2.0 */
/* rail_send_taken (net_send.c) sends the message that the FIFO slot just taken by
 * rail_cts_fifo_next asks for: on the one-rail direct path (one WRITE WITH IMM, no request
 * allocation, scheduler or pipelined-post layers) when its condition holds, else through the
 * general path (send_taken: req_alloc, rail_send_post_rdv, post_pipelined). The direct path must
 * leave exactly what the general path leaves: a one-rail send comm in random states (settings:
 * QPs, QP split, largest piece, adaptive routing; per message: size, receive buffer, the rail up or
 * not, free requests and their block, send-queue room, a refused post) sends from the same state
 * once through each, and the results are compared byte for byte: the comm, its request block, the
 * QP counters, the records, the telemetry, the tag counters, the work requests posted, the return
 * code and the request. Dropping any one term of the condition (direct_ok, rail_send_direct_max)
 * makes states differ. Also: rail_send_pick_up (the eager send's one-rail pick) against
 * rail_pick_up. */
#define CMP_RAILS     1
#define CMP_NQPS      2
#define XORSHIFT_SEED 0x2545f4914f6cdd1dull
#include "send_taken_cmp.h"

/* The one-rail comm of send_taken_cmp.h with a default scheduler. */
static void setup(void)
{
    cmp_setup();
    struct rail_stripe_config cfg;
    rail_stripe_config_default(&cfg, 1);
    char err[200];
    if (rail_stripe_init(&g_s->sched, &cfg, err, sizeof(err)) != 0)
        exit(1);
}

static uint64_t pick_size(void)
{
    static const uint64_t sizes[] = {0,     1,       8,       4096,           4097,
                                     65536, 1 << 19, 1 << 20, (1u << 21) - 1, 1u << 21};
    return rnd(4) == 0 ? 1 + rnd(1 << 21) : sizes[rnd(10)];
}

/* A random state right after rail_cts_fifo_next took slot sequence *seq (entry 0 unresolved, head
 * one behind scan), with the entry in *cts. */
static void randomize(uint64_t *seq, struct rail_cts *cts, uint64_t *size, int *tag)
{
    struct rail_send_comm *s = g_s;
    static const uint64_t chunks[] = {1ull << 30, 4096, 65536, 1 << 20};
    static const uint64_t thresholds[] = {8192, 1 << 20, 1ull << 40};
    s->ndata = 1 + (int)rnd(CMP_NQPS);
    s->split_qps = rnd(3) == 0;
    s->max_chunk = chunks[rnd(4)];
    s->ar = rnd(3) == 0;
    s->ar_threshold = thresholds[rnd(3)];
    s->direct_max = rail_send_direct_max(s);
    s->sched.up_mask = rnd(8) ? 1u : 0u;
    s->base.link[0].rr = rnd(7);
    s->base.link[0].cq_work = (int)rnd(5);
    for (int q = 0; q < CMP_NQPS; q++) {
        g_qps[0][q].sq_max = 8;
        g_qps[0][q].sq_out = rnd(4) == 0 ? 8 - (int)rnd(2) : (int)rnd(6);
    }
    cmp_random_requests();
    g_post_fail_at = rnd(12) == 0 ? 0 : -1; /* every post refused */
    g_post_fail_end = g_post_fail_at < 0 ? -1 : INT_MAX;
    *size = pick_size();
    cmp_take_slot(seq, cts, *size, tag);
}

/* The direct path's case: one WRITE WITH IMM of the whole message and nothing else. */
static bool direct_case(const struct snap *g, uint64_t size)
{
    return g->nposted == 1 && g->posted[0].opcode == IBV_WR_RDMA_WRITE_WITH_IMM &&
           g->posted[0].sge_len[0] == size;
}

static void describe(const struct snap *before, const struct snap *general,
                     const struct snap *direct, uint64_t size, const struct rail_cts *cts)
{
    fprintf(stderr,
            "differs: size %llu cap %llu ndata %d split %d max_chunk %llu ar %d thr "
            "%llu up %u nfree %d rc %d/%d\n",
            (unsigned long long)size, (unsigned long long)cts->size, g_s->ndata, g_s->split_qps,
            (unsigned long long)g_s->max_chunk, g_s->ar, (unsigned long long)g_s->ar_threshold,
            g_s->sched.up_mask, before->s.nfree, general->rc, direct->rc);
}

/* rail_send_pick_up against rail_pick_up: every rail count, up pattern and start. */
static void pick_up(void)
{
    static struct rail_comm c;
    int same = 0, n = 0;
    for (int nr = 1; nr <= RAIL_MAX_RAILS; nr++)
        for (unsigned up = 0; up < 1u << nr; up++)
            for (unsigned from = 0; from < 9; from++) {
                memset(&c, 0, sizeof(c));
                c.nrails = nr;
                for (int r = 0; r < nr; r++)
                    c.link[r].rj.up = (up >> r) & 1u;
                same += rail_send_pick_up(&c, from) == rail_pick_up(&c, from);
                n++;
            }
    CHECK_EQ_INT(same, n);
}

int main(void)
{
    setup();
    pick_up();
    const struct cmp_hooks hooks = {randomize, direct_case, describe, NULL};
    cmp_run(200000, &hooks);
    cmp_teardown();
    return check_report("test_send_direct");
}
