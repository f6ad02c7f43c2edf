/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor: node checks for the plugins, each a small module that reads sysfs/procfs under
 * a root prefix (a fixture in tests) and an injectable environment, and appends findings to a
 * report. No check writes anything or needs privileges; what it cannot read it reports as such.
 * docs/doctor.md lists every finding id, its severity rules and its fix. */
#ifndef NCCL_RAIL_DOCTOR_H
#define NCCL_RAIL_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "doctor_checks.h"
#include "doctor_report.h"

/* ---- driver (doctor_run.c) ---- */

/* Everything above in order (loads the topology first). Returns the process exit status:
 * 1 when any finding is an error, 0 otherwise. */
int doctor_run(struct doctor_ctx *c, struct doctor_report *r);

/* Free what the run allocated in the context (topology, merged environment). */
void doctor_ctx_release(struct doctor_ctx *c);

/* ---- output ---- */
void doctor_print_table(FILE *f, const struct doctor_ctx *c, const struct doctor_report *r);
/* JSON document (docs/doctor.schema.json); malloc'd string, NULL on out of memory. */
char *doctor_json(const struct doctor_ctx *c, const struct doctor_report *r);

#endif
