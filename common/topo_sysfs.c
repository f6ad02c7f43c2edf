/* SPDX-License-Identifier: Apache-2.0 */
/* Root-prefixed /sys and /proc reader (see topo_sysfs.h). */
#include "topo_sysfs.h"
#include "ib_speed.h"
#include "log.h"
#include "params.h"
#include "root_path.h"
#include "safe_file.h"
#include "strutil.h"
#include "topo.h"
#include "topo_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* root + path; root "/" or "" means the real file system. */
static int join(const char *root, const char *path, char *out, size_t len)
{
    size_t rl;
    int n;
    if (!path || path[0] != '/')
        return -EINVAL;
    if (!root)
        root = "";
    rl = strlen(root);
    while (rl > 0 && root[rl - 1] == '/')
        rl--;
    n = snprintf(out, len, "%.*s%s", (int)rl, root, path);
    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    return 0;
}

const char *rail_sysfs_root_param(void)
{
    static atomic_bool warned;
    const char *r = rail_param_str(RAIL_PARAM_SYSFS_ROOT);
    struct stat st;
    if (!r || !*r)
        return "/";
    if (strcmp(r, "/") != 0 && (stat(r, &st) != 0 || !S_ISDIR(st.st_mode)) &&
        !atomic_exchange(&warned, true))
        RAIL_WARN(NCCL_INIT | NCCL_ENV,
                  "NCCL_RAIL_SYSFS_ROOT='%.200s' is not an existing directory: no sysfs fact "
                  "(NIC speed, link layer, PCIe link, GDR) can be read under it",
                  r);
    return r;
}

int rail_sysfs_read(const char *root, const char *path, char *buf, size_t len)
{
    char full[PATH_MAX];
    ssize_t got;
    size_t total;
    int rc = join(root, path, full, sizeof(full));
    if (rc)
        return rc;
    if (!buf || len < 2)
        return -EINVAL;
    /* Non-blocking, regular files only, resolved beneath the root component by component and
     * no symlink as the last component (root_path.h): a FIFO cannot hang us, a snapshot's link
     * cannot lead out of it. */
    got = rail_file_read_fixed_in(root, path, buf, len - 1, RAIL_FILE_NOFOLLOW);
    if (got < 0)
        return (int)got;
    total = (size_t)got;
    buf[total] = '\0';
    while (total > 0 && isspace((unsigned char)buf[total - 1]))
        buf[--total] = '\0';
    return (int)total;
}

bool rail_sysfs_exists(const char *root, const char *path)
{
    char full[PATH_MAX];
    int fd;
    if (join(root, path, full, sizeof(full)) != 0)
        return false;
    fd = rail_root_open(root, path, O_PATH, 0, NULL, 0);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

int rail_sysfs_realpath(const char *root, const char *path, char *out, size_t len)
{
    char full[PATH_MAX];
    int rc = join(root, path, full, sizeof(full));
    if (rc)
        return rc;
    return rail_root_resolve(root, path, out, len);
}

static int cmp_names(const void *a, const void *b)
{
    return strverscmp((const char *)a, (const char *)b);
}

int rail_sysfs_list(const char *root, const char *dir, char (*names)[RAIL_SYSFS_NAME_LEN], int max)
{
    char full[PATH_MAX];
    DIR *d;
    struct dirent *e;
    int n = 0, rc = join(root, dir, full, sizeof(full));
    if (rc)
        return rc;
    if (!names || max < 0)
        return -EINVAL;
    int fd = rail_root_open(root, dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0, NULL, 0);
    if (fd < 0)
        return fd;
    d = fdopendir(fd);
    if (!d) {
        rc = -errno;
        close(fd);
        return rc;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (strlen(e->d_name) >= RAIL_SYSFS_NAME_LEN)
            continue;
        if (n == max)
            break;
        snprintf(names[n++], RAIL_SYSFS_NAME_LEN, "%s", e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), cmp_names);
    return n;
}

bool rail_sysfs_name_ok(const char *s, size_t max_len)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
           strlen(s) < max_len;
}

static bool safe_component(const char *s)
{
    return rail_sysfs_name_ok(s, RAIL_SYSFS_NAME_LEN);
}

int rail_sysfs_ib_port(const char *root, const char *dev, int port, struct rail_sysfs_ib_port *out)
{
    char dir[512], path[PATH_MAX], buf[128];
    int rc;
    if (!out || !safe_component(dev) || port < 1 || port > 255)
        return -EINVAL;
    out->speed_mbps = 0;
    out->link_layer = RAIL_LINK_UNKNOWN;
    out->state = -1;
    out->active = true;
    snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/%d", dev, port);
    if (!rail_sysfs_exists(root, dir))
        return -ENOENT;
    snprintf(path, sizeof(path), "%s/rate", dir);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) > 0) {
        rc = rail_ib_rate_parse(buf);
        if (rc > 0)
            out->speed_mbps = rc;
    }
    snprintf(path, sizeof(path), "%s/link_layer", dir);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) > 0) {
        if (strcmp(buf, "InfiniBand") == 0)
            out->link_layer = RAIL_LINK_IB;
        else if (strcmp(buf, "Ethernet") == 0)
            out->link_layer = RAIL_LINK_ETH;
    }
    snprintf(path, sizeof(path), "%s/state", dir);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) > 0 && isdigit((unsigned char)buf[0])) {
        out->state = atoi(buf);
        out->active = out->state == 4; /* IBV_PORT_ACTIVE */
    }
    return 0;
}

static int read_link(const char *root, const char *dir, int *gen, int *width)
{
    char path[PATH_MAX], buf[64];
    *gen = 0;
    *width = 0;
    snprintf(path, sizeof(path), "%s/max_link_speed", dir);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) > 0)
        *gen = rail_pcie_gen_from_text(buf);
    snprintf(path, sizeof(path), "%s/max_link_width", dir);
    long w;
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) > 0 &&
        rail_parse_long(buf, 10, 1, 32, &w) == 0)
        *width = (int)w;
    return (*gen && *width) ? 0 : -ENOENT;
}

static bool is_bdf(const char *s)
{
    char tmp[16];
    return rail_busid_normalize(s, tmp) == 0;
}

int rail_sysfs_pcie_link(const char *root, const char *busid, int *gen, int *width)
{
    char path[PATH_MAX], dev[PATH_MAX], *slash;
    int g, w, pg, pw;
    if (!gen || !width || !safe_component(busid) || !is_bdf(busid))
        return -EINVAL;
    *gen = *width = 0;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", busid);
    if (rail_sysfs_realpath(root, path, dev, sizeof(dev)) != 0)
        return -ENOENT;
    if (read_link(root, dev, &g, &w) != 0)
        return -ENOENT;
    /* The upstream port is the parent directory when that is a PCI function too. */
    slash = strrchr(dev, '/');
    if (slash && slash != dev) {
        *slash = '\0';
        if (is_bdf(strrchr(dev, '/') + 1) && read_link(root, dev, &pg, &pw) == 0) {
            if (pg < g)
                g = pg;
            if (pw < w)
                w = pw;
        }
    }
    *gen = g;
    *width = w;
    return 0;
}

int rail_sysfs_pci_numa(const char *root, const char *busid)
{
    char path[PATH_MAX], buf[32];
    long v;
    if (!safe_component(busid))
        return -1;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", busid);
    if (rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0 ||
        rail_parse_long(buf, 10, 0, 4095, &v) != 0)
        return -1;
    return (int)v;
}

bool rail_sysfs_peermem(const char *root)
{
    return rail_sysfs_exists(root, "/sys/kernel/mm/memory_peers/nv_mem/version") ||
           rail_sysfs_exists(root, "/sys/kernel/mm/memory_peers/nv_mem_nc/version") ||
           rail_sysfs_exists(root, "/sys/module/nvidia_peermem/version");
}
