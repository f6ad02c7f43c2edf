/* SPDX-License-Identifier: Apache-2.0 */
/* rail_send_taken (net_send.c) sends a message of a dual-rail comm split over both rails on the
 * lean striped path (send_striped: the two piece writes built straight from the CTS entry) when
 * its condition holds (striped_ok, then the scheduler's cut: two non-empty pieces), else through
 * the general path (send_taken: req_alloc, rail_send_post_rdv, the stripe schedule, cut_pieces,
 * room_for_pieces, post_piece). The lean path must leave exactly what the general path leaves: a
 * dual-rail send comm in random states (settings: QPs, QP split, control QP, largest piece,
 * stripe policy, minimum stripe size; the scheduler's rates and cached weights, which rails are
 * up; per message: size, receive buffer, free requests and their block, send-queue room, a post
 * refused at the first or second piece or both, failover on or off: a refused piece with failover
 * on fails its rail and waits for the other) sends from the same state once through each, and the
 * results are compared byte for byte: the comm (scheduler and rails' health included), its
 * request block, the QP counters, the records, the telemetry, the tag counters, the work requests
 * posted, the return code and the request. The clock is the test's (rail_now_ns and
 * rail_coarse_ns defined here, so net_clock.c is not linked): a failed rail's retry time is then
 * the same on both paths. */
#define CMP_RAILS     2
#define CMP_NQPS      3 /* two data QPs and a control QP at most */
#define XORSHIFT_SEED 0x5851f42d4c957f2dull
#include "send_taken_cmp.h"

static uint64_t g_clock = 1ull << 46; /* a monotonic clock some hours after boot */
uint64_t rail_now_ns(void)
{
    return g_clock;
}
uint64_t rail_coarse_ns(void)
{
    return g_clock;
}

static uint64_t pick_size(void)
{
    static const uint64_t sizes[] = {0,      1,      1024,    2048,    4096,     65536,
                                     131071, 131072, 1 << 19, 1 << 20, 4u << 20, 3000};
    return rnd(4) == 0 ? 1 + rnd(8u << 20) : sizes[rnd(12)];
}

/* The scheduler: a fresh one of a random policy and minimum stripe size, then random rates, rails
 * up or down, and a cached set of weights or none. */
static void random_sched(void)
{
    struct rail_stripe *st = &g_s->sched;
    static const uint64_t mins[] = {0, 1, 4096, 131072, 1 << 20};
    struct rail_stripe_config cfg;
    rail_stripe_config_default(&cfg, 2);
    cfg.policy = (enum rail_stripe_policy)rnd(3);
    cfg.min_stripe = mins[rnd(5)];
    cfg.speed_mbps[0] = rnd(3) ? 100000 : 0;
    cfg.speed_mbps[1] = rnd(3) ? (uint32_t)(25000 * (1 + rnd(8))) : 0;
    char err[200];
    if (rail_stripe_init(st, &cfg, err, sizeof(err)) != 0)
        exit(1);
    for (int r = 0; r < 2; r++) {
        st->rail[r].avg_bytes = 1 + rnd(1u << 30);
        st->rail[r].avg_ns = 1 + rnd(1u << 20);
        st->rail[r].last_done_ns = rnd(1000);
    }
    unsigned up = rnd(5) ? 3u : (unsigned)rnd(3);
    for (int r = 0; r < 2; r++)
        st->rail[r].up = (up >> r) & 1u;
    st->up_mask = up;
    st->rr_next = (unsigned)rnd(2);
    st->weights_valid = rnd(2);
    if (st->weights_valid) {
        st->weight[0] = (uint16_t)(64 + rnd(897));
        st->weight[1] = (uint16_t)(1024 - st->weight[0]);
    }
}

/* A random state right after rail_cts_fifo_next took slot sequence *seq (entry 0 unresolved, head
 * one behind scan), with the entry in *cts. */
static void randomize(uint64_t *seq, struct rail_cts *cts, uint64_t *size, int *tag)
{
    struct rail_send_comm *s = g_s;
    static const uint64_t chunks[] = {1ull << 30, 4096, 65536, 1 << 20, 1ull << 53};
    s->ndata = 1 + (int)rnd(2);
    s->split_qps = rnd(3) == 0;
    s->max_chunk = chunks[rnd(5)];
    s->ctl_qp = rnd(3) ? s->ndata : -1;
    random_sched();
    s->direct_max = rail_send_direct_max(s);
    s->striped_max = rail_send_striped_max(s);
    s->n2ph = (int)rnd(3);
    s->npending = (int)rnd(2);
    s->help_listed = true; /* the help list itself is global: not in the snapshots */
    s->helped = rnd(2);
    s->base.failover = rnd(4) != 0;
    s->base.nup = 0;
    for (int r = 0; r < 2; r++) { /* a rail's health as the scheduler sees it */
        memset(&s->base.link[r].rj, 0, sizeof(s->base.link[r].rj));
        s->base.link[r].rj.up = (s->sched.up_mask >> r) & 1u;
        s->base.nup += s->base.link[r].rj.up;
    }
    for (int r = 0; r < 2; r++) {
        s->base.link[r].rr = rnd(7);
        s->base.link[r].cq_work = (int)rnd(5);
        for (int q = 0; q < CMP_NQPS; q++) {
            g_qps[r][q].sq_max = 8;
            g_qps[r][q].sq_out = rnd(4) == 0 ? 8 - (int)rnd(3) : (int)rnd(6);
        }
    }
    cmp_random_requests();
    for (int i = 0; i < RAIL_SEND_REQ_BLOCK; i++) {
        struct rail_send_req *q = &g_blk->req[i];
        q->striped = rnd(2);
        q->tp.n = (uint8_t)rnd(4);
        q->tp.left = (uint8_t)rnd(3);
        q->tp.rec = (uint8_t)rnd(4);
        for (int k = 0; k < RAIL_REQ_CHUNKS; k++) {
            q->tp.piece[k] = (uint8_t)rnd(4);
            q->ch[k].off = rnd(100);
            q->ch[k].len = rnd(100);
            q->ch[k].rail = (uint8_t)rnd(2);
            q->ch[k].qp = (uint8_t)rnd(2);
            q->ch[k].post_ns = 1;
        }
    }
    g_stats->striped_messages = rnd(5);
    g_post_fail_at = rnd(10) == 0 ? (int)rnd(2) : -1; /* the first or second post refused, */
    g_post_fail_end = g_post_fail_at < 0 ? -1 : g_post_fail_at + 1 + (int)rnd(2); /* or both */
    g_clock += 1000;
    *size = pick_size();
    cmp_take_slot(seq, cts, *size, tag);
}

/* The lean path's case: two plain writes, one per rail, and a request. */
static bool striped_case(const struct snap *g, uint64_t size)
{
    (void)size;
    return g->nposted == 2 && g->posted[0].opcode == IBV_WR_RDMA_WRITE &&
           g->posted[1].opcode == IBV_WR_RDMA_WRITE && g->posted[0].qp < CMP_NQPS &&
           g->posted[1].qp >= CMP_NQPS;
}

static void describe(const struct snap *before, const struct snap *general, const struct snap *lean,
                     uint64_t size, const struct rail_cts *cts)
{
    fprintf(stderr,
            "differs: size %llu cap %llu ndata %d split %d ctl %d max_chunk %llu policy "
            "%d min %llu up %u nfree %d fail at %d rc %d/%d nposted %d/%d\n",
            (unsigned long long)size, (unsigned long long)cts->size, g_s->ndata, g_s->split_qps,
            g_s->ctl_qp, (unsigned long long)g_s->max_chunk, (int)g_s->sched.policy,
            (unsigned long long)g_s->sched.min_stripe, g_s->sched.up_mask, before->s.nfree,
            g_post_fail_at, general->rc, lean->rc, general->nposted, lean->nposted);
}

/* States where a refused piece failed its rail over and waits for the other rail. */
static int g_waiting;
static void note_waiting(const struct snap *before, const struct snap *general)
{
    g_waiting += general->req && general->s.npending > before->s.npending;
}

int main(void)
{
    cmp_setup();
    const struct cmp_hooks hooks = {randomize, striped_case, describe, note_waiting};
    cmp_run(200000, &hooks);
    CHECK(g_waiting > 200000 / 200);
    cmp_teardown();
    return check_report("test_send_striped");
}
