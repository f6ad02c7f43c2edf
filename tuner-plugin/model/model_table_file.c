/* SPDX-License-Identifier: Apache-2.0 */
#include "model/model_table_file.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "params.h"
#include "safe_file.h"

int rail_model_table_load(const char *path, struct rail_model_table *out, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = rail_file_read_all(path, RAIL_MODEL_TABLE_MAX, 0, &buf, &len, err, errlen);
    if (rc == 0)
        rc = rail_model_table_parse(buf, len, path, out, err, errlen);
    free(buf);
    return rc < 0 ? rc : 0;
}

/* One resolved value: the string and the table it gave (the embedded one's address for a bad
 * file or an empty value). Kept for the process's lifetime. */
struct table_entry {
    struct table_entry *next;
    char value[256];
    const struct rail_model_table *table;
    struct rail_model_table own; /* "none" or a file's table */
    char name[208];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct table_entry *g_tables;

static void resolve(struct table_entry *e)
{
    const struct rail_model_table *builtin = rail_model_table_builtin();
    char err[512];

    e->table = builtin;
    snprintf(e->name, sizeof(e->name), "embedded");
    if (!e->value[0])
        return;
    if (strcmp(e->value, "none") == 0) {
        /* No knowledge, the same caution: the embedded table's margins only. */
        e->own.margin0 = builtin->margin0;
        e->own.margin_slope = builtin->margin_slope;
        e->own.margin_out = builtin->margin_out;
        e->own.fade_nodes = builtin->fade_nodes;
        e->own.fade_bytes = builtin->fade_bytes;
        e->table = &e->own;
        snprintf(e->name, sizeof(e->name), "none");
        return;
    }
    if (rail_model_table_load(e->value, &e->own, err, sizeof(err)) < 0) {
        RAIL_WARN(NCCL_TUNING | NCCL_INIT, "NCCL_RAIL_MODEL_TABLE: %s; using the embedded table",
                  err);
        return;
    }
    e->table = &e->own;
    snprintf(e->name, sizeof(e->name), "%.200s", e->value);
}

const struct rail_model_table *rail_model_table_select(const char *value, const char **name)
{
    struct table_entry *e;
    char v[256];

    snprintf(v, sizeof(v), "%s", value ? value : "");
    pthread_mutex_lock(&g_lock);
    for (e = g_tables; e && strcmp(e->value, v) != 0; e = e->next)
        ;
    if (!e && (e = calloc(1, sizeof(*e))) != NULL) {
        memcpy(e->value, v, sizeof(v));
        resolve(e);
        e->next = g_tables;
        g_tables = e;
    }
    pthread_mutex_unlock(&g_lock);
    if (name)
        *name = e ? e->name : "embedded";
    return e ? e->table : rail_model_table_builtin();
}

const struct rail_model_table *rail_model_table_active(const char **name)
{
    return rail_model_table_select(rail_param_str(RAIL_PARAM_MODEL_TABLE), name);
}

const char *rail_model_table_name(const struct rail_model_table *t)
{
    const char *name = "?";
    if (t == rail_model_table_builtin())
        return "embedded";
    pthread_mutex_lock(&g_lock);
    for (const struct table_entry *e = g_tables; e; e = e->next)
        if (e->table == t) {
            name = e->name;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return name;
}

/* The process's tables go when the plugin is unloaded. */
__attribute__((destructor)) static void free_tables(void)
{
    struct table_entry *e = g_tables;
    g_tables = NULL;
    while (e) {
        struct table_entry *n = e->next;
        if (e->table == &e->own && strcmp(e->name, "none") != 0)
            rail_model_table_free(&e->own);
        free(e);
        e = n;
    }
}
