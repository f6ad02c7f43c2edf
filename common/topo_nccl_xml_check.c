/* SPDX-License-Identifier: Apache-2.0 */
/* Plausibility WARNs for NCCL topology XML (see topo_nccl_xml_check.h). */
#include "topo_nccl_xml_check.h"

#include "log.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_BUSID_LEN 32

struct busid_seen {
    char id[MAX_BUSID_LEN];
    long line;
};

struct check_ctx {
    const char *path;
    struct busid_seen *ids;
    size_t n, cap;
    int findings;
};

static bool is_elem(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* attr value lower-cased and trimmed into out; false when absent or too long. */
static bool attr_norm(const xmlNode *n, const char *name, char *out, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    const char *s = (const char *)v;
    size_t k = 0;
    bool ok = false;
    if (!v)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    for (; *s && k + 1 < len; s++)
        out[k++] = (char)tolower((unsigned char)*s);
    while (k > 0 && isspace((unsigned char)out[k - 1]))
        k--;
    out[k] = '\0';
    ok = !*s && k > 0;
    xmlFree(v);
    return ok;
}

static void note_busid(struct check_ctx *c, const xmlNode *n)
{
    char id[MAX_BUSID_LEN];
    if (!attr_norm(n, "busid", id, sizeof(id)))
        return;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 64;
        struct busid_seen *q = realloc(c->ids, ncap * sizeof(*q));
        if (!q)
            return; /* only a check: skip it rather than fail the load */
        c->ids = q;
        c->cap = ncap;
    }
    memcpy(c->ids[c->n].id, id, sizeof(id));
    c->ids[c->n].line = xmlGetLineNo(n);
    c->n++;
}

static void check_gpu(struct check_ctx *c, const xmlNode *gpu)
{
    char self[MAX_BUSID_LEN], target[MAX_BUSID_LEN];
    if (!gpu->parent || gpu->parent->type != XML_ELEMENT_NODE ||
        !attr_norm(gpu->parent, "busid", self, sizeof(self)))
        return;
    for (const xmlNode *l = gpu->children; l; l = l->next)
        if (is_elem(l, "nvlink") && attr_norm(l, "target", target, sizeof(target)) &&
            strcmp(self, target) == 0) {
            RAIL_WARN(NCCL_INIT, "%s:%ld: GPU %s has an NVLink to itself (loaded as NCCL does)",
                      c->path, xmlGetLineNo(l), self);
            c->findings++;
        }
}

static void walk(struct check_ctx *c, const xmlNode *n, int depth)
{
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(n, "pci"))
            note_busid(c, n);
        else if (is_elem(n, "gpu"))
            check_gpu(c, n);
        if (depth < 64)
            walk(c, n->children, depth + 1);
    }
}

static int cmp_seen(const void *a, const void *b)
{
    const struct busid_seen *x = a, *y = b;
    int r = strcmp(x->id, y->id);
    return r ? r : (x->line > y->line) - (x->line < y->line);
}

int rail_nccl_xml_check(xmlDocPtr doc, const char *path)
{
    struct check_ctx c = {.path = path ? path : "topology XML"};
    const xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    bool any = false;
    if (!root || !is_elem(root, "system"))
        return 0; /* the reader reports these */
    for (const xmlNode *n = root->children; n && !any; n = n->next)
        any = n->type == XML_ELEMENT_NODE;
    if (!any) {
        RAIL_WARN(NCCL_INIT, "%s:%ld: empty <system>: no CPU, GPU or NIC is described", c.path,
                  xmlGetLineNo(root));
        return 1;
    }
    walk(&c, root->children, 0);
    if (c.n > 1)
        qsort(c.ids, c.n, sizeof(c.ids[0]), cmp_seen);
    for (size_t i = 1; i < c.n; i++)
        if (strcmp(c.ids[i].id, c.ids[i - 1].id) == 0 &&
            (i < 2 || strcmp(c.ids[i].id, c.ids[i - 2].id) != 0)) {
            RAIL_WARN(NCCL_INIT,
                      "%s:%ld: bus id %s is also given at line %ld (two <pci> for one device)",
                      c.path, c.ids[i].line, c.ids[i].id, c.ids[i - 1].line);
            c.findings++;
        }
    free(c.ids);
    return c.findings;
}
