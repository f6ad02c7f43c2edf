/* SPDX-License-Identifier: Apache-2.0 */
/* Shape checks on an hwloc XML document before hwloc imports it. hwloc 2.9 (Debian 12) trusts
 * its input in places and crashes on some malformed files (fixed upstream later: an object with
 * a cpuset but no complete_cpuset, or a nodeset without complete_nodeset; a root that is not
 * the Machine; a DOCTYPE without a system id; a Machine whose allowed_cpuset shares no bit
 * with its cpuset; a set attribute that is not a bitmap; a cpuset outside its complete_cpuset or
 * its parent's cpuset). These shapes are refused here with file:line and
 * the reason; hwloc's exporter never writes them. */
#ifndef NCCL_RAIL_TOPO_HWLOC_XML_CHECK_H
#define NCCL_RAIL_TOPO_HWLOC_XML_CHECK_H

#include <libxml/tree.h>
#include <stddef.h>

/* 0, or -EINVAL with "path:line: reason" in err. */
int rail_hwloc_xml_check(xmlDocPtr doc, const char *path, char *err, size_t errlen);

#endif
