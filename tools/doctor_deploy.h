/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor, deployment checks: NCCL's configuration files merged into the environment the
 * way NCCL merges them (doctor_conf.c, conf.*), and the plugin libraries NCCL's loader would open
 * for NCCL_NET_PLUGIN / NCCL_TUNER_PLUGIN (doctor_plugins.c, plugin.*). */
#ifndef NCCL_RAIL_DOCTOR_DEPLOY_H
#define NCCL_RAIL_DOCTOR_DEPLOY_H

#include <stdbool.h>
#include <stddef.h>

#include "doctor.h"

/* ---- configuration files (NCCL 2.28 src/misc/param.cc) ----
 * NCCL reads NCCL_CONF_FILE when it is set and not empty, otherwise ~/.nccl.conf (the passwd home
 * of the user, not $HOME), then /etc/nccl.conf, and sets each NAME=value without overwriting: the
 * environment wins over every file, the first file over /etc/nccl.conf. Paths are read under
 * ctx->root. A line is skipped when it starts with '#' or has no '='; the name is everything
 * before the first '=' and the value everything after it, both taken literally (only the final
 * newline is removed), each cut at 1023 bytes. */
#define DOCTOR_CONF_MAX_BYTES (1 << 20) /* a larger file is reported, not read */
#define DOCTOR_CONF_FIELD_MAX 1023

/* One parsed line: 1 (name/value filled, NUL-terminated, cut like NCCL cuts them), 0 when NCCL
 * skips the line. line is one line without its newline. */
int doctor_conf_parse_line(const char *line, size_t len, char *name, size_t name_len, char *value,
                           size_t value_len);

/* Read the files into ctx (merged environment: ctx->env then files, NCCL's precedence) and add
 * conf.* findings. Later checks see the merged view through ctx->env. */
void doctor_read_conf(struct doctor_ctx *c, struct doctor_report *r);
void doctor_conf_release(struct doctor_ctx *c);

/* ---- plugin lookup (NCCL 2.28 src/plugin/plugin_open.cc, net.cc, tuner.cc) ---- */

/* What opening one library name gave. */
struct doctor_lib_probe {
    bool found;        /* dlopen succeeded */
    char path[512];    /* where (the link map's name); "" for the program itself */
    char err[512];     /* dlerror() text when not found */
    int net_abi;       /* newest ncclNetPlugin_vN NCCL 2.28 accepts (11..6), 0 when none */
    char net_name[64]; /* that table's name field */
    int tuner_abi;     /* newest ncclTunerPlugin_vN NCCL 2.28 accepts (5..2), 0 when none */
    char tuner_name[64];
};
/* Seam: open name (NULL = the program itself) the way NCCL does (RTLD_NOW|RTLD_LOCAL), fill out,
 * close it again. ctx->plugin_open NULL = the real dynamic loader. */
typedef void (*doctor_lib_open_fn)(void *ctx, const char *name, struct doctor_lib_probe *out);
void doctor_lib_open_real(void *ctx, const char *name, struct doctor_lib_probe *out);

/* The names NCCL tries for one plugin name, in order: name as given (or "<prefix>.so" when name
 * is NULL or empty), then "<prefix>-<name>.so" when name has no '/' and is not "lib*.so". A name
 * that is a case-insensitive prefix of "STATIC_PLUGIN" means the program itself: out[0] = "".
 * Returns the count (1 or 2). */
int doctor_plugin_names(const char *prefix, const char *name, char out[2][256]);

/* plugin.net / plugin.tuner findings from the merged environment. */
void doctor_check_plugins(const struct doctor_ctx *c, struct doctor_report *r);

#endif
