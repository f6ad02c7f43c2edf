/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 22: the parsed calibration is one per process, shared read-only by every tuner context.
 * 1,000 communicators with a calibration file at the documented maximum (RAIL_CALIB_MAX_ROWS rows
 * or RAIL_CALIB_MAX_FILE bytes) stay under 100 MB of resident memory; each context used to parse
 * and keep its own copy (about 20 MB each). Memory is measured (VmRSS, VmHWM), not time. Under
 * AddressSanitizer (shadow memory, quarantine) the absolute bound does not apply: 50 contexts,
 * and the growth per context after the first is checked in both builds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/calibration.h"
#include "check.h"
#include "log.h"
#include "abi/tuner_core.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define MB (1024L * 1024L)

static char g_dir[] = "/tmp/rail_calib_memory_XXXXXX";

/* VmRSS or VmHWM of this process in bytes, -1 when unknown. */
static long status_bytes(const char *key)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, key, strlen(key)) == 0)
            kb = strtol(line + strlen(key) + 1, NULL, 10);
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* The largest valid calibration the bounds allow: as many rows as RAIL_CALIB_MAX_ROWS and
 * RAIL_CALIB_MAX_FILE let, within the per-series limits (256 sizes x 32 node counts). */
static int write_max_file(const char *path, int *rows, long *bytes)
{
    static const char *const colls[] = {"AllReduce", "AllGather", "Broadcast", "Reduce"};
    static const char *const algos[] = {"Ring", "Tree", "PAT", "NVLS"};
    static const char *const protos[] = {"LL", "LL128", "Simple"};
    FILE *f = fopen(path, "w");
    long size;
    int n = 0;
    if (!f)
        return -1;
    size = fprintf(f, "%s %d\n", RAIL_CALIB_FORMAT, RAIL_CALIB_VERSION);
    for (int rpn = 1; rpn <= 2; rpn++)
        for (int c = 0; c < 4; c++)
            for (int a = 0; a < 4; a++)
                for (int p = 0; p < 3; p++)
                    for (int nodes = 1; nodes <= RAIL_CALIB_MAX_NODECNT; nodes++)
                        for (int b = 1; b <= RAIL_CALIB_MAX_POINTS; b++) {
                            char row[96];
                            int len =
                                snprintf(row, sizeof(row), "%s,%s,%s,%d,%d,%d,%d.5\n", colls[c],
                                         algos[a], protos[p], rpn * nodes, nodes, b, b);
                            if (n == RAIL_CALIB_MAX_ROWS || size + len > (long)RAIL_CALIB_MAX_FILE)
                                goto done;
                            fputs(row, f);
                            size += len;
                            n++;
                        }
done:
    *rows = n;
    *bytes = size;
    return fclose(f);
}

static void quiet(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                  const char *fmt, ...)
{
    (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

int main(void)
{
    enum { CONTEXTS = 1000 };
    static struct rail_tuner *t[CONTEXTS];
    struct rail_topo topo;
    char path[300], err[256];
    int rows = 0, made = 0;
    long bytes = 0, rss0, rss1 = 0;
    const long limit = 100 * MB;

    CHECK(mkdtemp(g_dir) != NULL);
    snprintf(path, sizeof(path), "%s/max.cal", g_dir);
    CHECK_EQ_INT(write_max_file(path, &rows, &bytes), 0);
    printf("calibration file: %d rows, %ld bytes\n", rows, bytes);
    CHECK(rows > RAIL_CALIB_MAX_ROWS * 9 / 10);
    CHECK_EQ_INT(rail_topo_load_profile("aws-p5", &topo, err, sizeof(err)), 0);
    rail_log_set_logger(quiet);

    struct rail_tuner_opts o = {.topo = &topo, .lenient = 0, .calib_path = path};
    rss0 = status_bytes("VmRSS:");
    long rss_first = 0;
#if UNDER_ASAN
    const int want = 50; /* the growth per context after the first is what is checked */
#else
    const int want = CONTEXTS;
#endif
    for (int i = 0; i < want; i++, made++) {
        if (rail_tuner_create(&t[i], (uint64_t)i + 1, 16, 8, NULL, &o) != 0 || !t[i])
            break;
        rss1 = status_bytes("VmRSS:");
        if (i == 0)
            rss_first = rss1; /* the one parsed copy is in */
        if (rss1 > limit && !UNDER_ASAN)
            break; /* per-context copies: stop before the machine runs out */
    }
    printf("%d contexts: VmRSS %ld MB (before them %ld MB, after the first %ld MB), VmHWM %ld MB\n",
           made, rss1 / MB, rss0 / MB, rss_first / MB, status_bytes("VmHWM:") / MB);
    CHECK_EQ_INT(made, want);
    if (!UNDER_ASAN) {
        CHECK_MSG(rss1 < limit, "VmRSS %ld MB", rss1 / MB);
        CHECK_MSG(status_bytes("VmHWM:") < limit, "VmHWM %ld MB", status_bytes("VmHWM:") / MB);
    }
    /* Every context after the first adds its own state only (~75 KB), never a copy of the rows
     * (~20 MB); under ASan, redzones and quarantine allowed for. */
    CHECK_MSG(made > 1 && (rss1 - rss_first) / (made - 1) < MB / 2,
              "%ld KB per context after the first",
              made > 1 ? (rss1 - rss_first) / (made - 1) / 1024 : 0);
    CHECK(made > 0 && t[0]->calib_active);
    for (int i = 0; i < made; i++)
        rail_tuner_destroy(t[i]);
    rail_log_set_logger(NULL);
    unlink(path);
    rmdir(g_dir);
    return check_report("test_calib_memory");
}
