/* SPDX-License-Identifier: Apache-2.0 */
#include "model/model_table.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nccl_names.h"
#include "strutil.h"

static const char *const k_family[RAIL_FAM_COUNT] = {"node", "efa", "ib"};
static const char *const k_gen[NCCL_NUM_COMPCAPS] = {"volta", "ampere", "hopper", "blackwell"};

static const struct {
    const char *name;
    float prior, lo, hi; /* a value outside [lo, hi] is a malformed table */
} k_param[RAIL_STEP_NPARAMS] = {
    [RAIL_STEP_AI_LL] = {"ai_ll", 2.0f, 0.0f, 1e4f},
    [RAIL_STEP_AI_LL128] = {"ai_ll128", 3.0f, 0.0f, 1e4f},
    [RAIL_STEP_AI_SIMPLE] = {"ai_simple", 15.0f, 0.0f, 1e4f},
    [RAIL_STEP_AN_LL] = {"an_ll", 25.0f, 0.0f, 1e5f},
    [RAIL_STEP_AN_LL128] = {"an_ll128", 25.0f, 0.0f, 1e5f},
    [RAIL_STEP_AN_SIMPLE] = {"an_simple", 35.0f, 0.0f, 1e5f},
    [RAIL_STEP_BASE_LL] = {"base_ll", 5.0f, 0.0f, 1e6f},
    [RAIL_STEP_BASE_LL128] = {"base_ll128", 8.0f, 0.0f, 1e6f},
    [RAIL_STEP_BASE_SIMPLE] = {"base_simple", 10.0f, 0.0f, 1e6f},
    [RAIL_STEP_EI_LL] = {"ei_ll", 0.3f, 1e-4f, 10.0f},
    [RAIL_STEP_EI_LL128] = {"ei_ll128", 0.7f, 1e-4f, 10.0f},
    [RAIL_STEP_EI_SIMPLE] = {"ei_simple", 0.7f, 1e-4f, 10.0f},
    [RAIL_STEP_ENET_LL] = {"enet_ll", 0.03f, 1e-5f, 10.0f},
    [RAIL_STEP_ENET_LL128] = {"enet_ll128", 0.5f, 1e-5f, 10.0f},
    [RAIL_STEP_ENET_SIMPLE] = {"enet_simple", 0.75f, 1e-5f, 10.0f},
    [RAIL_STEP_ENVL_LL] = {"envl_ll", 0.03f, 1e-5f, 10.0f},
    [RAIL_STEP_ENVL_LL128] = {"envl_ll128", 0.7f, 1e-5f, 10.0f},
    [RAIL_STEP_ENVL_SIMPLE] = {"envl_simple", 0.75f, 1e-5f, 10.0f},
    [RAIL_STEP_TREE_LAT] = {"tree_lat", 1.0f, 1e-4f, 100.0f},
    [RAIL_STEP_TREE_ILAT] = {"tree_ilat", 0.3f, 1e-4f, 100.0f},
    [RAIL_STEP_TREE_BW_LL] = {"tree_bw_ll", 1.0f, 1e-4f, 100.0f},
    [RAIL_STEP_TREE_BW_LL128] = {"tree_bw_ll128", 0.8f, 1e-4f, 100.0f},
    [RAIL_STEP_TREE_BW_SIMPLE] = {"tree_bw_simple", 0.8f, 1e-4f, 100.0f},
    [RAIL_STEP_TREE_F2] = {"tree_f2", 1.3f, 1.25f, 1.35f}, /* see cost_model_steps.c */
    [RAIL_STEP_NVLSTREE_LAT] = {"nvlstree_lat", 50.0f, 0.0f, 1e6f},
    [RAIL_STEP_NVLSTREE_BW] = {"nvlstree_bw", 1.0f, 1e-4f, 100.0f},
    [RAIL_STEP_PAT_BASE] = {"pat_base", 40.0f, 0.0f, 1e6f},
    [RAIL_STEP_PAT_LAT] = {"pat_lat", 3.5f, 0.0f, 1e5f},
    [RAIL_STEP_PAT_POW] = {"pat_pow", 1.0f, 0.05f, 2.0f},
    [RAIL_STEP_PAT_BW] = {"pat_bw", 1.0f, 1e-4f, 100.0f},
};

const char *rail_family_name(int f)
{
    return f >= 0 && f < RAIL_FAM_COUNT ? k_family[f] : "?";
}

const char *rail_gen_name(int g)
{
    return g >= 0 && g < NCCL_NUM_COMPCAPS ? k_gen[g] : "?";
}

const char *rail_step_param_name(int p)
{
    return p >= 0 && p < RAIL_STEP_NPARAMS ? k_param[p].name : "?";
}

float rail_step_param_prior(int p)
{
    return p >= 0 && p < RAIL_STEP_NPARAMS ? k_param[p].prior : 0.0f;
}

void rail_step_param_range(int p, float *lo, float *hi)
{
    *lo = p >= 0 && p < RAIL_STEP_NPARAMS ? k_param[p].lo : 0.0f;
    *hi = p >= 0 && p < RAIL_STEP_NPARAMS ? k_param[p].hi : 0.0f;
}

static int find_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

void rail_model_table_free(struct rail_model_table *t)
{
    if (!t)
        return;
    free(t->cover);
    free(t->resid);
    memset(t, 0, sizeof(*t));
}

static int grow(void **p, int n, size_t elem)
{
    if (n & (n - 1) && n > 0) /* capacity doubles at powers of two */
        return 0;
    void *q = realloc(*p, elem * (size_t)(n ? 2 * n : 16));
    if (!q)
        return -ENOMEM;
    *p = q;
    return 0;
}

int rail_model_table_add_cover(struct rail_model_table *t, const struct rail_table_cover *c)
{
    if (grow((void **)&t->cover, t->ncover, sizeof(*c)) < 0)
        return -ENOMEM;
    t->cover[t->ncover++] = *c;
    return 0;
}

int rail_model_table_add_resid(struct rail_model_table *t, const struct rail_table_resid *r)
{
    if (grow((void **)&t->resid, t->nresid, sizeof(*r)) < 0)
        return -ENOMEM;
    t->resid[t->nresid++] = *r;
    return 0;
}

int rail_model_table_copy(struct rail_model_table *dst, const struct rail_model_table *src)
{
    *dst = *src;
    dst->cover = NULL;
    dst->resid = NULL;
    dst->ncover = dst->nresid = 0;
    for (int i = 0; i < src->ncover; i++)
        if (rail_model_table_add_cover(dst, &src->cover[i]) < 0)
            goto fail;
    for (int i = 0; i < src->nresid; i++)
        if (rail_model_table_add_resid(dst, &src->resid[i]) < 0)
            goto fail;
    return 0;
fail:
    rail_model_table_free(dst);
    return -ENOMEM;
}

/* Series key order: family, gen, coll, algo, proto, rpn; then nnodes, bytes. */
static int key_cmp(const struct rail_table_resid *r, int f, int g, int c, int a, int p, int rpn)
{
    int d[] = {r->family - f, r->gen - g, r->coll - c, r->algo - a, r->proto - p, r->rpn - rpn};
    for (int i = 0; i < 6; i++)
        if (d[i])
            return d[i];
    return 0;
}

static int cmp_resid(const void *a, const void *b)
{
    const struct rail_table_resid *x = a, *y = b;
    int k = key_cmp(x, y->family, y->gen, y->coll, y->algo, y->proto, y->rpn);
    if (k)
        return k;
    if (x->nnodes != y->nnodes)
        return x->nnodes < y->nnodes ? -1 : 1;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

void rail_model_table_sort(struct rail_model_table *t)
{
    if (t->nresid > 1)
        qsort(t->resid, (size_t)t->nresid, sizeof(t->resid[0]), cmp_resid);
}

void rail_model_table_series(const struct rail_model_table *t, int family, int gen, int coll,
                             int algo, int proto, int rpn, int *lo, int *hi)
{
    int a = 0, b = t ? t->nresid : 0;
    while (a < b) {
        int m = a + (b - a) / 2;
        if (key_cmp(&t->resid[m], family, gen, coll, algo, proto, rpn) < 0)
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    while (t && a < t->nresid && key_cmp(&t->resid[a], family, gen, coll, algo, proto, rpn) == 0)
        a++;
    *hi = a;
}

/* ---- parsing ---- */

static int words(char *s, char **w, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(s, " \t", &save); tok;
         tok = strtok_r(NULL, " \t", &save)) {
        if (n == max)
            return max + 1;
        w[n++] = tok;
    }
    return n;
}

/* A plain decimal (an optional '-' in front: residuals are logs) in [lo, hi]. */
static int parse_float(const char *s, double lo, double hi, float *out)
{
    double v;
    int neg = s[0] == '-';
    if (rail_parse_decimal(s + neg, 0.0, 1e30, &v) != 0)
        return -EINVAL;
    v = neg ? -v : v;
    if (!(v >= lo && v <= hi))
        return -EINVAL;
    *out = (float)v;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    return rail_parse_digits(s, strlen(s), 20, UINT64_MAX, out);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    long v;
    if (rail_parse_long(s, 10, lo, hi, &v) != 0)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

static int family_gen(char **w, uint8_t *f, uint8_t *g, char *why, size_t whylen)
{
    int fi = find_name(w[0], k_family, RAIL_FAM_COUNT), gi = find_name(w[1], k_gen, 4);
    if (fi < 0)
        return rail_fail(why, whylen, "unknown family '%.20s'", w[0]);
    if (gi < 0)
        return rail_fail(why, whylen, "unknown GPU generation '%.20s'", w[1]);
    *f = (uint8_t)fi;
    *g = (uint8_t)gi;
    return 0;
}

static int parse_margin(struct rail_model_table *t, char **w, int n, char *why, size_t whylen)
{
    float *dst[] = {&t->margin0, &t->margin_slope, &t->margin_out, &t->fade_nodes, &t->fade_bytes};
    if (n != 5)
        return rail_fail(why, whylen, "margin takes 5 numbers, found %d", n);
    for (int i = 0; i < 5; i++)
        if (parse_float(w[i], i >= 3 ? 0.01 : 0.0, 100.0, dst[i]) != 0)
            return rail_fail(why, whylen, "margin value '%.30s' is not a number in range", w[i]);
    return 0;
}

static int parse_coef(struct rail_model_table *t, char **w, int n, char *why, size_t whylen)
{
    uint8_t f, g;
    bool seen[RAIL_STEP_NPARAMS] = {false};
    struct rail_step_coef c;
    if (n != 2 + RAIL_STEP_NPARAMS)
        return rail_fail(why, whylen, "coef takes family, generation and %d values, found %d",
                         RAIL_STEP_NPARAMS, n);
    if (family_gen(w, &f, &g, why, whylen) < 0)
        return -EINVAL;
    for (int i = 2; i < n; i++) {
        char *eq = strchr(w[i], '=');
        int p = -1;
        if (eq) {
            *eq = '\0';
            for (int k = 0; k < RAIL_STEP_NPARAMS && p < 0; k++)
                if (strcmp(w[i], k_param[k].name) == 0)
                    p = k;
        }
        if (p < 0 || seen[p])
            return rail_fail(why, whylen, "'%.30s' is not a coefficient (or given twice)", w[i]);
        if (parse_float(eq + 1, k_param[p].lo, k_param[p].hi, &c.v[p]) != 0)
            return rail_fail(why, whylen, "%s: '%.30s' is not a number in [%g, %g]",
                             k_param[p].name, eq + 1, k_param[p].lo, k_param[p].hi);
        seen[p] = true;
    }
    if (t->has_coef[f][g])
        return rail_fail(why, whylen, "a second coef line for %s %s", k_family[f], k_gen[g]);
    t->coef[f][g] = c;
    t->has_coef[f][g] = true;
    return 0;
}

static int parse_coll(const char *s, uint8_t *out)
{
    int c = rail_calib_coll_from_name(s, strlen(s));
    if (c < 0)
        return -EINVAL;
    *out = (uint8_t)c;
    return 0;
}

static int parse_cover(struct rail_model_table *t, char **w, int n, char *why, size_t whylen)
{
    struct rail_table_cover c = {.algo = RAIL_COVER_ANY, .proto = RAIL_COVER_ANY};
    if (n != 7 && n != 9)
        return rail_fail(why, whylen, "cover takes 7 or 9 fields, found %d", n);
    if (family_gen(w, &c.family, &c.gen, why, whylen) < 0)
        return -EINVAL;
    if (n == 9) {
        int a = rail_calib_algo_from_name(w[7], strlen(w[7]));
        int p = rail_calib_proto_from_name(w[8], strlen(w[8]));
        if (a < 0 || p < 0)
            return rail_fail(why, whylen, "bad cover record pair '%.20s/%.20s'", w[7], w[8]);
        c.algo = (uint8_t)a;
        c.proto = (uint8_t)p;
    }
    if (parse_coll(w[2], &c.coll) < 0 || parse_int(w[3], 1, 1 << 20, &c.rpn) < 0 ||
        parse_int(w[4], 1, 1 << 20, &c.nnodes) < 0 || parse_u64(w[5], &c.bytes_min) < 0 ||
        parse_u64(w[6], &c.bytes_max) < 0 || c.bytes_min > c.bytes_max)
        return rail_fail(why, whylen, "bad cover record");
    return rail_model_table_add_cover(t, &c) < 0 ? -ENOMEM : 0;
}

static int parse_resid(struct rail_model_table *t, char **w, int n, char *why, size_t whylen)
{
    struct rail_table_resid r;
    int algo, proto;
    if (n != 9)
        return rail_fail(why, whylen, "resid takes 9 fields, found %d", n);
    if (family_gen(w, &r.family, &r.gen, why, whylen) < 0)
        return -EINVAL;
    algo = rail_calib_algo_from_name(w[3], strlen(w[3]));
    proto = rail_calib_proto_from_name(w[4], strlen(w[4]));
    if (parse_coll(w[2], &r.coll) < 0 || algo < 0 || proto < 0 ||
        parse_int(w[5], 1, 1 << 20, &r.rpn) < 0 || parse_int(w[6], 1, 1 << 20, &r.nnodes) < 0 ||
        parse_u64(w[7], &r.bytes) < 0 || parse_float(w[8], -20.0, 20.0, &r.log_ratio) < 0)
        return rail_fail(why, whylen, "bad resid record");
    r.algo = (uint8_t)algo;
    r.proto = (uint8_t)proto;
    return rail_model_table_add_resid(t, &r) < 0 ? -ENOMEM : 0;
}

static int parse_line(struct rail_model_table *t, char *line, int *header, char *why, size_t whylen)
{
    char *w[3 + RAIL_STEP_NPARAMS + 1]; /* keyword, family, gen, the values, one to spare */
    int n = words(line, w, (int)(sizeof(w) / sizeof(w[0])) - 1);
    if (n == 0 || w[0][0] == '#')
        return 0;
    if (n > (int)(sizeof(w) / sizeof(w[0])) - 1)
        return rail_fail(why, whylen, "too many fields");
    if (!*header) {
        long v;
        if (n != 2 || strcmp(w[0], RAIL_MODEL_TABLE_FORMAT) != 0 ||
            rail_parse_long(w[1], 10, RAIL_MODEL_TABLE_VERSION, RAIL_MODEL_TABLE_VERSION, &v))
            return rail_fail(why, whylen, "not a '%s %d' table", RAIL_MODEL_TABLE_FORMAT,
                             RAIL_MODEL_TABLE_VERSION);
        *header = 1;
        return 0;
    }
    if (strcmp(w[0], "margin") == 0)
        return parse_margin(t, w + 1, n - 1, why, whylen);
    if (strcmp(w[0], "coef") == 0)
        return parse_coef(t, w + 1, n - 1, why, whylen);
    if (strcmp(w[0], "cover") == 0)
        return parse_cover(t, w + 1, n - 1, why, whylen);
    if (strcmp(w[0], "resid") == 0)
        return parse_resid(t, w + 1, n - 1, why, whylen);
    return rail_fail(why, whylen, "unknown record '%.20s'", w[0]);
}

int rail_model_table_parse(const char *buf, size_t len, const char *name,
                           struct rail_model_table *out, char *err, size_t errlen)
{
    char line[1024], why[256];
    size_t pos = 0;
    int lineno = 0, header = 0, rc = 0;

    memset(out, 0, sizeof(*out));
    rail_clear_err(err, errlen);
    name = name ? name : "(model table)";
    if (len > RAIL_MODEL_TABLE_MAX)
        return rail_fail(err, errlen, "%s: larger than %u bytes", name, RAIL_MODEL_TABLE_MAX);
    while (pos < len && rc == 0) {
        size_t end = pos;
        while (end < len && buf[end] != '\n')
            end++;
        lineno++;
        if (end - pos >= sizeof(line) || memchr(buf + pos, '\0', end - pos)) {
            rc = rail_fail(why, sizeof(why), "line too long or holds a NUL byte");
        } else {
            memcpy(line, buf + pos, end - pos);
            line[end - pos] = '\0';
            if (end > pos && line[end - pos - 1] == '\r')
                line[end - pos - 1] = '\0';
            rc = parse_line(out, line, &header, why, sizeof(why));
        }
        pos = end + 1;
    }
    if (rc == 0 && !header) {
        rc = rail_fail(why, sizeof(why), "empty table");
        lineno = 0;
    }
    if (rc < 0) {
        rail_set_err(err, errlen, "%s:%d: %s", name, lineno, why);
        rail_model_table_free(out);
        return rc == -ENOMEM ? -ENOMEM : -EINVAL;
    }
    rail_model_table_sort(out);
    return 0;
}

/* ---- writing ---- */

int rail_model_table_write(const struct rail_model_table *t, const char *comment, FILE *f)
{
    fprintf(f, "# SPDX-License-Identifier: Apache-2.0\n%s %d\n", RAIL_MODEL_TABLE_FORMAT,
            RAIL_MODEL_TABLE_VERSION);
    if (comment)
        fprintf(f, "# %s\n", comment);
    fprintf(f, "margin %.4g %.4g %.4g %.4g %.4g\n", t->margin0, t->margin_slope, t->margin_out,
            t->fade_nodes, t->fade_bytes);
    for (int fam = 0; fam < RAIL_FAM_COUNT; fam++)
        for (int g = 0; g < NCCL_NUM_COMPCAPS; g++) {
            if (!t->has_coef[fam][g])
                continue;
            fprintf(f, "coef %s %s", k_family[fam], k_gen[g]);
            for (int p = 0; p < RAIL_STEP_NPARAMS; p++)
                fprintf(f, " %s=%.5g", k_param[p].name, t->coef[fam][g].v[p]);
            fprintf(f, "\n");
        }
    for (int i = 0; i < t->ncover; i++) {
        const struct rail_table_cover *c = &t->cover[i];
        fprintf(f, "cover %s %s %s %d %d %llu %llu", k_family[c->family], k_gen[c->gen],
                rail_coll_name(c->coll), c->rpn, c->nnodes, (unsigned long long)c->bytes_min,
                (unsigned long long)c->bytes_max);
        if (c->algo != RAIL_COVER_ANY)
            fprintf(f, " %s %s", rail_algo_name(c->algo), rail_proto_name(c->proto));
        fprintf(f, "\n");
    }
    for (int i = 0; i < t->nresid; i++) {
        const struct rail_table_resid *r = &t->resid[i];
        fprintf(f, "resid %s %s %s %s %s %d %d %llu %.4f\n", k_family[r->family], k_gen[r->gen],
                rail_coll_name(r->coll), rail_algo_name(r->algo), rail_proto_name(r->proto), r->rpn,
                r->nnodes, (unsigned long long)r->bytes, (double)r->log_ratio);
    }
    return ferror(f) ? -EIO : 0;
}

/* ---- the embedded table ---- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static struct rail_model_table g_builtin;

static void parse_builtin(void)
{
    char err[512];
    if (rail_model_table_parse(rail_model_table_text, rail_model_table_text_len, "model_table.txt",
                               &g_builtin, err, sizeof(err)) < 0) {
        RAIL_WARN(NCCL_TUNING | NCCL_INIT,
                  "built-in tuner table unusable (%s): NCCL's choices stand", err);
        memset(&g_builtin, 0, sizeof(g_builtin));
    }
}

const struct rail_model_table *rail_model_table_builtin(void)
{
    pthread_once(&g_once, parse_builtin);
    return &g_builtin;
}

/* Unloading the plugin (NCCL dlcloses it after the last communicator) releases the parsed copy. */
__attribute__((destructor)) static void free_builtin(void)
{
    rail_model_table_free(&g_builtin);
}
