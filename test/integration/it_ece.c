/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_IB_ECE_ENABLE: Enhanced Connection Establishment negotiated in the handshake
 * (protocol/net_ece.c). Each scenario moves the `sizes` messages (bytes exact) and checks the
 * one INFO line each side logs for its device:
 *   ece             both ends with ECE: negotiated (shm: options 0xd both ways); rdma_rxe has
 *                   none: "not supported by provider" at the sender, "offers none" at the
 *                   receiver;
 *   ece_mask        the sender's device has options 0x7, the receiver's 0xd (NCCL_RAIL_SHM_ECE):
 *                   both set the intersection 0x5;
 *   ece_off         NCCL_IB_ECE_ENABLE=0 at the sender: "disabled", the receiver sees no offer;
 *   ece_none        the receiver's device has no ECE (NCCL_RAIL_SHM_ECE=0, as rxe): it declines
 *                   the offer, the sender sees none accepted;
 *   ece_v4          the sender sees the handle of a listener older than ECE (its extension
 *                   bytes zero): it speaks metadata version 4, the listener answers in 4, the
 *                   connection works without ECE;
 *   ece_set_fault_recv / _send (fault builds): ibv_set_ece fails on every QP of one side: one
 *                   WARN there per device (rail) of that side, the connection goes on without
 *                   ECE.
 * On rdma_rxe (no ECE) every scenario but ece_off and ece_v4 expects what `ece` does there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_scenarios.h"

static char g_lines[8192];
static int g_ece_warns;
static char g_warn_devs[8][32]; /* the device each ECE WARN names (the word before its ':') */
static int g_warn_ndevs, g_warn_repeats;

/* Counts the device of one ECE WARN ("shm1: ibv_set_ece ..."); a second WARN for the same device
 * is a repeat. */
static void count_warn_dev(const char *msg)
{
    if (!strncmp(msg, "RAIL ", 5))
        msg += 5;
    size_t len = strcspn(msg, ": ");
    char dev[32];
    snprintf(dev, sizeof(dev), "%.*s", (int)(len < sizeof(dev) ? len : sizeof(dev) - 1), msg);
    for (int i = 0; i < g_warn_ndevs; i++)
        if (!strcmp(g_warn_devs[i], dev)) {
            g_warn_repeats++;
            return;
        }
    if (g_warn_ndevs < 8)
        snprintf(g_warn_devs[g_warn_ndevs++], sizeof(g_warn_devs[0]), "%s", dev);
}

static void hook(ncclDebugLogLevel level, const char *msg)
{
    if (!strstr(msg, "ECE") && !strstr(msg, "ibv_set_ece on"))
        return; /* (the fault layer's own "rule (set_ece) fires" WARNs are not ours) */
    if (level == NCCL_LOG_WARN) {
        g_ece_warns++;
        count_warn_dev(msg);
    }
    size_t n = strlen(g_lines);
    snprintf(g_lines + n, sizeof(g_lines) - n, "%s\n", msg);
}

static void v4_handle(void *handle)
{
    memset((char *)handle + 44, 0, 8); /* the extension an older listener does not write */
}

static bool on_shm(void)
{
    const char *prov = getenv("NCCL_RAIL_VERBS_PROVIDER");
    return prov && strcmp(prov, "shm") == 0;
}

/* What side `send` of scenario `name` must log, and whether one ECE WARN per device is expected. */
static const char *expected(const char *name, bool send, int *warns)
{
    *warns = 0;
    if (!strcmp(name, "ece_off"))
        return send ? "ECE disabled (NCCL_IB_ECE_ENABLE=0)"
                    : "ECE not negotiated: the peer offers none (NCCL_IB_ECE_ENABLE=0 there";
    if (!strcmp(name, "ece_v4"))
        return send ? "ECE not negotiated: the peer's plugin predates it"
                    : "ECE not negotiated: the peer offers none (its plugin predates ECE";
    if (!on_shm())
        return send ? "ECE not supported by provider libibverbs (ibv_query_ece"
                    : "ECE not negotiated: the peer offers none (NCCL_IB_ECE_ENABLE=0 there";
    if (!strcmp(name, "ece_mask"))
        return send ? "ECE negotiated (sender): vendor 0x5348 options 0x5 (offered 0x7)"
                    : "ECE negotiated (receiver): vendor 0x5348 options 0x5 accepted of the "
                      "peer's 0x7";
    if (!strcmp(name, "ece_none"))
        return send ? "ECE not negotiated: the peer accepted none"
                    : "ECE not supported by provider shm (ibv_set_ece";
    if (!strcmp(name, "ece_set_fault_recv")) {
        *warns = !send;
        return send ? "ECE not negotiated: the peer accepted none" : "ibv_set_ece on receiver QP";
    }
    if (!strcmp(name, "ece_set_fault_send")) {
        *warns = send;
        return send ? "ibv_set_ece on sender QP" : "ECE negotiated (receiver)";
    }
    return send ? "ECE negotiated (sender): vendor 0x5348 options 0xd (offered 0xd)"
                : "ECE negotiated (receiver): vendor 0x5348 options 0xd accepted of the peer's 0xd";
}

static int check(struct it_side *s, bool send, int rc)
{
    int warns;
    const char *want = expected(s->name, send, &warns);
    g_it_log_hook = NULL;
    g_it_handle_hook = NULL;
    if (rc)
        return rc;
    if (!strstr(g_lines, want))
        return it_fail("%s: no log line with \"%s\"; ECE lines:\n%s", s->name, want, g_lines);
    /* one WARN per device (rail) of the failing side, none elsewhere */
    if (warns ? g_ece_warns < 1 || g_warn_repeats : g_ece_warns != 0)
        return it_fail("%s: %d ECE WARN line(s) (%d repeated for a device), expected %s:\n%s",
                       s->name, g_ece_warns, g_warn_repeats, warns ? "one per device" : "none",
                       g_lines);
    return 0;
}

static bool skipped(const char *name)
{
#ifndef RAIL_FAULT_INJECTION
    if (strstr(name, "fault")) {
        fprintf(stderr, "[%s] note: not a fault-injection build: %s skipped\n", g_it_role, name);
        return true;
    }
#endif
    (void)name;
    return false;
}

int it_ece_recv(struct it_side *s)
{
    if (skipped(s->name))
        return 0;
    g_it_log_hook = hook;
    return check(s, false, it_sizes_recv(s));
}

int it_ece_send(struct it_side *s)
{
    if (skipped(s->name))
        return 0;
    g_it_log_hook = hook;
    if (!strcmp(s->name, "ece_v4"))
        g_it_handle_hook = v4_handle;
    return check(s, true, it_sizes_send(s));
}
