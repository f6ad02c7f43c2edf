/* SPDX-License-Identifier: Apache-2.0 */
/* What the measurements behind the table say about one communicator (docs/cost-model.md §12):
 *
 *  - residuals: at every training point the table keeps log(measured / step model). For this
 *    communicator they are interpolated in log(nodes) between the two node counts of the same
 *    network family, GPU generation, collective, pair and ranks per node that bracket it, and
 *    in log(bytes) between measured sizes; beyond the measured node counts (or sizes) the
 *    nearest one's residual fades with the distance in octaves (fade_nodes, fade_bytes), so the
 *    farther a shape is from what was measured, the more the structural model alone decides.
 *    Between two node counts, each counts by its weight in log(nodes) times its coverage of the
 *    size, so one that measured the size outweighs one extrapolated to it.
 *    A residual is a correction learnt at a shape and applied near it, never far from it.
 *  - trust: whether the shape is inside the range the table's measurements cover (the same
 *    family, generation and collective; node count and ranks per node between the smallest and
 *    largest measured; the size within two octaves of the measured sizes) and how far from the
 *    nearest measured shape: the risk margin a change of NCCL's choice must clear grows with
 *    that distance.
 * Pure and deterministic. */
#include "model/cost_model_measured.h"

#include <math.h>
#include <string.h>

#include "model/model_table.h"

#define MAX_NODECNT 64
#define SIZE_SLACK  4 /* a covered shape stands for sizes within 2 octaves of its measured ones */

static double lg2(double x)
{
    return log(x) / log(2.0);
}

/* The residual of one node count's rows (sorted by bytes) at nbytes. */
static float at_size(const struct rail_table_resid *r, int n, size_t nbytes, float fade)
{
    double x = lg2(nbytes > 0 ? (double)nbytes : 1.0);
    if (n <= 0)
        return 0.0f;
    if (nbytes <= r[0].bytes)
        return r[0].log_ratio * (float)exp(-(lg2((double)r[0].bytes) - x) / fade);
    if (nbytes >= r[n - 1].bytes)
        return r[n - 1].log_ratio * (float)exp(-(x - lg2((double)r[n - 1].bytes)) / fade);
    int lo = 1, hi = n - 1; /* first i with nbytes <= r[i].bytes */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (nbytes <= r[mid].bytes)
            hi = mid;
        else
            lo = mid + 1;
    }
    double x0 = lg2((double)r[lo - 1].bytes), x1 = lg2((double)r[lo].bytes);
    double f = (x - x0) / (x1 - x0);
    return (float)(r[lo - 1].log_ratio + f * (r[lo].log_ratio - r[lo - 1].log_ratio));
}

/* The residual of one node count's rows at nbytes without its fade (the nearest measured size's
 * beyond them), and in *cover how much it counts: 1 within the measured sizes, fading as
 * exp(-octaves / fade) beyond them. */
static float at_size_cov(const struct rail_table_resid *r, int n, size_t nbytes, float fade,
                         float *cover)
{
    double x = lg2(nbytes > 0 ? (double)nbytes : 1.0);
    *cover = 0.0f;
    if (n <= 0)
        return 0.0f;
    if (nbytes <= r[0].bytes) {
        *cover = (float)exp(-(lg2((double)r[0].bytes) - x) / fade);
        return r[0].log_ratio;
    }
    if (nbytes >= r[n - 1].bytes) {
        *cover = (float)exp(-(x - lg2((double)r[n - 1].bytes)) / fade);
        return r[n - 1].log_ratio;
    }
    *cover = 1.0f;
    return at_size(r, n, nbytes, fade);
}

/* The size with the same bytes per rank at the node count of rows r (same ranks per node). */
static size_t same_step(size_t nbytes, const struct rail_table_resid *r, const struct rail_model *m)
{
    double v = (double)nbytes * (double)r->nnodes / (double)m->shape.nnodes;
    return v < 1.0 ? 1 : (v > 1e18 ? (size_t)1e18 : (size_t)v);
}

float rail_model_residual(const struct rail_model *m, int coll, int algo, int proto, size_t nbytes)
{
    if (!m || coll < 0 || coll >= RAIL_NUM_COLLS || algo < 0 || algo >= NCCL_NUM_ALGORITHMS ||
        proto < 0 || proto >= NCCL_NUM_PROTOCOLS || !m->table)
        return 0.0f;
    const struct rail_resid_series *s = &m->resid[coll][algo * NCCL_NUM_PROTOCOLS + proto];
    /* A ring's residual follows its step size, the bytes per rank (a ring over 2,048 ranks moves
     * a 4 MiB AllGather in 2 KiB steps, as one over 16 ranks moves 32 KiB): a node count's
     * residual is read at the size with the same bytes per rank. Trees and NVLSTree follow the
     * size itself (NCCL picks their channels by it); PAT follows the size up to
     * RAIL_PAT_PER_RANK_FROM bytes per rank, the bytes per rank beyond (its bandwidth knee,
     * docs/cost-model.md §12.3). */
    bool per_rank =
        algo == NCCL_ALGO_RING || (algo == NCCL_ALGO_PAT && m->shape.nranks > 0 &&
                                   nbytes / (size_t)m->shape.nranks >= RAIL_PAT_PER_RANK_FROM);
    float fb = m->table->fade_bytes, ca = 0.0f, cb = 0.0f, ra = 0.0f, rb = 0.0f;
    if (s->na)
        ra = at_size_cov(s->a, s->na, per_rank ? same_step(nbytes, s->a, m) : nbytes, fb, &ca);
    if (!s->nb)
        return s->wa * (ra * ca);
    rb = at_size_cov(s->b, s->nb, per_rank ? same_step(nbytes, s->b, m) : nbytes, fb, &cb);
    /* Between two node counts, each one's residual counts by its weight in log(nodes) times how
     * well it covers the size: where only one of them measured it, that one decides, and the
     * other's residual, extrapolated from its nearest measured size, counts as far as it still
     * reaches (issue 30: 32 nodes at 512 B read 8 nodes, measured there, and 128 nodes, measured
     * from 2 KiB). The mix applies as far as the better-covering one reaches; where both cover
     * the size it is the linear interpolation in log(nodes). */
    float wa = s->wa * ca, wb = s->wb * cb, c = ca > cb ? ca : cb;
    if (!(wa + wb > 0.0f))
        return 0.0f;
    if (ca == 1.0f && cb == 1.0f)
        return s->wa * ra + s->wb * rb;
    return (wa * ra + wb * rb) / (wa + wb) * c;
}

static int model_rpn(const struct rail_model *m)
{
    const struct rail_comm_shape *s = &m->shape;
    return s->min_rpn == s->max_rpn && s->nranks % s->nnodes == 0 ? s->nranks / s->nnodes : 0;
}

static void resolve_one(struct rail_model *m, int coll, int algo, int proto, int rpn)
{
    const struct rail_model_table *t = m->table;
    struct rail_resid_series *s = &m->resid[coll][algo * NCCL_NUM_PROTOCOLS + proto];
    int lo, hi, nc = 0, start[MAX_NODECNT], count[MAX_NODECNT], nodes[MAX_NODECNT];

    rail_model_table_series(t, m->family, m->compcap_idx, coll, algo, proto, rpn, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        if (nc && t->resid[i].nnodes == nodes[nc - 1]) {
            count[nc - 1]++;
            continue;
        }
        if (nc == MAX_NODECNT)
            break;
        nodes[nc] = t->resid[i].nnodes;
        start[nc] = i;
        count[nc++] = 1;
    }
    if (nc == 0)
        return;
    int nn = m->shape.nnodes, j = 0;
    while (j < nc && nodes[j] < nn)
        j++;
    if (j < nc && nodes[j] == nn) { /* measured at this node count */
        s->a = &t->resid[start[j]];
        s->na = count[j];
        s->wa = 1.0f;
        return;
    }
    if (j > 0 && j < nc) { /* between two measured node counts: linear in log(nodes) */
        double xa = lg2(nodes[j - 1]), xb = lg2(nodes[j]), x = lg2(nn);
        s->a = &t->resid[start[j - 1]];
        s->na = count[j - 1];
        s->b = &t->resid[start[j]];
        s->nb = count[j];
        s->wb = (float)((x - xa) / (xb - xa));
        s->wa = 1.0f - s->wb;
        return;
    }
    int k = j == 0 ? 0 : nc - 1; /* beyond them: the nearest one, fading */
    s->a = &t->resid[start[k]];
    s->na = count[k];
    s->wa = (float)exp(-fabs(lg2(nn) - lg2(nodes[k])) / t->fade_nodes);
}

void cm_resolve_residuals(struct rail_model *m)
{
    int rpn = model_rpn(m);
    memset(m->resid, 0, sizeof(m->resid));
    if (!m->table || m->table->nresid == 0 || rpn < 1)
        return;
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
                resolve_one(m, coll, a, p, rpn);
}

int rail_model_trust(const struct rail_model *m, int coll, size_t nbytes, float *margin,
                     float *distance)
{
    const struct rail_model_table *t = m ? m->table : NULL;
    int rpn = m ? model_rpn(m) : 0, found = 0;
    int nn_lo = 0, nn_hi = 0, rpn_lo = 0, rpn_hi = 0;
    double best = INFINITY;

    if (margin)
        *margin = t ? t->margin_out : 1.0f;
    if (distance)
        *distance = INFINITY;
    if (!t || rpn < 1)
        return 0;
    for (int i = 0; i < t->ncover; i++) {
        const struct rail_table_cover *c = &t->cover[i];
        if (c->family != m->family || c->gen != m->compcap_idx || c->coll != coll ||
            (double)nbytes * SIZE_SLACK < (double)c->bytes_min ||
            (double)nbytes > (double)c->bytes_max * SIZE_SLACK)
            continue;
        double d = fabs(lg2(m->shape.nnodes) - lg2(c->nnodes)) + fabs(lg2(rpn) - lg2(c->rpn));
        best = d < best ? d : best;
        nn_lo = !found || c->nnodes < nn_lo ? c->nnodes : nn_lo;
        nn_hi = !found || c->nnodes > nn_hi ? c->nnodes : nn_hi;
        rpn_lo = !found || c->rpn < rpn_lo ? c->rpn : rpn_lo;
        rpn_hi = !found || c->rpn > rpn_hi ? c->rpn : rpn_hi;
        found = 1;
    }
    if (!found || m->shape.nnodes < nn_lo || m->shape.nnodes > nn_hi || rpn < rpn_lo ||
        rpn > rpn_hi)
        return 0;
    if (distance)
        *distance = (float)best;
    if (margin)
        *margin = t->margin0 + t->margin_slope * (float)best;
    return 1;
}

bool rail_model_class_seen(const struct rail_model *m)
{
    const struct rail_model_table *t = m ? m->table : NULL;
    for (int i = 0; t && i < t->ncover; i++)
        if (t->cover[i].family == m->family && t->cover[i].gen == m->compcap_idx)
            return true;
    return false;
}

bool rail_model_pair_measured(const struct rail_model *m, int coll, int algo, int proto,
                              size_t nbytes)
{
    const struct rail_model_table *t = m ? m->table : NULL;
    int rpn = m ? model_rpn(m) : 0;
    if (!t || rpn < 1 || coll < 0 || coll >= RAIL_NUM_COLLS || algo < 0 ||
        algo >= NCCL_NUM_ALGORITHMS || proto < 0 || proto >= NCCL_NUM_PROTOCOLS)
        return false;
    if (m->resid[coll][algo * NCCL_NUM_PROTOCOLS + proto].na > 0)
        return true;
    for (int i = 0; i < t->ncover; i++) {
        const struct rail_table_cover *c = &t->cover[i];
        if (c->family == m->family && c->gen == m->compcap_idx && c->coll == coll &&
            c->algo == algo && c->proto == proto && c->rpn == rpn && c->nnodes == m->shape.nnodes &&
            (double)nbytes * SIZE_SLACK >= (double)c->bytes_min &&
            (double)nbytes <= (double)c->bytes_max * SIZE_SLACK)
            return true;
    }
    return false;
}
