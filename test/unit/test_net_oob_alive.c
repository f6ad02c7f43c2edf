/* SPDX-License-Identifier: Apache-2.0 */
/* rail_oob_peer_alive (transport/net_oob.c) tells the ways a peer can go apart, so the data path
 * names the right one: open -> 0 (also with unread bytes waiting), orderly close -> -EPIPE, a
 * reset (close with SO_LINGER 0) -> -ECONNRESET; no socket -> 0. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "transport/net_oob.h"

/* A connected TCP pair on loopback: *a (client) and *b (accepted). */
static int tcp_pair(int *a, int *b)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&sa, &sl))
        return -1;
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (*a < 0 || connect(*a, (struct sockaddr *)&sa, sizeof(sa)))
        return -1;
    *b = accept(l, NULL, NULL);
    close(l);
    return *b < 0 ? -1 : 0;
}

static void orderly_close(void)
{
    int a, b;
    CHECK(tcp_pair(&a, &b) == 0);
    CHECK_EQ_INT(rail_oob_peer_alive(a), 0);
    CHECK(write(b, "x", 1) == 1);
    usleep(10000);
    CHECK_EQ_INT(rail_oob_peer_alive(a), 0); /* a byte waits: still open */
    char c;
    CHECK(read(a, &c, 1) == 1);
    close(b);
    usleep(10000);
    CHECK_EQ_INT(rail_oob_peer_alive(a), -EPIPE);
    close(a);
}

static void reset(void)
{
    int a, b;
    struct linger lg = {1, 0};
    CHECK(tcp_pair(&a, &b) == 0);
    CHECK(setsockopt(b, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0);
    close(b); /* RST */
    usleep(10000);
    CHECK_EQ_INT(rail_oob_peer_alive(a), -ECONNRESET);
    close(a);
}

int main(void)
{
    CHECK_EQ_INT(rail_oob_peer_alive(-1), 0);
    orderly_close();
    reset();
    return check_report("test_net_oob_alive");
}
