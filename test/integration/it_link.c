/* SPDX-License-Identifier: Apache-2.0 */
/* Cables of the test fabric (it_link.h). */
#include "it_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it_util.h"
#include "transport/shm_fabric.h"

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* The shm fabric of this run (mapped once per process), or NULL when name is not a shm port. */
static struct rail_shm_fabric *shm_fabric(const char *name)
{
    static struct rail_shm_fabric *f;
    if (rail_shm_dev_index(name) < 0)
        return NULL;
    if (!f) {
        char err[256];
        if (rail_shm_fabric_open(env_or("NCCL_RAIL_SHM_FABRIC", "default"), &f, err, sizeof(err)) <
            0) {
            it_fail("shm fabric: %s", err);
            return NULL;
        }
    }
    return f;
}

static int shm_mode(void)
{
    const char *p = getenv("NCCL_RAIL_VERBS_PROVIDER");
    return p && strcmp(p, "shm") == 0;
}

int it_links_usable(void)
{
    if (shm_mode())
        return 1;
    return strcmp(env_or("FABRIC_VM", ""), "1") == 0 && geteuid() == 0;
}

int it_link_set(const char *ifname, const char *state)
{
    fprintf(stderr, "[%s] %.3f: link %s %s\n", g_it_role, it_now(), ifname, state);
    if (rail_shm_dev_index(ifname) >= 0) {
        struct rail_shm_fabric *f = shm_fabric(ifname);
        if (!f)
            return 1;
        rail_shm_set_down(f, rail_shm_dev_index(ifname), strcmp(state, "down") == 0);
        return 0;
    }
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "ip link set %s %s", ifname, state);
    if (system(cmd) != 0)
        return it_fail("'%s' failed", cmd);
    return 0;
}

/* VM: DROP_ALL is tc netem loss 100 %, DROP_ACKS drops only RoCE v2 acknowledgements (UDP port
 * 4791, BTH opcode 0x11 right after the 20-byte IP and 8-byte UDP headers), PASS_ALL removes
 * the qdisc; the modules come from the fabric's kernel (the guest has none of its own). */
int it_link_drop(const char *ifname, enum it_drop mode)
{
    fprintf(stderr, "[%s] %.3f: %s leaving %s\n", g_it_role, it_now(),
            mode == IT_DROP_ALL    ? "every packet dropped"
            : mode == IT_DROP_ACKS ? "acknowledgements dropped"
                                   : "nothing dropped",
            ifname);
    if (rail_shm_dev_index(ifname) >= 0) {
        struct rail_shm_fabric *f = shm_fabric(ifname);
        if (!f)
            return 1;
        rail_shm_set_drop(f, rail_shm_dev_index(ifname),
                          mode == IT_DROP_ALL    ? RAIL_SHM_DROP_ALL
                          : mode == IT_DROP_ACKS ? RAIL_SHM_DROP_ACKS
                                                 : RAIL_SHM_DROP_NONE);
        return 0;
    }
    char cmd[1024], load[512];
    snprintf(load, sizeof(load),
             "for m in sch_netem sch_prio cls_u32 act_gact; do grep -q \"^$m \" /proc/modules || "
             "insmod %s/kernel/lib/modules/*/kernel/net/sched/$m.ko; done",
             env_or("FABRIC_DIR", "build/fabric"));
    if (mode == IT_DROP_ALL)
        snprintf(cmd, sizeof(cmd), "%s; tc qdisc add dev %s root netem loss 100%%", load, ifname);
    else if (mode == IT_DROP_ACKS)
        snprintf(cmd, sizeof(cmd),
                 "%s; tc qdisc add dev %s root handle 1: prio && tc filter add dev %s parent 1: "
                 "protocol ip u32 match ip dport 4791 0xffff match u8 0x11 0xff at 28 action drop",
                 load, ifname, ifname);
    else
        snprintf(cmd, sizeof(cmd), "tc qdisc del dev %s root", ifname);
    if (system(cmd) != 0)
        return it_fail("'%s' failed", cmd);
    return 0;
}

unsigned long long it_link_tx_bytes(const char *ifname)
{
    if (rail_shm_dev_index(ifname) >= 0) {
        struct rail_shm_fabric *f = shm_fabric(ifname);
        return f ? (unsigned long long)rail_shm_tx_bytes(f, rail_shm_dev_index(ifname)) : 0;
    }
    char path[128];
    unsigned long long v = 0;
    snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_bytes", ifname);
    FILE *fp = fopen(path, "r");
    if (fp) {
        if (fscanf(fp, "%llu", &v) != 1)
            v = 0;
        fclose(fp);
    }
    return v;
}

int it_dev_port_active(const char *dev)
{
    if (rail_shm_dev_index(dev) >= 0) {
        struct rail_shm_fabric *f = shm_fabric(dev);
        return f && rail_shm_port_active(f, rail_shm_dev_index(dev));
    }
    char path[128], line[64] = "";
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/state", dev);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    int ok = fgets(line, sizeof(line), fp) && strstr(line, "ACTIVE");
    fclose(fp);
    return ok;
}
