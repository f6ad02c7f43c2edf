/* SPDX-License-Identifier: Apache-2.0 */
/* Topology selection shared by the CLI commands. */
#ifndef NCCL_RAIL_CLI_TOPO_H
#define NCCL_RAIL_CLI_TOPO_H

#include <stddef.h>
#include <stdio.h>

#include "topo.h"

struct cli_topo_opts {
    const char *profile;
    const char *topo_file;
    const char *hwloc_xml;
    const char *sysfs_root;
};

/* At most one of profile/topo_file/hwloc_xml; none = discover like the plugin does. */
int cli_topo_load(const struct cli_topo_opts *o, struct rail_topo *t, char *err, size_t errlen);
void cli_topo_print_summary(FILE *f, const struct rail_topo *t);

#endif
