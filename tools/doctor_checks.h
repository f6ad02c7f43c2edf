/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor: the checks, each a module that reads the context and the environment through
 * doctor_report.h and appends findings; doctor_run.c runs them from a table. */
#ifndef NCCL_RAIL_DOCTOR_CHECKS_H
#define NCCL_RAIL_DOCTOR_CHECKS_H

#include "doctor_report.h"

/* ---- checks (one module each) ---- */

/* Topology: hwloc XML + root, live hwloc for root "/", or the sysfs tree under root. Allocates
 * ctx->topo (freed by doctor_ctx_release) and adds topo.source. */
void doctor_load_topo(struct doctor_ctx *c, struct doctor_report *r);
/* Build a topology from sysfs alone (GPUs = NVIDIA display-class PCI functions, NICs = every port
 * of /sys/class/infiniband/<dev>), path classes the way NCCL walks sysfs. 0 or -errno. */
int doctor_topo_from_sysfs(const char *root, struct rail_topo *t, char *err, size_t errlen);

void doctor_check_rdma(const struct doctor_ctx *c, struct doctor_report *r);   /* rdma.* */
void doctor_check_system(const struct doctor_ctx *c, struct doctor_report *r); /* sys.* */
void doctor_check_gid(const struct doctor_ctx *c, struct doctor_report *r);    /* roce.gid */
void doctor_check_pcie(const struct doctor_ctx *c, struct doctor_report *r);   /* pcie.link */
void doctor_check_acs(const struct doctor_ctx *c, struct doctor_report *r);    /* pcie.acs */
void doctor_check_bar1(const struct doctor_ctx *c, struct doctor_report *r);   /* gpu.bar1 */
void doctor_check_topo(const struct doctor_ctx *c, struct doctor_report *r);   /* topo.* */
void doctor_check_gdr(const struct doctor_ctx *c, struct doctor_report *r);    /* gdr.* */
void doctor_check_env(const struct doctor_ctx *c, struct doctor_report *r);    /* env.* */
void doctor_recommend(const struct doctor_ctx *c, struct doctor_report *r);    /* recommend.* */

/* ---- knobs that name files (doctor_paths.c) ----
 * root: where the path is resolved (doctor_env_root); NULL or "/" is this machine. */
/* A readable regular file / a directory / NCCL_RAIL_STATS_FILE's target: true, or false with
 * the reason in why. */
bool doctor_path_file_ok(const char *root, const char *v, char *why, size_t len);
bool doctor_path_dir_ok(const char *root, const char *v, char *why, size_t len);
bool doctor_path_stats_ok(const char *root, const char *v, char *why, size_t len);
/* NCCL_TUNER_CONFIG_FILE as the tuner would load it: 0, or -errno with the reason in why. */
int doctor_rules_check(const char *root, const char *v, bool lenient, char *why, size_t len);
#endif
