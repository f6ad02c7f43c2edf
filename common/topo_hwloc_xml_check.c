/* SPDX-License-Identifier: Apache-2.0 */
/* Shapes of hwloc XML that crash hwloc 2.9's import (see topo_hwloc_xml_check.h). */
#include "topo_hwloc_xml_check.h"

#include "strutil.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256

static bool is_elem(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static bool has(const xmlNode *n, const char *attr)
{
    return xmlHasProp(n, (const xmlChar *)attr) != NULL;
}

#define MAX_WORDS 64 /* bitmaps up to 2048 bits are compared; longer ones are not judged */

/* hwloc's bitmap text: comma-separated 32-bit hex words, most significant first, "0x" optional,
 * an empty word for a zero one, a leading "0xf...f," for an infinite set. Fills w[] least
 * significant first; returns the word count, MAX_WORDS + 1 when it is infinite or longer than
 * MAX_WORDS (not judged), -1 when the text is not such a bitmap. */
static int bitmap_words(const char *s, uint32_t w[MAX_WORDS])
{
    uint32_t tmp[MAX_WORDS];
    int n = 0;
    if (strncmp(s, "0xf...f", 7) == 0)
        return MAX_WORDS + 1;
    while (*s) {
        char *end;
        if (n == MAX_WORDS)
            return MAX_WORDS + 1;
        if (*s == ',') { /* an empty word (hwloc writes ",," for zero words) */
            tmp[n++] = 0;
            s++;
            continue;
        }
        unsigned long v = strtoul(s, &end, 16);
        if (end == s || v > 0xFFFFFFFFul || (*end && *end != ','))
            return -1;
        tmp[n++] = (uint32_t)v;
        s = *end ? end + 1 : end;
    }
    for (int i = 0; i < n; i++)
        w[i] = tmp[n - 1 - i];
    return n;
}

/* True when the root's cpuset and allowed_cpuset (both present) share no bit: hwloc 2.9 then
 * restricts the topology to nothing ("Topology became empty") and crashes instead of failing. */
static bool allowed_disjoint(const xmlNode *o, const char *set, const char *allowed)
{
    xmlChar *a = xmlGetProp(o, (const xmlChar *)set), *b = xmlGetProp(o, (const xmlChar *)allowed);
    uint32_t wa[MAX_WORDS], wb[MAX_WORDS];
    bool disjoint = false;
    if (a && b) {
        int na = bitmap_words((const char *)a, wa), nb = bitmap_words((const char *)b, wb);
        if (na >= 0 && nb >= 0 && na <= MAX_WORDS && nb <= MAX_WORDS) {
            disjoint = true;
            for (int i = 0; i < na && i < nb; i++)
                if (wa[i] & wb[i])
                    disjoint = false;
        }
    }
    xmlFree(a);
    xmlFree(b);
    return disjoint;
}

/* Bitmap attribute `sub` of a is not within `sup` of b (both present and judged): hwloc's
 * exporter never writes that, and hwloc 2.9 may restrict such a tree to nothing and crash. */
static bool not_within(const xmlNode *a, const char *sub, const xmlNode *b, const char *sup)
{
    xmlChar *x = xmlGetProp(a, (const xmlChar *)sub), *y = xmlGetProp(b, (const xmlChar *)sup);
    uint32_t wx[MAX_WORDS], wy[MAX_WORDS];
    bool out = false;
    if (x && y) {
        int nx = bitmap_words((const char *)x, wx), ny = bitmap_words((const char *)y, wy);
        if (nx >= 0 && ny >= 0 && nx <= MAX_WORDS && ny <= MAX_WORDS)
            for (int i = 0; i < nx; i++)
                if (wx[i] & ~(i < ny ? wy[i] : 0u))
                    out = true;
    }
    xmlFree(x);
    xmlFree(y);
    return out;
}

/* The name of the first set attribute of o that is not a bitmap as hwloc writes them, or NULL:
 * hwloc 2.9 reads malformed ones leniently, into sets that may leave nothing and crash it. */
static const char *bad_bitmap(const xmlNode *o)
{
    static const char *const k_sets[] = {"cpuset",  "complete_cpuset",  "allowed_cpuset",
                                         "nodeset", "complete_nodeset", "allowed_nodeset"};
    uint32_t w[MAX_WORDS];
    for (size_t i = 0; i < sizeof(k_sets) / sizeof(k_sets[0]); i++) {
        xmlChar *v = xmlGetProp(o, (const xmlChar *)k_sets[i]);
        bool bad = v && bitmap_words((const char *)v, w) < 0;
        xmlFree(v);
        if (bad)
            return k_sets[i];
    }
    return NULL;
}

static int check_object(const xmlNode *o, const char *path, int depth, char *err, size_t errlen)
{
    if (depth > MAX_DEPTH)
        return rail_fail(err, errlen, "%s:%ld: objects nested deeper than %d", path,
                         xmlGetLineNo(o), MAX_DEPTH);
    if (has(o, "cpuset") != has(o, "complete_cpuset"))
        return rail_fail(err, errlen, "%s:%ld: <object> has %s without %s", path, xmlGetLineNo(o),
                         has(o, "cpuset") ? "cpuset" : "complete_cpuset",
                         has(o, "cpuset") ? "complete_cpuset" : "cpuset");
    if (has(o, "nodeset") != has(o, "complete_nodeset"))
        return rail_fail(err, errlen, "%s:%ld: <object> has %s without %s", path, xmlGetLineNo(o),
                         has(o, "nodeset") ? "nodeset" : "complete_nodeset",
                         has(o, "nodeset") ? "complete_nodeset" : "nodeset");
    const char *bad = bad_bitmap(o);
    if (bad)
        return rail_fail(err, errlen,
                         "%s:%ld: <object> %s is not a bitmap (comma-separated 0x words)", path,
                         xmlGetLineNo(o), bad);
    if (not_within(o, "cpuset", o, "complete_cpuset"))
        return rail_fail(err, errlen, "%s:%ld: <object> cpuset is not within its complete_cpuset",
                         path, xmlGetLineNo(o));
    for (const xmlNode *c = o->children; c; c = c->next)
        if (is_elem(c, "object")) {
            if (not_within(c, "cpuset", o, "cpuset"))
                return rail_fail(err, errlen,
                                 "%s:%ld: <object> cpuset is not within its parent's cpuset", path,
                                 xmlGetLineNo(c));
            int rc = check_object(c, path, depth + 1, err, errlen);
            if (rc)
                return rc;
        }
    return 0;
}

int rail_hwloc_xml_check(xmlDocPtr doc, const char *path, char *err, size_t errlen)
{
    const xmlNode *root = xmlDocGetRootElement(doc), *top = NULL;
    xmlDtdPtr dtd = doc ? xmlGetIntSubset(doc) : NULL;
    xmlChar *type;
    bool machine;
    if (dtd && !dtd->SystemID)
        return rail_fail(err, errlen, "%s: <!DOCTYPE> without a system id (\"hwloc2.dtd\")", path);
    for (const xmlNode *c = root ? root->children : NULL; c; c = c->next)
        if (is_elem(c, "object")) {
            if (top)
                return rail_fail(err, errlen, "%s:%ld: a second top-level <object>", path,
                                 xmlGetLineNo(c));
            top = c;
        }
    if (!top)
        return rail_fail(err, errlen, "%s: no <object> in <topology>", path);
    type = xmlGetProp(top, (const xmlChar *)"type");
    machine = type && strcmp((const char *)type, "Machine") == 0;
    xmlFree(type);
    if (!machine)
        return rail_fail(err, errlen, "%s:%ld: the top-level <object> is not of type Machine", path,
                         xmlGetLineNo(top));
    int rc = check_object(top, path, 0, err, errlen);
    if (rc == 0 && allowed_disjoint(top, "cpuset", "allowed_cpuset"))
        rc = rail_fail(err, errlen,
                       "%s:%ld: the Machine's allowed_cpuset shares no processor with its cpuset "
                       "(nothing would be left)",
                       path, xmlGetLineNo(top));
    return rc;
}
