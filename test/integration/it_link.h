/* SPDX-License-Identifier: Apache-2.0 */
/* The cables of the fabric the scenarios run on: in the SoftRoCE VM the veth links (`ip link`,
 * `tc`, sysfs counters, as root), with the shm verbs provider the ports of its shared-memory
 * fabric (net-plugin/transport/shm_fabric.h: NCCL_RAIL_SHM_FABRIC), named shm0..shm3 where the VM
 * says veth0..veth3 (run.sh sets FABRIC_IF0..3 accordingly). */
#ifndef RAIL_IT_LINK_H
#define RAIL_IT_LINK_H

enum it_drop { IT_PASS_ALL = 0, IT_DROP_ALL, IT_DROP_ACKS };

/* 1 when scenarios may pull cables here: the fabric VM as root, or the shm provider. */
int it_links_usable(void);
/* `ip link set IF STATE` ("up" / "down"), or the shm port's cable end. */
int it_link_set(const char *ifname, const char *state);
/* What leaves ifname: every packet dropped, only acknowledgements, or nothing. */
int it_link_drop(const char *ifname, enum it_drop mode);
/* Bytes ifname sent. */
unsigned long long it_link_tx_bytes(const char *ifname);
/* The RDMA port of dev is ACTIVE. */
int it_dev_port_active(const char *dev);

#endif
