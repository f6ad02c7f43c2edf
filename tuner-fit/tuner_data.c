/* SPDX-License-Identifier: Apache-2.0 */
#include "tuner_data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/cost_model.h"

static int find_name(const char *s, const char *(*name)(int), int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, name(i)) == 0)
            return i;
    return -1;
}

int td_find(const struct td *d, const char *name)
{
    for (int i = 0; i < d->nsys; i++)
        if (strcmp(d->names[i], name) == 0)
            return i;
    return -1;
}

static int sys_index(struct td *d, const char *name)
{
    int s = td_find(d, name);
    if (s >= 0 || d->nsys == TD_MAX_SYSTEMS)
        return s;
    snprintf(d->names[d->nsys], TD_NAME_LEN, "%s", name);
    return d->nsys++;
}

static int load_csv(const char *path, struct td *d)
{
    char line[1024];
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "tuner_data: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (int lineno = 1; fgets(line, sizeof(line), f); lineno++) {
        char *fl[9], *save = NULL, *p = line;
        int n = 0;
        if (lineno == 1)
            continue;
        for (char *tok; n < 9 && (tok = strtok_r(p, ",\n", &save)); p = NULL)
            fl[n++] = tok;
        if (n < 8 || d->nrows == TD_MAX_ROWS)
            goto bad;
        struct td_row *r = &d->rows[d->nrows];
        r->sys = sys_index(d, fl[0]);
        r->coll = find_name(fl[1], rail_coll_name, RAIL_NUM_COLLS);
        r->nranks = atoi(fl[2]);
        r->nnodes = atoi(fl[3]);
        r->bytes = strtoull(fl[4], NULL, 10);
        r->algo = find_name(fl[5], rail_algo_name, NCCL_NUM_ALGORITHMS);
        r->proto = find_name(fl[6], rail_proto_name, NCCL_NUM_PROTOCOLS);
        r->time_us = strtod(fl[7], NULL);
        if (r->sys < 0 || r->coll < 0 || r->algo < 0 || r->proto < 0 || r->nranks < 1 ||
            r->nnodes < 1 || r->nnodes > r->nranks || !(r->time_us > 0))
            goto bad;
        d->nrows++;
        continue;
    bad:
        fprintf(stderr, "tuner_data: %s:%d: bad row\n", path, lineno);
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

static int cmp_row(const void *a, const void *b)
{
    const struct td_row *x = a, *y = b;
    int k[] = {x->sys - y->sys, x->coll - y->coll, x->nnodes - y->nnodes, x->nranks - y->nranks};
    for (int i = 0; i < 4; i++)
        if (k[i])
            return k[i];
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return (x->algo * 3 + x->proto) - (y->algo * 3 + y->proto);
}

bool td_same_point(const struct td_row *a, const struct td_row *b)
{
    return a->sys == b->sys && a->coll == b->coll && a->nnodes == b->nnodes &&
           a->nranks == b->nranks && a->bytes == b->bytes;
}

int td_point_end(const struct td *d, int i)
{
    int j = i;
    while (j < d->nrows && td_same_point(&d->rows[i], &d->rows[j]))
        j++;
    return j;
}

int td_shape_end(const struct td *d, int i)
{
    const struct td_row *a = &d->rows[i];
    int j = i;
    while (j < d->nrows && d->rows[j].sys == a->sys && d->rows[j].coll == a->coll &&
           d->rows[j].nnodes == a->nnodes && d->rows[j].nranks == a->nranks)
        j++;
    return j;
}

int td_add_system(struct td *d, const char *name, const struct rail_topo *topo,
                  const struct td_row *rows, int n, char *err, size_t errlen)
{
    if (td_find(d, name) >= 0) {
        snprintf(err, errlen, "a second system named '%s'", name);
        return -1;
    }
    if (d->nsys == TD_MAX_SYSTEMS || n > TD_MAX_ROWS - d->nrows) {
        snprintf(err, errlen, "more than %d topologies or %d measured points in all",
                 TD_MAX_SYSTEMS, TD_MAX_ROWS);
        return -1;
    }
    int s = d->nsys++;
    snprintf(d->names[s], TD_NAME_LEN, "%s", name);
    d->topo[s] = *topo;
    for (int i = 0; i < n; i++) {
        d->rows[d->nrows] = rows[i];
        d->rows[d->nrows++].sys = s;
    }
    return 0;
}

/* Systems in name order, so indexes (and the fit's and folds' order) do not depend on the order
 * they were read in; then the rows sorted and each system's range. */
static void index_systems(struct td *d)
{
    char sorted[TD_MAX_SYSTEMS][TD_NAME_LEN];
    int map[TD_MAX_SYSTEMS], order[TD_MAX_SYSTEMS];
    static struct rail_topo topo[TD_MAX_SYSTEMS];
    memcpy(sorted, d->names, sizeof(sorted));
    qsort(sorted, (size_t)d->nsys, TD_NAME_LEN, (int (*)(const void *, const void *))strcmp);
    for (int s = 0; s < d->nsys; s++)
        for (int k = 0; k < d->nsys; k++)
            if (strcmp(d->names[s], sorted[k]) == 0) {
                map[s] = k;
                order[k] = s;
            }
    for (int i = 0; i < d->nrows; i++)
        d->rows[i].sys = map[d->rows[i].sys];
    for (int k = 0; k < d->nsys; k++)
        topo[k] = d->topo[order[k]];
    memcpy(d->topo, topo, sizeof(topo[0]) * (size_t)d->nsys);
    memcpy(d->names, sorted, sizeof(sorted));
    qsort(d->rows, (size_t)d->nrows, sizeof(d->rows[0]), cmp_row);
    for (int s = 0; s < d->nsys; s++) {
        d->lo[s] = d->nrows;
        d->hi[s] = 0;
    }
    for (int i = 0; i < d->nrows; i++) {
        int s = d->rows[i].sys;
        d->lo[s] = i < d->lo[s] ? i : d->lo[s];
        d->hi[s] = i + 1;
    }
}

void td_finish(struct td *d)
{
    index_systems(d);
}

int td_load(const char *dir, struct td *d)
{
    char path[1024], err[256];
    memset(d, 0, sizeof(*d));
    snprintf(path, sizeof(path), "%s/measurements.csv", dir);
    if (load_csv(path, d) < 0)
        return -1;
    index_systems(d);
    for (int s = 0; s < d->nsys; s++) {
        snprintf(path, sizeof(path), "%s/topo/%s.xml", dir, d->names[s]);
        if (rail_topo_load_nccl_xml(path, &d->topo[s], err, sizeof(err)) < 0) {
            fprintf(stderr, "tuner_data: %s\n", err);
            return -1;
        }
    }
    return 0;
}
