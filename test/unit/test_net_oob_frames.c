/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 27 (connect time): how the out-of-band handshake reads its frames and notices a refused
 * connection with fewer system calls (transport/net_oob.c).
 *   - A metadata frame is read whole in one go (its sender writes nothing more before the
 *     answer): bytes after it are a protocol error (-EPROTO, saying so), never silently eaten.
 *   - READY is read exactly: a control frame written right behind it stays in the socket and is
 *     the next frame read, whole.
 *   - A frame that comes in pieces is assembled over several calls (0, then 1).
 *   - The connect side sends its metadata without polling for the TCP connection: send() on a
 *     socket whose connection was refused reports ECONNREFUSED, and on one still being set up
 *     never an error.
 *   - Nonces and cookies come from a generator seeded once per process: never 0, and a forked
 *     child does not repeat its parent's values. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "transport/net_oob.h"
#include "wire/net_wire.h"

static size_t meta(int type, uint64_t nonce, uint8_t *buf, size_t cap)
{
    struct rail_meta m;
    memset(&m, 0, sizeof(m));
    m.nonce = nonce;
    m.nrails = 1;
    m.nqps = 2;
    m.addr1 = 0x10000;
    m.rails[0].link_layer = RAIL_LL_ETH;
    m.rails[0].mtu = 3;
    m.rails[0].port = 1;
    m.rails[0].qpn[0] = 0x99;
    m.rails[0].qpn[1] = 0x9a;
    int n = rail_meta_encode(type, &m, buf, cap);
    CHECK(n > RAIL_FRAME_HDR);
    return n > 0 ? (size_t)n : 0;
}

/* rail_oob_recv until it leaves 0 (bounded: the bytes are written before). */
static int recv_frame(int fd, struct rail_oob_rx *rx, int type, char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < 100 && rc == 0; i++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        poll(&p, 1, 10);
        rc = rail_oob_recv(fd, rx, type, err, errlen);
    }
    return rc;
}

static void pair(int sv[2])
{
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

int main(void)
{
    uint8_t a[2 * RAIL_OOB_MAX], b[RAIL_OOB_MAX];
    struct rail_oob_rx rx;
    char err[256];
    int sv[2];

    /* A metadata frame, whole, in one piece. */
    pair(sv);
    size_t n = meta(RAIL_FRAME_META_S, 7, a, sizeof(a));
    CHECK(write(sv[0], a, n) == (ssize_t)n);
    memset(&rx, 0, sizeof(rx));
    CHECK_EQ_INT(recv_frame(sv[1], &rx, RAIL_FRAME_META_S, err, sizeof(err)), 1);
    CHECK_EQ_INT((int)rx.off, (int)n);
    CHECK(memcmp(rx.buf, a, n) == 0);
    close(sv[0]);
    close(sv[1]);

    /* ... followed by bytes its sender had no business writing yet: an error, said so. */
    pair(sv);
    memset(a + n, 0x5a, 40);
    CHECK(write(sv[0], a, n + 40) == (ssize_t)(n + 40));
    memset(&rx, 0, sizeof(rx));
    err[0] = '\0';
    CHECK_EQ_INT(recv_frame(sv[1], &rx, RAIL_FRAME_META_S, err, sizeof(err)), -EPROTO);
    CHECK(strstr(err, "40 bytes after its") != NULL);
    close(sv[0]);
    close(sv[1]);

    /* A metadata frame in pieces (header first, then the body): 0, then the whole frame. */
    pair(sv);
    n = meta(RAIL_FRAME_META_R, 8, a, sizeof(a));
    CHECK(write(sv[0], a, RAIL_FRAME_HDR + 3) == RAIL_FRAME_HDR + 3);
    memset(&rx, 0, sizeof(rx));
    CHECK_EQ_INT(recv_frame(sv[1], &rx, RAIL_FRAME_META_R, err, sizeof(err)), 0);
    CHECK(write(sv[0], a + RAIL_FRAME_HDR + 3, n - RAIL_FRAME_HDR - 3) ==
          (ssize_t)(n - RAIL_FRAME_HDR - 3));
    CHECK_EQ_INT(recv_frame(sv[1], &rx, RAIL_FRAME_META_R, err, sizeof(err)), 1);
    CHECK_EQ_INT((int)rx.off, (int)n);
    CHECK(memcmp(rx.buf, a, n) == 0);
    close(sv[0]);
    close(sv[1]);

    /* READY with a control frame right behind it, in one write: READY alone, then the control
     * frame, whole. */
    pair(sv);
    int rn = rail_ready_encode(a, sizeof(a));
    CHECK(rn == RAIL_FRAME_HDR + 8);
    size_t cn = meta(RAIL_FRAME_CTL, 9, b, sizeof(b));
    memcpy(a + rn, b, cn);
    CHECK(write(sv[0], a, (size_t)rn + cn) == (ssize_t)((size_t)rn + cn));
    memset(&rx, 0, sizeof(rx));
    CHECK_EQ_INT(recv_frame(sv[1], &rx, RAIL_FRAME_READY, err, sizeof(err)), 1);
    CHECK_EQ_INT((int)rx.off, rn);
    memset(&rx, 0, sizeof(rx));
    CHECK_EQ_INT(recv_frame(sv[1], &rx, RAIL_FRAME_CTL, err, sizeof(err)), 1);
    CHECK_EQ_INT((int)rx.off, (int)cn);
    CHECK(memcmp(rx.buf, b, cn) == 0);
    close(sv[0]);
    close(sv[1]);

    /* A refused connection is reported by the first send(), as the connect side now learns it. */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), fd = -1, rc = 0;
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
          getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    struct rail_handle h = {.family = AF_INET, .port = ntohs(sa.sin_port)};
    memcpy(h.addr, &sa.sin_addr, 4);
    struct rail_oob_tx tx = {.len = 64};
    CHECK_EQ_INT(rail_oob_connect_start(&h, &fd, err, sizeof(err)), 0); /* nobody listens */
    for (int i = 0; i < 100 && rc == 0; i++) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        poll(&p, 1, 10);
        rc = rail_oob_send(fd, &tx, err, sizeof(err));
    }
    CHECK_EQ_INT(rc, -ECONNREFUSED);
    rail_oob_close(&fd);
    /* ... and once somebody listens: never an error, the bytes go out. */
    CHECK_EQ_INT(listen(lfd, 4), 0);
    tx.off = 0;
    rc = 0;
    CHECK_EQ_INT(rail_oob_connect_start(&h, &fd, err, sizeof(err)), 0);
    for (int i = 0; i < 100 && rc == 0; i++) {
        rc = rail_oob_send(fd, &tx, err, sizeof(err));
        if (rc == 0) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            poll(&p, 1, 10);
        }
    }
    CHECK_EQ_INT(rc, 1);
    char name[64];
    rail_oob_handle_name(&h, name, sizeof(name));
    char want[64];
    snprintf(want, sizeof(want), "127.0.0.1:%d", (int)ntohs(sa.sin_port));
    CHECK_EQ_STR(name, want);
    rail_oob_close(&fd);
    close(lfd);

    /* The generator: distinct values, none 0; a forked child draws other values than its
     * parent's next ones. */
    uint64_t seen[64];
    for (int i = 0; i < 64; i++) {
        seen[i] = rail_random64();
        CHECK(seen[i] != 0);
        for (int j = 0; j < i; j++)
            CHECK(seen[i] != seen[j]);
    }
    int pfd[2];
    CHECK_EQ_INT(pipe(pfd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        uint64_t v[4];
        for (int i = 0; i < 4; i++)
            v[i] = rail_random64();
        _exit(write(pfd[1], v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : 1);
    }
    uint64_t mine[4], child[4];
    for (int i = 0; i < 4; i++)
        mine[i] = rail_random64();
    CHECK(read(pfd[0], child, sizeof(child)) == (ssize_t)sizeof(child));
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            CHECK(mine[i] != child[j]);
    close(pfd[0]);
    close(pfd[1]);
    return check_report("test_net_oob_frames");
}
