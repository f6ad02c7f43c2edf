/* SPDX-License-Identifier: Apache-2.0 */
/* netbench's view of an NCCL net plugin: one set of calls (size_t sizes, no contexts) over
 * whichever ncclNetPlugin_vN table the library exports, v6 .. v12. Nothing here knows the
 * nccl-rail plugin: any net plugin .so can be measured. Calls return ncclResult_t values
 * (0 = ncclSuccess). */
#ifndef NCCL_RAIL_NETBENCH_ABI_H
#define NCCL_RAIL_NETBENCH_ABI_H

#include <stddef.h>

#include "nccl/nccl_net.h"

struct nb_net {
    void *dl;
    int version;       /* 6 .. 12 */
    const void *table; /* the ncclNet_vN_t */
    const char *name;  /* the table's name field */
    void *ctx;         /* v11+: the per-communicator context from init */
};

/* Log flags of nb_net_load: NB_LOG_INFO prints the plugin's INFO lines too (WARN always);
 * NB_LOG_RAW prints each line's format string without formatting its arguments (for a plugin
 * whose arguments do not match its format, which would crash the formatting). */
#define NB_LOG_INFO 1
#define NB_LOG_RAW  2

/* Loads `path` and initialises the table of version `want` (0: v11 first, then v12, v10 .. v6).
 * 0, or -1 with the reason in err. `verbose`: NB_LOG_* flags; the plugin's lines go to stderr. */
int nb_net_load(struct nb_net *n, const char *path, int want, int verbose, char *err,
                size_t errlen);
/* Uses `table`, an ncclNetPlugin_v`version` linked into the program (no library is loaded), and
 * initialises it; 0, or -1 with the reason in err. */
int nb_net_attach(struct nb_net *n, const void *table, int version, const char *name, char *err,
                  size_t errlen);
/* The logger the next nb_net_load / nb_net_attach hands to the plugin's init (NULL: netbench's,
 * which prints to stderr as nb_net_load's flags say). */
void nb_net_set_logger(ncclDebugLogger_t log);
void nb_net_finalize(struct nb_net *n);

int nb_net_devices(const struct nb_net *n, int *ndev);
/* Name and ptrSupport bits of device dev. */
int nb_net_dev_info(const struct nb_net *n, int dev, char *name, size_t namelen, int *ptr_support);

/* v9+: fuses physical devices devs[0..ndevs) into one virtual NIC with the table's makeVDevice
 * (what NCCL does for NCCL_NET_MERGE / fused NICs); *d is the new device. ncclInvalidUsage when
 * the table has no makeVDevice (v6 .. v8, or a NULL slot). */
int nb_net_make_vdev(const struct nb_net *n, const int *devs, int ndevs, int *d);

/* The device called `name`; "a+b" that no device is called: the plugin's fused virtual NIC of
 * a and b, made with makeVDevice (how NCCL fuses NICs; the nccl-rail plugin names its
 * NCCL_RAIL_RAILS groups "a+b" itself, so it is found by name first). The device must support
 * host memory. 0 with *dev set, or -1 with the reason in err. */
int nb_net_find_dev(const struct nb_net *n, const char *name, int *dev, char *err, size_t errlen);

int nb_net_listen(const struct nb_net *n, int dev, void *handle, void **lc);
int nb_net_connect(const struct nb_net *n, int dev, void *handle, void **sc);
int nb_net_accept(const struct nb_net *n, void *lc, void **rc);
int nb_net_reg(const struct nb_net *n, void *comm, void *data, size_t size, void **mh);
int nb_net_dereg(const struct nb_net *n, void *comm, void *mh);
int nb_net_isend(const struct nb_net *n, void *sc, void *data, size_t size, int tag, void *mh,
                 void **req);
/* One receive (n = 1). */
int nb_net_irecv(const struct nb_net *n, void *rc, void *data, size_t size, int tag, void *mh,
                 void **req);
int nb_net_test(const struct nb_net *n, void *req, int *done, int *size);
int nb_net_close_send(const struct nb_net *n, void *sc);
int nb_net_close_recv(const struct nb_net *n, void *rc);
int nb_net_close_listen(const struct nb_net *n, void *lc);

#endif
