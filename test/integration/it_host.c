/* SPDX-License-Identifier: Apache-2.0 */
#include "it_host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct it_log_counts g_it_logs;

unsigned long long it_sys_ull(const char *path, unsigned long long dflt)
{
    unsigned long long v = dflt;
    FILE *f = fopen(path, "r");
    if (!f)
        return dflt;
    if (fscanf(f, "%llu", &v) != 1)
        v = dflt;
    fclose(f);
    return v;
}

unsigned long long it_tx_bytes(const char *ifname)
{
    char path[160];
    snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_bytes", ifname);
    return it_sys_ull(path, 0);
}

int it_carrier(const char *ifname)
{
    char path[160];
    snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", ifname);
    unsigned long long v = it_sys_ull(path, 2);
    return v == 2 ? -1 : (int)v;
}

int it_port_active(const char *dev)
{
    char path[160], line[64] = "";
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/state", dev);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(line, sizeof(line), f) && strstr(line, "ACTIVE");
    fclose(f);
    return ok;
}

int it_wait_carrier(const char *ifname, int up, double timeout_s)
{
    double end = it_now() + timeout_s;
    while (it_carrier(ifname) != up) {
        if (it_now() > end)
            return -1;
        usleep(20000);
    }
    return 0;
}

int it_wait_port(const char *dev, double timeout_s)
{
    double end = it_now() + timeout_s;
    while (!it_port_active(dev)) {
        if (it_now() > end)
            return -1;
        usleep(50000);
    }
    return 0;
}

static void count_line(ncclDebugLogLevel level, const char *msg)
{
    if (level == NCCL_LOG_WARN)
        g_it_logs.warns++;
    if (strstr(msg, ") failed: ") || strstr(msg, "and it was the last rail up"))
        g_it_logs.failovers++;
    if (strstr(msg, ") rejoined;"))
        g_it_logs.rejoins++;
    if (strstr(msg, "to NCCL") && strstr(msg, "returning error"))
        g_it_logs.errors++;
}

void it_log_count_start(void)
{
    memset(&g_it_logs, 0, sizeof(g_it_logs));
    g_it_log_hook = count_line;
}

int it_ctl_ready(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

static int fill_addr(struct sockaddr_in *sa, const char *addr, int port)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, addr, &sa->sin_addr) == 1 ? 0 : -1;
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int it_tcp_listen_accept(const char *addr, int port, double timeout_s)
{
    struct sockaddr_in sa;
    int one = 1, s, c;
    if (fill_addr(&sa, addr, port))
        return it_fail("bad address %s", addr) ? -1 : -1;
    s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 1)) {
        it_fail("bind/listen %s:%d: %s", addr, port, strerror(errno));
        close(s);
        return -1;
    }
    struct pollfd p = {.fd = s, .events = POLLIN};
    if (poll(&p, 1, (int)(timeout_s * 1000)) != 1) {
        it_fail("no peer connected to %s:%d within %.0f s", addr, port, timeout_s);
        close(s);
        return -1;
    }
    c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
    close(s);
    if (c >= 0)
        nodelay(c);
    return c;
}

int it_tcp_connect(const char *addr, int port, double timeout_s)
{
    struct sockaddr_in sa;
    double end = it_now() + timeout_s;
    if (fill_addr(&sa, addr, port))
        return it_fail("bad address %s", addr) ? -1 : -1;
    for (;;) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
            return -1;
        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            nodelay(s);
            return s;
        }
        close(s);
        if (it_now() > end) {
            it_fail("cannot connect to %s:%d within %.0f s", addr, port, timeout_s);
            return -1;
        }
        usleep(200000);
    }
}

int it_rdma_res(const char *dev, long *qp, long *mr)
{
    char cmd[160], line[512];
    int found = -1;
    *qp = *mr = -1;
    snprintf(cmd, sizeof(cmd), "rdma resource show %s 2>/dev/null", dev);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        char *q = strstr(line, " qp "), *m = strstr(line, " mr ");
        if (q && m) {
            *qp = strtol(q + 4, NULL, 10);
            *mr = strtol(m + 4, NULL, 10);
            found = 0;
        }
    }
    pclose(f);
    return found;
}
