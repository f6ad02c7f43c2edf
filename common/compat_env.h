/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL's own network variables (nccl_env_table.h) and what the plugin does with each: the table,
 * its Markdown for docs/compatibility.md, and an I/O-free audit of an environment that finds the
 * variables set but not honoured and the unknown NCCL_IB_* / NCCL_RAIL_* names (with the closest
 * known name). The net plugin logs the findings once at init; `nccl-rail doctor` lists them. */
#ifndef NCCL_RAIL_COMPAT_ENV_H
#define NCCL_RAIL_COMPAT_ENV_H

#include <stddef.h>

enum rail_compat_handling {
    RAIL_COMPAT_SAME,   /* honoured with NCCL's meaning (in params_table.h) */
    RAIL_COMPAT_MAPPED, /* not read; a NCCL_RAIL_* knob covers the need */
    RAIL_COMPAT_NCCL,   /* read by NCCL itself; the plugin is not involved */
    RAIL_COMPAT_NA      /* not applicable to the plugin */
};

struct rail_compat_var {
    const char *name;
    enum rail_compat_handling handling;
    const char *knob;         /* MAPPED: the NCCL_RAIL_* knob; "" otherwise */
    const char *nccl_default; /* NCCL 2.31's default, as text */
    const char *as_if;        /* MAPPED/NA: the value the plugin behaves as ("" = none) */
    const char *meaning;      /* what NCCL does with it */
    const char *plugin;       /* what the plugin does */
};

int rail_compat_count(void);
const struct rail_compat_var *rail_compat_at(int i);
/* NULL when name is not in the table. */
const struct rail_compat_var *rail_compat_find(const char *name);
const char *rail_compat_handling_name(enum rail_compat_handling h);

/* Markdown table of every entry (docs/compatibility.md). Returns bytes written or needed. */
size_t rail_compat_markdown(char *buf, size_t len);

enum rail_env_finding_kind {
    RAIL_ENV_NOT_HONOURED, /* MAPPED/NA set to a value the plugin does not behave as: WARN */
    RAIL_ENV_AS_IF,        /* MAPPED/NA set to the value the plugin behaves as: INFO */
    RAIL_ENV_UNKNOWN       /* NCCL_IB_* / NCCL_RAIL_* name nobody reads: WARN */
};

struct rail_env_finding {
    enum rail_env_finding_kind kind;
    char name[96];                     /* the variable (truncated when longer) */
    const char *value;                 /* points into the environment entry */
    const struct rail_compat_var *var; /* NOT_HONOURED / AS_IF */
    const char *suggestion;            /* UNKNOWN: closest known name, or NULL */
};

/* Whether a NCCL_IB_* / NCCL_RAIL_* / NCCL_NET_* name is known (params table or compat table). */
int rail_env_known(const char *name);
/* Closest known name to an unknown one (edit distance at most 3, and less than a third of its
 * length), or NULL. */
const char *rail_env_closest(const char *name);

/* Walks envp ("NAME=value" strings, NULL-terminated) and calls cb once per finding, in envp
 * order; a name that appears twice is reported once. Returns the number of findings. */
int rail_env_audit(char *const *envp, void (*cb)(void *arg, const struct rail_env_finding *f),
                   void *arg);

/* One log line for a finding, without the trailing newline. */
void rail_env_finding_text(const struct rail_env_finding *f, char *buf, size_t len);

#endif
