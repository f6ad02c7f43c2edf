/* SPDX-License-Identifier: Apache-2.0 */
/* The project's one version (CMake project(VERSION)) and the git SHA it was built from, for
 * `nccl-rail --version`, `doctor --json` and the first INFO line of each plugin at init. */
#ifndef NCCL_RAIL_VERSION_H
#define NCCL_RAIL_VERSION_H

#include "nccl/nccl_common.h"

enum rail_plugin_kind { RAIL_PLUGIN_NET, RAIL_PLUGIN_TUNER };

const char *rail_version(void); /* "0.2.0" */
const char *rail_git_sha(void); /* "1a2b3c4d5e6f", or "unknown" outside a git checkout */
/* "nccl-rail 0.2.0 (git 1a2b3c4d5e6f)" */
const char *rail_version_string(void);

/* Install NCCL's logger and log the banner "nccl-rail X.Y.Z (git SHA): net plugin, ABI vN" at
 * INFO: the first line a plugin logs at each init, abi being the table NCCL picked; table (the
 * tuner's trained table in use, NULL for none) is named at the end of the line. */
void rail_version_banner(ncclDebugLogger_t logger, enum rail_plugin_kind kind, int abi,
                         const char *table);

#endif
