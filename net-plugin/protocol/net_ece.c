/* SPDX-License-Identifier: Apache-2.0 */
/* ECE negotiation of a connection's QPs (net_ece.h). */
#include "protocol/net_ece.h"

#include <errno.h>
#include <string.h>

#include "log.h"
#include "params.h"
#include "transport/net_verbs.h"

/* What one side of one device saw, each logged once (bits of rail_dev.ece_logged). */
enum ece_outcome {
    ECE_NEGOTIATED,
    ECE_UNSUPPORTED,
    ECE_DISABLED,
    ECE_OLD_PEER,
    ECE_PEER_NONE,
    ECE_SET_FAILED, /* the WARN */
    ECE_NOUTCOMES
};

static bool first_time(const struct rail_comm *c, struct rail_dev *d, enum ece_outcome o)
{
    unsigned bit = 1u << ((rail_comm_is_recv(c) ? ECE_NOUTCOMES : 0) + (unsigned)o);
    return !(atomic_fetch_or(&d->ece_logged, bit) & bit);
}

static const char *side(const struct rail_comm *c)
{
    return rail_comm_is_recv(c) ? "receiver" : "sender";
}

static int count_qps(const struct rail_wire_ece *e, int nqps)
{
    int n = 0;
    for (int q = 0; q < nqps; q++)
        n += rail_ece_has(e, q);
    return n;
}

/* The one WARN of a device and side: `call` failed otherwise than "not supported". */
static void call_failed(const struct rail_comm *c, struct rail_dev *d, const char *call,
                        struct ibv_qp *qp, int rc, const char *what)
{
    if (first_time(c, d, ECE_SET_FAILED))
        RAIL_WARN(NCCL_NET,
                  "%s: %s on %s QP %#x failed (%s): %s connects without ECE "
                  "(NCCL_IB_ECE_ENABLE=0 avoids the attempt)",
                  d->name, call, side(c), qp->qp_num, strerror(-rc), what);
}

void rail_ece_offer(struct rail_comm *c, int rail, bool peer_ece, struct rail_wire_ece *out)
{
    struct rail_link *l = &c->link[rail];
    struct rail_dev *d = l->dev;
    memset(out, 0, sizeof(*out));
    if (!rail_param_bool(RAIL_PARAM_IB_ECE_ENABLE)) {
        if (first_time(c, d, ECE_DISABLED))
            RAIL_INFO(NCCL_NET, "%s: ECE disabled (NCCL_IB_ECE_ENABLE=0): QPs connect without it",
                      d->name);
        return;
    }
    if (!peer_ece) {
        if (first_time(c, d, ECE_OLD_PEER))
            RAIL_INFO(NCCL_NET,
                      "%s: ECE not negotiated: the peer's plugin predates it (its handle takes "
                      "metadata version %d, ECE needs %d)",
                      d->name, RAIL_WIRE_VERSION, RAIL_WIRE_VERSION_ECE);
        return;
    }
    for (int q = 0; q < c->nqps; q++) {
        struct ibv_ece e;
        struct ibv_qp *qp = l->qps[q].qp;
        int rc = rail_verbs_query_ece(qp, &e);
        if (rc < 0 && rc != -EOPNOTSUPP) {
            call_failed(c, d, "ibv_query_ece", qp, rc, "the connection");
            memset(out, 0, sizeof(*out));
            return;
        }
        if (rc < 0) {
            if (first_time(c, d, ECE_UNSUPPORTED))
                RAIL_INFO(NCCL_NET,
                          "%s: ECE not supported by provider %s (ibv_query_ece on QP %#x: %s): "
                          "QPs connect without it",
                          d->name, rail_ibv->provider, qp->qp_num, strerror(-rc));
            memset(out, 0, sizeof(*out));
            return;
        }
        if (q == 0) {
            out->vendor_id = e.vendor_id;
            out->options = e.options;
            out->comp_mask = e.comp_mask;
        }
        /* The QPs of one port report the same; one that does not is left out. */
        if (e.vendor_id == out->vendor_id && e.options == out->options &&
            e.comp_mask == out->comp_mask)
            rail_ece_mark(out, q);
    }
}

void rail_ece_accept(struct rail_comm *c, int rail, bool peer_ece,
                     const struct rail_wire_ece *offer, struct rail_wire_ece *out)
{
    struct rail_link *l = &c->link[rail];
    struct rail_dev *d = l->dev;
    int offered = count_qps(offer, c->nqps);
    memset(out, 0, sizeof(*out));
    if (!offered) {
        if (first_time(c, d, ECE_PEER_NONE))
            RAIL_INFO(NCCL_NET, "%s: ECE not negotiated: the peer offers none (%s)", d->name,
                      peer_ece ? "NCCL_IB_ECE_ENABLE=0 there, or its provider has no ECE"
                               : "its plugin predates ECE: metadata version 4");
        return;
    }
    struct ibv_ece want = {
        .vendor_id = offer->vendor_id, .options = offer->options, .comp_mask = offer->comp_mask};
    for (int q = 0; q < c->nqps; q++) {
        if (!rail_ece_has(offer, q))
            continue;
        struct ibv_qp *qp = l->qps[q].qp;
        struct ibv_ece got;
        const char *call = "ibv_set_ece";
        int rc = rail_verbs_set_ece(qp, &want);
        if (rc == 0) {
            call = "ibv_query_ece";
            rc = rail_verbs_query_ece(qp, &got);
        }
        if (rc == -EOPNOTSUPP) {
            if (first_time(c, d, ECE_UNSUPPORTED))
                RAIL_INFO(NCCL_NET,
                          "%s: ECE not supported by provider %s (%s on QP %#x: %s): the peer's "
                          "offer is declined, QPs connect without it",
                          d->name, rail_ibv->provider, call, qp->qp_num, strerror(-rc));
            memset(out, 0, sizeof(*out));
            return;
        }
        if (rc < 0) {
            call_failed(c, d, call, qp, rc, "that QP pair");
            continue;
        }
        if (count_qps(out, q) == 0) {
            out->vendor_id = got.vendor_id;
            out->options = got.options;
            out->comp_mask = got.comp_mask;
        }
        if (got.vendor_id == out->vendor_id && got.options == out->options &&
            got.comp_mask == out->comp_mask)
            rail_ece_mark(out, q);
    }
    int n = count_qps(out, c->nqps);
    if (n && first_time(c, d, ECE_NEGOTIATED))
        RAIL_INFO(NCCL_NET,
                  "%s: ECE negotiated (receiver): vendor %#x options %#x accepted of the peer's "
                  "%#x, on %d of %d QPs",
                  d->name, out->vendor_id, out->options, offer->options, n, c->nqps);
}

void rail_ece_apply(struct rail_comm *c, int rail, bool peer_ece,
                    const struct rail_wire_ece *offered, const struct rail_wire_ece *accepted)
{
    struct rail_link *l = &c->link[rail];
    struct rail_dev *d = l->dev;
    if (!count_qps(offered, c->nqps))
        return; /* disabled, unsupported or an old peer: said at the offer */
    struct ibv_ece want = {.vendor_id = accepted->vendor_id,
                           .options = accepted->options,
                           .comp_mask = accepted->comp_mask};
    int n = 0;
    for (int q = 0; q < c->nqps; q++) {
        if (!rail_ece_has(offered, q) || !rail_ece_has(accepted, q))
            continue;
        int rc = rail_verbs_set_ece(l->qps[q].qp, &want);
        if (rc < 0)
            call_failed(c, d, "ibv_set_ece", l->qps[q].qp, rc, "that QP pair");
        else
            n++;
    }
    if (n && first_time(c, d, ECE_NEGOTIATED))
        RAIL_INFO(NCCL_NET,
                  "%s: ECE negotiated (sender): vendor %#x options %#x (offered %#x), on %d of %d "
                  "QPs",
                  d->name, want.vendor_id, want.options, offered->options, n, c->nqps);
    else if (!n && peer_ece && first_time(c, d, ECE_PEER_NONE))
        RAIL_INFO(NCCL_NET,
                  "%s: ECE not negotiated: the peer accepted none (its provider has no ECE, or "
                  "setting it failed there)",
                  d->name);
}
