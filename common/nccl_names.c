/* SPDX-License-Identifier: Apache-2.0 */
/* The names of NCCL's collectives, algorithms and protocols as NCCL prints them, as the rules
 * file spells them, and as the calibration inputs (nccl-tests logs, the profiler's files, the
 * trained table, command lines) name them. Pure functions, no I/O. */
#include "nccl_names.h"

#include <ctype.h>
#include <string.h>

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- as NCCL prints them ---- */

const char *rail_coll_name(int coll)
{
    static const char *const names[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                        "AllReduce"};
    return coll >= 0 && coll < NELEM(names) ? names[coll] : "?";
}

const char *rail_algo_name(int algo)
{
    static const char *const names[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                        "NVLSTree", "PAT"};
    return algo >= 0 && algo < NELEM(names) ? names[algo] : "?";
}

const char *rail_proto_name(int proto)
{
    static const char *const names[] = {"LL", "LL128", "Simple"};
    return proto >= 0 && proto < NELEM(names) ? names[proto] : "?";
}

/* ---- as the rules file spells them ---- */

/* Accepted spellings (compared case-insensitively): the example tuner's first, then NCCL's own
 * names where they differ only by the missing underscore. */
const struct rail_name_value rail_rules_colls[] = {
    {"broadcast", ncclFuncBroadcast}, {"reduce", ncclFuncReduce},
    {"allgather", ncclFuncAllGather}, {"reducescatter", ncclFuncReduceScatter},
    {"allreduce", ncclFuncAllReduce},
};
const struct rail_name_value rail_rules_algos[] = {
    {"tree", NCCL_ALGO_TREE},
    {"ring", NCCL_ALGO_RING},
    {"collnet_direct", NCCL_ALGO_COLLNET_DIRECT},
    {"collnet_chain", NCCL_ALGO_COLLNET_CHAIN},
    {"nvls", NCCL_ALGO_NVLS},
    {"nvls_tree", NCCL_ALGO_NVLS_TREE},
    {"pat", NCCL_ALGO_PAT},
    {"collnetdirect", NCCL_ALGO_COLLNET_DIRECT},
    {"collnetchain", NCCL_ALGO_COLLNET_CHAIN},
    {"nvlstree", NCCL_ALGO_NVLS_TREE},
};
const struct rail_name_value rail_rules_protos[] = {
    {"ll", NCCL_PROTO_LL},
    {"ll128", NCCL_PROTO_LL128},
    {"simple", NCCL_PROTO_SIMPLE},
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

const size_t rail_rules_ncolls = COUNT_OF(rail_rules_colls);
const size_t rail_rules_nalgos = COUNT_OF(rail_rules_algos);
const size_t rail_rules_nprotos = COUNT_OF(rail_rules_protos);

static const char *value_name(const struct rail_name_value *t, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].value == v)
            return t[i].name; /* the first spelling of each value is the canonical one */
    return "?";
}

const char *rail_rules_coll_str(int coll)
{
    return value_name(rail_rules_colls, rail_rules_ncolls, coll);
}

const char *rail_rules_algo_str(int algo)
{
    return value_name(rail_rules_algos, rail_rules_nalgos, algo);
}

const char *rail_rules_proto_str(int proto)
{
    return value_name(rail_rules_protos, rail_rules_nprotos, proto);
}

/* ---- names in files and on command lines ---- */

/* Lower-case copy of s[0..n) without '_', '-' and blanks. */
static void normalize(const char *s, size_t n, char *out, size_t outlen)
{
    size_t k = 0;
    for (size_t i = 0; i < n && s[i] && k + 1 < outlen; i++)
        if (s[i] != '_' && s[i] != '-' && !isspace((unsigned char)s[i]))
            out[k++] = (char)tolower((unsigned char)s[i]);
    out[k] = '\0';
}

/* Longest names first: "reducescatter" and "allreduce" contain "reduce". */
static const struct {
    const char *key;
    int coll;
} k_colls[] = {{"reducescatter", ncclFuncReduceScatter},
               {"allreduce", ncclFuncAllReduce},
               {"allgather", ncclFuncAllGather},
               {"broadcast", ncclFuncBroadcast},
               {"reduce", ncclFuncReduce}};

int rail_calib_coll_from_name(const char *s, size_t n)
{
    char norm[256];
    normalize(s, n, norm, sizeof(norm));
    for (size_t i = 0; i < sizeof(k_colls) / sizeof(k_colls[0]); i++)
        if (strstr(norm, k_colls[i].key))
            return k_colls[i].coll;
    return -1;
}

int rail_calib_coll_exact(const char *s, size_t n)
{
    char norm[256];
    if (n >= sizeof(norm))
        return -1;
    normalize(s, n, norm, sizeof(norm));
    for (size_t i = 0; i < sizeof(k_colls) / sizeof(k_colls[0]); i++) {
        size_t kl = strlen(k_colls[i].key);
        if (strncmp(norm, k_colls[i].key, kl) == 0 &&
            (norm[kl] == '\0' || strcmp(norm + kl, "perf") == 0))
            return k_colls[i].coll;
    }
    return -1;
}

static int name_lookup(const char *s, size_t n, int count, const char *(*a)(int),
                       const char *(*b)(int))
{
    char norm[64], cand[64];
    normalize(s, n, norm, sizeof(norm));
    if (!*norm)
        return -1;
    for (int i = 0; i < count; i++) {
        normalize(a(i), strlen(a(i)), cand, sizeof(cand));
        if (strcmp(norm, cand) == 0)
            return i;
        normalize(b(i), strlen(b(i)), cand, sizeof(cand));
        if (strcmp(norm, cand) == 0)
            return i;
    }
    return -1;
}

int rail_calib_algo_from_name(const char *s, size_t n)
{
    return name_lookup(s, n, NCCL_NUM_ALGORITHMS, rail_algo_name, rail_rules_algo_str);
}

int rail_calib_proto_from_name(const char *s, size_t n)
{
    return name_lookup(s, n, NCCL_NUM_PROTOCOLS, rail_proto_name, rail_rules_proto_str);
}
