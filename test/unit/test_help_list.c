/* SPDX-License-Identifier: Apache-2.0 */
/* The help list's capacity (protocol/net_data.c). A multi-rail send comm is listed with its first
 * two-phase message and stays listed while its owner uses it; what a message changes is only its
 * `helped` flag. A job opens thousands of such comms over its life, so a full list must make room
 * by dropping the comms with no two-phase work in flight: the list is full only with HELP_MAX
 * (64) comms helped at once. Comms built by hand (only the fields the list reads), the owner
 * inside (busy = 2) when a message ends, as rail_send_test brackets it, outside when the comm
 * is closed. (The old code left the 65th comm unlisted for good: never helped.) */
#include <stdlib.h>

#include "check.h"
#include "protocol/net_data.h"

#define NCOMMS   200
#define LIST_MAX 64 /* net_data.c HELP_MAX */

static struct rail_send_comm *g_c[NCOMMS];

static bool listed(int i)
{
    return __atomic_load_n(&g_c[i]->help_listed, __ATOMIC_RELAXED);
}

/* One two-phase message of comm i from list to end: helped, then the owner inside clears it. */
static void message_starts(int i)
{
    rail_send_help_list(g_c[i]);
}

static void message_ends(int i)
{
    atomic_store(&g_c[i]->busy, 2); /* the owner is inside (rail_send_enter) */
    rail_send_help_unlist(g_c[i]);
    atomic_store(&g_c[i]->busy, 0);
}

static void closed(int i)
{
    rail_send_help_unlist(g_c[i]); /* send_quiesce: outside, before the comm is freed */
    CHECK(!listed(i));
}

int main(void)
{
    for (int i = 0; i < NCOMMS; i++)
        g_c[i] = calloc(1, sizeof(*g_c[i]));

    /* Many comms, one message each, one after the other: every one is listed while helped. */
    for (int i = 0; i < NCOMMS; i++) {
        message_starts(i);
        CHECK_MSG(listed(i) && g_c[i]->helped, "comm %d of %d not listed for its message", i,
                  NCOMMS);
        message_ends(i);
        CHECK(!g_c[i]->helped);
    }
    /* The last LIST_MAX of them may still be listed, not helped: a new message of an early one
     * gets its place back. */
    message_starts(0);
    CHECK(listed(0) && g_c[0]->helped);

    /* LIST_MAX helped at once fill the list: one more is not listed (not helped this message),
     * and is listed with its next message once one of them is done. */
    for (int i = 1; i < LIST_MAX; i++) {
        message_starts(i);
        CHECK(listed(i) && g_c[i]->helped);
    }
    message_starts(LIST_MAX);
    CHECK(!listed(LIST_MAX) && !g_c[LIST_MAX]->helped);
    for (int i = 0; i < LIST_MAX; i++)
        CHECK_MSG(listed(i) && g_c[i]->helped, "helped comm %d dropped from the list", i);
    message_ends(5);
    message_starts(LIST_MAX);
    CHECK(listed(LIST_MAX) && g_c[LIST_MAX]->helped);
    for (int i = 0; i < LIST_MAX; i++)
        if (i != 5)
            CHECK_MSG(listed(i) && g_c[i]->helped, "helped comm %d dropped from the list", i);

    /* Closed, they leave it. */
    for (int i = 0; i <= LIST_MAX; i++)
        if (i != 5)
            message_ends(i);
    for (int i = 0; i < NCOMMS; i++) {
        closed(i);
        free(g_c[i]);
    }
    return check_report("test_help_list");
}
