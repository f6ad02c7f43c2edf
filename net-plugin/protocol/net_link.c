/* SPDX-License-Identifier: Apache-2.0 */
/* Per-rail verbs resources of a connection: completion queue, RC queue pairs, registered
 * control regions, and the QP transitions from the peer's metadata; the teardown every comm
 * kind shares. Each kind builds its comms in its own file (net_send.c, net_recv.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "protocol/net_link.h"

#include "log.h"
#include "params.h"
#include "protocol/net_ctl.h"
#include "protocol/net_pieces.h"
#include "protocol/net_qsize.h"
#include "telemetry/rail_stats.h"
#include "transport/net_oob.h"
#include "transport/net_verbs.h"

int rail_wire_ll(int verbs_ll)
{
    return verbs_ll == IBV_LINK_LAYER_ETHERNET ? RAIL_LL_ETH : RAIL_LL_IB;
}

int rail_link_create(struct rail_comm *c, int rail, struct rail_dev *dev,
                     const struct rail_qshape *want, char *err, size_t errlen)
{
    struct rail_link *l = &c->link[rail];
    struct rail_qshape s = *want;
    int nqps = s.nqps;

    l->dev = dev;
    /* The CQ holds every signalled send and every posted receive of all QPs at once. */
    int cqe = rail_qshape_fit(&s, dev->max_qp_wr, dev->max_cqe);
    if (cqe == -E2BIG) {
        snprintf(err, errlen, "%s: %d QPs do not fit a %d-entry CQ", dev->name, nqps, dev->max_cqe);
        return cqe;
    }
    if (cqe < 0) {
        snprintf(err, errlen, "%s: no queue sizes for %d QP(s)%s", dev->name, nqps,
                 s.has_ctl ? " with a control QP" : "");
        return cqe;
    }
    int rc = rail_verbs_create_cq(dev->ctx, cqe, c, &l->cq, dev->name, err, errlen);
    if (rc < 0)
        return rc;
    l->qps = calloc((size_t)nqps, sizeof(*l->qps));
    if (!l->qps)
        return -ENOMEM;
    int sge = dev->max_sge > 0 ? (dev->max_sge < 2 ? dev->max_sge : 2) : 2;
    int inline_want = 0;
    l->max_inline = -1;
    for (int q = 0; q < nqps; q++) {
        bool ctl = s.has_ctl && q == nqps - 1;
        struct rail_qp *p = &l->qps[q];
        p->sq_max = ctl ? s.ctl_sq : s.sq;
        p->rq_max = ctl ? s.ctl_rq : s.rq;
        p->inline_want = ctl ? s.ctl_inl : s.inl;
        int got = p->inline_want;
        rc = rail_verbs_create_qp(dev->pd, l->cq, p->sq_max, p->rq_max, sge, &got, c, &p->qp,
                                  dev->name, err, errlen);
        if (rc < 0)
            return rc;
        if (p->inline_want > 0) { /* only the QPs that carry eager writes ask for any */
            if (l->max_inline < 0 || got < l->max_inline)
                l->max_inline = got;
            if (p->inline_want > inline_want)
                inline_want = p->inline_want;
        }
    }
    if (l->max_inline < 0)
        l->max_inline = 0;
    if (l->max_inline < inline_want)
        RAIL_INFO(NCCL_NET,
                  "%s: QPs take %d bytes of inline data, not the %d asked for "
                  "(NCCL_RAIL_EAGER_INLINE): larger eager writes are not inline",
                  dev->name, l->max_inline, inline_want);
    l->rq_depth = s.rq;
    return 0;
}

void rail_comm_destroy_links(struct rail_comm *c)
{
    for (int r = 0; r < RAIL_MAX_RAILS; r++) {
        struct rail_link *l = &c->link[r];
        if (l->qps) {
            for (int q = 0; q < c->nqps; q++)
                rail_verbs_destroy_qp(l->qps[q].qp);
            free(l->qps);
            l->qps = NULL;
        }
        rail_verbs_destroy_cq(l->cq);
        l->cq = NULL;
        for (int k = 0; k < 3; k++) {
            rail_verbs_dereg_mr(l->mr[k]);
            l->mr[k] = NULL;
        }
    }
}

int rail_region_alloc(size_t size, uint8_t **out)
{
    size_t rounded = (size + 4095) & ~(size_t)4095;
    void *p = aligned_alloc(4096, rounded);
    if (!p)
        return -ENOMEM;
    long page = sysconf(_SC_PAGESIZE); /* from the auxiliary vector: no system call */
    /* The region is whole pages of malloc's private anonymous memory: MADV_DONTNEED zeroes them
     * without touching them, so a page costs a fault only when first used (a fresh heap page
     * costs nothing now; memset faulted in every page of every region at connect, ~40 % of the
     * setup CPU, issue 27). Pages of another size, or a failed madvise: memset. This assumes
     * what every malloc does, private memory: on a shared mapping MADV_DONTNEED would not zero. */
    if (page <= 0 || (uintptr_t)p % (size_t)page != 0 || rounded % (size_t)page != 0 ||
        madvise(p, rounded, MADV_DONTNEED) != 0)
        memset(p, 0, rounded);
    *out = p;
    return 0;
}

int rail_region_alloc_reg(const struct rail_comm *c, size_t size, uint8_t **out, struct ibv_mr **mr,
                          char *err, size_t errlen)
{
    int rc = rail_region_alloc(size, out);
    for (int r = 0; rc == 0 && r < c->nrails; r++) {
        struct rail_dev *d = c->link[r].dev;
        rc = rail_verbs_reg_mr(d->pd, *out, size, IBV_ACCESS_LOCAL_WRITE, &mr[r], d->name, err,
                               errlen);
    }
    if (rc < 0 && *out) {
        rail_region_free_reg(*out, mr);
        *out = NULL;
    }
    return rc;
}

void rail_region_free_reg(uint8_t *p, struct ibv_mr **mr)
{
    for (int r = 0; r < RAIL_MAX_RAILS; r++) {
        rail_verbs_dereg_mr(mr[r]);
        mr[r] = NULL;
    }
    free(p);
}

int rail_region_reg(struct rail_comm *c, int slot, void *p, size_t size, bool remote, char *err,
                    size_t errlen)
{
    int access = IBV_ACCESS_LOCAL_WRITE | (remote ? IBV_ACCESS_REMOTE_WRITE : 0);
    for (int r = 0; r < c->nrails; r++) {
        struct rail_link *l = &c->link[r];
        int rc =
            rail_verbs_reg_mr(l->dev->pd, p, size, access, &l->mr[slot], l->dev->name, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void rail_link_describe(const struct rail_comm *c, int rail, struct rail_meta_rail *mr)
{
    const struct rail_link *l = &c->link[rail];
    const struct rail_dev *d = l->dev;
    mr->link_layer = rail_wire_ll(d->link_layer);
    mr->mtu = (int)d->mtu;
    mr->port = d->port;
    mr->gid_index = d->gid_index;
    mr->lid = d->lid;
    memcpy(mr->gid, d->gid.raw, 16);
    for (int q = 0; q < c->nqps; q++)
        mr->qpn[q] = l->qps[q].qp->qp_num;
}

int rail_link_check_peer(const struct rail_comm *c, const struct rail_meta *peer, char *err,
                         size_t errlen)
{
    if (peer->nrails > c->nrails || peer->nqps != c->nqps) {
        snprintf(err, errlen, "peer has %d rail(s) x %d QP(s), this end %d x %d", peer->nrails,
                 peer->nqps, c->nrails, c->nqps);
        return -EPROTO;
    }
    for (int r = 0; r < peer->nrails; r++) {
        const struct rail_dev *d = c->link[r].dev;
        if (peer->rails[r].link_layer != rail_wire_ll(d->link_layer)) {
            snprintf(err, errlen, "rail %d: peer link layer %s, local %s is %s", r,
                     peer->rails[r].link_layer == RAIL_LL_ETH ? "RoCE" : "InfiniBand", d->name,
                     d->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
            return -EPROTO;
        }
    }
    return 0;
}

/* The QP's pkey index and traffic class as the device holds them (ibv_query_qp), against what
 * NCCL_IB_PKEY(_VALUE) and NCCL_IB_TC / NCCL_IB_FIFO_TC asked: one INFO line per port and side,
 * one WARN per port and side when the device holds other values. */
static void link_readback(const struct rail_comm *c, struct rail_dev *d, struct ibv_qp *qp,
                          const struct rail_qp_path *path)
{
    char got[160];
    bool recv = rail_comm_is_recv(c);
    bool roce = d->link_layer == IBV_LINK_LAYER_ETHERNET;
    int rc = rail_verbs_qp_readback(qp, path, roce, got, sizeof(got));
    unsigned bit = (recv ? 1u : 2u) << (rc == 1 ? 2 : 0);
    if (atomic_fetch_or(&d->readback_logged, bit) & bit)
        return;
    const char *side = recv ? "receiver" : "sender";
    const char *tcvar = recv && roce && rail_param_int(RAIL_PARAM_IB_FIFO_TC) >= 0
                            ? "NCCL_IB_FIFO_TC"
                            : "NCCL_IB_TC";
    const char *pkvar =
        rail_param_int(RAIL_PARAM_IB_PKEY_VALUE) >= 0 ? "NCCL_IB_PKEY_VALUE" : "NCCL_IB_PKEY";
    if (rc == 1)
        RAIL_WARN(NCCL_NET,
                  "%s: %s QP %#x read back (ibv_query_qp): %s; asked pkey index %d (%s), "
                  "traffic class %d (%s): the device holds other values",
                  d->name, side, qp->qp_num, got, path->pkey_index, pkvar, path->tc, tcvar);
    else if (rc == 0)
        RAIL_INFO(NCCL_NET, "%s: %s QP %#x read back (ibv_query_qp): %s, as asked (%s%s%s)",
                  d->name, side, qp->qp_num, got, pkvar, roce ? ", " : "", roce ? tcvar : "");
    else
        RAIL_INFO(NCCL_NET, "%s: %s QP %#x attributes not read back: %s", d->name, side, qp->qp_num,
                  got);
}

int rail_link_connect_one(struct rail_comm *c, int r, const struct rail_meta_rail *pr, int sl,
                          int tc, char *err, size_t errlen)
{
    struct rail_link *l = &c->link[r];
    struct rail_qp_path path = {
        .port = l->dev->port,
        .gid_index = l->dev->gid_index,
        .sl = sl,
        .tc = rail_qp_tc(rail_comm_is_recv(c), l->dev->link_layer == IBV_LINK_LAYER_ETHERNET,
                         rail_param_int(RAIL_PARAM_IB_FIFO_TC), tc),
        .pkey_index = l->dev->pkey_index,
        .timeout = (int)rail_param_int(RAIL_PARAM_IB_TIMEOUT),
        .retry_cnt = (int)rail_param_int(RAIL_PARAM_IB_RETRY_CNT),
    };
    struct rail_qp_remote remote = {
        .link_layer = l->dev->link_layer,
        .lid = (uint16_t)pr->lid,
        .mtu = (enum ibv_mtu)(pr->mtu < (int)l->dev->mtu ? pr->mtu : (int)l->dev->mtu),
    };
    memcpy(remote.gid.raw, pr->gid, 16);
    for (int q = 0; q < c->nqps; q++) {
        remote.qpn = pr->qpn[q];
        int rc = rail_verbs_qp_connect(l->qps[q].qp, &path, &remote, l->dev->name, err, errlen);
        if (rc < 0)
            return rc;
        if (q == 0)
            link_readback(c, l->dev, l->qps[q].qp, &path);
    }
    l->sl = sl;
    l->tc = tc;
    return 0;
}

int rail_link_connect(struct rail_comm *c, const struct rail_meta *peer, int sl, int tc, char *err,
                      size_t errlen)
{
    for (int r = 0; r < c->nrails; r++) {
        int rc = rail_link_connect_one(c, r, &peer->rails[r], sl, tc, err, errlen);
        if (rc < 0)
            return rc;
        c->link[r].peer_rkey1 = peer->rails[r].rkey1;
        c->link[r].peer_rkey2 = peer->rails[r].rkey2;
        rail_rejoin_init_up(&c->link[r].rj);
    }
    c->nup = c->nrails;
    return 0;
}

/* ---- teardown ---- */

void rail_comm_free(struct rail_comm *c)
{
    if (!c)
        return;
    if (c->ops->quiesce) /* no other comm's progress may be polling it */
        c->ops->quiesce(c);
    rail_stats_close(c->stats);
    c->stats = NULL;
    rail_ctl_free(c);
    rail_comm_destroy_links(c);
    c->ops->release(c);
    rail_oob_close(&c->fd);
    c->ops = NULL;
    c->magic = RAIL_DEAD_MAGIC;
    free(c);
}
