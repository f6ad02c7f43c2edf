/* SPDX-License-Identifier: Apache-2.0 */
/* The set of objects handed out to NCCL and not yet destroyed, so that a destroy NCCL calls twice
 * (or with a pointer that is not ours) is recognised without reading the object: membership is
 * decided from the pointer value alone, under a mutex. Sized for communicators (a few per
 * process), a linear scan. */
#ifndef NCCL_RAIL_LIVE_SET_H
#define NCCL_RAIL_LIVE_SET_H

#include <pthread.h>
#include <stdbool.h>

struct rail_live_set {
    pthread_mutex_t lock;
    const void **items;
    int n, cap;
};

#define RAIL_LIVE_SET_INIT                                                                         \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0                                                      \
    }

/* Record p as live. 0, or -ENOMEM. */
int rail_live_add(struct rail_live_set *s, const void *p);
/* Forget p; true when it was live (the caller may free it now), false otherwise. */
bool rail_live_remove(struct rail_live_set *s, const void *p);

#endif
