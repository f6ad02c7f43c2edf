/* SPDX-License-Identifier: Apache-2.0 */
#include "prof_format.h"

#include <errno.h>
#include <inttypes.h>

#include "nccl_names.h"

int rail_prof_file_name(char *buf, size_t len, uint64_t comm_id, int rank)
{
    int n = snprintf(buf, len, "nccl-rail-%016" PRIx64 "-r%d%s", comm_id, rank, RAIL_PROF_SUFFIX);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int rail_prof_write(FILE *f, const struct rail_prof_ctx *c, const struct rail_prof_record *recs,
                    uint32_t n, const struct rail_prof_counts *k, const char *about)
{
    int rc = 0;
    /* The first failed write keeps its errno (ENOSPC, EFBIG...), not a generic EIO. */
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (fprintf(f, __VA_ARGS__) < 0 && rc == 0)                                                \
            rc = errno ? -errno : -EIO;                                                            \
    } while (0)
    errno = 0;
    PUT("%s %d\n", RAIL_PROF_FORMAT, RAIL_PROF_VERSION);
    if (about)
        PUT("# %s\n", about);
    if (c->comm_name[0])
        PUT("# comm name \"%s\"\n", c->comm_name);
    PUT("comm 0x%016" PRIx64 " rank %d nranks %d nnodes %d\n", c->comm_id, c->rank, c->nranks,
        c->nnodes);
    PUT("# recorded %" PRIu64 " overwritten %" PRIu64 " busy %" PRIu64 " no_timing %" PRIu64
        " other %" PRIu64 " refused %" PRIu64 " abandoned %" PRIu64 "\n",
        k->recorded, k->overwritten, k->busy, k->no_timing, k->other, k->refused, k->abandoned);
    PUT("%s\n", RAIL_PROF_COLUMNS);
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const struct rail_prof_record *r = &recs[i];
        PUT("%" PRIu64 ",%s,%s,%s,%u,%" PRIu64 ",%.3f\n", r->seq, rail_coll_name(r->coll),
            rail_algo_name(r->algo), rail_proto_name(r->proto), (unsigned)r->nchannels, r->bytes,
            (double)r->gpu_ns / 1000.0);
    }
#undef PUT
    if (fflush(f) != 0 && rc == 0)
        rc = errno ? -errno : -EIO;
    return rc ? rc : ferror(f) ? -EIO : 0;
}
