/* SPDX-License-Identifier: Apache-2.0 */
/* The knob table (params_table.h) and its pure parsers: no environment, no logging. The layer
 * below the logger, which reads NCCL_RAIL_LOG_STDERR through it. */
#ifndef NCCL_RAIL_PARAM_DEFS_H
#define NCCL_RAIL_PARAM_DEFS_H

#include <stdbool.h>
#include <stddef.h>

/* FRACTION: a decimal number; min and max are in millionths (0..50000 = 0..0.05). */
enum rail_param_type { RAIL_PT_INT, RAIL_PT_BOOL, RAIL_PT_STRING, RAIL_PT_ENUM, RAIL_PT_FRACTION };

enum rail_param_id {
#define RAIL_PARAM(id, name, type, def, min, max, choices, doc) RAIL_PARAM_##id,
#include "params_table.h"
#undef RAIL_PARAM
    RAIL_PARAM_COUNT
};

struct rail_param_def {
    const char *name;
    enum rail_param_type type;
    const char *def; /* default, as text ("" = unset) */
    long long min, max;
    const char *choices; /* ENUM only: "a|b|c" */
    const char *doc;
};

const struct rail_param_def *rail_param_def(enum rail_param_id id);
const char *rail_param_type_name(enum rail_param_type type);

/* Pure parser: 0 and *out on success; -EINVAL with a reason in err otherwise. */
int rail_param_parse_int(const struct rail_param_def *def, const char *text, long long *out,
                         char *err, size_t errlen);
/* FRACTION: 0 and *out (finite, within [min, max] millionths) or -EINVAL with the reason. */
int rail_param_parse_fraction(const struct rail_param_def *def, const char *text, double *out,
                              char *err, size_t errlen);
/* ENUM: index of text among choices (case-insensitive) or -EINVAL. */
int rail_param_parse_enum(const struct rail_param_def *def, const char *text, char *err,
                          size_t errlen);

/* The text of the WARN for an invalid value: the variable, the value, why, the accepted range and
 * what is used instead. Returns what snprintf returns. */
int rail_param_invalid_text(const struct rail_param_def *def, const char *value, const char *why,
                            char *buf, size_t len);

/* Markdown reference of the whole table (docs/configuration.md). Returns bytes written or needed.
 */
size_t rail_params_markdown(char *buf, size_t len);

#endif
