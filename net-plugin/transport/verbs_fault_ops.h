/* SPDX-License-Identifier: Apache-2.0 */
/* Fault injection at the verbs seam (compiled only with -DRAIL_FAULT_INJECTION=ON): an ops table
 * in front of the current one that applies an NCCL_RAIL_FAULT spec (verbs_fault.h). */
#ifndef NCCL_RAIL_VERBS_FAULT_OPS_H
#define NCCL_RAIL_VERBS_FAULT_OPS_H

#include <stddef.h>

/* Parses spec and puts the fault table in front of rail_ibv. Call before any device is opened,
 * once. 0 (number of rules in *nrules), or -EINVAL with the reason in err (nothing installed). */
int rail_fault_install(const char *spec, int *nrules, char *err, size_t errlen);

#endif
