/* SPDX-License-Identifier: Apache-2.0 */
/* Plausibility checks on a parsed NCCL topology XML document, separate from the reader's
 * semantics: each finding is one WARN line naming the file and line; nothing is rejected (NCCL
 * itself loads these files, so the tuner must too). Checked: an empty <system/>, a bus id given
 * to two <pci> elements, a GPU with an <nvlink> whose target is its own bus id. */
#ifndef NCCL_RAIL_TOPO_NCCL_XML_CHECK_H
#define NCCL_RAIL_TOPO_NCCL_XML_CHECK_H

#include <libxml/tree.h>

/* Logs the findings; returns how many there were. */
int rail_nccl_xml_check(xmlDocPtr doc, const char *path);

#endif
