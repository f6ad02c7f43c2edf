/* SPDX-License-Identifier: Apache-2.0 */
/* GPU compute capabilities a topology file leaves out (NCCL_TOPO_FILE without <gpu sm>, or with
 * a device id the project does not know): NCCL fills them from the live GPUs, and so does the
 * tuner, from the CUDA driver (dlopen'ed, common/cuda_drv.c), matched by PCI bus id. */
#include <strings.h>

#include "cuda_drv.h"
#include "log.h"
#include "topo.h"
#include "topo_internal.h"

int rail_topo_fill_sm(struct rail_topo *t, const char (*busid)[16], const int *sm, int n)
{
    int filled = 0;
    for (int g = 0; t && g < t->n_gpus; g++) {
        if (t->gpus[g].sm > 0)
            continue;
        for (int i = 0; i < n; i++)
            if (sm[i] > 0 && strcasecmp(t->gpus[g].busid, busid[i]) == 0) {
                t->gpus[g].sm = sm[i];
                filled++;
                break;
            }
    }
    if (filled)
        rail_topo_finalize(t);
    return filled;
}

int rail_topo_fill_sm_from_cuda(struct rail_topo *t)
{
    char busid[RAIL_TOPO_MAX_GPUS][16];
    int sm[RAIL_TOPO_MAX_GPUS], n = 0, count = 0, rc;
    bool missing = false;
    for (int g = 0; t && g < t->n_gpus; g++)
        missing |= t->gpus[g].sm <= 0;
    if (!missing)
        return 0;
    if ((rc = rail_cuda_init()) < 0 || (rc = rail_cuda_device_count(&count)) < 0) {
        RAIL_INFO(NCCL_INIT | NCCL_TUNING,
                  "topology: GPU compute capability not in the file and no CUDA driver to ask (%s)",
                  rail_cuda_status());
        return rc;
    }
    for (int d = 0; d < count && n < RAIL_TOPO_MAX_GPUS; d++) {
        int major = 0, minor = 0;
        if (rail_cuda_device_busid(d, busid[n], sizeof(busid[n])) < 0 ||
            rail_cuda_device_attr(d, RAIL_CU_ATTR_CC_MAJOR, &major) < 0 ||
            rail_cuda_device_attr(d, RAIL_CU_ATTR_CC_MINOR, &minor) < 0)
            continue;
        sm[n++] = major * 10 + minor;
    }
    rc = rail_topo_fill_sm(t, (const char(*)[16])busid, sm, n);
    RAIL_INFO(NCCL_INIT | NCCL_TUNING,
              "topology: compute capability of %d GPU(s) taken from the CUDA driver (%d devices)",
              rc, count);
    return rc;
}
