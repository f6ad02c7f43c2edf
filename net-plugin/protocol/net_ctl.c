/* SPDX-License-Identifier: Apache-2.0 */
/* Out-of-band control frames: they travel on the comm's TCP socket, the one that also tells a
 * dead peer (net_health.c). */
#include "protocol/net_ctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "transport/net_oob.h"

#define CTL_TXQ 8192

struct rail_ctl {
    struct rail_oob_rx rx;
    uint8_t txq[CTL_TXQ];
    size_t txlen;
    bool dead; /* the socket failed: control frames are off, the health check reports the peer */
};

int rail_ctl_init(struct rail_comm *c)
{
    if (!c->failover || c->ctl)
        return 0;
    c->ctl = calloc(1, sizeof(*c->ctl));
    return c->ctl ? 0 : -ENOMEM;
}

void rail_ctl_free(struct rail_comm *c)
{
    free(c->ctl);
    c->ctl = NULL;
}

void rail_ctl_flush(struct rail_comm *c)
{
    struct rail_ctl *k = c->ctl;
    while (k && !k->dead && k->txlen) {
        ssize_t n = send(c->fd, k->txq, k->txlen, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                k->dead = true;
            return;
        }
        memmove(k->txq, k->txq + n, k->txlen - (size_t)n);
        k->txlen -= (size_t)n;
    }
}

void rail_ctl_send(struct rail_comm *c, int kind, int rail, const struct rail_meta_rail *desc)
{
    struct rail_ctl *k = c->ctl;
    struct rail_meta m;
    if (!k || k->dead)
        return;
    memset(&m, 0, sizeof(m));
    m.nonce = (uint64_t)kind << 32 | (uint64_t)rail;
    m.nrails = 1;
    m.nqps = c->nqps;
    m.sl = c->link[rail].sl;
    m.tc = c->link[rail].tc;
    m.addr1 = 1;
    m.rails[0] = *desc;
    int n = rail_meta_encode(RAIL_FRAME_CTL, &m, k->txq + k->txlen, CTL_TXQ - k->txlen);
    if (n < 0) {
        RAIL_WARN(NCCL_NET, "%s comm %p: control frame for rail %d dropped (queue full)",
                  rail_comm_kind(c), (void *)c, rail);
        return;
    }
    k->txlen += (size_t)n;
    rail_ctl_flush(c);
}

int rail_ctl_next(struct rail_comm *c, struct rail_meta *m, char *err, size_t errlen)
{
    struct rail_ctl *k = c->ctl;
    char why[200] = "";
    if (k->dead)
        return 0;
    int rc = rail_oob_recv(c->fd, &k->rx, RAIL_FRAME_CTL, why, sizeof(why));
    if (rc == 0)
        return 0;
    if (rc < 0) {
        k->dead = true;
        if (rc != -EPROTO) /* a closed socket: the peer-health check (it has a grace period) */
            return 0;
        snprintf(err, errlen, "control channel: %s", why);
        return rc;
    }
    rc = rail_meta_decode(RAIL_FRAME_CTL, k->rx.buf + RAIL_FRAME_HDR, k->rx.body_len,
                          k->rx.checksum, m, why, sizeof(why));
    memset(&k->rx, 0, sizeof(k->rx));
    if (rc < 0) {
        snprintf(err, errlen, "control frame: %s", why);
        return rc;
    }
    return 1;
}
