/* SPDX-License-Identifier: Apache-2.0 */
/* RDMA checks: devices and ports under /sys/class/infiniband (rdma.*) and the RoCE GID the net
 * plugin will pick on each Ethernet port (roce.gid), with the plugin's own precedence:
 * NCCL_RAIL_GID_INDEX for the HCA, then NCCL_IB_GID_INDEX, then NCCL's automatic choice. */
#include "doctor_checks.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "transport/gid_select.h"
#include "strutil.h"
#include "topo_internal.h"
#include "topo_sysfs.h"

#define MAX_DEVS  64
#define MAX_PORTS 16
#define GID_MAX   256

int doctor_rate_lanes(const char *rate)
{
    const char *p = rate ? strchr(rate, '(') : NULL;
    long v;
    char num[8];
    size_t n = 0;
    if (!p)
        return 0;
    p++;
    while (isdigit((unsigned char)p[n]) && n < sizeof(num) - 1)
        n++;
    if (!n || (p[n] != 'X' && p[n] != 'x'))
        return 0;
    snprintf(num, sizeof(num), "%.*s", (int)n, p);
    return rail_parse_long(num, 10, 1, 32, &v) == 0 ? (int)v : 0;
}

/* Highest port speed of the adapter, from the PCI ids table of topo_complete.c (0 unknown). */
static int adapter_max_mbps(const char *root, const char *dev)
{
    static struct rail_topo t;
    char path[PATH_MAX], buf[32];
    long vendor, device;
    snprintf(path, sizeof(path), "/sys/class/infiniband/%.255s/device/vendor", dev);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0 ||
        rail_parse_long(buf, 16, 0, 0xffff, &vendor) != 0)
        return 0;
    snprintf(path, sizeof(path), "/sys/class/infiniband/%.255s/device/device", dev);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0 ||
        rail_parse_long(buf, 16, 0, 0xffff, &device) != 0)
        return 0;
    rail_topo_reset(&t, RAIL_TOPO_SRC_NONE, "doctor");
    t.n_nics = 1;
    t.nics[0].pci_vendor = (uint16_t)vendor;
    t.nics[0].pci_device = (uint16_t)device;
    rail_topo_complete(&t);
    return t.nics[0].speed_mbps;
}

static void read_port_text(const char *root, const char *dev, const char *port, const char *file,
                           char *buf, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/sys/class/infiniband/%.255s/ports/%.15s/%.63s", dev, port, file);
    if (rail_sysfs_read(root, path, buf, len) <= 0)
        snprintf(buf, len, "?");
}

static void check_port(const char *root, const char *dev, const char *port, int portnum,
                       struct doctor_report *r, int *n_active)
{
    struct rail_sysfs_ib_port sp;
    char subj[80], state[64], phys[64], rate[96];
    const char *ll;
    snprintf(subj, sizeof(subj), "%.60s:%d", dev, portnum);
    if (rail_sysfs_ib_port(root, dev, portnum, &sp) != 0)
        return;
    read_port_text(root, dev, port, "state", state, sizeof(state));
    read_port_text(root, dev, port, "phys_state", phys, sizeof(phys));
    read_port_text(root, dev, port, "rate", rate, sizeof(rate));
    ll = sp.link_layer == RAIL_LINK_IB    ? "InfiniBand"
         : sp.link_layer == RAIL_LINK_ETH ? "Ethernet (RoCE)"
                                          : "unknown link layer";
    if (sp.state >= 0 && !sp.active) {
        doctor_add(r, "rdma.port", DOCTOR_WARN, subj,
                   sp.state == 2 ? "start a subnet manager (opensm) on the fabric, or check the "
                                   "switch: INIT means the link is up but not configured"
                                 : "check the cable and the switch port (ibstat / ip link); "
                                   "NCCL_IB_HCA can leave the port out",
                   "state %s (physical %s), %s: the net plugin skips this port", state, phys, ll);
        return;
    }
    ++*n_active;
    if (sp.link_layer == RAIL_LINK_UNKNOWN) {
        doctor_add(r, "rdma.port", DOCTOR_WARN, subj, "check link_layer in sysfs (ibv_devinfo)",
                   "state %s, link layer unreadable: the plugin accepts it but cannot tell IB "
                   "from RoCE",
                   sp.state >= 0 ? state : "unknown");
        return;
    }
    doctor_add(r, "rdma.port", DOCTOR_OK, subj, NULL, "%s, %s, %s",
               sp.state >= 0 ? state : "state unknown (counted as ACTIVE)", ll, rate);
    int lanes = doctor_rate_lanes(rate), max = adapter_max_mbps(root, dev);
    if (sp.link_layer == RAIL_LINK_IB && lanes == 1)
        doctor_add(r, "rdma.speed", DOCTOR_WARN, subj,
                   "reseat or replace the cable / transceiver; check the switch port (ibportstate, "
                   "mlxlink)",
                   "link trained to 1X lanes (%s): a 4X port runs at a quarter of its bandwidth",
                   rate);
    else if (max > 0 && sp.speed_mbps > 0 && sp.speed_mbps < max)
        doctor_add(r, "rdma.speed", DOCTOR_INFO, subj,
                   "if the fabric is faster, check cable, transceiver and switch port speed",
                   "runs at %d Gb/s; the adapter supports up to %d Gb/s", sp.speed_mbps / 1000,
                   max / 1000);
}

void doctor_check_rdma(const struct doctor_ctx *c, struct doctor_report *r)
{
    static char devs[MAX_DEVS][RAIL_SYSFS_NAME_LEN], ports[MAX_PORTS][RAIL_SYSFS_NAME_LEN];
    int nd = rail_sysfs_list(c->root, "/sys/class/infiniband", devs, MAX_DEVS);
    int n_ports = 0, n_active = 0;
    if (nd <= 0) {
        doctor_add(r, "rdma.devices", DOCTOR_ERROR, "/sys/class/infiniband",
                   "load the HCA driver (mlx5_ib, ...) and ib_uverbs; in a VM or a lab, soft RoCE: "
                   "rdma link add rxe0 type rxe netdev <if>",
                   "no RDMA devices under %s%s (%s): the net plugin declines and NCCL falls back "
                   "to TCP sockets",
                   strcmp(c->root, "/") ? c->root : "", "/sys/class/infiniband",
                   nd < 0 ? strerror(-nd) : "directory empty");
        return;
    }
    for (int d = 0; d < nd; d++) {
        char dir[PATH_MAX];
        int np;
        snprintf(dir, sizeof(dir), "/sys/class/infiniband/%.255s/ports", devs[d]);
        np = rail_sysfs_list(c->root, dir, ports, MAX_PORTS);
        for (int p = 0; p < np; p++) {
            long pn;
            if (rail_parse_long(ports[p], 10, 1, 255, &pn) != 0)
                continue;
            n_ports++;
            check_port(c->root, devs[d], ports[p], (int)pn, r, &n_active);
        }
    }
    if (n_ports == 0 || n_active == 0)
        doctor_add(r, "rdma.devices", DOCTOR_ERROR, "/sys/class/infiniband",
                   "bring a port up (cable, switch, subnet manager for IB)",
                   "%d RDMA device(s), %d port(s), none ACTIVE: the net plugin declines and NCCL "
                   "falls back to TCP sockets",
                   nd, n_ports);
    else
        doctor_add(r, "rdma.devices", DOCTOR_OK, "/sys/class/infiniband", NULL,
                   "%d RDMA device(s), %d of %d port(s) ACTIVE", nd, n_active, n_ports);
}

/* ---- RoCE GID ---- */

static int first_v2_ipv4(const struct rail_gid_entry *tbl, int n)
{
    for (int i = 0; i < n; i++)
        if (tbl[i].present && tbl[i].roce_version == 2 && rail_gid_is_valid(tbl[i].gid) &&
            rail_gid_family(tbl[i].gid) == AF_INET)
            return i;
    return -1;
}

static void describe(const struct rail_gid_entry *e, char *buf, size_t len)
{
    char text[64] = "?";
    rail_gid_format(e->gid, text, sizeof(text));
    snprintf(buf, len, "%s, RoCE %s", text,
             e->roce_version == 2   ? "v2"
             : e->roce_version == 1 ? "v1"
                                    : "v?");
}

static void check_gid_port(const struct doctor_ctx *c, const char *dev, int port,
                           struct doctor_report *r)
{
    static struct rail_gid_entry tbl[GID_MAX];
    struct rail_gid_overrides ov;
    char subj[80], err[256], how[64], desc[128], fix[160] = "";
    int n = rail_gid_read_sysfs(c->root, dev, port, tbl, GID_MAX), idx, v2;
    snprintf(subj, sizeof(subj), "%.60s:%d", dev, port);
    if (rail_gid_overrides_parse(doctor_env_str(&c->env, RAIL_PARAM_GID_INDEX), &ov, err,
                                 sizeof(err)) != 0)
        ov.n = 0; /* the plugin ignores an invalid list too; env.knob reports it */
    v2 = n > 0 ? first_v2_ipv4(tbl, n) : -1;
    if (v2 >= 0)
        snprintf(fix, sizeof(fix), "NCCL_RAIL_GID_INDEX=%.60s:%d selects its RoCE v2 IPv4 GID", dev,
                 v2);
    idx = rail_gid_override_for(&ov, dev);
    if (idx >= 0) {
        snprintf(how, sizeof(how), "NCCL_RAIL_GID_INDEX");
    } else if ((idx = (int)doctor_env_int(&c->env, RAIL_PARAM_IB_GID_INDEX, NULL)) >= 0) {
        snprintf(how, sizeof(how), "NCCL_IB_GID_INDEX");
    } else {
        int af = doctor_env_enum(&c->env, RAIL_PARAM_IB_ADDR_FAMILY) == 1 ? AF_INET6 : AF_INET;
        int ver = (int)doctor_env_int(&c->env, RAIL_PARAM_IB_ROCE_VERSION_NUM, NULL);
        char why[200] = "";
        if (n <= 0) {
            doctor_add(r, "roce.gid", DOCTOR_ERROR, subj,
                       "check that the port's netdev has an IP address (ip addr)",
                       "cannot read the GID table (%s): the plugin skips this port",
                       strerror(n < 0 ? -n : ENOENT));
            return;
        }
        idx = rail_gid_select(tbl, n, af, ver, doctor_env_str(&c->env, RAIL_PARAM_IB_ADDR_RANGE),
                              why, sizeof(why));
        if (idx < 0) {
            doctor_add(r, "roce.gid", DOCTOR_ERROR, subj,
                       fix[0] ? fix
                              : "give the port's netdev an IPv4 address (a RoCE v2 IPv4-mapped "
                                "GID appears), or set NCCL_IB_GID_INDEX",
                       "no usable RoCE GID (%s): the plugin skips this port", why);
            return;
        }
        snprintf(how, sizeof(how), "automatic");
    }
    static const uint8_t zero[16];
    if (idx >= n || !tbl[idx].present || memcmp(tbl[idx].gid, zero, 16) == 0) {
        doctor_add(r, "roce.gid", DOCTOR_ERROR, subj, fix[0] ? fix : "unset the GID index knob",
                   "GID index %d (%s) is %s the %d-entry table: the plugin skips this port", idx,
                   how, idx >= n ? "outside" : "an empty slot of", n);
        return;
    }
    describe(&tbl[idx], desc, sizeof(desc));
    if (!rail_gid_is_valid(tbl[idx].gid))
        doctor_add(r, "roce.gid", DOCTOR_WARN, subj, fix[0] ? fix : "unset the GID index knob",
                   "the plugin will use GID index %d (%s, %s): a link-local GID, not routable", idx,
                   desc, how);
    else if (tbl[idx].roce_version != 2 || rail_gid_family(tbl[idx].gid) != AF_INET)
        doctor_add(r, "roce.gid", DOCTOR_WARN, subj,
                   fix[0] && v2 != idx ? fix : "give the netdev an IPv4 address",
                   "the plugin will use GID index %d (%s, %s); %s", idx, desc, how,
                   v2 >= 0 ? "a RoCE v2 IPv4 GID exists at another index"
                           : "the port has no RoCE v2 IPv4 GID (not routable across L3)");
    else
        doctor_add(r, "roce.gid", DOCTOR_OK, subj, NULL,
                   "the plugin will use GID index %d (%s, %s)", idx, desc, how);
}

void doctor_check_gid(const struct doctor_ctx *c, struct doctor_report *r)
{
    static char devs[MAX_DEVS][RAIL_SYSFS_NAME_LEN], ports[MAX_PORTS][RAIL_SYSFS_NAME_LEN];
    int nd = rail_sysfs_list(c->root, "/sys/class/infiniband", devs, MAX_DEVS);
    for (int d = 0; d < nd; d++) {
        char dir[PATH_MAX];
        int np;
        snprintf(dir, sizeof(dir), "/sys/class/infiniband/%.255s/ports", devs[d]);
        np = rail_sysfs_list(c->root, dir, ports, MAX_PORTS);
        for (int p = 0; p < np; p++) {
            struct rail_sysfs_ib_port sp;
            long pn;
            if (rail_parse_long(ports[p], 10, 1, 255, &pn) != 0 ||
                rail_sysfs_ib_port(c->root, devs[d], (int)pn, &sp) != 0)
                continue;
            if (sp.link_layer == RAIL_LINK_ETH && sp.active)
                check_gid_port(c, devs[d], (int)pn, r);
        }
    }
}
