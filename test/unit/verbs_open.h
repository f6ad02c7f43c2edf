/* SPDX-License-Identifier: Apache-2.0 */
/* Tests on the verbs seam: open a device by name through rail_ibv (the shm provider in tests). */
#ifndef NCCL_RAIL_TEST_VERBS_OPEN_H
#define NCCL_RAIL_TEST_VERBS_OPEN_H

#include <string.h>

#include "transport/net_verbs.h"

/* The context of the device called name, or NULL when there is none. */
static inline struct ibv_context *test_open_dev(const char *name)
{
    int n = 0;
    struct ibv_device **list = rail_ibv->get_device_list(&n);
    struct ibv_context *ctx = NULL;
    for (int i = 0; list && i < n; i++)
        if (strcmp(rail_ibv->get_device_name(list[i]), name) == 0)
            ctx = rail_ibv->open_device(list[i]);
    if (list)
        rail_ibv->free_device_list(list);
    return ctx;
}

#endif
