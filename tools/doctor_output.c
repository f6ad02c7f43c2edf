/* SPDX-License-Identifier: Apache-2.0 */
/* The report rendered: the table for people and the JSON document (docs/doctor.schema.json). */
#include "doctor.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "version.h"

/* ---- table ---- */

static const char *nic_label(const struct rail_topo *t, int n, char *buf, size_t len)
{
    bool multi = false;
    for (int k = 0; k < t->n_nics; k++)
        if (k != n && strcmp(t->nics[k].name, t->nics[n].name) == 0)
            multi = true;
    if (multi)
        snprintf(buf, len, "%s:%d", t->nics[n].name, t->nics[n].port);
    else
        snprintf(buf, len, "%s", t->nics[n].name);
    rail_text_sanitize(buf);
    return buf;
}

static void print_matrix(FILE *f, const struct rail_topo *t)
{
    char lab[80];
    if (!t->n_gpus || !t->n_nics)
        return;
    fprintf(f, "GPU <-> NIC path classes (NUMA node in brackets, * = nearest active NIC):\n%-22s",
            "");
    for (int n = 0; n < t->n_nics; n++) {
        char col[96];
        snprintf(col, sizeof(col), "%s[%d]", nic_label(t, n, lab, sizeof(lab)), t->nics[n].numa);
        fprintf(f, " %12s", col);
    }
    fprintf(f, "\n");
    for (int g = 0; g < t->n_gpus; g++) {
        int best = rail_topo_gpu_best_path(t, g);
        char row[64];
        snprintf(row, sizeof(row), "GPU%d %s[%d]", g, t->gpus[g].busid, t->gpus[g].numa);
        rail_text_sanitize(row);
        fprintf(f, "%-22s", row);
        for (int n = 0; n < t->n_nics; n++) {
            char cell[16];
            snprintf(cell, sizeof(cell), "%s%s", rail_path_name((enum rail_path)t->path[g][n]),
                     t->nics[n].active && t->path[g][n] == best ? "*" : "");
            fprintf(f, " %12s", cell);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

void doctor_print_table(FILE *f, const struct doctor_ctx *c, const struct doctor_report *r)
{
    int wid = 2, wsub = 7;
    fprintf(f, "nccl-rail doctor: root %s%s%s\n\n", c->root, c->hwloc_xml ? ", hwloc XML " : "",
            c->hwloc_xml ? c->hwloc_xml : "");
    if (c->topo)
        print_matrix(f, c->topo);
    for (int i = 0; i < r->n; i++) {
        int a = (int)strlen(r->f[i].id), b = (int)strlen(r->f[i].subject);
        wid = a > wid ? a : wid;
        wsub = b > wsub ? b : wsub;
    }
    if (wsub > 28)
        wsub = 28;
    fprintf(f, "%-5s  %-*s  %-*s  %s\n", "SEV", wid, "ID", wsub, "SUBJECT", "FINDING");
    for (int i = 0; i < r->n; i++) {
        const struct doctor_finding *x = &r->f[i];
        fprintf(f, "%-5s  %-*s  %-*s  %s\n", doctor_sev_name(x->sev), wid, x->id, wsub, x->subject,
                x->message);
        if (x->fix[0])
            fprintf(f, "%-5s  %-*s  %-*s  fix: %s\n", "", wid, "", wsub, "", x->fix);
    }
    fprintf(f, "\n%d error(s), %d warning(s), %d info, %d ok%s\n", doctor_count(r, DOCTOR_ERROR),
            doctor_count(r, DOCTOR_WARN), doctor_count(r, DOCTOR_INFO), doctor_count(r, DOCTOR_OK),
            r->oom ? " (out of memory: some findings were dropped)" : "");
}

/* ---- JSON ---- */

/* json-c copies bytes as they are: a string from input goes in sanitized (valid UTF-8). */
static void put_str(json_object *o, const char *k, const char *v)
{
    char *copy = v ? strdup(v) : NULL;
    rail_text_sanitize(copy);
    json_object_object_add(o, k, copy ? json_object_new_string(copy) : json_object_new_null());
    free(copy);
}

static json_object *topo_json(const struct rail_topo *t)
{
    json_object *o = json_object_new_object(), *gpus = json_object_new_array(),
                *nics = json_object_new_array(), *paths = json_object_new_array();
    char lab[80];
    put_str(o, "origin", t->origin);
    for (int g = 0; g < t->n_gpus; g++) {
        json_object *x = json_object_new_object();
        json_object_object_add(x, "index", json_object_new_int(g));
        put_str(x, "busid", t->gpus[g].busid);
        json_object_object_add(x, "numa", json_object_new_int(t->gpus[g].numa));
        json_object_object_add(x, "sm", json_object_new_int(t->gpus[g].sm));
        json_object_array_add(gpus, x);
    }
    for (int n = 0; n < t->n_nics; n++) {
        const struct rail_nic *nic = &t->nics[n];
        json_object *x = json_object_new_object();
        put_str(x, "name", nic_label(t, n, lab, sizeof(lab)));
        put_str(x, "busid", nic->busid);
        json_object_object_add(x, "port", json_object_new_int(nic->port));
        json_object_object_add(x, "numa", json_object_new_int(nic->numa));
        put_str(x, "link_layer",
                nic->link_layer == RAIL_LINK_IB    ? "InfiniBand"
                : nic->link_layer == RAIL_LINK_ETH ? "Ethernet"
                                                   : "unknown");
        json_object_object_add(x, "speed_mbps", json_object_new_int(nic->speed_mbps));
        json_object_object_add(x, "active", json_object_new_boolean(nic->active));
        json_object_array_add(nics, x);
    }
    for (int g = 0; g < t->n_gpus; g++) {
        json_object *row = json_object_new_array();
        for (int n = 0; n < t->n_nics; n++)
            json_object_array_add(
                row, json_object_new_string(rail_path_name((enum rail_path)t->path[g][n])));
        json_object_array_add(paths, row);
    }
    json_object_object_add(o, "gpus", gpus);
    json_object_object_add(o, "nics", nics);
    json_object_object_add(o, "paths", paths);
    return o;
}

char *doctor_json(const struct doctor_ctx *c, const struct doctor_report *r)
{
    json_object *root = json_object_new_object(), *sum = json_object_new_object(),
                *list = json_object_new_array();
    char *out;
    if (!root || !sum || !list) {
        json_object_put(root);
        json_object_put(sum);
        json_object_put(list);
        return NULL;
    }
    put_str(root, "tool", "nccl-rail doctor");
    put_str(root, "version", rail_version());
    put_str(root, "git", rail_git_sha());
    json_object_object_add(root, "format", json_object_new_int(1));
    put_str(root, "root", c->root);
    put_str(root, "hwloc_xml", c->hwloc_xml);
    for (int s = DOCTOR_OK; s <= DOCTOR_ERROR; s++)
        json_object_object_add(sum, doctor_sev_name((enum doctor_sev)s),
                               json_object_new_int(doctor_count(r, (enum doctor_sev)s)));
    json_object_object_add(root, "summary", sum);
    json_object_object_add(root, "topology", c->topo ? topo_json(c->topo) : NULL);
    for (int i = 0; i < r->n; i++) {
        const struct doctor_finding *x = &r->f[i];
        json_object *o = json_object_new_object();
        put_str(o, "id", x->id);
        put_str(o, "severity", doctor_sev_name(x->sev));
        put_str(o, "subject", x->subject);
        put_str(o, "message", x->message);
        put_str(o, "fix", x->fix);
        json_object_array_add(list, o);
    }
    json_object_object_add(root, "findings", list);
    json_object_object_add(root, "exit_code",
                           json_object_new_int(doctor_count(r, DOCTOR_ERROR) || r->oom ? 1 : 0));
    out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    return out;
}
