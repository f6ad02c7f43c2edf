/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail stats FILE [--watch]: pretty-prints a JSON telemetry snapshot written by the net
 * plugin (NCCL_RAIL_STATS_FILE). */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "telemetry/rail_stats_format.h"
#include "strutil.h"

static volatile sig_atomic_t g_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    g_interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: nccl-rail stats FILE [--watch] [--interval MS] [--count N]\n"
               "  Print the per-connection, per-rail table of a JSON telemetry snapshot\n"
               "  (NCCL_RAIL_STATS_FILE written with NCCL_RAIL_STATS_FORMAT=json).\n"
               "  --watch        re-read and redraw until interrupted\n"
               "  --interval MS  redraw period (default: the snapshot's interval, else 1000)\n"
               "  --count N      with --watch: stop after N redraws\n"
               "exit status: 0 ok, 2 usage or unreadable/malformed file\n");
}

/* One read + print; returns 0 or 2. */
static int show(const char *path, bool clear, uint64_t *interval_ms)
{
    struct rail_stats_snapshot s;
    char err[512];
    char *table = NULL;
    if (rail_stats_load_file(path, &s, err, sizeof(err)) != 0) {
        if (clear)
            fputs("\033[H\033[2J", stdout);
        fprintf(stderr, "nccl-rail stats: %s\n", err);
        fflush(stdout);
        return 2;
    }
    if (rail_stats_format_table(&s, &table) != 0) {
        rail_stats_snapshot_free(&s);
        fprintf(stderr, "nccl-rail stats: out of memory\n");
        return 2;
    }
    if (clear)
        fputs("\033[H\033[2J", stdout);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t now_ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
    char age[64];
    rail_stats_age_text(now_ms, s.time_unix_ms, age, sizeof(age));
    printf("%s: snapshot %s\n", path, age);
    fputs(table, stdout);
    fflush(stdout);
    if (interval_ms && s.interval_ms)
        *interval_ms = s.interval_ms;
    free(table);
    rail_stats_snapshot_free(&s);
    return 0;
}

int cli_stats(int argc, char **argv)
{
    const char *path = NULL;
    bool watch = false;
    long interval = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--watch") == 0) {
            watch = true;
        } else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
            if (rail_parse_long(argv[++i], 10, 10, 3600000, &interval) != 0) {
                fprintf(stderr, "nccl-rail stats: --interval '%s': expected 10..3600000 ms\n",
                        argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
            if (rail_parse_long(argv[++i], 10, 1, 1000000000L, &count) != 0) {
                fprintf(stderr, "nccl-rail stats: --count '%s': expected a positive number\n",
                        argv[i]);
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "nccl-rail stats: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "nccl-rail stats: one FILE only ('%s' is extra)\n", argv[i]);
            return 2;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    if (!watch)
        return show(path, false, NULL);

    signal(SIGINT, on_sigint);
    bool clear = isatty(STDOUT_FILENO);
    int rc = 0;
    for (long n = 0; !g_interrupted && (count == 0 || n < count); n++) {
        uint64_t period = interval ? (uint64_t)interval : 1000;
        /* A missing or half-written file is reported and retried: the writer may come later. */
        rc = show(path, clear, interval ? NULL : &period);
        if (count && n + 1 >= count)
            break;
        struct timespec ts = {(time_t)(period / 1000), (long)(period % 1000) * 1000000L};
        while (!g_interrupted && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    return rc;
}
