/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 22: the connect side of the out-of-band handshake has a deadline, as the accept side
 * always had. A fake peer that takes the TCP connection (the kernel does, from the listen
 * backlog) and never answers: every step of the connector goes through (connect, send its
 * metadata) and then waits; rail_oob_deadline turns that wait into -ETIMEDOUT once the deadline
 * (RAIL_OOB_HANDSHAKE_NS after the start) has passed, and leaves every other result alone. The
 * clock is an argument, so nothing here waits for it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "transport/net_oob.h"

int main(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    struct rail_handle h = {0};
    struct rail_oob_tx tx = {.len = 64};
    struct rail_oob_rx rx = {0};
    char err[256] = "";
    int lfd = socket(AF_INET, SOCK_STREAM, 0), fd = -1, rc = 0;

    /* The silent peer: listens, never accepts, never writes. */
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0 &&
          getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    h.family = AF_INET;
    h.port = ntohs(sa.sin_port);
    memcpy(h.addr, &sa.sin_addr, 4);
    uint64_t start = rail_oob_now_ns(), deadline = start + RAIL_OOB_HANDSHAKE_NS;

    CHECK_EQ_INT(rail_oob_connect_start(&h, &fd, err, sizeof(err)), 0);
    for (int i = 0; i < 100 && rc == 0; i++) { /* loopback: connected at once, or nearly */
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        poll(&p, 1, 10);
        rc = rail_oob_connect_check(fd, err, sizeof(err));
    }
    CHECK_EQ_INT(rc, 1);
    CHECK_EQ_INT(rail_oob_send(fd, &tx, err, sizeof(err)), 1); /* our metadata went out */
    rc = rail_oob_recv(fd, &rx, RAIL_FRAME_META_R, err, sizeof(err));
    CHECK_EQ_INT(rc, 0); /* no answer: call again */

    /* Before the deadline: call again. After it: an error naming the side. */
    CHECK_EQ_INT(rail_oob_deadline(rc, rail_oob_now_ns(), deadline, "connect", err, sizeof(err)),
                 0);
    CHECK_EQ_INT(rail_oob_deadline(rc, deadline, deadline, "connect", err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_oob_deadline(rc, deadline + 1, deadline, "connect", err, sizeof(err)),
                 -ETIMEDOUT);
    CHECK_EQ_STR(err, "connect: the peer did not complete the handshake within 60 s");
    /* A step that finished, or failed on its own, is never turned into a timeout. */
    CHECK_EQ_INT(rail_oob_deadline(1, deadline + 1, deadline, "connect", err, sizeof(err)), 1);
    CHECK_EQ_INT(
        rail_oob_deadline(-ECONNRESET, deadline + 1, deadline, "connect", err, sizeof(err)),
        -ECONNRESET);
    CHECK(start <= rail_oob_now_ns());
    rail_oob_close(&fd);
    close(lfd);
    return check_report("test_net_oob_deadline");
}
