/* SPDX-License-Identifier: Apache-2.0 */
/* plugin.*: which libraries NCCL 2.28's loader opens for NCCL_NET_PLUGIN and NCCL_TUNER_PLUGIN
 * (from the merged environment, doctor_conf.c), with the path the dynamic loader found or its
 * error text. The rules, from NCCL's src/plugin/{plugin_open,net,tuner}.cc:
 *  - net: unset -> "libnccl-net.so"; "none" -> no external plugin; otherwise a comma-separated
 *    list, each entry tried in order; the first that loads (and initialises) wins;
 *  - tuner: "none" -> no tuner; otherwise the name (unset -> "libnccl-tuner.so"); when nothing
 *    loads, NCCL looks for the tuner tables in the net plugin library it already opened;
 *  - one name: dlopen(name, RTLD_NOW|RTLD_LOCAL), then "<prefix>-<name>.so" unless the name has
 *    a '/' or is "lib*.so"; a case-insensitive prefix of "STATIC_PLUGIN" is the program itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor_deploy.h"
#include "nccl/nccl_net.h"
#include "nccl/nccl_tuner.h"
#include "root_path.h"
#include "safe_file.h"

#define OUR_NET_NAME    "RAIL"       /* net-plugin/net_plugin.h RAIL_NET_NAME */
#define OUR_TUNER_NAME  "rail"       /* tuner-plugin/abi/tuner_exports.c PLUGIN_NAME */
#define MAX_NET_ENTRIES 14           /* NCCL_NET_MAX_PLUGINS - 2 internal plugins */
#define MAX_LIB_BYTES   (256u << 20) /* a plugin library larger than this is not inspected */
#define MAX_CACHE_BYTES (16u << 20)

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#endif

int doctor_plugin_names(const char *prefix, const char *name, char out[2][256])
{
    size_t n = name ? strlen(name) : 0;
    if (!n) {
        snprintf(out[0], 256, "%s.so", prefix);
        return 1;
    }
    if (strncasecmp(name, "STATIC_PLUGIN", n) == 0) {
        out[0][0] = '\0'; /* dlopen(NULL) */
        return 1;
    }
    snprintf(out[0], 256, "%s", name);
    if (strchr(name, '/') ||
        (strncmp(name, "lib", 3) == 0 && n >= 3 && strcmp(name + n - 3, ".so") == 0))
        return 1;
    snprintf(out[1], 256, "%s-%s.so", prefix, name);
    return 2;
}

/* One candidate file: 1 found (out filled), 0 absent or skipped (why appended to out->err). */
static int try_file(const char *root, const char *path, struct doctor_lib_probe *out)
{
    char *data = NULL, why[256];
    size_t len = 0, l = strlen(out->err);
    int rc = rail_file_read_all_in(root, path, MAX_LIB_BYTES, 0, &data, &len, why, sizeof(why));
    if (rc == -ENOENT || rc == -ENOTDIR)
        return 0;
    if (rc == 0 && doctor_elf_tables(data, len, out, why, sizeof(why)) == 0) {
        free(data);
        out->found = true;
        snprintf(out->path, sizeof(out->path), "%s", path);
        return 1;
    }
    free(data);
    if (rc == 0) /* rail_file_read_all_in's message names the path already */
        snprintf(out->err + l, sizeof(out->err) - l, "%s%.200s: %.200s", l ? "; " : "", path, why);
    else
        snprintf(out->err + l, sizeof(out->err) - l, "%s%.300s", l ? "; " : "", why);
    return 0;
}

static int try_dir(const char *root, const char *dir, const char *name,
                   struct doctor_lib_probe *out)
{
    char path[4096];
    if (!*dir || (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
        return 0;
    return try_file(root, path, out);
}

void doctor_lib_locate(const struct doctor_ctx *c, const char *name, struct doctor_lib_probe *out)
{
    static const char *const system_dirs[] = {"/lib/" MULTIARCH, "/usr/lib/" MULTIARCH, "/lib",
                                              "/usr/lib"};
    const char *root = c->root, *llp = doctor_env_get(&c->env, "LD_LIBRARY_PATH");
    char dirs[4096], path[4096], why[256], *save = NULL, *cache = NULL;
    size_t clen = 0;

    memset(out, 0, sizeof(*out));
    if (!name) { /* NCCL looks in the program: the application's own symbols, not ours */
        out->found = true;
        return;
    }
    if (strchr(name, '/')) {
        if (!try_file(root, name, out) && !out->err[0])
            snprintf(out->err, sizeof(out->err), "%.400s: no such file", name);
        return;
    }
    snprintf(dirs, sizeof(dirs), "%s", llp ? llp : "");
    for (char *d = strtok_r(dirs, ":;", &save); d; d = strtok_r(NULL, ":;", &save))
        if (try_dir(root, d, name, out))
            return;
    if (rail_file_read_all_in(root, "/etc/ld.so.cache", MAX_CACHE_BYTES, 0, &cache, &clen, why,
                              sizeof(why)) == 0 &&
        doctor_ldcache_lookup(cache, clen, name, path, sizeof(path)) == 0 &&
        try_file(root, path, out)) {
        free(cache);
        return;
    }
    free(cache);
    for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
        if (try_dir(root, system_dirs[i], name, out))
            return;
    size_t l = strlen(out->err);
    snprintf(out->err + l, sizeof(out->err) - l,
             "%s%.200s: not found in LD_LIBRARY_PATH, /etc/ld.so.cache, /lib/" MULTIARCH
             ", /usr/lib/" MULTIARCH ", /lib or /usr/lib%s",
             l ? "; " : "", name, rail_root_is_live(root) ? "" : " of the snapshot");
}

/* One plugin name resolved: the first candidate that loads, else every error joined. */
struct resolved {
    bool found;
    char name[256]; /* the candidate that loaded */
    struct doctor_lib_probe p;
    char errs[DOCTOR_TEXT_LEN / 2];
};

static void resolve(const struct doctor_ctx *c, const char *prefix, const char *name,
                    struct resolved *out)
{
    char cand[2][256];
    int n = doctor_plugin_names(prefix, name, cand);
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < n; i++) {
        struct doctor_lib_probe p;
        if (c->plugin_open)
            c->plugin_open(c->plugin_open_ctx, cand[i][0] ? cand[i] : NULL, &p);
        else
            doctor_lib_locate(c, cand[i][0] ? cand[i] : NULL, &p);
        if (p.found) {
            out->found = true;
            snprintf(out->name, sizeof(out->name), "%.255s",
                     cand[i][0] ? cand[i] : "(the program)");
            out->p = p;
            if (!out->p.path[0])
                snprintf(out->p.path, sizeof(out->p.path), "the program itself");
            return;
        }
        size_t l = strlen(out->errs);
        snprintf(out->errs + l, sizeof(out->errs) - l, "%s%.200s", l ? "; " : "", p.err);
    }
}

static bool is_ours_net(const struct resolved *x)
{
    return x->found && x->p.net_abi && strcmp(x->p.net_name, OUR_NET_NAME) == 0;
}

static const char *here(const struct doctor_ctx *c)
{
    return rail_root_is_live(c->root) ? "" : " (in the --root snapshot)";
}

/* The net library NCCL would end up with: index into list of the first entry that loads with a
 * net table, -1 when none. Adds plugin.net findings. */
static int check_net(const struct doctor_ctx *c, struct doctor_report *r, struct resolved *lib)
{
    const char *v = doctor_env_get(&c->env, "NCCL_NET_PLUGIN");
    char list[1024], *save = NULL;
    const char *fix = "set NCCL_NET_PLUGIN=rail (job environment or /etc/nccl.conf) and install "
                      "the nccl-rail package (docs/deploy.md)";
    int first = -1, n = 0;

    if (v && strcasecmp(v, "none") == 0) {
        doctor_add(r, "plugin.net", DOCTOR_WARN, "NCCL_NET_PLUGIN", fix,
                   "NCCL_NET_PLUGIN=none: NCCL loads no external net plugin and uses its own "
                   "IB/Socket transports; nccl-rail's net plugin is not used");
        return -1;
    }
    if (!v) {
        resolve(c, "libnccl-net", NULL, &lib[0]);
        if (!lib[0].found) {
            doctor_add(r, "plugin.net", DOCTOR_WARN, "NCCL_NET_PLUGIN", fix,
                       "NCCL_NET_PLUGIN is not set: NCCL tries libnccl-net.so (%s)%s, then uses "
                       "its own IB/Socket transports; nccl-rail's net plugin is not used",
                       lib[0].errs, here(c));
            return -1;
        }
        doctor_add(r, "plugin.net", is_ours_net(&lib[0]) ? DOCTOR_OK : DOCTOR_WARN,
                   "libnccl-net.so", is_ours_net(&lib[0]) ? NULL : fix,
                   "NCCL_NET_PLUGIN is not set: NCCL loads %s%s, net plugin \"%s\" (ABI v%d)%s",
                   lib[0].p.path, here(c), lib[0].p.net_name, lib[0].p.net_abi,
                   is_ours_net(&lib[0]) ? "" : ": that one wins, not nccl-rail");
        return lib[0].p.net_abi ? 0 : -1;
    }
    snprintf(list, sizeof(list), "%s", v);
    for (char *name = strtok_r(list, ",", &save); name && n < MAX_NET_ENTRIES;
         name = strtok_r(NULL, ",", &save), n++) {
        struct resolved *x = &lib[n];
        resolve(c, "libnccl-net", name, x);
        if (!x->found) {
            doctor_add(r, "plugin.net", DOCTOR_WARN, name, NULL,
                       "NCCL_NET_PLUGIN entry '%s' does not load%s: %s", name, here(c), x->errs);
            continue;
        }
        if (!x->p.net_abi) {
            doctor_add(r, "plugin.net", DOCTOR_WARN, x->name, NULL,
                       "%s loads from %s but has no ncclNetPlugin_v6..v11 table: NCCL calls it "
                       "unsupported and skips it",
                       x->name, x->p.path);
            continue;
        }
        if (first < 0) {
            first = n;
            doctor_add(r, "plugin.net", is_ours_net(x) ? DOCTOR_OK : DOCTOR_WARN, x->name,
                       is_ours_net(x) ? NULL : "put rail first in NCCL_NET_PLUGIN",
                       "NCCL loads %s%s: net plugin \"%s\", ABI v%d%s", x->p.path, here(c),
                       x->p.net_name, x->p.net_abi,
                       is_ours_net(x) ? ""
                                      : "; it is tried before nccl-rail and wins if it "
                                        "initialises");
        } else {
            doctor_add(r, "plugin.net", DOCTOR_INFO, x->name, NULL,
                       "%s (%s) loads too, but NCCL only tries it when the earlier entry fails "
                       "to initialise",
                       x->name, x->p.path);
        }
    }
    if (first < 0)
        doctor_add(r, "plugin.net", DOCTOR_ERROR, "NCCL_NET_PLUGIN",
                   "install the nccl-rail package (the plugin goes to the system library "
                   "directory) or add its directory to LD_LIBRARY_PATH",
                   "NCCL_NET_PLUGIN=%s: no entry loads, so NCCL silently falls back to its own "
                   "IB/Socket transports",
                   v);
    /* Another libnccl-net.so on the search path would win if the variable went missing (a job
     * environment that does not carry it, a container without /etc/nccl.conf). */
    if (first >= 0 && n < MAX_NET_ENTRIES) {
        struct resolved other;
        resolve(c, "libnccl-net", NULL, &other);
        if (other.found && !is_ours_net(&other))
            doctor_add(r, "plugin.net", DOCTOR_INFO, "libnccl-net.so", NULL,
                       "another net plugin is installed as %s (\"%s\"): NCCL loads it whenever "
                       "NCCL_NET_PLUGIN is unset",
                       other.p.path, other.p.net_name);
    }
    return first;
}

static void check_tuner(const struct doctor_ctx *c, struct doctor_report *r,
                        const struct resolved *net)
{
    const char *v = doctor_env_get(&c->env, "NCCL_TUNER_PLUGIN");
    const char *fix = "set NCCL_TUNER_PLUGIN=rail, or NCCL_NET_PLUGIN=rail (its library carries "
                      "the tuner)";
    struct resolved t;
    if (v && strcasecmp(v, "none") == 0) {
        doctor_add(r, "plugin.tuner", DOCTOR_WARN, "NCCL_TUNER_PLUGIN", fix,
                   "NCCL_TUNER_PLUGIN=none: NCCL uses no tuner plugin (its own model decides)");
        return;
    }
    resolve(c, "libnccl-tuner", v, &t);
    if (t.found) {
        bool ours = t.p.tuner_abi && strcmp(t.p.tuner_name, OUR_TUNER_NAME) == 0;
        if (!t.p.tuner_abi)
            doctor_add(r, "plugin.tuner", v ? DOCTOR_ERROR : DOCTOR_WARN, t.name, fix,
                       "NCCL opens %s for the tuner but it has no ncclTunerPlugin_v2..v5 table: "
                       "NCCL runs without a tuner",
                       t.p.path);
        else
            doctor_add(r, "plugin.tuner", ours ? DOCTOR_OK : DOCTOR_WARN, t.name, ours ? NULL : fix,
                       "NCCL loads the tuner from %s%s: \"%s\", ABI v%d%s", t.p.path, here(c),
                       t.p.tuner_name, t.p.tuner_abi, ours ? "" : " (not nccl-rail)");
        return;
    }
    /* Nothing loaded: NCCL looks in the net plugin library it opened. */
    if (net && net->p.tuner_abi) {
        bool ours = strcmp(net->p.tuner_name, OUR_TUNER_NAME) == 0;
        doctor_add(r, "plugin.tuner", ours ? DOCTOR_OK : DOCTOR_WARN, net->name, ours ? NULL : fix,
                   "%s%s does not load (%s); NCCL takes the tuner from the net plugin library %s: "
                   "\"%s\", ABI v%d",
                   v ? "NCCL_TUNER_PLUGIN=" : "libnccl-tuner.so", v ? v : "", t.errs, net->p.path,
                   net->p.tuner_name, net->p.tuner_abi);
        return;
    }
    doctor_add(r, "plugin.tuner", v ? DOCTOR_ERROR : DOCTOR_WARN, "NCCL_TUNER_PLUGIN", fix,
               "%s%s does not load (%s)%s and the net plugin library has no tuner: NCCL's "
               "own model decides",
               v ? "NCCL_TUNER_PLUGIN=" : "libnccl-tuner.so", v ? v : "", t.errs, here(c));
}

void doctor_check_plugins(const struct doctor_ctx *c, struct doctor_report *r)
{
    struct resolved *lib;
    int first;
    /* A snapshot (--root) is often sysfs alone: its library directories are looked at only
     * when its environment or configuration files name a plugin. */
    if (strcmp(c->root, "/") != 0 && !doctor_env_get(&c->env, "NCCL_NET_PLUGIN") &&
        !doctor_env_get(&c->env, "NCCL_TUNER_PLUGIN"))
        return;
    lib = calloc(MAX_NET_ENTRIES, sizeof(*lib));
    if (!lib) {
        r->oom = true;
        return;
    }
    first = check_net(c, r, lib);
    check_tuner(c, r, first >= 0 ? &lib[first] : NULL);
    free(lib);
}
