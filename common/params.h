/* SPDX-License-Identifier: Apache-2.0 */
/* Every knob of the project, declared once in params_table.h, read from the environment. */
#ifndef NCCL_RAIL_PARAMS_H
#define NCCL_RAIL_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "param_defs.h"

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

#endif
