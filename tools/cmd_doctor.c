/* nccl-rail doctor: checks this node (or a sysfs snapshot) for what the plugins need. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "doctor.h"

extern char **environ;

static void doctor_usage(FILE *f)
{
    fprintf(f, "usage: nccl-rail doctor [--root DIR] [--hwloc-xml FILE] [--json]\n"
               "  --root DIR         read /sys, /proc and /dev under DIR (a snapshot or fixture);\n"
               "                     default: this node\n"
               "  --hwloc-xml FILE   topology from an hwloc XML export instead of hwloc/sysfs\n"
               "  --json             JSON output (docs/doctor.schema.json)\n"
               "exit status: 0 no errors, 1 at least one error finding, 2 usage\n"
               "docs/doctor.md explains every finding.\n");
}

int cli_doctor(int argc, char **argv)
{
    static const struct option longopts[] = {{"root", required_argument, 0, 'r'},
                                             {"hwloc-xml", required_argument, 0, 'x'},
                                             {"json", no_argument, 0, 'j'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    struct doctor_ctx c = {.root = "/", .env = {.vars = environ}};
    struct doctor_report r;
    struct stat st;
    int ch, json = 0, rc;

    optind = 1;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'r':
            c.root = optarg;
            break;
        case 'x':
            c.hwloc_xml = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            doctor_usage(stdout);
            return 0;
        default:
            doctor_usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "doctor: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (stat(c.root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "doctor: --root %s is not a directory\n", c.root);
        return 2;
    }
    doctor_report_init(&r);
    rc = doctor_run(&c, &r);
    if (json) {
        char *text = doctor_json(&c, &r);
        if (!text) {
            fprintf(stderr, "doctor: out of memory\n");
            rc = 1;
        } else {
            puts(text);
            free(text);
        }
    } else {
        doctor_print_table(stdout, &c, &r);
    }
    doctor_report_free(&r);
    doctor_ctx_release(&c);
    return rc;
}
