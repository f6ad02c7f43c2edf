/* SPDX-License-Identifier: Apache-2.0 */
/* Shapes of hwloc XML that crash hwloc 2.9's import (see topo_hwloc_xml_check.h). */
#include "topo_hwloc_xml_check.h"

#include "strutil.h"

#include <errno.h>
#include <stdbool.h>
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
    for (const xmlNode *c = o->children; c; c = c->next)
        if (is_elem(c, "object")) {
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
    return check_object(top, path, 0, err, errlen);
}
