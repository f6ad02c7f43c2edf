/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the net plugin integration test: load the plugin the way NCCL does (dlopen +
 * ncclNetPlugin_v11), establish connections between two processes over a control socket, and
 * move byte patterns with deadlines so that a hang becomes a failure. */
#ifndef RAIL_IT_UTIL_H
#define RAIL_IT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccl/nccl_net.h"

#define IT_DEADLINE_S 60.0

struct it_plugin {
    void *dl;
    const ncclNet_v11_t *net;
    void *ctx;
    int ndev;
};

extern const char *g_it_role; /* "send" / "recv", for messages */
/* Called with every line the plugin logs (level, formatted text) when set; NULL by default. */
extern void (*g_it_log_hook)(ncclDebugLogLevel level, const char *msg);
/* Called by it_connect with the handle read from the peer before connecting; NULL by default. */
extern void (*g_it_handle_hook)(void *handle);

/* A scenario's text (an environment setting, an expected log line) for the fabric in use: with
 * the shm verbs provider (NCCL_RAIL_VERBS_PROVIDER=shm) the VM's device names rxeN become shmN and
 * its out-of-band interface veth3 becomes lo; otherwise text itself. */
const char *it_fabric_text(const char *text);

/* Prints "FAIL: ..." context on stderr and returns 1, for `return it_fail(...)`. */
int it_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double it_now(void);

int it_load(struct it_plugin *p, const char *path);
/* Loads the plugin expecting init to decline with an INFO line containing `why`. */
int it_load_declines(const char *path, const char *why, int want_warn);
/* Device index by name, -1 when absent. */
int it_dev(const struct it_plugin *p, const char *name);
void it_unload(struct it_plugin *p);

/* Control channel (socketpair between the two processes). */
int it_ctl_send(int fd, const void *buf, size_t len);
int it_ctl_recv(int fd, void *buf, size_t len);
int it_ctl_signal(int fd, uint8_t v);
int it_ctl_wait(int fd, uint8_t want);

/* Listen on dev, send the handle over ctl, accept (returns the listen comm too if lc != NULL). */
int it_accept(struct it_plugin *p, int dev, int ctl, void **lc, void **rc);
/* Read a handle from ctl and connect from dev. */
int it_connect(struct it_plugin *p, int dev, int ctl, void **sc);
/* Connect with a given handle buffer (may be garbage): ncclResult_t of the first failing call,
 * or ncclSuccess with *sc set. Gives up (returns -1) after timeout_s. */
int it_connect_handle(struct it_plugin *p, int dev, void *handle, void **sc, double timeout_s);

/* Deterministic pattern keyed by seed. */
void it_fill(void *buf, size_t size, uint64_t seed);
/* Index of the first wrong byte, or -1. */
long it_check(const void *buf, size_t size, uint64_t seed);

/* Registered page-aligned buffer. */
struct it_buf {
    uint8_t *p;
    size_t size;
    void *mh;
};
int it_buf_alloc(struct it_plugin *p, void *comm, struct it_buf *b, size_t size);
void it_buf_free(struct it_plugin *p, void *comm, struct it_buf *b);

/* isend until a request is returned (deadline), or the call fails. */
int it_isend(struct it_plugin *p, void *sc, void *data, size_t size, int tag, void *mh, void **req);
int it_irecv(struct it_plugin *p, void *rc, int n, void **data, size_t *sizes, int *tags,
             void **mhs, void **req);
/* test until done; sizes may be NULL. Returns 0, or the ncclResult_t / -1 on timeout. */
int it_wait(struct it_plugin *p, void *req, int *sizes);

#endif
