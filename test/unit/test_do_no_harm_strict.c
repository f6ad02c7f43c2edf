/* SPDX-License-Identifier: Apache-2.0 */
/* The strict do-no-harm rules on the tuner's real path (docs/cost-model.md §12.1, §12.5, §12.6):
 *  - a platform class the embedded table holds no measurement of (one Blackwell node) keeps
 *    NCCL's choice unless the prior predicts a twice-as-fast pair, and says which rule decided;
 *  - beyond the trained node range, a ranking the last two trained node counts agree on is
 *    carried at most two octaves further, with "extrapolated from N-M nodes"; a ranking they
 *    disagree on, or a node count farther out, keeps NCCL's choice;
 *  - beyond the trained node range, a ring protocol measured ahead of NCCL's ring protocol at
 *    the same bytes per rank on the nearest trained node counts replaces it (§12.6). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "decide/decision.h"
#include "decide/extrapolate.h"
#include "model/model_table.h"
#include "topo.h"
#include "abi/tuner_core.h"

#define AG ncclFuncAllGather

static struct rail_topo g_topo;

static void load_p5(void)
{
    char err[256];
    CHECK_EQ_INT(rail_topo_load_nccl_xml(RAIL_FIXTURES "/tuner-data/topo/p5_512x1_efa.xml", &g_topo,
                                         err, sizeof(err)),
                 0);
}

static struct rail_tuner *tuner(int nranks, int nnodes)
{
    struct rail_tuner *t = NULL;
    struct rail_tuner_opts o = {.topo = &g_topo, .lenient = 0, .calib_path = ""};
    CHECK_EQ_INT(rail_tuner_create(&t, 1, (size_t)nranks, (size_t)nnodes, NULL, &o), 0);
    CHECK(t && t->model_active);
    return t;
}

/* One Blackwell node: the embedded table measured no single-node Blackwell system. With several
 * pipelined ops per call the prior (NCCL's model with the NVLS refinements of §5, validated on
 * H100 only) predicted 50-100% gains on 2-8 GPUs, and the tuner used to change NCCL's choice
 * there; now NCCL's choice stands and explain names the rule. */
static void test_unseen_single_node(void)
{
    char err[256];
    CHECK_EQ_INT(rail_topo_load_profile("hgx-b200", &g_topo, err, sizeof(err)), 0);
    int kept = 0;
    static const int ranks[] = {2, 4, 8}, pipes[] = {1, 2, 8};
    for (int r = 0; r < 3; r++) {
        struct rail_tuner *t = tuner(ranks[r], 1);
        CHECK(!rail_model_class_seen(&t->model));
        for (int pi = 0; pi < 3; pi++)
            for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
                for (int l = 3; l <= 33; l++) {
                    enum rail_decision_from from;
                    int nch, a, p;
                    char why[96];
                    size_t bytes = (size_t)1 << l;
                    int c = rail_tuner_explain(t, coll, bytes, pipes[pi], &nch, &from);
                    int w = rail_tuner_why(t, coll, bytes, pipes[pi], why, sizeof(why));
                    if (c < 0) {
                        kept += w == RAIL_DT_WHY_UNSEEN_KEPT;
                        if (w == RAIL_DT_WHY_UNSEEN_KEPT)
                            CHECK(strcmp(why, "platform class not in training: NCCL's choice "
                                              "kept") == 0);
                        continue;
                    }
                    /* A change only where the prior predicts twice NCCL's speed (a cell may
                     * also hold NCCL's own pick at this size, one of the bucket's). */
                    CHECK(rail_model_nccl_pick(&t->model, coll, bytes, pipes[pi], &a, &p) >= 0);
                    if (c == a * NCCL_NUM_PROTOCOLS + p)
                        continue;
                    CHECK_MSG(w == RAIL_DT_WHY_UNSEEN_GAIN, "%d ranks, coll %d, 2^%d B, %d ops",
                              ranks[r], coll, l, pipes[pi]);
                    float tn = rail_model_prior_time(&t->model, coll, a, p, bytes, pipes[pi]);
                    float tc = rail_model_prior_time(&t->model, coll, c / NCCL_NUM_PROTOCOLS,
                                                     c % NCCL_NUM_PROTOCOLS, bytes, pipes[pi]);
                    CHECK(tc > 0.0f && tc * (1.0f + RAIL_UNSEEN_CLASS_MARGIN) < tn * 1.3f);
                }
        rail_tuner_destroy(t);
    }
    CHECK(kept > 0); /* the rule did decide somewhere: the old 50% margin changed these */
}

/* The choice at (coll, bytes) and the rule that decided it. */
static int decide(struct rail_tuner *t, int coll, size_t bytes, int *why, char *txt, size_t len)
{
    enum rail_decision_from from;
    int nch;
    int c = rail_tuner_explain(t, coll, bytes, 1, &nch, &from);
    *why = rail_tuner_why(t, coll, bytes, 1, txt, len);
    return c;
}

/* P5, one GPU per node, trained on 2, 8, 32, 128 and 512 nodes. On 2,048 nodes (two octaves
 * beyond 512) a 32 GiB AllGather moves what 512 nodes move at 8 GiB and 128 nodes at 2 GiB: Ring
 * Simple was measured fastest at both, by 45-50% over Ring LL128, and the step model predicts
 * its bandwidth term wins here too. */
static void test_extrapolated(void)
{
    load_p5();
    struct rail_tuner *t = tuner(2048, 2048);
    int edge, next, why;
    float dist;
    char txt[96];
    CHECK_EQ_INT(rail_extrap_edges(&t->model, AG, &edge, &next, &dist), 1);
    CHECK_EQ_INT(edge, 512);
    CHECK_EQ_INT(next, 128);
    CHECK(dist > 1.99f && dist < 2.01f);
    int c = decide(t, AG, 32ull << 30, &why, txt, sizeof(txt));
    CHECK_EQ_INT(c, NCCL_ALGO_RING * NCCL_NUM_PROTOCOLS + NCCL_PROTO_SIMPLE);
    CHECK_EQ_INT(why, RAIL_DT_WHY_EXTRAPOLATED);
    CHECK_MSG(strcmp(txt, "extrapolated from 128\u2013512 nodes") == 0, "'%s'", txt);
    /* Every carried cell: the same pair measured fastest at both edges is what it picks. */
    int carried = 0;
    for (int l = 3; l <= 36; l++) {
        c = decide(t, AG, (size_t)1 << l, &why, txt, sizeof(txt));
        if (why == RAIL_DT_WHY_EXTRAPOLATED) {
            carried++;
            CHECK(c >= 0);
        }
    }
    CHECK(carried > 0);
    rail_tuner_destroy(t);
}

/* Not carried: three octaves beyond the last trained node count (4,096 nodes), nothing is; and
 * on 2,048 nodes at 8 GiB (512 nodes at 2 GiB, 128 at 512 MiB) the edges disagree (PAT Simple
 * measured fastest on 512, Ring Simple on 128): NCCL's choice. */
static void test_not_carried(void)
{
    load_p5();
    struct rail_tuner *t = tuner(4096, 4096);
    int why, edge, next;
    float dist;
    char txt[96];
    CHECK_EQ_INT(rail_extrap_edges(&t->model, AG, &edge, &next, &dist), 1);
    CHECK(dist > 2.99f);
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int l = 3; l <= 36; l++) {
            (void)decide(t, coll, (size_t)1 << l, &why, txt, sizeof(txt));
            CHECK(why != RAIL_DT_WHY_EXTRAPOLATED);
        }
    rail_tuner_destroy(t);

    t = tuner(2048, 2048);
    int a, p;
    int c = decide(t, AG, 8ull << 30, &why, txt, sizeof(txt));
    CHECK(why != RAIL_DT_WHY_EXTRAPOLATED);
    CHECK_EQ_INT(c, -1); /* NCCL's choice stands */
    CHECK(rail_model_nccl_pick(&t->model, AG, 8ull << 30, 1, &a, &p) >= 0);
    rail_tuner_destroy(t);

    /* Inside the trained range nothing is carried. */
    t = tuner(64, 64);
    CHECK_EQ_INT(rail_extrap_edges(&t->model, AG, &edge, &next, &dist), 0);
    rail_tuner_destroy(t);
}

/* P5, 8 GPUs per node, AllGather trained on 2 and 256 nodes. On 512 nodes a 64 MiB AllGather
 * moves 16 KiB per rank, what 256 nodes move at 32 MiB (Ring/LL 19.7 ms, Ring/LL128 24.0 ms) and 2
 * nodes at 256 KiB (161 vs 183 us): NCCL picks Ring/LL128, the tuner Ring/LL although its step
 * model ranks LL128 first. At 128 MiB (32 KiB per rank: 256 nodes at 64 MiB LL ahead, 2 nodes at
 * 512 KiB-1 MiB LL128 ahead across the bucket) nothing changes; between 2 and 256 nodes the rule
 * does not apply (the residuals read there by bytes per rank already). */
static void test_ring_step(void)
{
    char err[256], txt[96];
    int why, a, p;
    const int ll = NCCL_ALGO_RING * NCCL_NUM_PROTOCOLS + NCCL_PROTO_LL;
    CHECK_EQ_INT(rail_topo_load_nccl_xml(RAIL_FIXTURES "/tuner-data/topo/p5_256x8_efa.xml", &g_topo,
                                         err, sizeof(err)),
                 0);
    struct rail_tuner *t = tuner(4096, 512);
    CHECK(rail_model_nccl_pick(&t->model, AG, 64ull << 20, 1, &a, &p) >= 0);
    CHECK_EQ_INT(a, NCCL_ALGO_RING);
    CHECK_EQ_INT(p, NCCL_PROTO_LL128);
    int c = decide(t, AG, 64ull << 20, &why, txt, sizeof(txt));
    CHECK_EQ_INT(c, ll);
    CHECK_EQ_INT(why, RAIL_DT_WHY_RING_STEP);
    CHECK_MSG(strcmp(txt, "ring protocol measured at the same bytes per rank on 2 and 256 nodes") ==
                  0,
              "'%s'", txt);
    c = decide(t, AG, 128ull << 20, &why, txt, sizeof(txt));
    CHECK(why != RAIL_DT_WHY_RING_STEP);
    /* Every ring-step cell replaces a ring protocol of NCCL's by another ring protocol. */
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int l = 3; l <= 36; l++) {
            c = decide(t, coll, (size_t)1 << l, &why, txt, sizeof(txt));
            if (why != RAIL_DT_WHY_RING_STEP)
                continue;
            CHECK(c >= 0 && c / NCCL_NUM_PROTOCOLS == NCCL_ALGO_RING);
            CHECK(rail_model_nccl_pick(&t->model, coll, (size_t)1 << l, 1, &a, &p) >= 0);
            CHECK_EQ_INT(a, NCCL_ALGO_RING);
        }
    rail_tuner_destroy(t);

    t = tuner(128, 16); /* between the trained node counts */
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int l = 3; l <= 36; l++) {
            (void)decide(t, coll, (size_t)1 << l, &why, txt, sizeof(txt));
            CHECK(why != RAIL_DT_WHY_RING_STEP);
        }
    rail_tuner_destroy(t);
}

int main(void)
{
    test_unseen_single_node();
    test_extrapolated();
    test_not_carried();
    test_ring_step();
    return check_report("test_do_no_harm_strict");
}
