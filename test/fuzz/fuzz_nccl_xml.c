/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL topology XML (NCCL_TOPO_FILE) through the file loader: safe read, libxml2 from memory,
 * the plausibility checks and the reader's semantics. Counts stay within the topology limits. */
#include "fuzz_util.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rail_topo t;
    char err[512];
    if (size > (1 << 20))
        return 0;
    fuzz_quiet();
    if (rail_topo_load_nccl_xml(fuzz_file(data, size, ".xml"), &t, err, sizeof(err)) == 0 &&
        (t.n_gpus < 0 || t.n_gpus > RAIL_TOPO_MAX_GPUS || t.n_nics < 0 ||
         t.n_nics > RAIL_TOPO_MAX_NICS))
        fuzz_fail("%d GPUs, %d NICs", t.n_gpus, t.n_nics);
    return 0;
}
