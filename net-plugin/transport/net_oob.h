/* SPDX-License-Identifier: Apache-2.0 */
/* Out-of-band TCP: the listen socket behind the handle, the non-blocking handshake I/O and the
 * per-connection socket that stays open to notice a dead peer. The local address is the one NCCL
 * would use (NCCL_SOCKET_IFNAME honoured, else NCCL's interface preference). */
#ifndef NCCL_RAIL_NET_OOB_H
#define NCCL_RAIL_NET_OOB_H

#include <stddef.h>
#include <stdint.h>

#include "wire/net_wire.h"

#define RAIL_OOB_MAX (RAIL_FRAME_HDR + RAIL_META_MAX_BODY)

struct rail_oob_tx {
    uint8_t buf[RAIL_OOB_MAX];
    size_t len, off;
};

struct rail_oob_rx {
    uint8_t buf[RAIL_OOB_MAX];
    size_t off;
    uint32_t body_len, checksum;
    int version; /* the frame's, from its header */
    int have_hdr;
};

/* Both sides of the handshake: a peer must finish it within this. One that stays silent (a
 * listener that accepts the TCP connection and never answers, a connector that never sends) is
 * stuck or hostile, and must not keep NCCL's connect or accept calling again forever. */
#define RAIL_OOB_HANDSHAKE_NS (60ull * 1000000000ull)

/* CLOCK_MONOTONIC in ns. */
uint64_t rail_oob_now_ns(void);
/* The result of one handshake step, bounded: rc unchanged unless it is 0 ("call again") while
 * now_ns is past deadline_ns; then -ETIMEDOUT, with err saying the peer did not complete the
 * handshake in time (side: "accept", "connect"). */
int rail_oob_deadline(int rc, uint64_t now_ns, uint64_t deadline_ns, const char *side, char *err,
                      size_t errlen);

int rail_set_nonblock(int fd);
/* Never 0. Nonces and cookies: a per-process generator seeded from getrandom() once (again in a
 * forked child), so that a listen or connect costs no system call for it. */
uint64_t rail_random64(void);

/* Opens a listening socket on the out-of-band address and describes it in h (nonce included). */
int rail_oob_listen(struct rail_handle *h, int *fd, char *err, size_t errlen);
int rail_oob_connect_start(const struct rail_handle *h, int *fd, char *err, size_t errlen);
/* 1 connected, 0 still connecting, or -errno. */
int rail_oob_connect_check(int fd, char *err, size_t errlen);
/* 1 with *fd set and the peer's "a.b.c.d:port" in peer (peerlen bytes), 0 when nobody is
 * waiting, or -errno. */
int rail_oob_accept(int lfd, int *fd, char *peer, size_t peerlen, char *err, size_t errlen);
/* Sends what is left of tx: 1 done, 0 would block, -errno. */
int rail_oob_send(int fd, struct rail_oob_tx *tx, char *err, size_t errlen);
/* Receives one frame of want_type: 1 complete (body at rx->buf + RAIL_FRAME_HDR), 0 incomplete,
 * -errno (peer closed, a malformed header, or -EPROTO: bytes after a metadata frame, which its
 * sender must not write before the answer; a metadata frame is read whole in one recv(), READY
 * and control frames exactly, so what follows them stays in the socket). */
int rail_oob_recv(int fd, struct rail_oob_rx *rx, int want_type, char *err, size_t errlen);
/* 0 while the peer's end is open; -EPIPE once the peer closed it; the socket's error otherwise
 * (-ECONNRESET reset, -ETIMEDOUT keepalive probes unanswered: the host is gone). */
int rail_oob_peer_alive(int fd);
/* "a.b.c.d:port" of the peer. */
void rail_oob_peer_name(int fd, char *buf, size_t len);
/* "a.b.c.d:port" of the listener a handle names (the peer of a connection made with it). */
void rail_oob_handle_name(const struct rail_handle *h, char *buf, size_t len);
void rail_oob_close(int *fd);

#endif
