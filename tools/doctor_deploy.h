/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor, deployment checks: NCCL's configuration files merged into the environment the
 * way NCCL merges them (doctor_conf.c, conf.*), and the plugin libraries NCCL's loader would open
 * for NCCL_NET_PLUGIN / NCCL_TUNER_PLUGIN (doctor_plugins.c, plugin.*). */
#ifndef NCCL_RAIL_DOCTOR_DEPLOY_H
#define NCCL_RAIL_DOCTOR_DEPLOY_H

#include <stdbool.h>
#include <stddef.h>

#include "doctor_checks.h"

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

/* ---- plugin lookup (NCCL 2.28 src/plugin/plugin_open.cc, net.cc, tuner.cc) ----
 * No library is ever loaded: a library a snapshot or a configuration file names could run code
 * (constructors) as the doctor's user, often root. The lookup is the dynamic loader's, done on
 * the file system under ctx->root (beneath it, root_path.h), and a library found is read as
 * data (doctor_elf.c): its dynamic symbols give the plugin tables and their name fields. */

/* What looking up one library name gave. */
struct doctor_lib_probe {
    bool found;        /* a library of this machine's kind is there */
    char path[512];    /* where, as the loader would name it; "" for the program itself */
    char err[512];     /* why not, when not found */
    int net_abi;       /* newest ncclNetPlugin_vN NCCL 2.28 accepts (11..6), 0 when none */
    char net_name[64]; /* that table's name field ("" when it cannot be read) */
    int tuner_abi;     /* newest ncclTunerPlugin_vN NCCL 2.28 accepts (5..2), 0 when none */
    char tuner_name[64];
};
/* Seam: look name up (NULL = the program itself), fill out. ctx->plugin_open NULL means
 * doctor_lib_locate: a name with a '/' is that path; otherwise the directories of
 * LD_LIBRARY_PATH (merged environment), the entry of /etc/ld.so.cache, then the system
 * directories (/lib/<multiarch>, /usr/lib/<multiarch>, /lib, /usr/lib), as glibc searches them;
 * a file of another kind (not ELF, another machine) is skipped as glibc skips it. */
typedef void (*doctor_lib_open_fn)(void *ctx, const char *name, struct doctor_lib_probe *out);
void doctor_lib_locate(const struct doctor_ctx *c, const char *name, struct doctor_lib_probe *out);

/* The plugin tables in an ELF image (pure): 0 with net_abi/net_name/tuner_abi/tuner_name set
 * (0 and "" when absent), or -ENOEXEC with the reason in why (not ELF, another machine or word
 * size, no dynamic symbol table). */
int doctor_elf_tables(const void *data, size_t len, struct doctor_lib_probe *out, char *why,
                      size_t whylen);
/* The path /etc/ld.so.cache (glibc's new format) gives for a library name on this machine's
 * architecture (pure): 0, -ENOENT when it has no entry, -EINVAL when it is not such a cache. */
int doctor_ldcache_lookup(const void *data, size_t len, const char *name, char *out, size_t outlen);

/* The names NCCL tries for one plugin name, in order: name as given (or "<prefix>.so" when name
 * is NULL or empty), then "<prefix>-<name>.so" when name has no '/' and is not "lib*.so". A name
 * that is a case-insensitive prefix of "STATIC_PLUGIN" means the program itself: out[0] = "".
 * Returns the count (1 or 2). */
int doctor_plugin_names(const char *prefix, const char *name, char out[2][256]);

/* plugin.net / plugin.tuner findings from the merged environment. */
void doctor_check_plugins(const struct doctor_ctx *c, struct doctor_report *r);

#endif
