/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail: the project's command-line tool. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "version.h"

static void usage(FILE *f)
{
    fprintf(
        f, "usage: nccl-rail COMMAND [options]\n"
           "commands:\n"
           "  explain   print the tuner's decision table for a topology and communicator shape\n"
           "  calibrate turn nccl-tests logs of forced algorithm/protocol runs into a calibration\n"
           "            file for NCCL_RAIL_CALIBRATION_FILE\n"
           "  fit       fit the tuner's trained table on forced-pair measurements (logs,\n"
           "            calibration files) for NCCL_RAIL_MODEL_TABLE\n"
           "  sweep     print the nccl-tests runs that calibrate needs for a shape\n"
           "  params    print the configuration reference (--markdown; --compat-markdown: NCCL's "
           "IB/NET variables)\n"
           "  doctor    check this node (or a sysfs snapshot) for what the plugins need\n"
           "  stats     print a multi-rail telemetry snapshot (NCCL_RAIL_STATS_FILE)\n"
           "  help      this text\n"
           "  version   print the version and the git commit it was built from (--version)\n"
           "run 'nccl-rail COMMAND --help' for the options of a command\n");
}

static int run_command(int argc, char **argv)
{
    if (strcmp(argv[1], "explain") == 0)
        return cli_explain(argc - 1, argv + 1);
    if (strcmp(argv[1], "calibrate") == 0)
        return cli_calibrate(argc - 1, argv + 1);
    if (strcmp(argv[1], "fit") == 0)
        return cli_fit(argc - 1, argv + 1);
    if (strcmp(argv[1], "sweep") == 0)
        return cli_sweep(argc - 1, argv + 1);
    if (strcmp(argv[1], "params") == 0)
        return cli_params(argc - 1, argv + 1);
    if (strcmp(argv[1], "doctor") == 0)
        return cli_doctor(argc - 1, argv + 1);
    if (strcmp(argv[1], "stats") == 0)
        return cli_stats(argc - 1, argv + 1);
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0 ||
        strcmp(argv[1], "-V") == 0) {
        printf("%s\n", rail_version_string());
        return 0;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "nccl-rail: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

/* What a command prints is often its product (sweep > plan.sh, doctor --json > report): a write
 * to stdout that failed (a full disk, a closed descriptor) makes the exit status non-zero, with
 * the reason. stdout goes out in 64 KiB blocks when it is not a terminal, so the final flush
 * usually carries the failing write and its errno. */
static int finish(int rc)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        fprintf(stderr, "nccl-rail: cannot write the output: %s\n",
                e ? strerror(e) : "an earlier write to standard output failed");
        rc = rc ? rc : 1;
    }
    if (fflush(stderr) != 0 || ferror(stderr))
        rc = rc ? rc : 1;
    return rc;
}

int main(int argc, char **argv)
{
    static char outbuf[1 << 16];
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
    if (argc < 2) {
        usage(stderr);
        return finish(2);
    }
    return finish(run_command(argc, argv));
}
