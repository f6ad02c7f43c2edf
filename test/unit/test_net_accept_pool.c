/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 29, item 1: connections to the listen port that are not the peer are dropped and the
 * accept keeps waiting (net_accept_pool). On a loopback listen socket, with the clock passed in:
 *   - a connection closed without a byte, 64 junk bytes, a header announcing a 1 GiB body, a
 *     frame naming another listener's nonce, a truncated frame: each dropped (one INFO line),
 *     never handed over, never an error;
 *   - a silent connection stays a candidate until RAIL_ACCEPT_STRAY_NS has passed, then goes;
 *     while it is open, the peer's valid frame is handed over at once, whole;
 *   - more candidates than RAIL_ACCEPT_POOL_MAX: the oldest goes, the newest are read. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "protocol/net_accept_pool.h"
#include "wire/net_wire.h"

static int g_drops;

static void capture(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                    const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    (void)flags, (void)file, (void)line;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (level == NCCL_LOG_INFO && strstr(msg, "dropped a connection from"))
        g_drops++;
}

static struct sockaddr_in g_addr;
static char g_peer[64];

static int stray(const void *bytes, size_t n)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&g_addr, sizeof(g_addr)) == 0);
    if (n)
        CHECK(write(fd, bytes, n) == (ssize_t)n);
    return fd;
}

static size_t frame(uint64_t nonce, uint8_t *buf, size_t cap)
{
    static struct rail_meta m;
    memset(&m, 0, sizeof(m));
    m.nonce = nonce;
    m.nrails = 1;
    m.nqps = 1;
    m.addr1 = 0x10000;
    m.rails[0].link_layer = RAIL_LL_ETH;
    m.rails[0].mtu = 3;
    m.rails[0].port = 1;
    m.rails[0].qpn[0] = 0x99;
    int n = rail_meta_encode(RAIL_FRAME_META_S, &m, buf, cap);
    CHECK(n > RAIL_FRAME_HDR);
    return n > 0 ? (size_t)n : 0;
}

/* Steps the pool until `want` drops were logged or a frame came out (bounded). */
static int step_until(struct rail_accept_pool *p, int lfd, uint64_t nonce, uint64_t now, int want,
                      int *fd, struct rail_oob_rx *rx)
{
    char err[256];
    for (int i = 0; i < 400; i++) {
        int rc = rail_accept_pool_step(p, lfd, nonce, "lo0", now, fd, g_peer, sizeof(g_peer), rx,
                                       err, sizeof(err));
        if (rc != 0 || g_drops >= want)
            return rc;
        usleep(2000);
    }
    return 0;
}

int main(void)
{
    const uint64_t nonce = 0x1122334455667788ull, t0 = 1000000000ull;
    socklen_t sl = sizeof(g_addr);
    uint8_t buf[RAIL_OOB_MAX], junk[64];
    struct rail_oob_rx rx;
    int fd = -1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    rail_log_set_logger(capture);
    g_addr.sin_family = AF_INET;
    g_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&g_addr, sizeof(g_addr)) == 0 &&
          listen(lfd, 64) == 0 && getsockname(lfd, (struct sockaddr *)&g_addr, &sl) == 0);
    struct rail_accept_pool *p = rail_accept_pool_new();
    CHECK(p != NULL);

    /* Strays of every kind: each dropped, none handed over. */
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    size_t n = frame(nonce, buf, sizeof(buf));
    int fds[5], k = 0;
    fds[k++] = stray(NULL, 0);
    close(fds[0]);              /* closed without a byte */
    fds[k++] = stray(junk, 64); /* junk */
    uint8_t big[RAIL_FRAME_HDR];
    memcpy(big, buf, sizeof(big));
    big[8] = 0, big[9] = 0, big[10] = 0, big[11] = 0x40; /* a 1 GiB body announced */
    fds[k++] = stray(big, sizeof(big));
    uint8_t other[RAIL_OOB_MAX];
    size_t on = frame(nonce ^ 0xff, other, sizeof(other));
    fds[k++] = stray(other, on);   /* another listener's nonce */
    fds[k++] = stray(buf, n / 2);  /* truncated ... */
    shutdown(fds[k - 1], SHUT_WR); /* ... and closed */
    CHECK_EQ_INT(step_until(p, lfd, nonce, t0, 5, &fd, &rx), 0);
    CHECK_EQ_INT(g_drops, 5);
    CHECK_EQ_INT((int)rail_accept_pool_dropped(p), 5);
    for (int i = 1; i < k; i++)
        close(fds[i]);

    /* A silent candidate stays while the peer's frame is handed over at once, whole. */
    int silent = stray(NULL, 0), peer = stray(buf, n);
    CHECK_EQ_INT(step_until(p, lfd, nonce, t0 + 1, 99, &fd, &rx), 1);
    CHECK(fd >= 0);
    CHECK_EQ_INT((int)rx.off, (int)n);
    CHECK(memcmp(rx.buf, buf, n) == 0);
    CHECK_EQ_INT(g_drops, 5);
    close(fd);
    close(peer);
    /* ... and goes only once RAIL_ACCEPT_STRAY_NS has passed since it was taken. */
    char err[256];
    CHECK_EQ_INT(rail_accept_pool_step(p, lfd, nonce, "lo0", t0 + RAIL_ACCEPT_STRAY_NS - 1, &fd,
                                       g_peer, sizeof(g_peer), &rx, err, sizeof(err)),
                 0);
    CHECK_EQ_INT(g_drops, 5);
    CHECK_EQ_INT(rail_accept_pool_step(p, lfd, nonce, "lo0", t0 + 2 + RAIL_ACCEPT_STRAY_NS, &fd,
                                       g_peer, sizeof(g_peer), &rx, err, sizeof(err)),
                 0);
    CHECK_EQ_INT(g_drops, 6);
    close(silent);

    /* A flood of silent connections: the oldest make room, the peer behind them is read. */
    int flood[RAIL_ACCEPT_POOL_MAX + 4];
    uint64_t t = t0 + 100;
    for (int i = 0; i < RAIL_ACCEPT_POOL_MAX + 4; i++) {
        flood[i] = stray(NULL, 0);
        usleep(1000);
        CHECK_EQ_INT(rail_accept_pool_step(p, lfd, nonce, "lo0", t + (uint64_t)i, &fd, g_peer,
                                           sizeof(g_peer), &rx, err, sizeof(err)),
                     0);
    }
    CHECK_EQ_INT(g_drops, 6 + 4);
    peer = stray(buf, n);
    CHECK_EQ_INT(step_until(p, lfd, nonce, t + 100, 99, &fd, &rx), 1);
    CHECK_EQ_INT((int)rx.off, (int)n);
    close(fd);
    close(peer);
    for (int i = 0; i < RAIL_ACCEPT_POOL_MAX + 4; i++)
        close(flood[i]);
    rail_accept_pool_free(p);
    close(lfd);
    return check_report("test_net_accept_pool");
}
