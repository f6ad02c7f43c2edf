/* SPDX-License-Identifier: Apache-2.0 */
/* Older ABI tables and environment handling: a transfer through ncclNetPlugin_v8 (int sizes,
 * process-wide init), a decline when NCCL_IB_HCA filters out every port, and the out-of-band
 * address following NCCL_SOCKET_IFNAME. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "it_scenarios.h"
#include "wire/net_wire.h"

static const int k_v8_sizes[2] = {100, 70000};

static const ncclNet_v8_t *v8_table(struct it_side *s)
{
    const ncclNet_v8_t *v8 = dlsym(s->p->dl, "ncclNetPlugin_v8");
    if (!v8 || v8->init(NULL) != ncclSuccess)
        return NULL;
    return v8;
}

static int v8_wait(const ncclNet_v8_t *v8, void *req, int *sizes)
{
    double end = it_now() + IT_DEADLINE_S;
    int done = 0;
    while (!done) {
        if (v8->test(req, &done, sizes) != ncclSuccess)
            return it_fail("v8 test failed");
        if (!done && it_now() > end)
            return it_fail("v8 test timed out");
    }
    return 0;
}

int it_v8_recv(struct it_side *s)
{
    const ncclNet_v8_t *v8 = v8_table(s);
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *rc = NULL, *req = NULL, *data[2], *mh[2];
    int sizes[2], tags[2] = {4, 6}, got[64] = {0};
    if (!v8)
        return it_fail("ncclNetPlugin_v8 missing or init failed");
    if (v8->listen(s->dev, handle, &lc) != ncclSuccess || it_ctl_send(s->ctl, handle, 128))
        return it_fail("v8 listen");
    double end = it_now() + IT_DEADLINE_S;
    while (!rc)
        if (v8->accept(lc, &rc, NULL) != ncclSuccess || it_now() > end)
            return it_fail("v8 accept");
    for (int i = 0; i < 2; i++) {
        sizes[i] = k_v8_sizes[i] + 50; /* larger than the message */
        data[i] = calloc(1, (size_t)sizes[i]);
        if (v8->regMr(rc, data[i], sizes[i], NCCL_PTR_HOST, &mh[i]) != ncclSuccess)
            return it_fail("v8 regMr");
    }
    end = it_now() + IT_DEADLINE_S;
    while (!req)
        if (v8->irecv(rc, 2, data, sizes, tags, mh, &req) != ncclSuccess || it_now() > end)
            return it_fail("v8 irecv");
    if (v8_wait(v8, req, got))
        return 1;
    for (int i = 0; i < 2; i++) {
        if (got[i] != k_v8_sizes[i] || it_check(data[i], (size_t)got[i], 60 + (uint64_t)i) >= 0)
            return it_fail("v8 entry %d: size %d, expected %d, or wrong bytes", i, got[i],
                           k_v8_sizes[i]);
        v8->deregMr(rc, mh[i]);
        free(data[i]);
    }
    return (v8->closeRecv(rc) != ncclSuccess) | (v8->closeListen(lc) != ncclSuccess);
}

int it_v8_send(struct it_side *s)
{
    const ncclNet_v8_t *v8 = v8_table(s);
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *sc = NULL, *req[2] = {0}, *data[2], *mh[2];
    if (!v8)
        return it_fail("ncclNetPlugin_v8 missing or init failed");
    if (it_ctl_recv(s->ctl, handle, sizeof(handle)))
        return 1;
    double end = it_now() + IT_DEADLINE_S;
    while (!sc)
        if (v8->connect(s->dev, handle, &sc, NULL) != ncclSuccess || it_now() > end)
            return it_fail("v8 connect");
    for (int i = 0; i < 2; i++) {
        data[i] = malloc((size_t)k_v8_sizes[i]);
        it_fill(data[i], (size_t)k_v8_sizes[i], 60 + (uint64_t)i);
        if (v8->regMr(sc, data[i], k_v8_sizes[i], NCCL_PTR_HOST, &mh[i]) != ncclSuccess)
            return it_fail("v8 regMr");
    }
    end = it_now() + IT_DEADLINE_S;
    for (int i = 1; i >= 0; i--) { /* tag 6 first */
        while (!req[i])
            if (v8->isend(sc, data[i], k_v8_sizes[i], i ? 6 : 4, mh[i], &req[i]) != ncclSuccess ||
                it_now() > end)
                return it_fail("v8 isend %d", i);
    }
    for (int i = 0; i < 2; i++) {
        int got = -1;
        if (v8_wait(v8, req[i], &got) || got != k_v8_sizes[i])
            return it_fail("v8 send %d completed with %d", i, got);
        v8->deregMr(sc, mh[i]);
        free(data[i]);
    }
    if (v8->isend(sc, data[0], -1, 4, mh[0], &req[0]) == ncclSuccess)
        return it_fail("v8 isend with a negative size was accepted");
    return v8->closeSend(sc) != ncclSuccess;
}

/* Runs with NCCL_SOCKET_IFNAME==veth3: the listen handle must carry veth3's address. */
int it_ifname_recv(struct it_side *s)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE], err[128], text[64];
    struct rail_handle h;
    void *lc = NULL, *rc = NULL;
    const char *want = getenv("FABRIC_A3");
    if (s->p->net->listen(s->p->ctx, s->dev, handle, &lc) != ncclSuccess)
        return it_fail("listen failed");
    if (rail_handle_decode(handle, &h, err, sizeof(err)) != 0)
        return it_fail("own handle does not decode: %s", err);
    inet_ntop(AF_INET, h.addr, text, sizeof(text));
    fprintf(stderr, "[recv] handle address %s (NCCL_SOCKET_IFNAME=%s)\n", text,
            getenv("NCCL_SOCKET_IFNAME"));
    if (h.family != AF_INET || strcmp(text, want ? want : "10.0.2.2") != 0)
        return it_fail("handle address %s is not veth3's %s", text, want ? want : "10.0.2.2");
    if (it_ctl_send(s->ctl, handle, sizeof(handle)))
        return 1;
    double end = it_now() + IT_DEADLINE_S;
    while (!rc)
        if (s->p->net->accept(lc, &rc, NULL) != ncclSuccess || it_now() > end)
            return it_fail("accept over the veth3 out-of-band address");
    s->p->net->closeListen(lc);
    return s->p->net->closeRecv(rc) != ncclSuccess;
}

int it_ifname_send(struct it_side *s)
{
    void *sc;
    if (it_connect(s->p, s->dev, s->ctl, &sc))
        return 1;
    return s->p->net->closeSend(sc) != ncclSuccess;
}
