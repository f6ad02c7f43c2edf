/* SPDX-License-Identifier: Apache-2.0 */
/* Fault scenarios: closing with requests in flight, a peer killed mid-transfer, garbage handles,
 * a hostile peer speaking the handshake with corrupt metadata, and the versioned tables. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "it_scenarios.h"
#include "wire/net_wire.h"

#define BIG       (16u << 20)
#define BOUNDED_S 20.0 /* an error must be reported within this time */
#define CLOSE_MAX 2.0  /* close must not block longer than this */

int it_idle(struct it_side *s)
{
    (void)s;
    return 0;
}

/* ---- close with requests in flight ---- */

int it_close_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b[8];
    void *rc, *req[8];
    if (it_accept(p, s->dev, s->ctl, NULL, &rc))
        return 1;
    for (int i = 0; i < 8; i++) {
        void *data;
        size_t cap = BIG;
        int tag = 1;
        if (it_buf_alloc(p, rc, &b[i], BIG))
            return 1;
        data = b[i].p;
        if (it_irecv(p, rc, 1, &data, &cap, &tag, &b[i].mh, &req[i]))
            return 1;
    }
    if (it_ctl_signal(s->ctl, 'P'))
        return 1;
    for (int i = 0; i < 2; i++) {
        int sz[64];
        if (it_wait(p, req[i], sz) || sz[0] != 4096 || it_check(b[i].p, 4096, 40 + i) >= 0)
            return it_fail("message %d before the close", i);
    }
    if (it_ctl_wait(s->ctl, 'C'))
        return 1;
    /* The sender closed with three 16 MiB sends in flight: this receive ends, one way or the
     * other, in bounded time. */
    double t0 = it_now();
    int done = 0, sz[64];
    ncclResult_t r = ncclSuccess;
    while (!done && r == ncclSuccess && it_now() - t0 < BOUNDED_S)
        r = p->net->test(req[2], &done, sz);
    if (!done && r == ncclSuccess)
        return it_fail("receive still pending %.0f s after the sender closed", BOUNDED_S);
    fprintf(stderr, "[recv] pending receive after the sender's close: %s after %.2f s\n",
            done ? "completed" : "error", it_now() - t0);
    t0 = it_now();
    if (p->net->closeRecv(rc) != ncclSuccess)
        return it_fail("closeRecv failed");
    if (it_now() - t0 > CLOSE_MAX)
        return it_fail("closeRecv with requests in flight took %.2f s", it_now() - t0);
    for (int i = 0; i < 8; i++)
        it_buf_free(p, NULL, &b[i]);
    return 0;
}

int it_close_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf small[2], big;
    void *sc, *req;
    if (it_connect(p, s->dev, s->ctl, &sc) || it_ctl_wait(s->ctl, 'P'))
        return 1;
    for (int i = 0; i < 2; i++) {
        int sz[1];
        if (it_buf_alloc(p, sc, &small[i], 4096))
            return 1;
        it_fill(small[i].p, 4096, 40 + (uint64_t)i);
        if (it_isend(p, sc, small[i].p, 4096, 1, small[i].mh, &req) || it_wait(p, req, sz))
            return it_fail("message %d before the close", i);
    }
    if (it_buf_alloc(p, sc, &big, BIG))
        return 1;
    for (int i = 0; i < 3; i++)
        if (it_isend(p, sc, big.p, BIG, 1, big.mh, &req))
            return 1;
    double t0 = it_now();
    if (p->net->closeSend(sc) != ncclSuccess)
        return it_fail("closeSend failed");
    if (it_now() - t0 > CLOSE_MAX)
        return it_fail("closeSend with requests in flight took %.2f s", it_now() - t0);
    it_buf_free(p, NULL, &big);
    return it_ctl_signal(s->ctl, 'C');
}

/* ---- a peer killed mid-transfer ---- */

/* test() on req must give an error in bounded time (completion is accepted when allow_done). */
static int expect_error(struct it_plugin *p, void *req, int allow_done, const char *what)
{
    double t0 = it_now();
    int done = 0, sz[64];
    ncclResult_t r = ncclSuccess;
    while (!done && r == ncclSuccess && it_now() - t0 < BOUNDED_S)
        r = p->net->test(req, &done, sz);
    if (r != ncclSuccess) {
        fprintf(stderr, "[%s] %s: error %d after %.2f s (expected)\n", g_it_role, what, r,
                it_now() - t0);
        return 0;
    }
    if (done && allow_done)
        return 0;
    return it_fail("%s: %s", what, done ? "completed although the peer died" : "hangs");
}

int it_killsend_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *rc, *req, *data;
    size_t cap = BIG;
    int tag = 5;
    if (it_accept(p, s->dev, s->ctl, NULL, &rc) || it_buf_alloc(p, rc, &b, BIG))
        return 1;
    data = b.p;
    if (it_irecv(p, rc, 1, &data, &cap, &tag, &b.mh, &req) || it_ctl_signal(s->ctl, 'P'))
        return 1;
    uint8_t k;
    (void)it_ctl_recv(s->ctl, &k, 1); /* 'K', or EOF once the sender is dead */
    if (expect_error(p, req, 1, "receive in flight when the sender was killed"))
        return 1;
    /* A new receive on the dead connection: irecv or test must fail in bounded time. */
    req = NULL;
    ncclResult_t r = p->net->irecv(rc, 1, &data, &cap, &tag, &b.mh, NULL, &req);
    if (r == ncclSuccess && req && expect_error(p, req, 0, "receive posted after the kill"))
        return 1;
    if (r == ncclSuccess && !req) {
        double t0 = it_now();
        while (r == ncclSuccess && it_now() - t0 < BOUNDED_S)
            r = p->net->irecv(rc, 1, &data, &cap, &tag, &b.mh, NULL, &req);
        if (r == ncclSuccess)
            return it_fail("irecv keeps succeeding on a dead connection");
    }
    return p->net->closeRecv(rc) != ncclSuccess;
}

int it_killsend_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *sc, *req;
    if (it_connect(p, s->dev, s->ctl, &sc) || it_buf_alloc(p, sc, &b, BIG) ||
        it_ctl_wait(s->ctl, 'P'))
        return 1;
    it_fill(b.p, BIG, 77);
    if (it_isend(p, sc, b.p, BIG, 5, b.mh, &req))
        return 1;
    it_ctl_signal(s->ctl, 'K');
    raise(SIGKILL);
    return 1;
}

int it_killrecv_recv(struct it_side *s)
{
    void *rc;
    if (it_accept(s->p, s->dev, s->ctl, NULL, &rc))
        return 1;
    it_ctl_signal(s->ctl, 'K');
    raise(SIGKILL);
    return 1;
}

int it_killrecv_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *sc, *req = NULL;
    if (it_connect(p, s->dev, s->ctl, &sc) || it_buf_alloc(p, sc, &b, 1 << 20))
        return 1;
    uint8_t k;
    (void)it_ctl_recv(s->ctl, &k, 1);
    usleep(100000);
    /* Nobody will ever post a receive: isend must fail rather than return NULL forever. */
    double t0 = it_now();
    ncclResult_t r = ncclSuccess;
    while (r == ncclSuccess && !req && it_now() - t0 < BOUNDED_S)
        r = p->net->isend(sc, b.p, 1 << 20, 0, b.mh, NULL, &req);
    if (r == ncclSuccess)
        return it_fail("isend to a killed receiver %s", req ? "was accepted" : "never failed");
    fprintf(stderr, "[send] isend to a killed receiver: error %d after %.2f s (expected)\n", r,
            it_now() - t0);
    /* A small (eager) send fails too. */
    r = p->net->isend(sc, b.p, 64, 0, b.mh, NULL, &req);
    if (r == ncclSuccess && req && expect_error(p, req, 0, "eager send to a killed receiver"))
        return 1;
    return p->net->closeSend(sc) != ncclSuccess;
}

/* ---- garbage handles ---- */

int it_garbage_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    char h[NCCL_NET_HANDLE_MAXSIZE], good[NCCL_NET_HANDLE_MAXSIZE];
    void *sc, *lc;
    int r;

    memset(h, 0, sizeof(h));
    if ((r = it_connect_handle(p, s->dev, h, &sc, BOUNDED_S)) <= 0)
        return it_fail("all-zero handle: connect returned %d", r);
    srand(3);
    for (int i = 0; i < 40; i++) {
        for (size_t k = 0; k < sizeof(h); k++)
            h[k] = (char)rand();
        if (i % 2)
            memcpy(h, "RAIL\x01\x00", 6);
        if ((r = it_connect_handle(p, s->dev, h, &sc, BOUNDED_S)) <= 0)
            return it_fail("random handle %d: connect returned %d", i, r);
    }
    /* A real handle whose listener is gone: refused in bounded time. */
    if (p->net->listen(p->ctx, s->dev, good, &lc) != ncclSuccess)
        return it_fail("listen failed");
    p->net->closeListen(lc);
    double t0 = it_now();
    if ((r = it_connect_handle(p, s->dev, good, &sc, BOUNDED_S)) <= 0)
        return it_fail("handle of a closed listener: connect returned %d", r);
    fprintf(stderr, "[send] closed listener refused after %.2f s\n", it_now() - t0);
    /* A real handle with a forged connect-progress cookie. */
    if (p->net->listen(p->ctx, s->dev, good, &lc) != ncclSuccess)
        return it_fail("listen failed");
    memcpy(h, good, sizeof(h));
    memset(h + RAIL_HANDLE_STAGE_OFF, 0x5a, 8);
    if ((r = it_connect_handle(p, s->dev, h, &sc, BOUNDED_S)) <= 0)
        return it_fail("forged cookie: connect returned %d", r);
    /* A bad device index. */
    if (p->net->connect(p->ctx, 999, good, &sc, NULL) == ncclSuccess)
        return it_fail("connect on device 999 succeeded");
    p->net->closeListen(lc);
    return 0;
}

/* ---- a hostile peer on the listen socket ---- */

#define NHOSTILE 8

/* Every connection to the listen port that is not the peer (junk, forged or truncated frames,
 * another listener's nonce, a close without a byte, silence) is dropped: accept never fails
 * because of it and never returns a comm for it; the real peer, connecting while a silent and a
 * junk stray still hold their connections open, is accepted at once and its bytes arrive exact. */
static int g_dropped, g_timed_out;

static void count_drops(ncclDebugLogLevel level, const char *msg)
{
    if (level == NCCL_LOG_INFO && strstr(msg, "dropped a connection from")) {
        g_dropped++;
        g_timed_out += strstr(msg, "no handshake within") != NULL;
    }
}

int it_hostile_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc, *rc = NULL;
    g_it_log_hook = count_drops;
    if (p->net->listen(p->ctx, s->dev, handle, &lc) != ncclSuccess)
        return it_fail("listen failed");
    if (it_ctl_send(s->ctl, handle, sizeof(handle)))
        return 1;
    for (int k = 0; k < NHOSTILE; k++) {
        if (it_ctl_signal(s->ctl, 'N'))
            return 1;
        double t0 = it_now();
        int before = g_dropped;
        while (g_dropped == before && it_now() - t0 < BOUNDED_S) {
            ncclResult_t r = p->net->accept(lc, &rc, NULL);
            if (r != ncclSuccess || rc)
                return it_fail("hostile case %d: accept %s", k,
                               rc ? "returned a comm" : "failed: a stray stopped the accept");
        }
        if (g_dropped == before)
            return it_fail("hostile case %d: the connection was never dropped", k);
        fprintf(stderr, "[recv] hostile case %d dropped after %.2f s\n", k, it_now() - t0);
    }
    /* The real peer, behind a silent stray and a junk stray that stay connected. */
    if (it_ctl_signal(s->ctl, 'R'))
        return 1;
    double t0 = it_now();
    ncclResult_t r = ncclSuccess;
    while (r == ncclSuccess && !rc && it_now() - t0 < BOUNDED_S)
        r = p->net->accept(lc, &rc, NULL);
    double took = it_now() - t0;
    if (r != ncclSuccess || !rc)
        return it_fail("the real peer was not accepted (%d) after %.2f s", r, took);
    /* No added delay: the peer was taken while the silent stray was still waiting to be timed
     * out (no wall-clock bound here: a loaded host may be slow, never this slow). */
    if (g_timed_out)
        return it_fail("the real peer waited %.2f s, until a silent stray timed out", took);
    fprintf(stderr, "[recv] real peer accepted in %.3f s beside the strays\n", took);
    struct it_buf b;
    size_t size = 256 * 1024;
    void *data[1], *mhs[1], *req;
    size_t sizes[1] = {size};
    int tags[1] = {9}, got = 0;
    if (it_buf_alloc(p, rc, &b, size))
        return 1;
    data[0] = b.p;
    mhs[0] = b.mh;
    if (it_irecv(p, rc, 1, data, sizes, tags, mhs, &req) || it_wait(p, req, &got))
        return it_fail("receive from the real peer failed");
    long bad = it_check(b.p, size, 41);
    if (got != (int)size || bad >= 0)
        return it_fail("real peer's bytes: %d received, first wrong byte %ld", got, bad);
    it_buf_free(p, rc, &b);
    if (it_ctl_signal(s->ctl, 'D'))
        return 1;
    g_it_log_hook = NULL;
    return p->net->closeRecv(rc) != ncclSuccess || p->net->closeListen(lc) != ncclSuccess;
}

static int raw_connect(const struct rail_handle *h)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(h->port);
    memcpy(&a.sin_addr, h->addr, 4);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        it_fail("raw connect failed");
        return -1;
    }
    return fd;
}

/* A valid sender frame for handle h, then one byte of the body patched (checksum redone). */
static size_t forged_meta(const struct rail_handle *h, uint8_t *buf, size_t cap, long off,
                          uint8_t val, uint64_t nonce_xor)
{
    static struct rail_meta m;
    memset(&m, 0, sizeof(m));
    m.nonce = h->nonce ^ nonce_xor;
    m.nrails = 1;
    m.nqps = 1;
    m.addr1 = 0x10000;
    m.rails[0].link_layer = RAIL_LL_ETH;
    m.rails[0].mtu = 3;
    m.rails[0].port = 1;
    m.rails[0].qpn[0] = 0x99;
    int n = rail_meta_encode(RAIL_FRAME_META_S, &m, buf, cap);
    if (off >= 0) {
        uint8_t *body = buf + RAIL_FRAME_HDR;
        size_t len = (size_t)n - RAIL_FRAME_HDR;
        uint32_t c;
        body[off] = val;
        c = rail_wire_checksum(body, len);
        memcpy(buf + 12, &c, 4); /* little-endian host */
    }
    return (size_t)n;
}

int it_hostile_send(struct it_side *s)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE], err[128];
    struct rail_handle h;
    uint8_t buf[1024];
    if (it_ctl_recv(s->ctl, handle, sizeof(handle)))
        return 1;
    if (rail_handle_decode(handle, &h, err, sizeof(err)) != 0)
        return it_fail("cannot decode the listener's handle: %s", err);
    for (int k = 0; k < NHOSTILE; k++) {
        size_t n = 0;
        if (it_ctl_wait(s->ctl, 'N'))
            return 1;
        switch (k) {
        case 0: /* random bytes */
            for (n = 0; n < 64; n++)
                buf[n] = (uint8_t)(n * 37 + 11);
            break;
        case 1: /* a header announcing a 1 GiB body */
            n = forged_meta(&h, buf, sizeof(buf), -1, 0, 0);
            buf[8] = 0, buf[9] = 0, buf[10] = 0, buf[11] = 0x40;
            break;
        case 2: /* 200 rails */
            n = forged_meta(&h, buf, sizeof(buf), 8, 200, 0);
            break;
        case 3: /* QP number 1 */
            n = forged_meta(&h, buf, sizeof(buf), 40 + 32, 1, 0);
            break;
        case 4: /* another listener's nonce */
            n = forged_meta(&h, buf, sizeof(buf), -1, 0, 0xff);
            break;
        case 5: /* truncated frame, then the connection closes */
            n = forged_meta(&h, buf, sizeof(buf), -1, 0, 0) / 2;
            break;
        case 6: /* InfiniBand rail with LID 0 */
            n = forged_meta(&h, buf, sizeof(buf), 40, RAIL_LL_IB, 0);
            break;
        case 7: /* connects and closes without a byte (a port scanner, a health check) */
            break;
        }
        int fd = raw_connect(&h);
        if (fd < 0)
            return 1;
        if (n && write(fd, buf, n) != (ssize_t)n)
            return it_fail("raw write failed");
        usleep(300000);
        close(fd);
    }
    /* The real connect, while a silent stray and a junk stray hold their connections. */
    if (it_ctl_wait(s->ctl, 'R'))
        return 1;
    int silent = raw_connect(&h), junk = raw_connect(&h);
    if (silent < 0 || junk < 0)
        return 1;
    memset(buf, 0xa5, 64);
    if (write(junk, buf, 64) != 64)
        return it_fail("raw write failed");
    void *sc = NULL;
    int r = it_connect_handle(s->p, s->dev, handle, &sc, BOUNDED_S);
    if (r != 0 || !sc)
        return it_fail("the real connect failed (%d) beside the strays", r);
    struct it_buf b;
    size_t size = 256 * 1024;
    void *req;
    if (it_buf_alloc(s->p, sc, &b, size))
        return 1;
    it_fill(b.p, size, 41);
    if (it_isend(s->p, sc, b.p, size, 9, b.mh, &req) || it_wait(s->p, req, NULL))
        return it_fail("send to the real peer failed");
    if (it_ctl_wait(s->ctl, 'D'))
        return 1;
    it_buf_free(s->p, sc, &b);
    close(silent);
    close(junk);
    return s->p->net->closeSend(sc) != ncclSuccess;
}

/* ---- every versioned table is complete and consistent ---- */

int it_versions(struct it_side *s)
{
    static const char *names[] = {"ncclNetPlugin_v6", "ncclNetPlugin_v7",  "ncclNetPlugin_v8",
                                  "ncclNetPlugin_v9", "ncclNetPlugin_v10", "ncclNetPlugin_v11",
                                  "ncclNetPlugin_v12"};
    struct it_plugin *p = s->p;
    ncclNetProperties_v11_t p11;
    if (p->net->getProperties(s->dev, &p11) != ncclSuccess)
        return it_fail("v11 getProperties failed");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!dlsym(p->dl, names[i]))
            return it_fail("%s missing", names[i]);
    const ncclNet_v9_t *v9 = dlsym(p->dl, "ncclNetPlugin_v9");
    const ncclNet_v12_t *v12 = dlsym(p->dl, "ncclNetPlugin_v12");
    const ncclNet_v6_t *v6 = dlsym(p->dl, "ncclNetPlugin_v6");
    ncclNetProperties_v9_t p9;
    ncclNetProperties_v12_t p12;
    ncclNetProperties_v6_t p6;
    int nd = 0;
    if (v9->init(NULL) != ncclSuccess || v9->devices(&nd) != ncclSuccess || nd != p->ndev)
        return it_fail("v9 init/devices");
    if (v9->getProperties(s->dev, &p9) != ncclSuccess || strcmp(p9.name, p11.name) ||
        p9.speed != p11.speed || p9.maxRecvs != 8 || p9.vProps.ndevs != 1 ||
        p9.vProps.devs[0] != s->dev)
        return it_fail("v9 properties differ from v11");
    /* No rail or plane given (NCCL_IB_HCA): unknown; a multi-rail device reports what NCCL's
     * fused vNICs do, the merged-plane bit (1 << 14) and bit 0 for the unknown plane. */
    int rail = -1, plane = strchr(p11.name, '+') ? (1 << 14) | 1 : -1;
    /* RAIL_IT_WANT_IDS=RAIL,PLANE: what NCCL_IB_HCA's name:port:rail:plane gives this device. */
    const char *want = getenv("RAIL_IT_WANT_IDS");
    if (want && sscanf(want, "%d,%d", &rail, &plane) != 2)
        return it_fail("RAIL_IT_WANT_IDS='%s' is not RAIL,PLANE", want);
    if (v12->getProperties(s->dev, &p12) != ncclSuccess || strcmp(p12.name, p11.name) ||
        p12.maxP2pBytes != p11.maxP2pBytes || p12.railId != rail || p12.planeId != plane)
        return it_fail("v12 properties: railId %d planeId %d, want %d %d", p12.railId, p12.planeId,
                       rail, plane);
    fprintf(stderr, "[send] %s: railId %d planeId %d (v12)\n", p12.name, p12.railId, p12.planeId);
    if (v6->getProperties(s->dev, &p6) != ncclSuccess || p6.speed != p11.speed ||
        p6.maxRecvs != 8 || p6.guid != p11.guid)
        return it_fail("v6 properties");
    if (p11.ptrSupport != NCCL_PTR_HOST || p11.regIsGlobal != 1 || p11.maxP2pBytes == 0 ||
        p11.netDeviceType != NCCL_NET_DEVICE_HOST || p11.speed <= 0 || p11.port < 1)
        return it_fail("v11 property values");
    fprintf(stderr, "[send] %s: speed %d Mbps, port %d, guid %#llx, maxComms %d, pciPath %s\n",
            p11.name, p11.speed, p11.port, (unsigned long long)p11.guid, p11.maxComms,
            p11.pciPath ? p11.pciPath : "(none)");
    /* finalize tolerates NULL. */
    return p->net->finalize(NULL) != ncclSuccess;
}

/* ---- a completion error: the receive buffer is deregistered behind the sender's back ---- */

int it_rae_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *rc, *req, *data;
    size_t cap = 1 << 20;
    int tag = 3;
    if (it_accept(p, s->dev, s->ctl, NULL, &rc) || it_buf_alloc(p, rc, &b, cap))
        return 1;
    data = b.p;
    if (it_irecv(p, rc, 1, &data, &cap, &tag, &b.mh, &req))
        return 1;
    /* The CTS carrying the key is out; now the key dies. */
    if (p->net->deregMr(rc, b.mh) != ncclSuccess)
        return it_fail("deregMr failed");
    b.mh = NULL;
    if (it_ctl_signal(s->ctl, 'P'))
        return 1;
    int r = expect_error(p, req, 0, "receive whose buffer was deregistered");
    if (it_ctl_signal(s->ctl, 'D') || it_ctl_wait(s->ctl, 'D'))
        return 1;
    double t0 = it_now();
    if (p->net->closeRecv(rc) != ncclSuccess || it_now() - t0 > CLOSE_MAX)
        return it_fail("closeRecv after the error");
    it_buf_free(p, NULL, &b);
    return r;
}

int it_rae_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *sc, *req;
    if (it_connect(p, s->dev, s->ctl, &sc) || it_buf_alloc(p, sc, &b, 1 << 20) ||
        it_ctl_wait(s->ctl, 'P'))
        return 1;
    if (it_isend(p, sc, b.p, 1 << 20, 3, b.mh, &req))
        return 1;
    double t0 = it_now();
    int done = 0, sz[1];
    ncclResult_t r = ncclSuccess;
    while (!done && r == ncclSuccess && it_now() - t0 < BOUNDED_S)
        r = p->net->test(req, &done, sz);
    if (r != ncclRemoteError)
        return it_fail("send into a dead key: test gave %d (done %d), expected ncclRemoteError", r,
                       done);
    fprintf(stderr, "[send] remote access error reported as ncclRemoteError after %.2f s\n",
            it_now() - t0);
    /* The comm stays failed. */
    req = NULL;
    if (p->net->isend(sc, b.p, 64, 3, b.mh, NULL, &req) == ncclSuccess)
        return it_fail("isend on a failed comm succeeded");
    if (it_ctl_wait(s->ctl, 'D') || it_ctl_signal(s->ctl, 'D'))
        return 1;
    t0 = it_now();
    if (p->net->closeSend(sc) != ncclSuccess || it_now() - t0 > CLOSE_MAX)
        return it_fail("closeSend after the error");
    it_buf_free(p, sc, &b);
    return 0;
}
