/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL's network variables and the plugin (compat_env.h). I/O-free. */
#include "compat_env.h"
#include "params.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

static const struct rail_compat_var g_vars[] = {
#define RAIL_NCCL_ENV(name, handling, knob, def, as_if, meaning, plugin)                           \
    {name, RAIL_COMPAT_##handling, knob, def, as_if, meaning, plugin},
#include "nccl_env_table.h"
#undef RAIL_NCCL_ENV
};

#define NVARS ((int)(sizeof(g_vars) / sizeof(g_vars[0])))

int rail_compat_count(void)
{
    return NVARS;
}

const struct rail_compat_var *rail_compat_at(int i)
{
    return i >= 0 && i < NVARS ? &g_vars[i] : NULL;
}

const struct rail_compat_var *rail_compat_find(const char *name)
{
    for (int i = 0; name && i < NVARS; i++)
        if (strcmp(g_vars[i].name, name) == 0)
            return &g_vars[i];
    return NULL;
}

const char *rail_compat_handling_name(enum rail_compat_handling h)
{
    switch (h) {
    case RAIL_COMPAT_SAME:
        return "same semantics";
    case RAIL_COMPAT_MAPPED:
        return "mapped";
    case RAIL_COMPAT_NCCL:
        return "read by NCCL";
    default:
        return "not applicable";
    }
}

size_t rail_compat_markdown(char *buf, size_t len)
{
    struct rail_text_buf o = {buf, len, 0};
    rail_text_printf(
        &o, "| variable | NCCL default | NCCL's meaning | plugin | what the plugin does |\n");
    rail_text_printf(&o, "|---|---|---|---|---|\n");
    for (int i = 0; i < NVARS; i++) {
        const struct rail_compat_var *v = &g_vars[i];
        char how[96];
        if (v->handling == RAIL_COMPAT_MAPPED)
            snprintf(how, sizeof(how), "mapped to `%s`", v->knob);
        else
            snprintf(how, sizeof(how), "%s", rail_compat_handling_name(v->handling));
        char when[64] = "";
        if ((v->handling == RAIL_COMPAT_MAPPED || v->handling == RAIL_COMPAT_NA) && *v->as_if)
            snprintf(when, sizeof(when), " Set: WARN unless `%s`.", v->as_if);
        else if (v->handling == RAIL_COMPAT_MAPPED || v->handling == RAIL_COMPAT_NA)
            snprintf(when, sizeof(when), " Set: WARN.");
        rail_text_printf(&o, "| `%s` | %s | %s | %s | %s.%s |\n", v->name, v->nccl_default,
                         v->meaning, how, v->plugin, when);
    }
    return rail_text_finish(&o);
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

int rail_env_known(const char *name)
{
    if (!name)
        return 0;
    if (rail_compat_find(name))
        return 1;
    for (int i = 0; i < RAIL_PARAM_COUNT; i++)
        if (strcmp(rail_param_def((enum rail_param_id)i)->name, name) == 0)
            return 1;
    return 0;
}

/* Levenshtein distance, capped: names are short (< 96 characters). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 95 || lb > 95)
        return 1000;
    int row[96];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static void consider(const char *name, const char *cand, const char **best, int *best_d)
{
    int d = edit_distance(name, cand);
    if (d < *best_d)
        *best = cand, *best_d = d;
}

const char *rail_env_closest(const char *name)
{
    const char *best = NULL;
    int best_d = 1000;
    if (!name)
        return NULL;
    for (int i = 0; i < NVARS; i++)
        consider(name, g_vars[i].name, &best, &best_d);
    for (int i = 0; i < RAIL_PARAM_COUNT; i++)
        consider(name, rail_param_def((enum rail_param_id)i)->name, &best, &best_d);
    int len = (int)strlen(name);
    return best && best_d <= 3 && best_d * 3 < len ? best : NULL;
}

/* Whether value asks for what the plugin does: the same text, or the same number. */
static bool same_value(const char *value, const char *as_if)
{
    if (!*as_if)
        return false;
    if (strcmp(value, as_if) == 0)
        return true;
    char *e1, *e2;
    long a = strtol(value, &e1, 0), b = strtol(as_if, &e2, 0);
    return *value && !*e1 && !*e2 && e1 != value && a == b;
}

static bool seen_before(char *const *envp, int upto, const char *name, size_t nlen)
{
    for (int k = 0; k < upto; k++)
        if (strncmp(envp[k], name, nlen) == 0 && envp[k][nlen] == '=')
            return true;
    return false;
}

int rail_env_audit(char *const *envp, void (*cb)(void *arg, const struct rail_env_finding *f),
                   void *arg)
{
    int n = 0;
    for (int i = 0; envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        size_t nlen = eq ? (size_t)(eq - envp[i]) : 0;
        if (!eq || !has_prefix(envp[i], "NCCL_") || seen_before(envp, i, envp[i], nlen))
            continue;
        struct rail_env_finding f;
        memset(&f, 0, sizeof(f));
        snprintf(f.name, sizeof(f.name), "%.*s", (int)(nlen < 95 ? nlen : 95), envp[i]);
        f.value = eq + 1;
        if (nlen > 95) {
            f.kind = RAIL_ENV_UNKNOWN; /* longer than any name anyone reads */
        } else if ((f.var = rail_compat_find(f.name)) != NULL) {
            if (f.var->handling == RAIL_COMPAT_SAME || f.var->handling == RAIL_COMPAT_NCCL)
                continue;
            f.kind = same_value(f.value, f.var->as_if) ? RAIL_ENV_AS_IF : RAIL_ENV_NOT_HONOURED;
        } else if (rail_env_known(f.name)) {
            continue;
        } else if (has_prefix(f.name, "NCCL_IB_") || has_prefix(f.name, "NCCL_RAIL_")) {
            f.kind = RAIL_ENV_UNKNOWN;
            f.suggestion = rail_env_closest(f.name);
        } else {
            continue; /* other NCCL_* variables are NCCL's business */
        }
        n++;
        if (cb)
            cb(arg, &f);
    }
    return n;
}

void rail_env_finding_text(const struct rail_env_finding *f, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    buf[0] = '\0';
    if (!f)
        return;
    const struct rail_compat_var *v = f->var;
    switch (f->kind) {
    case RAIL_ENV_NOT_HONOURED:
        snprintf(buf, len, "%s=%.64s is set but not honoured by the net plugin: %s%s%s", f->name,
                 f->value ? f->value : "", v->plugin,
                 v->handling == RAIL_COMPAT_MAPPED ? " (see " : "",
                 v->handling == RAIL_COMPAT_MAPPED ? v->knob : "");
        if (v->handling == RAIL_COMPAT_MAPPED) {
            size_t u = strlen(buf);
            snprintf(buf + u, len - u, ")");
        }
        break;
    case RAIL_ENV_AS_IF:
        snprintf(buf, len, "%s=%.64s: the net plugin does not read it but behaves so", f->name,
                 f->value ? f->value : "");
        break;
    default:
        if (f->suggestion)
            snprintf(buf, len,
                     "%s is not a variable NCCL or the rail plugins read: ignored (did you mean "
                     "%s?)",
                     f->name, f->suggestion);
        else
            snprintf(buf, len, "%s is not a variable NCCL or the rail plugins read: ignored",
                     f->name);
    }
}
