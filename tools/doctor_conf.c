/* SPDX-License-Identifier: Apache-2.0 */
/* conf.*: NCCL's configuration files (/etc/nccl.conf, ~/.nccl.conf, NCCL_CONF_FILE) merged into
 * the doctor's environment with NCCL's precedence, so that every later check judges what NCCL
 * will really see. Reads are non-blocking, regular files only, bounded (doctor_deploy.h). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor_deploy.h"
#include "root_path.h"
#include "safe_file.h"
#include "strutil.h"

int doctor_conf_parse_line(const char *line, size_t len, char *name, size_t name_len, char *value,
                           size_t value_len)
{
    size_t s = 0, n, v;
    if (len == 0 || line[0] == '#')
        return 0;
    while (s < len && line[s] != '=')
        s++;
    if (s == len)
        return 0; /* no '=': NCCL skips the line */
    n = s < DOCTOR_CONF_FIELD_MAX ? s : DOCTOR_CONF_FIELD_MAX;
    if (n >= name_len)
        n = name_len - 1;
    memcpy(name, line, n);
    name[n] = '\0';
    v = len - s - 1;
    if (v > DOCTOR_CONF_FIELD_MAX)
        v = DOCTOR_CONF_FIELD_MAX;
    if (v >= value_len)
        v = value_len - 1;
    memcpy(value, line + s + 1, v);
    value[v] = '\0';
    return 1;
}

static const char *env_get_vars(char *const *vars, const char *name)
{
    struct doctor_env e = {.vars = vars};
    return doctor_env_get(&e, name);
}

/* The merged list and an index of its names (open addressing, at most half full), so merging a
 * file costs one lookup per line: linear in the file, whatever its size. */
struct merged {
    char **vars;
    size_t n, cap;
    size_t *slot, nslot; /* index + 1 into vars, 0 = empty */
    size_t compares;     /* name comparisons made (doctor_ctx.conf_compares) */
};

static size_t name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

static size_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot holding name, or the empty slot where it would go. */
static size_t find_slot(struct merged *m, const char *name, size_t len)
{
    size_t i = name_hash(name, len) & (m->nslot - 1);
    while (m->slot[i]) {
        const char *kv = m->vars[m->slot[i] - 1];
        m->compares++;
        if (name_len(kv) == len && memcmp(kv, name, len) == 0)
            break;
        i = (i + 1) & (m->nslot - 1);
    }
    return i;
}

/* Index of name in m->vars, -1 when it is not set. NCCL's setenv(..., 0) keeps any existing
 * value, an empty one included. */
static long lookup(struct merged *m, const char *name)
{
    size_t i;
    if (!m->nslot)
        return -1;
    i = find_slot(m, name, strlen(name));
    return m->slot[i] ? (long)m->slot[i] - 1 : -1;
}

static int grow_index(struct merged *m)
{
    size_t nslot = m->nslot ? m->nslot * 2 : 128, *old = m->slot, oldn = m->nslot;
    m->slot = calloc(nslot, sizeof(*m->slot));
    if (!m->slot) {
        m->slot = old;
        return -ENOMEM;
    }
    m->nslot = nslot;
    for (size_t i = 0; i < oldn; i++)
        if (old[i]) {
            const char *kv = m->vars[old[i] - 1];
            m->slot[find_slot(m, kv, name_len(kv))] = old[i];
        }
    free(old);
    return 0;
}

/* Append s ("NAME=value", owned by m from now on); the first of two equal names stays the one
 * found, as doctor_env_get finds it. */
static int push(struct merged *m, char *s)
{
    size_t i;
    if (m->n + 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        char **nv = realloc(m->vars, cap * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        m->vars = nv;
        m->cap = cap;
    }
    if ((m->n + 1) * 2 > m->nslot && grow_index(m) < 0)
        return -ENOMEM;
    m->vars[m->n++] = s;
    m->vars[m->n] = NULL;
    i = find_slot(m, s, name_len(s));
    if (!m->slot[i])
        m->slot[i] = m->n;
    return 0;
}

/* The home directory of uid in the snapshot's own /etc/passwd (read beneath the root: this
 * machine's user database says nothing of it). 0, or -ENOENT. */
static int snapshot_home(const char *root, unsigned uid, char *home, size_t len)
{
    char *text = NULL, err[256];
    size_t n = 0;
    int rc = -ENOENT;
    if (rail_file_read_all_in(root, "/etc/passwd", 1u << 20, 0, &text, &n, err, sizeof(err)) < 0)
        return -ENOENT;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && rc < 0;
         line = strtok_r(NULL, "\n", &save)) {
        char *f[7], *p = line;
        int k = 0;
        for (; k < 7 && p; k++) { /* name:passwd:uid:gid:gecos:home:shell */
            f[k] = p;
            p = strchr(p, ':');
            if (p)
                *p++ = '\0';
        }
        long v;
        if (k >= 6 && rail_parse_long(f[2], 10, 0, 0x7fffffffL, &v) == 0 && (unsigned)v == uid &&
            f[5][0] == '/' && (size_t)snprintf(home, len, "%s", f[5]) < len)
            rc = 0;
    }
    free(text);
    return rc;
}

/* One file into m; conf.file findings. explicit: named by NCCL_CONF_FILE (missing = warn). */
static void read_one(struct doctor_report *r, struct merged *m, size_t n_env, const char *shown,
                     const char *root, const char *path, bool explicit)
{
    char *text, name[DOCTOR_CONF_FIELD_MAX + 1], value[DOCTOR_CONF_FIELD_MAX + 1], err[256];
    char shadowed[DOCTOR_TEXT_LEN / 2] = "";
    size_t len = 0, nvars = 0, used = 0;
    /* Bounded, non-blocking, regular files only, beneath the root (safe_file.h). */
    int lineno = 0, rc = rail_file_read_all_in(root, path, DOCTOR_CONF_MAX_BYTES, 0, &text, &len,
                                               err, sizeof(err));
    if (rc == -ENOENT && !explicit)
        return; /* NCCL silently skips a missing file: so does the finding list */
    if (rc < 0) {
        doctor_add(r, "conf.file", explicit || rc != -EACCES ? DOCTOR_WARN : DOCTOR_INFO, shown,
                   rc == -EINVAL ? "make it a regular file" : "fix or remove the file",
                   "%s cannot be used: %s%s", shown,
                   rc == -EINVAL  ? "not a regular file (not read)"
                   : rc == -EFBIG ? "larger than 1 MiB (not read)"
                                  : rail_root_strerror(rc),
                   explicit ? "; NCCL ignores NCCL_CONF_FILE silently" : "");
        return;
    }
    for (size_t pos = 0; pos < len;) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - line) : len - pos;
        pos += l + (nl ? 1 : 0);
        lineno++;
        if (!doctor_conf_parse_line(line, l, name, sizeof(name), value, sizeof(value)))
            continue;
        nvars++;
        if (!name[0] || strchr(name, ' ') || strchr(name, '\t')) {
            doctor_add(r, "conf.line", DOCTOR_WARN, shown, "write NAME=value without spaces",
                       "%s line %d: the name '%.60s' is taken literally by NCCL (spaces included), "
                       "so it sets no usable variable",
                       shown, lineno, name);
            continue;
        }
        if (value[0] && value[strlen(value) - 1] == '\r')
            doctor_add(r, "conf.line", DOCTOR_WARN, shown, "convert the file to Unix line ends",
                       "%s line %d: %s ends with a carriage return (CRLF file); NCCL keeps it in "
                       "the value",
                       shown, lineno, name);
        long at = lookup(m, name);
        if (at >= 0) {
            bool env = (size_t)at < n_env;
            size_t sl = strlen(shadowed);
            if (sl + strlen(name) + 16 < sizeof(shadowed))
                snprintf(shadowed + sl, sizeof(shadowed) - sl, "%s%.64s (%s)", sl ? ", " : "", name,
                         env ? "environment" : "earlier file");
            continue;
        }
        size_t sz = strlen(name) + strlen(value) + 2;
        char *kv = malloc(sz);
        if (kv)
            snprintf(kv, sz, "%s=%s", name, value); /* before push: it indexes the name */
        if (!kv || push(m, kv) < 0) {
            free(kv);
            r->oom = true;
            break;
        }
        used++;
    }
    free(text);
    doctor_add(r, "conf.file", DOCTOR_INFO, shown, NULL, "%s: %zu variable%s, %zu in effect%s%s",
               shown, nvars, nvars == 1 ? "" : "s", used, shadowed[0] ? "; overridden: " : "",
               shadowed);
}

void doctor_read_conf(struct doctor_ctx *c, struct doctor_report *r)
{
    struct merged m = {0};
    char home_buf[1024], shown[4096];
    size_t n_env;
    const char *user_file = env_get_vars(c->env.vars, "NCCL_CONF_FILE");
    const char *root = c->root && *c->root ? c->root : "/";

    doctor_conf_release(c);
    /* The process environment first (copied, so that the merged list owns every string): it
     * wins over every file. */
    for (char *const *v = c->env.vars; v && *v; v++) {
        char *copy = strdup(*v);
        if (!copy || push(&m, copy) < 0) {
            free(copy);
            r->oom = true;
            break;
        }
    }
    n_env = m.n;
    /* Paths as NCCL would see them on the snapshot's machine, resolved beneath the root. */
    if (user_file) {
        snprintf(shown, sizeof(shown), "NCCL_CONF_FILE=%s", user_file);
        read_one(r, &m, n_env, shown, root, user_file, true);
    } else {
        const char *home = c->home;
        if (!home && rail_root_is_live(root)) {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        } else if (!home &&
                   snapshot_home(root, (unsigned)getuid(), home_buf, sizeof(home_buf)) == 0) {
            home = home_buf;
        }
        if (home) {
            snprintf(shown, sizeof(shown), "%s/.nccl.conf", home);
            read_one(r, &m, n_env, shown, root, shown, false);
        }
    }
    read_one(r, &m, n_env, "/etc/nccl.conf", root, "/etc/nccl.conf", false);
    c->conf_compares = m.compares;
    free(m.slot);
    if (!m.vars)
        return; /* empty environment, no file: nothing to merge */
    c->conf_env_orig = c->env.vars;
    c->conf_vars = m.vars;
    c->conf_n_env = n_env;
    c->env.vars = m.vars;
}

void doctor_conf_release(struct doctor_ctx *c)
{
    if (!c->conf_vars)
        return;
    for (char **v = c->conf_vars; *v; v++)
        free(*v);
    free(c->conf_vars);
    c->conf_vars = NULL;
    c->env.vars = c->conf_env_orig;
    c->conf_env_orig = NULL;
}
