/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/net_oob.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "transport/net_ifname.h"
#include "params.h"

static pthread_mutex_t g_addr_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_addr_state; /* 0 not looked up, 1 found, -errno failed */
static struct sockaddr_storage g_addr;
static char g_ifname[IF_NAMESIZE + 1];

int rail_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

uint64_t rail_oob_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int rail_oob_deadline(int rc, uint64_t now_ns, uint64_t deadline_ns, const char *side, char *err,
                      size_t errlen)
{
    if (rc != 0 || now_ns <= deadline_ns)
        return rc;
    snprintf(err, errlen, "%s: the peer did not complete the handshake within %llu s", side,
             RAIL_OOB_HANDSHAKE_NS / 1000000000ull);
    return -ETIMEDOUT;
}

static pthread_mutex_t g_rand_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_rand_state;
static bool g_rand_seeded, g_rand_atfork;

static void rand_forked(void)
{
    g_rand_seeded = false; /* the child must not repeat its parent's nonces */
}

static uint64_t seed64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16);
    }
    return v;
}

/* splitmix64 over a state seeded once: distinct values for 2^64 calls. */
uint64_t rail_random64(void)
{
    pthread_mutex_lock(&g_rand_lock);
    if (!g_rand_atfork)
        g_rand_atfork = pthread_atfork(NULL, NULL, rand_forked) == 0;
    if (!g_rand_seeded) {
        g_rand_state = seed64();
        g_rand_seeded = true;
    }
    uint64_t z = (g_rand_state += 0x9e3779b97f4a7c15ull);
    pthread_mutex_unlock(&g_rand_lock);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}

static bool usable(const struct ifaddrs *ifa)
{
    if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
        return false;
    if (ifa->ifa_addr->sa_family == AF_INET)
        return true;
    if (ifa->ifa_addr->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;
        return !IN6_IS_ADDR_LINKLOCAL(a);
    }
    return false;
}

/* Picks the interface NCCL would: NCCL_SOCKET_IFNAME order of discovery, else NCCL's preference
 * classes; IPv4 before IPv6 within the same choice. */
static int lookup_addr(char *err, size_t errlen)
{
    const char *spec = rail_param_str(RAIL_PARAM_SOCKET_IFNAME);
    struct ifaddrs *all, *best = NULL;
    int best_score = 1 << 30;

    char why[96];
    if (spec && rail_ifname_spec_check(spec, why, sizeof(why)) != 0)
        RAIL_WARN(NCCL_INIT | NCCL_NET | NCCL_ENV,
                  "NCCL_SOCKET_IFNAME='%.64s' is malformed (%s); matched the way NCCL matches it",
                  spec, why);
    if (getifaddrs(&all) != 0) {
        snprintf(err, errlen, "getifaddrs failed: %s", strerror(errno));
        return -errno;
    }
    for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next) {
        int score;
        if (!usable(ifa))
            continue;
        if (spec) {
            if (!rail_ifname_match(spec, ifa->ifa_name))
                continue;
            score = 0;
        } else {
            score = rail_ifname_default_rank(ifa->ifa_name);
            if (score < 0)
                continue;
        }
        score = score * 2 + (ifa->ifa_addr->sa_family == AF_INET6);
        if (score < best_score) {
            best_score = score;
            best = ifa;
        }
    }
    if (!best) {
        snprintf(err, errlen, "no usable out-of-band interface%s%s%s", spec ? " matches " : "",
                 spec ? "NCCL_SOCKET_IFNAME=" : "", spec ? spec : "");
        freeifaddrs(all);
        return -ENODEV;
    }
    memset(&g_addr, 0, sizeof(g_addr));
    memcpy(&g_addr, best->ifa_addr,
           best->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                : sizeof(struct sockaddr_in6));
    snprintf(g_ifname, sizeof(g_ifname), "%s", best->ifa_name);
    freeifaddrs(all);
    char text[INET6_ADDRSTRLEN] = "?";
    const void *a = g_addr.ss_family == AF_INET
                        ? (const void *)&((struct sockaddr_in *)&g_addr)->sin_addr
                        : (const void *)&((struct sockaddr_in6 *)&g_addr)->sin6_addr;
    inet_ntop(g_addr.ss_family, a, text, sizeof(text));
    RAIL_INFO(NCCL_INIT | NCCL_NET, "out-of-band interface %s %s%s", g_ifname, text,
              spec ? " (NCCL_SOCKET_IFNAME)" : "");
    return 1;
}

static int local_addr(struct sockaddr_storage *ss, char *err, size_t errlen)
{
    int st;
    pthread_mutex_lock(&g_addr_lock);
    if (g_addr_state == 0)
        g_addr_state = lookup_addr(err, errlen);
    st = g_addr_state;
    *ss = g_addr;
    pthread_mutex_unlock(&g_addr_lock);
    if (st < 0 && err[0] == '\0')
        snprintf(err, errlen, "no usable out-of-band interface");
    return st < 0 ? st : 0;
}

/* The listener's address in a handle, as a socket address; returns its length. */
static socklen_t handle_addr(const struct rail_handle *h, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    ss->ss_family = (sa_family_t)h->family;
    if (h->family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_port = htons(h->port);
        memcpy(&a->sin_addr, h->addr, 4);
        return sizeof(*a);
    }
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
    a->sin6_port = htons(h->port);
    memcpy(&a->sin6_addr, h->addr, 16);
    return sizeof(*a);
}

static void addr_name(const struct sockaddr_storage *ss, char *buf, size_t len);

static void tune_socket(int fd)
{
    int one = 1, idle = 10, intvl = 5, cnt = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

int rail_oob_listen(struct rail_handle *h, int *fd, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int rc, s, one = 1;

    *fd = -1;
    err[0] = '\0';
    rc = local_addr(&ss, err, errlen);
    if (rc < 0)
        return rc;
    len = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    if (ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    s = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -errno;
    }
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s, (struct sockaddr *)&ss, len) != 0 || listen(s, 128) != 0 ||
        getsockname(s, (struct sockaddr *)&ss, &len) != 0) {
        rc = -errno;
        snprintf(err, errlen, "bind/listen on %s: %s", g_ifname, strerror(errno));
        close(s);
        return rc;
    }
    memset(h, 0, sizeof(*h));
    h->family = ss.ss_family;
    if (ss.ss_family == AF_INET) {
        h->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        memcpy(h->addr, &((struct sockaddr_in *)&ss)->sin_addr, 4);
    } else {
        h->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        memcpy(h->addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
    }
    h->nonce = rail_random64();
    *fd = s;
    return 0;
}

int rail_oob_connect_start(const struct rail_handle *h, int *fd, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t len = handle_addr(h, &ss);
    int s = socket(h->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -errno;
    }
    tune_socket(s);
    if (connect(s, (struct sockaddr *)&ss, len) != 0 && errno != EINPROGRESS) {
        int e = errno;
        snprintf(err, errlen, "connect: %s", strerror(e));
        close(s);
        return -e;
    }
    *fd = s;
    return 0;
}

int rail_oob_connect_check(int fd, char *err, size_t errlen)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int so = 0;
    socklen_t sl = sizeof(so);
    if (poll(&p, 1, 0) <= 0)
        return 0;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0)
        so = errno;
    if (so) {
        snprintf(err, errlen, "connect: %s", strerror(so));
        return -so;
    }
    return 1;
}

int rail_oob_accept(int lfd, int *fd, char *peer, size_t peerlen, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int s = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (s < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
            return 0;
        snprintf(err, errlen, "accept: %s", strerror(errno));
        return -errno;
    }
    tune_socket(s);
    addr_name(&ss, peer, peerlen);
    *fd = s;
    return 1;
}

int rail_oob_send(int fd, struct rail_oob_tx *tx, char *err, size_t errlen)
{
    while (tx->off < tx->len) {
        ssize_t n = send(fd, tx->buf + tx->off, tx->len - tx->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return 0;
            snprintf(err, errlen, "send: %s", strerror(errno));
            return -errno;
        }
        tx->off += (size_t)n;
    }
    return 1;
}

/* Reads into rx->buf until it holds `want` bytes, taking up to `cap` in one go: 1 when there, 0
 * would block, -errno. */
static int fill(int fd, struct rail_oob_rx *rx, size_t want, size_t cap, char *err, size_t errlen)
{
    while (rx->off < want) {
        ssize_t n = recv(fd, rx->buf + rx->off, cap - rx->off, MSG_DONTWAIT);
        if (n == 0) {
            snprintf(err, errlen, "peer closed the connection during the handshake");
            return -ECONNRESET;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return 0;
            snprintf(err, errlen, "recv: %s", strerror(errno));
            return -errno;
        }
        rx->off += (size_t)n;
    }
    return 1;
}

/* How far the first read of a frame may reach. The sender of a metadata frame writes nothing
 * more until it has the answer, so whatever is there is that frame: header and body come in one
 * recv(). READY is read exactly (header and its 8-byte body), and a control frame header by
 * header: control frames may follow them back to back. */
static size_t read_ahead(int want_type)
{
    if (want_type == RAIL_FRAME_META_S || want_type == RAIL_FRAME_META_R)
        return RAIL_OOB_MAX;
    return want_type == RAIL_FRAME_READY ? RAIL_FRAME_HDR + 8 : RAIL_FRAME_HDR;
}

int rail_oob_recv(int fd, struct rail_oob_rx *rx, int want_type, char *err, size_t errlen)
{
    int rc;
    if (!rx->have_hdr) {
        rc = fill(fd, rx, RAIL_FRAME_HDR, read_ahead(want_type), err, errlen);
        if (rc <= 0)
            return rc;
        rc = rail_frame_header_decode(rx->buf, want_type, RAIL_OOB_MAX - RAIL_FRAME_HDR,
                                      &rx->body_len, &rx->checksum, &rx->version, err, errlen);
        if (rc < 0)
            return rc;
        rx->have_hdr = 1;
        if (rx->off > RAIL_FRAME_HDR + (size_t)rx->body_len) {
            snprintf(err, errlen,
                     "the peer sent %zu bytes after its %u-byte frame without waiting for the "
                     "answer",
                     rx->off - RAIL_FRAME_HDR - rx->body_len, RAIL_FRAME_HDR + rx->body_len);
            return -EPROTO;
        }
    }
    size_t len = RAIL_FRAME_HDR + (size_t)rx->body_len;
    return fill(fd, rx, len, len, err, errlen);
}

int rail_oob_peer_alive(int fd)
{
    char b;
    ssize_t n;
    if (fd < 0)
        return 0;
    n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return -EPIPE; /* orderly close by the peer */
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return errno ? -errno : -ECONNRESET; /* e.g. ETIMEDOUT: keepalive found no host */
    return 0;
}

static void addr_name(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char text[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, text, sizeof(text));
        port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, text, sizeof(text));
        port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    }
    snprintf(buf, len, "%s:%d", text, port);
}

void rail_oob_peer_name(int fd, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
        ss.ss_family = AF_UNSPEC;
    addr_name(&ss, buf, len);
}

void rail_oob_handle_name(const struct rail_handle *h, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    handle_addr(h, &ss);
    addr_name(&ss, buf, len);
}

void rail_oob_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}
