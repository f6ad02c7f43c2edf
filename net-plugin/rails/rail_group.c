/* SPDX-License-Identifier: Apache-2.0 */
/* Rail groups: explicit NCCL_RAIL_RAILS parsing and the automatic grouping (see rail_group.h). */
#include "rails/rail_group.h"
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define ELEM_QUOTE 48 /* bytes of a quoted spec element in messages */

static int port_ll(const struct rail_group_port *p)
{
    return p->link_layer == RAIL_LINK_ETH ? RAIL_LINK_ETH : RAIL_LINK_IB;
}

static const char *ll_word(int ll)
{
    return ll == RAIL_LINK_ETH ? "Ethernet" : "InfiniBand";
}

static uint64_t bit(int i)
{
    return (uint64_t)1 << i;
}

static int lowest_bit(uint64_t m)
{
    return m ? __builtin_ctzll(m) : -1;
}

static int count_bits(uint64_t m)
{
    return __builtin_popcountll(m);
}

/* ---- input checks ---- */

static int check_name(const char *s, const char *what, int i, char *err, size_t errlen)
{
    if (!s || !*s)
        return rail_fail(err, errlen, "port %d: no %s", i, what);
    if (strlen(s) >= RAIL_GROUP_PORT_NAME_MAX)
        return rail_fail(err, errlen, "port %d: %s longer than %d characters", i, what,
                         RAIL_GROUP_PORT_NAME_MAX - 1);
    return 0;
}

static int check_input(const struct rail_group_port *ports, int nports,
                       const struct rail_group_gpus *gpus, char *err, size_t errlen)
{
    if (nports < 0 || nports > RAIL_GROUP_MAX_PORTS)
        return rail_fail(err, errlen, "%d ports (at most %d)", nports, RAIL_GROUP_MAX_PORTS);
    if (nports > 0 && !ports)
        return rail_fail(err, errlen, "no port array");
    if (gpus && (gpus->n_gpus < 0 || gpus->n_gpus > RAIL_GROUP_MAX_GPUS))
        return rail_fail(err, errlen, "%d GPUs (at most %d)", gpus->n_gpus, RAIL_GROUP_MAX_GPUS);
    for (int i = 0; i < nports; i++) {
        const struct rail_group_port *p = &ports[i];
        int rc = check_name(p->name, "name", i, err, errlen);
        if (!rc)
            rc = check_name(p->ibdev, "verbs device name", i, err, errlen);
        if (rc)
            return rc;
        if (p->port < 1 || p->port > 255)
            return rail_fail(err, errlen, "port %d (%s): port number %d outside 1..255", i, p->name,
                             p->port);
        if (p->link_layer != RAIL_LINK_UNKNOWN && p->link_layer != RAIL_LINK_IB &&
            p->link_layer != RAIL_LINK_ETH)
            return rail_fail(err, errlen, "port %d (%s): link layer %d is not IB or Ethernet", i,
                             p->name, p->link_layer);
        if (p->speed_mbps < 0)
            return rail_fail(err, errlen, "port %d (%s): negative speed %d", i, p->name,
                             p->speed_mbps);
        for (int k = 0; k < i; k++) {
            if (strcmp(ports[k].name, p->name) == 0)
                return rail_fail(err, errlen, "ports %d and %d are both named '%s'", k, i, p->name);
            if (strcmp(ports[k].ibdev, p->ibdev) == 0 && ports[k].port == p->port)
                return rail_fail(err, errlen, "ports %d and %d are both %s port %d", k, i, p->ibdev,
                                 p->port);
        }
    }
    return 0;
}

/* ---- output ---- */

/* Appends a group of the n ports idx[] (n <= RAIL_MAX_RAILS) to out. */
static void emit(struct rail_groups *out, const struct rail_group_port *ports, const int *idx,
                 int n, int reason, uint64_t gpu_mask, const struct rail_group_gpus *gpus, int part,
                 int nparts)
{
    struct rail_group *g = &out->g[out->n++];
    size_t used = 0;
    memset(g, 0, sizeof(*g));
    g->nrails = n;
    g->reason = reason;
    g->gpus = gpu_mask;
    g->path = -1;
    g->part = part;
    g->nparts = nparts;
    g->link_layer = port_ll(&ports[idx[0]]);
    for (int r = 0; r < n; r++) {
        const struct rail_group_port *p = &ports[idx[r]];
        g->port[r] = idx[r];
        g->speed_mbps += p->speed_mbps;
        /* Names are < RAIL_GROUP_PORT_NAME_MAX (checked): the whole name always fits. */
        used +=
            (size_t)snprintf(g->name + used, sizeof(g->name) - used, "%s%s", r ? "+" : "", p->name);
    }
    if (reason == RAIL_GROUP_AUTO_GPU && gpus) {
        /* Every GPU it serves reaches every rail at this class or better. */
        for (int k = 0; k < gpus->n_gpus; k++)
            for (int r = 0; r < n && (gpu_mask & bit(k)); r++) {
                int c =
                    gpus->path[k][idx[r]] > RAIL_PATH_SYS ? RAIL_PATH_SYS : gpus->path[k][idx[r]];
                if (c > g->path)
                    g->path = c;
            }
    }
}

/* Appends the ports of mask (port order) as one group, or as balanced parts of at most
 * RAIL_MAX_RAILS consecutive ports each, the larger parts first. */
static void emit_set(struct rail_groups *out, const struct rail_group_port *ports, uint64_t mask,
                     int reason, uint64_t gpu_mask, const struct rail_group_gpus *gpus)
{
    int idx[RAIL_GROUP_MAX_PORTS], n = 0;
    for (int i = 0; i < RAIL_GROUP_MAX_PORTS; i++)
        if (mask & bit(i))
            idx[n++] = i;
    if (n == 0)
        return;
    int nparts = (n + RAIL_MAX_RAILS - 1) / RAIL_MAX_RAILS;
    int base = n / nparts, extra = n % nparts, at = 0;
    for (int k = 0; k < nparts; k++) {
        int len = base + (k < extra ? 1 : 0);
        emit(out, ports, idx + at, len, reason, gpu_mask, gpus, k + 1, nparts);
        at += len;
    }
}

/* ---- automatic grouping ---- */

/* The link layer with the larger total speed among mask's ports; IB on a tie or an empty mask. */
static int preferred_ll(const struct rail_group_port *ports, int nports, uint64_t mask)
{
    long long sum[3] = {0, 0, 0};
    bool any[3] = {false, false, false};
    for (int i = 0; i < nports; i++) {
        if (!(mask & bit(i)))
            continue;
        int ll = port_ll(&ports[i]);
        sum[ll] += ports[i].speed_mbps;
        any[ll] = true;
    }
    if (!any[RAIL_LINK_IB])
        return any[RAIL_LINK_ETH] ? RAIL_LINK_ETH : RAIL_LINK_IB;
    if (!any[RAIL_LINK_ETH])
        return RAIL_LINK_IB;
    return sum[RAIL_LINK_ETH] > sum[RAIL_LINK_IB] ? RAIL_LINK_ETH : RAIL_LINK_IB;
}

static uint64_t ll_mask(const struct rail_group_port *ports, int nports, uint64_t mask, int ll)
{
    uint64_t m = 0;
    for (int i = 0; i < nports; i++)
        if ((mask & bit(i)) && port_ll(&ports[i]) == ll)
            m |= bit(i);
    return m;
}

static uint64_t all_ports(int nports)
{
    return nports >= 64 ? ~(uint64_t)0 : bit(nports) - 1;
}

static void auto_nogpu(const struct rail_group_port *ports, int nports, struct rail_groups *out)
{
    uint64_t all = all_ports(nports);
    int first = preferred_ll(ports, nports, all);
    int second = first == RAIL_LINK_IB ? RAIL_LINK_ETH : RAIL_LINK_IB;
    emit_set(out, ports, ll_mask(ports, nports, all, first), RAIL_GROUP_AUTO_NOGPU, 0, NULL);
    emit_set(out, ports, ll_mask(ports, nports, all, second), RAIL_GROUP_AUTO_NOGPU, 0, NULL);
}

/* GPU g's nearest ports: those at its best path class, of the preferred link layer. */
static uint64_t nearest(const struct rail_group_port *ports, int nports,
                        const struct rail_group_gpus *gpus, int g)
{
    int best = RAIL_PATH_SYS;
    uint64_t m = 0;
    for (int p = 0; p < nports; p++)
        if (gpus->path[g][p] < best)
            best = gpus->path[g][p];
    for (int p = 0; p < nports; p++)
        if ((gpus->path[g][p] > RAIL_PATH_SYS ? RAIL_PATH_SYS : gpus->path[g][p]) == best)
            m |= bit(p);
    return ll_mask(ports, nports, m, preferred_ll(ports, nports, m));
}

struct gpu_set {
    uint64_t want; /* nearest ports of the GPU that created it */
    uint64_t have; /* those still free then: the group's ports */
    uint64_t gpus;
};

static void auto_gpu(const struct rail_group_port *ports, int nports,
                     const struct rail_group_gpus *gpus, struct rail_groups *out)
{
    struct gpu_set sets[RAIL_GROUP_MAX_GPUS];
    int nsets = 0;
    uint64_t taken = 0;
    for (int g = 0; g < gpus->n_gpus; g++) {
        uint64_t want = nearest(ports, nports, gpus, g);
        int k;
        for (k = 0; k < nsets && sets[k].want != want; k++)
            ;
        if (k == nsets && (want & ~taken) == 0) /* all taken: join its first port's group */
            for (k = 0; k < nsets && !(sets[k].have & bit(lowest_bit(want))); k++)
                ;
        if (k < nsets) {
            sets[k].gpus |= bit(g);
            continue;
        }
        sets[nsets++] = (struct gpu_set){want, want & ~taken, bit(g)};
        taken |= want;
    }
    for (int k = 0; k < nsets; k++)
        emit_set(out, ports, sets[k].have, RAIL_GROUP_AUTO_GPU, sets[k].gpus, gpus);
    for (int p = 0; p < nports; p++)
        if (!(taken & bit(p)))
            emit_set(out, ports, bit(p), RAIL_GROUP_AUTO_SPARE, 0, NULL);
}

/* ---- explicit NCCL_RAIL_RAILS ---- */

/* Ports element s[0..n) names, as a mask. -EINVAL for a malformed element. */
static int match_element(const char *s, size_t n, const struct rail_group_port *ports, int nports,
                         uint64_t *mask, const char *where, char *err, size_t errlen)
{
    char q[ELEM_QUOTE];
    rail_quote(q, sizeof(q), s, n);
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)s[i]))
            return rail_fail(err, errlen, "'%s' (%s): white space or control character", q, where);
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon ? (size_t)(colon - s) : n;
    if (name_len == 0)
        return rail_fail(err, errlen, "'%s' (%s): empty device name", q, where);
    if (name_len >= RAIL_GROUP_PORT_NAME_MAX)
        return rail_fail(err, errlen, "'%s' (%s): device name longer than %d characters", q, where,
                         RAIL_GROUP_PORT_NAME_MAX - 1);
    uint64_t port = 0;
    if (colon) {
        size_t plen = n - name_len - 1;
        if (rail_parse_digits(colon + 1, plen, 3, 255, &port) != 0 || port < 1)
            return rail_fail(err, errlen, "'%s' (%s): port must be a number 1..255", q, where);
    }
    *mask = 0;
    for (int i = 0; i < nports; i++) {
        const struct rail_group_port *p = &ports[i];
        bool hit = strlen(p->name) == n && memcmp(p->name, s, n) == 0;
        if (strlen(p->ibdev) == name_len && memcmp(p->ibdev, s, name_len) == 0)
            hit = hit || !colon || (uint64_t)p->port == port;
        if (hit)
            *mask |= bit(i);
    }
    if (*mask == 0)
        return rail_fail(err, errlen, "'%s' (%s): no usable port of that name", q, where);
    if (count_bits(*mask) > 1) {
        int a = lowest_bit(*mask), b = lowest_bit(*mask & ~bit(a));
        return rail_fail(err, errlen,
                         "'%s' (%s): matches %d usable ports (%s, %s%s): name one as device:port",
                         q, where, count_bits(*mask), ports[a].name, ports[b].name,
                         count_bits(*mask) > 2 ? ", ..." : "");
    }
    return 0;
}

/* One group s[0..n) of the spec (number gi, 1-based) into idx[] and *nidx; used = ports named so
 * far, owner[p] = the group that named port p. */
static int parse_group(const char *s, size_t n, int gi, const struct rail_group_port *ports,
                       int nports, int *idx, int *nidx, int *owner, uint64_t *used, char *err,
                       size_t errlen)
{
    char q[ELEM_QUOTE], where[96];
    rail_quote(q, sizeof(q), s, n);
    *nidx = 0;
    if (n == 0)
        return rail_fail(err, errlen, "group %d is empty", gi);
    const char *p = s, *end = s + n;
    for (int r = 1;; r++) {
        const char *plus = memchr(p, '+', (size_t)(end - p));
        size_t len = plus ? (size_t)(plus - p) : (size_t)(end - p);
        snprintf(where, sizeof(where), "group %d '%s', rail %d", gi, q, r);
        if (len == 0)
            return rail_fail(err, errlen, "%s: empty port name", where);
        uint64_t m = 0;
        int rc = match_element(p, len, ports, nports, &m, where, err, errlen);
        if (rc)
            return rc;
        int pi = lowest_bit(m);
        char eq[ELEM_QUOTE];
        rail_quote(eq, sizeof(eq), p, len);
        if (*used & m) {
            if (owner[pi] == gi)
                return rail_fail(err, errlen, "'%s' (%s): port %s named twice in the group", eq,
                                 where, ports[pi].name);
            return rail_fail(err, errlen, "'%s' (%s): port %s is already in group %d", eq, where,
                             ports[pi].name, owner[pi]);
        }
        if (*nidx == RAIL_MAX_RAILS)
            return rail_fail(err, errlen, "group %d '%s': more than %d rails", gi, q,
                             RAIL_MAX_RAILS);
        if (*nidx > 0 && port_ll(&ports[pi]) != port_ll(&ports[idx[0]]))
            return rail_fail(err, errlen,
                             "'%s' (%s) is %s but %s is %s: a group cannot mix link layers", eq,
                             where, ll_word(port_ll(&ports[pi])), ports[idx[0]].name,
                             ll_word(port_ll(&ports[idx[0]])));
        *used |= m;
        owner[pi] = gi;
        idx[(*nidx)++] = pi;
        if (!plus)
            return 0;
        p = plus + 1;
    }
}

static int build_explicit(const char *spec, const struct rail_group_port *ports, int nports,
                          struct rail_groups *out, char *err, size_t errlen)
{
    int owner[RAIL_GROUP_MAX_PORTS];
    uint64_t used = 0;
    const char *p = spec;
    for (int gi = 1;; gi++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int idx[RAIL_MAX_RAILS], nidx;
        if (out->n == RAIL_GROUP_MAX_GROUPS)
            return rail_fail(err, errlen, "more than %d groups", RAIL_GROUP_MAX_GROUPS);
        int rc = parse_group(p, n, gi, ports, nports, idx, &nidx, owner, &used, err, errlen);
        if (rc)
            return rc;
        emit(out, ports, idx, nidx, RAIL_GROUP_EXPLICIT, 0, NULL, 1, 1);
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int rail_group_build(const struct rail_group_port *ports, int nports,
                     const struct rail_group_gpus *gpus, const char *spec, struct rail_groups *out,
                     char *err, size_t errlen)
{
    rail_clear_err(err, errlen);
    if (!out)
        return rail_fail(err, errlen, "no output");
    out->n = 0;
    int rc = check_input(ports, nports, gpus, err, errlen);
    if (rc)
        return rc;
    if (spec && *spec) {
        rc = build_explicit(spec, ports, nports, out, err, errlen);
        if (rc)
            out->n = 0;
        return rc;
    }
    if (nports == 0)
        return 0;
    if (gpus && gpus->n_gpus > 0)
        auto_gpu(ports, nports, gpus, out);
    else
        auto_nogpu(ports, nports, out);
    return 0;
}

/* ---- topology mapping ---- */

static int topo_nic_of(const struct rail_topo *t, const struct rail_group_port *p)
{
    int any_port = -1;
    for (int n = 0; n < t->n_nics && n < RAIL_TOPO_MAX_NICS; n++) {
        const struct rail_nic *nic = &t->nics[n];
        if (strncmp(nic->name, p->ibdev, sizeof(nic->name)) != 0)
            continue;
        if (nic->port == p->port)
            return n;
        if (nic->port == 0 && any_port < 0)
            any_port = n;
    }
    if (any_port >= 0 || !p->busid || !*p->busid)
        return any_port;
    for (int n = 0; n < t->n_nics && n < RAIL_TOPO_MAX_NICS; n++)
        if (t->nics[n].busid[0] &&
            strncasecmp(t->nics[n].busid, p->busid, sizeof(t->nics[n].busid)) == 0)
            return n;
    return -1;
}

int rail_group_gpus_from_topo(const struct rail_topo *t, const struct rail_group_port *ports,
                              int nports, struct rail_group_gpus *out)
{
    if (!t || !out || nports < 0 || nports > RAIL_GROUP_MAX_PORTS || (nports > 0 && !ports))
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    int ng = t->n_gpus < 0 ? 0 : t->n_gpus;
    out->n_gpus = ng > RAIL_GROUP_MAX_GPUS ? RAIL_GROUP_MAX_GPUS : ng;
    for (int p = 0; p < nports; p++) {
        int n = ports[p].ibdev ? topo_nic_of(t, &ports[p]) : -1;
        for (int g = 0; g < out->n_gpus; g++) {
            int c = n < 0 ? RAIL_PATH_SYS : t->path[g][n];
            out->path[g][p] = (uint8_t)(c > RAIL_PATH_SYS ? RAIL_PATH_SYS : c);
        }
    }
    return 0;
}

/* ---- logging ---- */

const char *rail_group_reason_name(int reason)
{
    switch (reason) {
    case RAIL_GROUP_EXPLICIT:
        return "explicit";
    case RAIL_GROUP_AUTO_GPU:
        return "auto-gpu";
    case RAIL_GROUP_AUTO_NOGPU:
        return "auto-nogpu";
    case RAIL_GROUP_AUTO_SPARE:
        return "auto-spare";
    default:
        return "?";
    }
}

/* Bounded append: the first overflow sticks in *ok. */
static void put(char *buf, size_t len, size_t *o, bool *ok, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void put(char *buf, size_t len, size_t *o, bool *ok, const char *fmt, ...)
{
    va_list ap;
    if (!*ok)
        return;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *o, len - *o, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= len - *o)
        *ok = false;
    else
        *o += (size_t)w;
}

int rail_group_describe(const struct rail_group *g, int index, char *buf, size_t len)
{
    if (!g || !buf || !len)
        return -EINVAL;
    size_t o = 0;
    bool ok = true;
    buf[0] = '\0';
    put(buf, len, &o, &ok, "[%d] %.*s %d rail%s %d Mbps (", index, RAIL_GROUP_NAME_MAX - 1, g->name,
        g->nrails, g->nrails == 1 ? "" : "s", g->speed_mbps);
    switch (g->reason) {
    case RAIL_GROUP_EXPLICIT:
        put(buf, len, &o, &ok, "NCCL_RAIL_RAILS");
        break;
    case RAIL_GROUP_AUTO_NOGPU:
        put(buf, len, &o, &ok, "auto: no GPU");
        break;
    case RAIL_GROUP_AUTO_SPARE:
        put(buf, len, &o, &ok, "auto: nearest to no GPU");
        break;
    case RAIL_GROUP_AUTO_GPU:
        put(buf, len, &o, &ok, "auto: GPU ");
        for (int a = 0, first = 1; a < 64; a++) {
            if (!(g->gpus & bit(a)))
                continue;
            int b = a;
            while (b + 1 < 64 && (g->gpus & bit(b + 1)))
                b++;
            if (b > a)
                put(buf, len, &o, &ok, "%s%d-%d", first ? "" : ",", a, b);
            else
                put(buf, len, &o, &ok, "%s%d", first ? "" : ",", a);
            first = 0;
            a = b;
        }
        if (g->path >= 0)
            put(buf, len, &o, &ok, " at %s", rail_path_name((enum rail_path)g->path));
        break;
    default:
        put(buf, len, &o, &ok, "reason %d", g->reason);
        break;
    }
    if (g->nparts > 1)
        put(buf, len, &o, &ok, ", part %d of %d", g->part, g->nparts);
    put(buf, len, &o, &ok, ")");
    return ok ? 0 : -ENOSPC;
}
