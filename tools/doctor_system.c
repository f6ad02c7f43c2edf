/* SPDX-License-Identifier: Apache-2.0 */
/* Process and node prerequisites: locked memory and CAP_IPC_LOCK (sys.memlock), the verbs device
 * nodes (sys.dev_infiniband), the libibverbs the plugin loads (sys.libibverbs), GPUDirect RDMA
 * state (gdr.*, with the dma-buf seam), and the short list of recommended settings (recommend.*).
 *
 * Everything is read under the root prefix: /proc/self/limits and /proc/self/status (for "/" that
 * is the doctor process itself, which inherits the shell's limits, as the job would), /dev. */
#include "doctor_checks.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topo_sysfs.h"

/* -1 unknown, 0 finite (*bytes set), 1 unlimited */
static int read_memlock(const char *root, unsigned long long *bytes)
{
    static char text[8192];
    const char *line;
    char soft[32];
    if (rail_sysfs_read(root, "/proc/self/limits", text, sizeof(text)) <= 0 ||
        !(line = strstr(text, "Max locked memory")))
        return -1;
    if (sscanf(line + strlen("Max locked memory"), " %31s", soft) != 1)
        return -1;
    if (strcmp(soft, "unlimited") == 0)
        return 1;
    char *end;
    errno = 0;
    *bytes = strtoull(soft, &end, 10);
    return (*end || errno) ? -1 : 0;
}

/* -1 unknown, else whether CapEff has CAP_IPC_LOCK (bit 14). */
static int read_ipc_lock(const char *root)
{
    static char text[8192];
    const char *line;
    unsigned long long v;
    if (rail_sysfs_read(root, "/proc/self/status", text, sizeof(text)) <= 0 ||
        !(line = strstr(text, "CapEff:")) || sscanf(line, "CapEff: %llx", &v) != 1)
        return -1;
    return (int)((v >> 14) & 1);
}

static int n_rdma_devices(const char *root)
{
    static char names[64][RAIL_SYSFS_NAME_LEN];
    int n = rail_sysfs_list(root, "/sys/class/infiniband", names, 64);
    return n > 0 ? n : 0;
}

/* The libibverbs the net plugin loads (NCCL_IBVERBS_LIB), loaded through the seam the same way. */
static void check_verbs_lib(const struct doctor_ctx *c, struct doctor_report *r)
{
    const char *v = doctor_env_str(&c->env, RAIL_PARAM_IBVERBS_LIB);
    char var[300];
    if (v)
        snprintf(var, sizeof(var), "NCCL_IBVERBS_LIB=%.280s", v);
    else
        snprintf(var, sizeof(var), "NCCL_IBVERBS_LIB unset: libibverbs.so.1");
    if (!c->verbs_lib) {
        doctor_add(r, "sys.libibverbs", DOCTOR_INFO, "libibverbs", NULL,
                   "not probed (%s): a snapshot's library is loaded on its node", var);
        return;
    }
    struct doctor_verbs_lib lib;
    memset(&lib, 0, sizeof(lib));
    c->verbs_lib(c->verbs_lib_ctx, v, &lib);
    if (lib.rc < 0) {
        bool rdma = n_rdma_devices(c->root) > 0;
        doctor_add(r, "sys.libibverbs", rdma || v ? DOCTOR_ERROR : DOCTOR_INFO, "libibverbs",
                   v ? "set NCCL_IBVERBS_LIB to the path or soname of rdma-core's libibverbs, or "
                       "unset it"
                     : "install rdma-core's libibverbs (libibverbs1 / rdma-core)",
                   "%s: the net plugin declines%s", lib.why,
                   rdma ? "" : " (no RDMA device either)");
    } else if (lib.missing[0]) {
        doctor_add(r, "sys.libibverbs", DOCTOR_INFO, "libibverbs", NULL, "%s (%s); it lacks %s",
                   lib.path, var, lib.missing);
    } else {
        doctor_add(r, "sys.libibverbs", DOCTOR_OK, "libibverbs", NULL, "%s (%s)", lib.path, var);
    }
}

void doctor_check_system(const struct doctor_ctx *c, struct doctor_report *r)
{
    static char names[64][RAIL_SYSFS_NAME_LEN];
    unsigned long long bytes = 0;
    int lim = read_memlock(c->root, &bytes), cap = read_ipc_lock(c->root);
    long long min_mb = doctor_env_int(&c->env, RAIL_PARAM_MEMLOCK_MIN_MB, NULL);
    const char *fix = "ulimit -l unlimited (docker: --ulimit memlock=-1; systemd: LimitMEMLOCK="
                      "infinity; or a memlock line in /etc/security/limits.conf)";
    const char *capname = cap == 1   ? "with CAP_IPC_LOCK"
                          : cap == 0 ? "without CAP_IPC_LOCK"
                                     : "CAP_IPC_LOCK unknown";

    if (lim < 0)
        doctor_add(r, "sys.memlock", DOCTOR_INFO, "RLIMIT_MEMLOCK", NULL,
                   "unknown: %s/proc/self/limits is not readable",
                   strcmp(c->root, "/") ? c->root : "");
    else if (lim == 1)
        doctor_add(r, "sys.memlock", DOCTOR_OK, "RLIMIT_MEMLOCK", NULL, "unlimited (%s)", capname);
    else if (cap == 1)
        doctor_add(r, "sys.memlock", DOCTOR_OK, "RLIMIT_MEMLOCK", NULL,
                   "%llu KiB, lifted by CAP_IPC_LOCK", bytes >> 10);
    else if (min_mb > 0 && bytes < (unsigned long long)min_mb << 20)
        doctor_add(r, "sys.memlock", DOCTOR_ERROR, "RLIMIT_MEMLOCK", fix,
                   "%llu KiB (< NCCL_RAIL_MEMLOCK_MIN_MB=%lld MiB) %s: the net plugin declines "
                   "(RDMA memory registration would fail)",
                   bytes >> 10, min_mb, capname);
    else
        doctor_add(r, "sys.memlock", DOCTOR_WARN, "RLIMIT_MEMLOCK", fix,
                   "%llu KiB %s: registrations beyond it fail at run time", bytes >> 10, capname);

    int nd = rail_sysfs_list(c->root, "/dev/infiniband", names, 64), uverbs = 0;
    for (int i = 0; i < nd; i++)
        uverbs += strncmp(names[i], "uverbs", 6) == 0;
    if (uverbs > 0)
        doctor_add(r, "sys.dev_infiniband", DOCTOR_OK, "/dev/infiniband", NULL,
                   "%d uverbs device node(s)", uverbs);
    else if (nd < 0 && strcmp(c->root, "/") != 0 && !rail_sysfs_exists(c->root, "/dev"))
        doctor_add(r, "sys.dev_infiniband", DOCTOR_INFO, "/dev/infiniband", NULL,
                   "not captured: %s has no dev/ directory", c->root);
    else
        doctor_add(r, "sys.dev_infiniband", n_rdma_devices(c->root) ? DOCTOR_ERROR : DOCTOR_INFO,
                   "/dev/infiniband",
                   "modprobe ib_uverbs; in a container: --device=/dev/infiniband (and "
                   "--cap-add=IPC_LOCK)",
                   "%s: the net plugin declines (no verbs device nodes)",
                   nd < 0 ? "missing" : "holds no uverbs* node");
    check_verbs_lib(c, r);
}

/* ---- GPUDirect RDMA ---- */

static const char *nvidia_module(const char *root)
{
    static char text[512];
    if (rail_sysfs_read(root, "/proc/driver/nvidia/version", text, sizeof(text)) <= 0)
        return "not loaded";
    return strstr(text, "Open Kernel Module") ? "open" : "proprietary";
}

void doctor_check_gdr(const struct doctor_ctx *c, struct doctor_report *r)
{
    bool peermem = rail_sysfs_peermem(c->root);
    bool gpus = c->topo && c->topo->n_gpus > 0, rdma = n_rdma_devices(c->root) > 0;
    const char *mod = nvidia_module(c->root);
    struct doctor_gdr_state st = {.dmabuf = DOCTOR_DMABUF_UNKNOWN};
    bool probed = false;

    if (peermem)
        doctor_add(r, "gdr.peermem", DOCTOR_OK, "nvidia-peermem", NULL,
                   "loaded: GPU memory can be registered with the HCA through peer memory");
    else if (gpus && rdma)
        doctor_add(r, "gdr.peermem", DOCTOR_WARN, "nvidia-peermem",
                   "modprobe nvidia-peermem (needs the MLNX_OFED/DOCA ib_core), or use dma-buf "
                   "(NVIDIA open kernel module, Linux >= 5.12)",
                   "not loaded: GPUDirect RDMA through peer memory is unavailable");
    else
        doctor_add(r, "gdr.peermem", DOCTOR_INFO, "nvidia-peermem", NULL,
                   "not loaded (not needed without both a GPU and an RDMA device)");

    /* The live node: the CUDA driver and the plugin's GDR policy (cmd_doctor.c); a snapshot: no
     * probe. */
    if (c->gdr_probe) {
        memset(&st, 0, sizeof(st));
        probed = c->gdr_probe(c->gdr_probe_ctx, peermem, &st) == 0;
        if (!probed)
            st.dmabuf = DOCTOR_DMABUF_UNKNOWN;
    }
    if (!probed || st.dmabuf == DOCTOR_DMABUF_UNKNOWN)
        doctor_add(
            r, "gdr.dmabuf", DOCTOR_INFO, "dma-buf", NULL,
            "dmabuf state: unknown without the CUDA driver (NVIDIA kernel module: %s%s)", mod,
            strcmp(mod, "proprietary") == 0 ? "; the proprietary module exports no dma-buf" : "");
    else
        doctor_add(r, "gdr.dmabuf",
                   st.dmabuf == DOCTOR_DMABUF_SUPPORTED || peermem || !gpus || !rdma
                       ? (st.dmabuf == DOCTOR_DMABUF_SUPPORTED ? DOCTOR_OK : DOCTOR_INFO)
                       : DOCTOR_WARN,
                   "dma-buf",
                   st.dmabuf == DOCTOR_DMABUF_SUPPORTED
                       ? NULL
                       : "dma-buf needs the NVIDIA open kernel module and CUDA >= 11.7",
                   "dma-buf %s%s%s",
                   st.dmabuf == DOCTOR_DMABUF_SUPPORTED ? "supported" : "not supported",
                   st.detail[0] ? ": " : "", st.detail);
    if (probed && st.plugin_mode[0])
        doctor_add(r, "gdr.plugin", DOCTOR_INFO, "net plugin", NULL,
                   "GPU buffers are registered with %s%s%s", st.plugin_mode,
                   st.detail[0] ? ": " : "", st.detail);
    else
        doctor_add(r, "gdr.plugin", DOCTOR_INFO, "net plugin", NULL,
                   "the net plugin registers GPU buffers through nvidia-peermem when present "
                   "(here: %s), else through dma-buf when the CUDA driver and the HCA support it "
                   "(decided at run time), else NCCL stages GPU data through host buffers",
                   peermem ? "present" : "absent");
}

/* ---- recommended settings ---- */

void doctor_recommend(const struct doctor_ctx *c, struct doctor_report *r)
{
    const char *plug = doctor_env_get(&c->env, "NCCL_NET_PLUGIN");
    const char *tuner = doctor_env_get(&c->env, "NCCL_TUNER_PLUGIN");
    const struct rail_topo *t = c->topo;
    const struct doctor_finding *ml = doctor_find(r, "sys.memlock", NULL);

    if (!plug || !strstr(plug, "rail") || !tuner || !strstr(tuner, "rail"))
        doctor_add(r, "recommend.plugins", DOCTOR_INFO, "NCCL_NET_PLUGIN",
                   "export NCCL_NET_PLUGIN=rail NCCL_TUNER_PLUGIN=rail, or put them in "
                   "/etc/nccl.conf (docs/deploy.md)",
                   "load both nccl-rail plugins explicitly");
    if (ml && (ml->sev == DOCTOR_WARN || ml->sev == DOCTOR_ERROR))
        doctor_add(r, "recommend.memlock", DOCTOR_INFO, "RLIMIT_MEMLOCK", "ulimit -l unlimited",
                   "run the job with unlimited locked memory");
    if (t && !doctor_env_get(&c->env, "NCCL_IB_HCA")) {
        char list[512] = "";
        size_t used = 0;
        int inactive = 0, active = 0;
        for (int n = 0; n < t->n_nics; n++) {
            if (!t->nics[n].active) {
                inactive++;
                continue;
            }
            active++;
            if (used < sizeof(list))
                used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s:%d",
                                         used ? "," : "=", t->nics[n].name, t->nics[n].port);
        }
        if (inactive && active) {
            char fix[600];
            snprintf(fix, sizeof(fix), "export NCCL_IB_HCA=%s", list);
            doctor_add(r, "recommend.ib_hca", DOCTOR_INFO, "NCCL_IB_HCA", fix,
                       "%d port(s) are not ACTIVE: list the active ones exactly", inactive);
        }
    }
    doctor_add(r, "recommend.debug", DOCTOR_INFO, "NCCL_DEBUG",
               "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING",
               "on the first run, let the plugins log the devices, GIDs and choices they made");
}
