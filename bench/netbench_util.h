/* SPDX-License-Identifier: Apache-2.0 */
/* netbench's shared pieces: options, the per-process state, the control socket between the two
 * processes, byte patterns, and plugin calls that give up after --timeout seconds instead of
 * hanging. Functions returning int give 0, or -1 after recording the reason in the report. */
#ifndef NCCL_RAIL_NETBENCH_UTIL_H
#define NCCL_RAIL_NETBENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "netbench_abi.h"

struct nb_opts {
    const char *plugin, *send_dev, *recv_dev;
    const char *recv_plugin; /* the receiving process's plugin (--recv-plugin), else plugin */
    int bw, lat, abi, verify_all, verbose, yield;
    int recv_sleep_us; /* the receiving process sleeps this long after an idle poll */
    size_t size, lat_size;
    int inflight, iters, warmup, lat_iters, lat_warmup;
    double timeout;
};

/* What one process found; the receiving child sends its copy to the parent. */
struct report {
    int ok;
    long long msgs, full_checks;
    char why[200];
};

/* What each plugin call cost while counting is on (the pinger's measured latency rounds):
 * ticks of nb_ticks() and the number of calls, per kind. */
enum {
    NB_CALL_ISEND,
    NB_CALL_IRECV,
    NB_CALL_RECV_DONE, /* test() of a receive that found it done */
    NB_CALL_RECV_IDLE, /* ... that found it still waiting */
    NB_CALL_SEND_DONE,
    NB_CALL_SEND_IDLE,
    NB_CALL_KINDS
};
struct nb_calls {
    int on;
    uint64_t ticks[NB_CALL_KINDS], n[NB_CALL_KINDS];
};

struct peer {
    struct nb_net net;
    struct nb_calls calls;
    double tick_ns; /* nanoseconds per nb_ticks() tick, measured over the latency rounds */
    const struct nb_opts *o;
    int ctl;  /* control socket to the other process */
    int dev;  /* this process's device index */
    int recv; /* 1 in the receiving (child) process */
};

struct buf {
    uint8_t *p;
    void *mh;
};

double nb_now(void);
/* A cheap counter for timing single plugin calls: the TSC on x86-64 (converted with a rate taken
 * against nb_now() over the run), elsewhere nanoseconds of CLOCK_MONOTONIC (its own cost then
 * counts: 3 us per read under TCG with an HPET clocksource). */
uint64_t nb_ticks(void);
int nb_fail(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int nb_ctl_io(int fd, void *buf, size_t len, int wr);
int nb_barrier(struct peer *p);

/* Pattern `seed` over the whole buffer; nb_compare gives the first wrong offset in [from, to)
 * or -1. */
void nb_fill(uint8_t *b, size_t size, uint64_t seed);
long nb_compare(const uint8_t *b, size_t from, size_t to, uint64_t seed);
/* Bandwidth messages: buffer k holds pattern k and message g carries g in its first and last 8
 * bytes (messages under 16 bytes carry a pattern of g instead). nb_check_msg returns the first
 * wrong offset or -1; `full` also compares every byte in between. */
void nb_stamp(uint8_t *b, size_t size, uint64_t g);
long nb_check_msg(const uint8_t *b, size_t size, int k, uint64_t g, int full);

int nb_post_send(struct peer *p, void *sc, void *data, size_t size, void *mh, void **req,
                 struct report *r);
int nb_post_recv(struct peer *p, void *rc, void *data, size_t size, void *mh, void **req,
                 struct report *r);
/* Tests req until done; *size gets the size the plugin reports. */
int nb_wait(struct peer *p, void *req, int *size, struct report *r);

/* Listens on p->dev and sends the handle to the other process. */
int nb_listen_send(struct peer *p, void **lc, struct report *r);
int nb_accept(struct peer *p, void *lc, void **rc, struct report *r);
/* Reads a handle from the other process and connects from p->dev. */
int nb_connect(struct peer *p, void **sc, struct report *r);

/* Page-aligned, 0xEE-filled, registered with comm (NCCL_PTR_HOST). */
int nb_buf_alloc(struct peer *p, void *comm, struct buf *b, size_t size, struct report *r);
void nb_buf_free(struct peer *p, void *comm, struct buf *b);

#endif
