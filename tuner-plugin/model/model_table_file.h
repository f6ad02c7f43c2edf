/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_MODEL_TABLE=FILE|none: which trained table (model_table.h) the tuner uses. Unset or
 * empty: the table embedded in the build; "none": no trained knowledge (the model's prior with
 * the embedded table's margins: its do-no-harm rules, no coefficient, cover or residual); FILE: a
 * table written by `nccl-rail fit` or `bench/tuner_eval --fit`, read as a calibration file is
 * (safe_file.h: non-blocking open, regular files only, at most RAIL_MODEL_TABLE_MAX bytes;
 * errors "FILE:LINE: reason"). A bad file gives one WARN naming the variable, and the embedded
 * table is used. Each value is resolved once per process; the tables stay for its lifetime
 * (every tuner context points at one). Thread-safe. */
#ifndef NCCL_RAIL_MODEL_TABLE_FILE_H
#define NCCL_RAIL_MODEL_TABLE_FILE_H

#include <stddef.h>

#include "model/model_table.h"

/* Read and parse a table file: 0, or a negative errno with "FILE: reason" / "FILE:LINE: reason"
 * in err (out empty). */
int rail_model_table_load(const char *path, struct rail_model_table *out, char *err, size_t errlen);

/* The table for a value of NCCL_RAIL_MODEL_TABLE (NULL or "": the embedded one). Never NULL; a
 * bad file WARNs once and gives the embedded table. *name (when not NULL) names the table in
 * use: "embedded", "none" or the file's path (at most 200 characters). */
const struct rail_model_table *rail_model_table_select(const char *value, const char **name);

/* rail_model_table_select(NCCL_RAIL_MODEL_TABLE). */
const struct rail_model_table *rail_model_table_active(const char **name);

/* The name of a table returned by rail_model_table_select / _active ("embedded" for the
 * embedded table, "?" for one from elsewhere: a caller's own). */
const char *rail_model_table_name(const struct rail_model_table *t);

#endif
