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

/* Defined by the tuner's model table module (tuner-plugin/model/model_table_file.c) where it is
 * linked in (the tuner library, the CLI, the tests), absent from the net plugin's library: the
 * trained table the tuner uses (NCCL_RAIL_MODEL_TABLE), named in the tuner's first INFO line. */
extern const char *rail_tuner_banner_table(void) __attribute__((weak));

void rail_version_banner(ncclDebugLogger_t logger, enum rail_plugin_kind kind, int abi)
{
    int net = kind == RAIL_PLUGIN_NET;
    /* A net plugin running on the test verbs provider says so in its first line. */
    const char *prov = net ? rail_param_str(RAIL_PARAM_VERBS_PROVIDER) : NULL;
    bool shm = prov && strcasecmp(prov, "shm") == 0;
    if (logger)
        rail_log_set_logger(logger);
    const char *table = !net && rail_tuner_banner_table ? rail_tuner_banner_table() : NULL;
    RAIL_INFO(NCCL_INIT | (net ? NCCL_NET : NCCL_TUNING), "%s: %s plugin, ABI v%d%s%s%s",
              rail_version_string(), net ? "net" : "tuner", abi,
              shm ? ", verbs provider shm (NCCL_RAIL_VERBS_PROVIDER=shm: a test provider, host "
                    "memory between processes of one host, no RDMA)"
                  : "",
              table ? ", model table " : "", table ? table : "");
    (void)rail_ident;
}
