/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor: checks this node (or a sysfs snapshot) for what the plugins need. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cuda_drv.h"
#include "doctor.h"
#include "gdr/gdr_policy.h"
#include "nccl/nccl_net.h"
#include "transport/verbs_lib.h"

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

/* The live node's dma-buf state through the CUDA driver (dlopen'ed, never linked), and what the
 * net plugin's GDR policy makes of it (the ibv_reg_dmabuf_mr probe is the plugin's own, at run
 * time: here it counts as not probed). */
static int live_gdr_probe(void *ctx, bool peermem, struct doctor_gdr_state *out)
{
    struct rail_gdr_inputs in = {.dev = "the HCAs",
                                 .peermem = peermem ? rail_gdr_peermem_files[0] : NULL,
                                 .cuda_dmabuf = -1,
                                 .dmabuf_probe = RAIL_GDR_PROBE_NONE,
                                 .path = RAIL_GDR_PATH_UNKNOWN,
                                 .dmabuf_enable = true};
    struct rail_gdr_decision d;
    int n = 0;
    (void)ctx;
    memset(out, 0, sizeof(*out));
    if (rail_cuda_init() == 0 && rail_cuda_device_count(&n) == 0 && n > 0) {
        int v = 0, all = 1, cc = 0;
        in.cuda = 1;
        (void)rail_cuda_driver_version(&in.cuda_version);
        for (int g = 0; g < n; g++) {
            if (rail_cuda_device_attr(g, RAIL_CU_ATTR_DMA_BUF_SUPPORTED, &v) != 0 || !v)
                all = 0;
            if (rail_cuda_device_attr(g, RAIL_CU_ATTR_CC_MAJOR, &v) == 0 && (!cc || v < cc))
                cc = v;
        }
        in.cuda_dmabuf = all;
        in.cc_major = cc;
        out->dmabuf = all ? DOCTOR_DMABUF_SUPPORTED : DOCTOR_DMABUF_UNSUPPORTED;
    } else {
        out->dmabuf = DOCTOR_DMABUF_UNKNOWN;
    }
    rail_gdr_decide(&in, &d);
    snprintf(out->plugin_mode, sizeof(out->plugin_mode), "%s",
             d.peermem  ? "nvidia-peermem (ibv_reg_mr)"
             : d.dmabuf ? "dma-buf"
                        : "host staging (no GPUDirect)");
    snprintf(out->detail, sizeof(out->detail), "%.200s%s", d.reason,
             in.cuda ? "" : " (no CUDA driver could be loaded: libcuda.so.1)");
    return 0;
}

/* The libibverbs the net plugin would load on this node, loaded by the plugin's own verbs seam
 * (net-plugin/transport/verbs_lib.h) with the doctor's NCCL_IBVERBS_LIB (nccl.conf included). */
static void live_verbs_lib(void *ctx, const char *value, struct doctor_verbs_lib *out)
{
    struct rail_verbs_lib_info info;
    const char *cur = getenv("NCCL_IBVERBS_LIB");
    (void)ctx;
    if (value && (!cur || strcmp(cur, value) != 0))
        setenv("NCCL_IBVERBS_LIB", value, 1); /* from a configuration file */
    out->rc = rail_verbs_load(out->why, sizeof(out->why));
    rail_verbs_lib_info(&info);
    snprintf(out->path, sizeof(out->path), "%s", info.path[0] ? info.path : info.name);
    snprintf(out->missing, sizeof(out->missing), "%s", info.missing);
}

int cli_doctor(int argc, char **argv)
{
    static const struct option longopts[] = {{"root", required_argument, 0, 'r'},
                                             {"hwloc-xml", required_argument, 0, 'x'},
                                             {"json", no_argument, 0, 'j'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    struct doctor_ctx c = {.root = "/",
                           .env = {.vars = environ},
                           .gdr_probe = live_gdr_probe,
                           .verbs_lib = live_verbs_lib};
    struct doctor_report r;
    struct stat st;
    int ch, json = 0, rc;

    optind = 1;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'r':
            c.root = optarg;
            if (strcmp(optarg, "/") != 0) { /* a snapshot: this machine's CUDA driver and */
                c.gdr_probe = NULL;         /* libibverbs say nothing of it */
                c.verbs_lib = NULL;
            }
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
