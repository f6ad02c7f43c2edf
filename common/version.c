/* SPDX-License-Identifier: Apache-2.0 */
#include "version.h"

#include <stdbool.h>
#include <strings.h>

#include "log.h"
#include "params.h"
#include "rail_version.h" /* generated: build/generated/ */

/* Kept in every binary that logs the banner, so that `strings libnccl-net-rail.so | grep
 * 'nccl-rail version'` tells which build a node carries. */
__attribute__((used)) static const char rail_ident[] =
    "nccl-rail version " RAIL_VERSION " (git " RAIL_GIT_SHA ")";

const char *rail_version(void)
{
    return RAIL_VERSION;
}

const char *rail_git_sha(void)
{
    return RAIL_GIT_SHA;
}

const char *rail_version_string(void)
{
    return "nccl-rail " RAIL_VERSION " (git " RAIL_GIT_SHA ")";
}

void rail_version_banner(ncclDebugLogger_t logger, enum rail_plugin_kind kind, int abi,
                         const char *table)
{
    int net = kind == RAIL_PLUGIN_NET;
    /* A net plugin running on the test verbs provider says so in its first line. */
    const char *prov = net ? rail_param_str(RAIL_PARAM_VERBS_PROVIDER) : NULL;
    bool shm = prov && strcasecmp(prov, "shm") == 0;
    if (logger)
        rail_log_set_logger(logger);
    RAIL_INFO(NCCL_INIT | (net ? NCCL_NET : NCCL_TUNING), "%s: %s plugin, ABI v%d%s%s%s",
              rail_version_string(), net ? "net" : "tuner", abi,
              shm ? ", verbs provider shm (NCCL_RAIL_VERBS_PROVIDER=shm: a test provider, host "
                    "memory between processes of one host, no RDMA)"
                  : "",
              table ? ", model table " : "", table ? table : "");
    (void)rail_ident;
}
