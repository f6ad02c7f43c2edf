/* SPDX-License-Identifier: Apache-2.0 */
/* Every knob of the project, declared once in params_table.h. */
#ifndef NCCL_RAIL_PARAMS_H
#define NCCL_RAIL_PARAMS_H

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

/* Read the environment. Invalid values produce one WARN naming the variable, the value and the
 * accepted range, and the default is used. */
long long rail_param_int(enum rail_param_id id);
bool rail_param_bool(enum rail_param_id id);
/* FRACTION: the value, or the default after one WARN when invalid. */
double rail_param_fraction(enum rail_param_id id);
/* NULL when neither the environment nor the default gives a non-empty value. */
const char *rail_param_str(enum rail_param_id id);
/* ENUM: index into choices, or -1 when unset or invalid (invalid warns). */
int rail_param_enum(enum rail_param_id id);

/* Markdown reference of the whole table (docs/configuration.md). Returns bytes written or needed.
 */
size_t rail_params_markdown(char *buf, size_t len);

#endif
