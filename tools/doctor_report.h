/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor, the layer below every check: the findings list, the context (root prefix,
 * seams, topology) and the environment the checks read. No check calls above this. */
#ifndef NCCL_RAIL_DOCTOR_REPORT_H
#define NCCL_RAIL_DOCTOR_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "params.h"
#include "topo.h"

enum doctor_sev { DOCTOR_OK = 0, DOCTOR_INFO, DOCTOR_WARN, DOCTOR_ERROR };
const char *doctor_sev_name(enum doctor_sev s); /* "ok", "info", "warn", "error" */

#define DOCTOR_ID_LEN      40
#define DOCTOR_SUBJECT_LEN 96
#define DOCTOR_TEXT_LEN    480

struct doctor_finding {
    char id[DOCTOR_ID_LEN]; /* "rdma.port", "env.algo", ... (docs/doctor.md) */
    enum doctor_sev sev;
    char subject[DOCTOR_SUBJECT_LEN]; /* what it is about: "mlx5_0:1", "NCCL_ALGO", "GPU0" */
    char message[DOCTOR_TEXT_LEN];
    char fix[DOCTOR_TEXT_LEN]; /* "" when nothing to do */
};

struct doctor_report {
    int n, cap;
    struct doctor_finding *f;
    bool oom; /* a finding could not be stored */
};

void doctor_report_init(struct doctor_report *r);
void doctor_report_free(struct doctor_report *r);
/* Append a finding; fix may be NULL. message is a printf format. Text is truncated to fit. */
void doctor_add(struct doctor_report *r, const char *id, enum doctor_sev sev, const char *subject,
                const char *fix, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int doctor_count(const struct doctor_report *r, enum doctor_sev sev);
/* First finding with this id (and subject, when subject is not NULL), or NULL. */
const struct doctor_finding *doctor_find(const struct doctor_report *r, const char *id,
                                         const char *subject);
/* Highest severity among findings with this id, -1 when there is none. */
int doctor_worst(const struct doctor_report *r, const char *id);

/* ---- inputs ---- */

/* The environment as "NAME=value" strings, NULL-terminated (environ, or a test's array). */
struct doctor_env {
    char *const *vars;
};
/* Value of name, or NULL when unset. An empty value counts as unset (as rail_param_* do). */
const char *doctor_env_get(const struct doctor_env *e, const char *name);

/* A knob of the params table read from e the way rail_param_int() reads the process environment:
 * unset or invalid gives the default (*invalid, when not NULL, says which). ENUM: the index into
 * the choices, -1 when unset or invalid. */
long long doctor_env_int(const struct doctor_env *e, enum rail_param_id id, bool *invalid);
int doctor_env_enum(const struct doctor_env *e, enum rail_param_id id);
/* STRING knob: the value, else the table default, NULL when both are empty. */
const char *doctor_env_str(const struct doctor_env *e, enum rail_param_id id);

/* GDR seam. The dma-buf half of GPUDirect RDMA needs the CUDA driver (CU_DEVICE_ATTRIBUTE_
 * DMA_BUF_SUPPORTED) and a verbs probe; that lives in the GDR module (common/cuda_drv.h,
 * net-plugin/gdr_policy.h). Until it is wired here, gdr_probe is NULL and doctor reports
 * "dmabuf state: unknown without the CUDA driver". */
enum doctor_dmabuf {
    DOCTOR_DMABUF_UNKNOWN = 0,
    DOCTOR_DMABUF_SUPPORTED,
    DOCTOR_DMABUF_UNSUPPORTED
};
struct doctor_gdr_state {
    enum doctor_dmabuf dmabuf;
    char plugin_mode[64]; /* what the net plugin will register GPU buffers with ("dmabuf", ...) */
    char detail[256];     /* why, for the message */
};
/* Fill *out for the node (peermem: what sysfs says). 0 or -errno (then treated as unknown). */
typedef int (*doctor_gdr_probe_fn)(void *ctx, bool peermem, struct doctor_gdr_state *out);

/* libibverbs seam: the net plugin dlopens NCCL_IBVERBS_LIB (unset: libibverbs.so.1) at init; the
 * live doctor loads it the same way (net-plugin/transport/verbs_lib.h). value: the variable as
 * the doctor's environment has it (NULL unset). */
struct doctor_verbs_lib {
    int rc;            /* 0 loaded, -errno refused (why says it as the plugin's WARN would) */
    char path[512];    /* the file loaded */
    char missing[256]; /* optional functions it lacks, "" none */
    char why[512];
};
typedef void (*doctor_verbs_lib_fn)(void *ctx, const char *value, struct doctor_verbs_lib *out);

struct doctor_lib_probe;
struct doctor_ctx {
    const char *root;      /* sysfs/procfs/dev root prefix, "/" for the live node */
    const char *hwloc_xml; /* NULL: hwloc on the live node, or the sysfs tree under root */
    struct doctor_env env;
    doctor_gdr_probe_fn gdr_probe; /* GDR seam, NULL = not wired (see above) */
    void *gdr_probe_ctx;
    doctor_verbs_lib_fn verbs_lib; /* libibverbs seam, NULL = not probed (a snapshot, tests) */
    void *verbs_lib_ctx;
    /* Filled by doctor_load_topo(): */
    struct rail_topo *topo; /* NULL when no topology could be loaded */
    char topo_err[256];
    /* Deployment checks (doctor_deploy.h): the home of ~/.nccl.conf (NULL: the passwd entry),
     * the plugin-open seam (NULL: the dynamic loader), the merged environment they own. */
    const char *home;
    void (*plugin_open)(void *ctx, const char *name, struct doctor_lib_probe *out);
    void *plugin_open_ctx;
    char **conf_vars;
    char *const *conf_env_orig;
    size_t conf_compares; /* name comparisons the merge made: linear in the lines (tests) */
    size_t conf_n_env;    /* conf_vars[0..conf_n_env) came from the environment */
};

/* The root a path in variable name is resolved under: ctx->root when the value came from the
 * snapshot's configuration files (doctor_read_conf), NULL when it came from the environment
 * doctor runs in (the caller's own paths) or the root is "/". */
const char *doctor_env_root(const struct doctor_ctx *c, const char *name);

/* ---- pure helpers (unit-tested) ---- */

/* ACS Control register from a config-space image: 0..0xffff, -ENOENT when the image holds the
 * extended capability list (>= 0x104 bytes) but no ACS capability, -ENODATA when the image is
 * too short to hold extended capabilities (non-root reads get 64 bytes), -EINVAL on a loop or
 * malformed list. */
int doctor_acs_ctrl(const unsigned char *cfg, size_t len);
/* BAR1 size in bytes from the text of a PCI `resource` file (line 1), 0 when absent, -EINVAL when
 * malformed. */
long long doctor_bar1_bytes(const char *resource_text);
/* Lanes from an IB `rate` text ("200 Gb/sec (4X HDR)" -> 4), 0 when it does not say. */
int doctor_rate_lanes(const char *rate);
/* NCCL_ALGO / NCCL_PROTO syntax check: 0, or -EINVAL with the offending token in err. proto
 * selects the protocol token list (LL, LL128, Simple) instead of the algorithm list. */
int doctor_check_algo_list(const char *spec, bool proto, char *err, size_t errlen);

#endif
