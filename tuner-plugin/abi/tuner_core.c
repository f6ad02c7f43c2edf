/* SPDX-License-Identifier: Apache-2.0 */
#include "abi/tuner_core.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decide/calib_apply.h"
#include "measure/calib_cache.h"
#include "decide/explore.h"
#include "decide/extrapolate.h"
#include "live_set.h"
#include "log.h"
#include "model/model_table_file.h"
#include "params.h"
#include "version.h"

#define DEFAULT_RULES_FILE "nccl_tuner.conf"

static pthread_mutex_t g_topo_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_topo_state; /* 0 not tried, 1 ok, <0 -errno */
static struct rail_topo g_topo;
static char g_topo_why[256];

int rail_tuner_topology(const struct rail_topo **out, char *why, size_t whylen)
{
    int rc;
    pthread_mutex_lock(&g_topo_lock);
    if (g_topo_state == 0) {
        rc = rail_topo_discover(&g_topo, g_topo_why, sizeof(g_topo_why));
        g_topo_state = rc == 0 ? 1 : (rc < 0 ? rc : -EINVAL);
    }
    rc = g_topo_state == 1 ? 0 : g_topo_state;
    if (why)
        snprintf(why, whylen, "%s", g_topo_why);
    pthread_mutex_unlock(&g_topo_lock);
    *out = rc == 0 ? &g_topo : NULL;
    return rc;
}

static void fill_shape(struct rail_comm_shape *s, size_t nranks, size_t nnodes,
                       const ncclNvlDomainInfo_v5_t *nvl)
{
    s->nranks = nranks > 0 && nranks < (1u << 24) ? (int)nranks : 1;
    s->nnodes = nnodes > 0 && nnodes <= nranks && nnodes < (1u << 24) ? (int)nnodes : 1;
    s->min_rpn = s->nranks / s->nnodes;
    s->max_rpn = (s->nranks + s->nnodes - 1) / s->nnodes;
    /* NCCL's nvlDomainInfo is authoritative when it is consistent with nRanks/nNodes. */
    if (nvl && nvl->minRanksPerNvlDomain > 0 &&
        nvl->maxRanksPerNvlDomain >= nvl->minRanksPerNvlDomain &&
        nvl->maxRanksPerNvlDomain <= s->nranks) {
        s->min_rpn = nvl->minRanksPerNvlDomain;
        s->max_rpn = nvl->maxRanksPerNvlDomain;
    }
}

static int load_rules(struct rail_tuner *t, const struct rail_tuner_opts *o)
{
    const char *path =
        o && o->rules_path ? o->rules_path : rail_param_str(RAIL_PARAM_TUNER_CONFIG_FILE);
    bool lenient =
        o && o->lenient >= 0 ? o->lenient != 0 : rail_param_bool(RAIL_PARAM_CONFIG_LENIENT);
    char err[512];
    int rc;

    if (!path) {
        /* NCCL's example tuner reads ./nccl_tuner.conf by default; a missing one is fine. Nobody
         * pointed us at that file, so a bad line in it is skipped with a WARN instead of failing
         * the job (NCCL's example silently accepted such lines). */
        if (access(DEFAULT_RULES_FILE, R_OK) != 0)
            return 0;
        path = DEFAULT_RULES_FILE;
        lenient = true;
    }
    rc = rail_rules_load(path, lenient, &t->rules, err, sizeof(err));
    if (rc < 0) {
        RAIL_WARN(NCCL_TUNING | NCCL_INIT,
                  "tuner rules: %s (set NCCL_RAIL_CONFIG_LENIENT=1 to skip bad lines)", err);
        return rc;
    }
    t->rules_active = t->rules.n > 0;
    RAIL_INFO(NCCL_TUNING | NCCL_INIT, "tuner rules: %d rule(s) from %s", t->rules.n, path);
    return 0;
}

static void calib_apply_for(const struct rail_tuner *t, struct rail_calib_apply *a)
{
    *a = (struct rail_calib_apply){
        .model = &t->model, .cal = t->calib, .topo = t->topo, .nnodes = t->shape.nnodes};
    if (t->shape.min_rpn == t->shape.max_rpn && t->shape.nranks % t->shape.nnodes == 0)
        a->rpn = t->shape.nranks / t->shape.nnodes;
    rail_calib_apply_init(a);
}

void rail_tuner_times(const struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops,
                      float out[RAIL_DT_CANDIDATES])
{
    struct rail_calib_apply a;
    if (t->calib)
        calib_apply_for(t, &a);
    float dist;
    if (!t->calib ||
        rail_calib_apply_times(&a, coll, nbytes, num_pipe_ops, out, &dist) == RAIL_DT_TIMES_MODEL)
        (void)rail_dt_model_times(&t->model, coll, nbytes, num_pipe_ops, out, &dist);
    if (t->calib)
        rail_calib_apply_fini(&a);
}

bool rail_tuner_from_job(const struct rail_tuner *t, int coll, size_t nbytes)
{
    if (!t || !t->calib)
        return false;
    struct rail_calib_apply a;
    calib_apply_for(t, &a);
    bool job = rail_calib_apply_from_job(&a, coll, nbytes);
    rail_calib_apply_fini(&a);
    return job;
}

int rail_tuner_calib_rule(const struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops,
                          float *spread)
{
    if (spread)
        *spread = 1.0f;
    if (!t || !t->calib)
        return RAIL_CALIB_RULE_NONE;
    struct rail_calib_apply a;
    calib_apply_for(t, &a);
    int rule = rail_calib_apply_rule(&a, coll, nbytes, num_pipe_ops, spread);
    rail_calib_apply_fini(&a);
    return rule;
}

/* NCCL_RAIL_EXPLORE: the runner-up of each cell, from the times the table was ranked on. */
/* NCCL_RAIL_EXPLORE_MAX_SLOWDOWN in percent, or 0 when set to an invalid value: an invalid bound
 * never loosens the bound (the default would), so exploring is off. One WARN per process for one
 * value (every communicator reads it; the environment of a process does not change). */
static int explore_max_slowdown(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char warned[128];
    const struct rail_param_def *def = rail_param_def(RAIL_PARAM_EXPLORE_MAX_SLOWDOWN);
    const char *env = getenv(def->name);
    char err[128];
    long long v;

    if (!env || !*env)
        return (int)strtoll(def->def, NULL, 10);
    if (rail_param_parse_int(def, env, &v, err, sizeof(err)) == 0)
        return (int)v;
    pthread_mutex_lock(&lock);
    bool warn = strncmp(warned, env, sizeof(warned) - 1) != 0;
    if (warn)
        snprintf(warned, sizeof(warned), "%s", env);
    pthread_mutex_unlock(&lock);
    if (warn)
        RAIL_WARN(NCCL_TUNING | NCCL_INIT | NCCL_ENV,
                  "%s='%.64s' is invalid (%s): expected a percentage in [%lld, %lld]; "
                  "NCCL_RAIL_EXPLORE is off (an invalid bound is not replaced by the default)",
                  def->name, env, err, def->min, def->max);
    return 0;
}

static void build_explore(struct rail_tuner *t, rail_dt_times_fn times, const void *ctx)
{
    double share = rail_param_fraction(RAIL_PARAM_EXPLORE);
    if (!(share > 0.0))
        return;
    if (t->user_forced || t->rules_active) {
        RAIL_INFO(NCCL_TUNING | NCCL_INIT,
                  "NCCL_RAIL_EXPLORE refused for comm 0x%llx: %s decides what may run",
                  (unsigned long long)t->comm_id,
                  t->user_forced ? "NCCL_ALGO/NCCL_PROTO" : "a rules file");
        return;
    }
    int pct = explore_max_slowdown();
    if (pct <= 0)
        return;
    double slow = (double)pct / 100.0;
    t->explore = malloc(sizeof(*t->explore));
    if (!t->explore) {
        RAIL_WARN(NCCL_TUNING | NCCL_INIT, "NCCL_RAIL_EXPLORE: out of memory: not exploring");
        return;
    }
    rail_explore_build(t->explore, &t->table, times, ctx, share, slow);
    RAIL_INFO(NCCL_TUNING | NCCL_INIT,
              "NCCL_RAIL_EXPLORE=%g: comm 0x%llx runs the runner-up pair on that share of calls "
              "in %d table cell(s) (predicted at most %d%% slower; the same calls on every "
              "rank)",
              share, (unsigned long long)t->comm_id, t->explore->ncells, pct);
}

/* The decision table, from the calibration file when there is a usable one. x: the edge models
 * of the collectives whose rankings may be carried past the trained node range. */
static void build_table(struct rail_tuner *t, const struct rail_tuner_opts *o,
                        const struct rail_extrap *x)
{
    const char *path =
        o && o->calib_path ? o->calib_path : rail_param_str(RAIL_PARAM_CALIBRATION_FILE);
    bool nch = rail_param_bool(RAIL_PARAM_TUNER_NCHANNELS);
    struct rail_calib_apply a;
    char err[512], info[1024];

    if (!path || !*path) {
        rail_dt_build_ext(&t->table, &t->model, nch, rail_dt_model_times, &t->model, x);
        build_explore(t, rail_dt_model_times, &t->model);
        return;
    }
    if (rail_calib_cache_get(path, &t->calib, err, sizeof(err)) < 0) {
        RAIL_WARN(NCCL_TUNING | NCCL_INIT,
                  "NCCL_RAIL_CALIBRATION_FILE: %s; using the default model", err);
        rail_dt_build_ext(&t->table, &t->model, nch, rail_dt_model_times, &t->model, x);
        build_explore(t, rail_dt_model_times, &t->model);
        return;
    }
    calib_apply_for(t, &a);
    rail_dt_build_ext(&t->table, &t->model, nch, rail_calib_apply_times, &a, x);
    build_explore(t, rail_calib_apply_times, &a);
    for (int c = 0; c < RAIL_NUM_COLLS && !t->calib_active; c++)
        for (int p = 0; p < RAIL_DT_PIPES && !t->calib_active; p++)
            for (int b = 0; b < RAIL_DT_BUCKETS && !t->calib_active; b++)
                t->calib_active = t->table.source[c][p][b] == RAIL_DT_SRC_CALIBRATION;
    t->calib_too_far = rail_calib_apply_too_far(&a);
    rail_calib_apply_summary(&a, info, sizeof(info));
    rail_calib_apply_fini(&a);
    RAIL_INFO(NCCL_TUNING | NCCL_INIT, "calibration %s %s", path, info);
}

/* Contexts created and not yet destroyed: NCCL may call destroy twice for one communicator. */
static struct rail_live_set g_live = RAIL_LIVE_SET_INIT;

/* NCCL's buffer sizes as NCCL reads them (its own variables, -2 = its default). A variable set
 * to a value the project cannot read the way NCCL would is unknown (0): no chunk size is
 * answered for that protocol, since NCCL's real buffer is then not known. */
static void read_buffs(struct rail_chunk_buffs *b)
{
    static const enum rail_param_id ids[NCCL_NUM_PROTOCOLS] = {
        RAIL_PARAM_NCCL_LL_BUFFSIZE, RAIL_PARAM_NCCL_LL128_BUFFSIZE, RAIL_PARAM_NCCL_BUFFSIZE};
    struct rail_chunk_buffs def;
    rail_chunk_buffs_default(&def);
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
        const struct rail_param_def *d = rail_param_def(ids[p]);
        const char *env = getenv(d->name);
        long long v = rail_param_int(ids[p]), parsed; /* WARNs once when invalid */
        char err[128];
        if (env && *env && rail_param_parse_int(d, env, &parsed, err, sizeof(err)) != 0)
            v = 0;
        b->bytes[p] = v == -2 ? def.bytes[p] : v;
    }
}

static void tuner_free(struct rail_tuner *t)
{
    rail_rules_free(&t->rules);
    rail_calib_cache_put(t->calib);
    free(t->explore);
    free(t);
}

int rail_tuner_create(struct rail_tuner **out, uint64_t comm_id, size_t nranks, size_t nnodes,
                      const ncclNvlDomainInfo_v5_t *nvl, const struct rail_tuner_opts *opts)
{
    struct rail_tuner *t = calloc(1, sizeof(*t));
    const struct rail_topo *topo = opts ? opts->topo : NULL;
    char why[256] = "";
    int rc;

    *out = NULL;
    if (!t)
        return -ENOMEM;
    if (rail_live_add(&g_live, t) != 0) {
        free(t);
        return -ENOMEM;
    }
    t->comm_id = comm_id;
    fill_shape(&t->shape, nranks, nnodes, nvl);
    t->user_forced = (getenv("NCCL_ALGO") && *getenv("NCCL_ALGO")) ||
                     (getenv("NCCL_PROTO") && *getenv("NCCL_PROTO"));

    rc = load_rules(t, opts);
    if (rc < 0) {
        rail_tuner_destroy(t);
        return rc;
    }
    read_buffs(&t->buffs);
    if (!rail_param_bool(RAIL_PARAM_TUNER_ENABLE)) {
        RAIL_INFO(NCCL_TUNING | NCCL_INIT,
                  "tuner model disabled by NCCL_RAIL_TUNER_ENABLE=0: NCCL's choices stand%s",
                  t->rules_active ? " (rules still apply)" : "");
        *out = t;
        return 0;
    }
    if (!topo && rail_tuner_topology(&topo, why, sizeof(why)) < 0) {
        RAIL_INFO(NCCL_TUNING | NCCL_INIT, "topology unknown (%s): leaving NCCL's choices alone",
                  why);
        *out = t;
        return 0;
    }
    t->topo = topo;
    rail_model_build_with(&t->model, topo, &t->shape, opts ? opts->constants : NULL,
                          opts && opts->table ? opts->table : rail_model_table_active(NULL));
    if (!t->model.confident) {
        RAIL_INFO(NCCL_TUNING | NCCL_INIT, "model not confident (%s): leaving NCCL's choices alone",
                  t->model.why);
        *out = t;
        return 0;
    }
    /* Past the trained node range: the models at the last trained node counts, for this build
     * only (docs/cost-model.md §12.5). */
    struct rail_extrap *x = malloc(sizeof(*x));
    if (x && rail_extrap_init(x, &t->model, topo, opts ? opts->constants : NULL) > 0)
        for (int c = 0; c < RAIL_NUM_COLLS; c++) {
            if (x->coll[c].ring) {
                t->ring_from[c][0] = x->coll[c].ring_from[0];
                t->ring_from[c][1] = x->coll[c].ring_from[1];
            }
            if (x->coll[c].active) {
                bool above = t->shape.nnodes > x->coll[c].edge;
                t->extrap_from[c][0] = above ? x->coll[c].next : x->coll[c].edge;
                t->extrap_from[c][1] = above ? x->coll[c].edge : x->coll[c].next;
            }
        }
    build_table(t, opts, x);
    if (x)
        rail_extrap_fini(x);
    free(x);
    t->model_active = true;
    if (opts && opts->constants && rail_param_bool(RAIL_PARAM_TUNER_CONSTANTS)) {
        int changed = rail_model_tune_constants(&t->model, topo, opts->constants);
        RAIL_INFO(NCCL_TUNING | NCCL_INIT, "refined %d NCCL tuning constant(s) from the topology",
                  changed);
    }
    RAIL_INFO(NCCL_TUNING | NCCL_INIT,
              "tuner ready for comm 0x%llx: %d ranks, %d nodes, %d-%d ranks/node, topology %s; "
              "model table %s; %s",
              (unsigned long long)comm_id, t->shape.nranks, t->shape.nnodes, t->shape.min_rpn,
              t->shape.max_rpn, topo->origin, rail_model_table_name(t->model.table), t->model.why);
    *out = t;
    return 0;
}

void rail_tuner_banner(ncclDebugLogger_t logger, int abi)
{
    const char *table = NULL;
    if (logger)
        rail_log_set_logger(logger);
    (void)rail_model_table_active(&table);
    rail_version_banner(logger, RAIL_PLUGIN_TUNER, abi, table);
}

int rail_tuner_destroy(struct rail_tuner *t)
{
    if (!t)
        return 0;
    if (!rail_live_remove(&g_live, t)) {
        RAIL_WARN(NCCL_TUNING,
                  "destroy: %p is not a live tuner context (destroyed twice?); ignored", (void *)t);
        return -ENOENT;
    }
    tuner_free(t);
    return 0;
}

static bool apply_rule(struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops,
                       int reg_buff, float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS],
                       int *nchannels)
{
    const struct rail_rule *r = rail_rules_match(&t->rules, coll, nbytes, t->shape.nnodes,
                                                 t->shape.nranks, num_pipe_ops, reg_buff);
    if (!r || table[r->algo][r->proto] < 0.0f)
        return false; /* an unavailable rule choice falls through to the model */
    table[r->algo][r->proto] = 0.0f;
    if (r->nchannels > 0 && nchannels)
        *nchannels = r->nchannels;
    return true;
}

void rail_tuner_apply(struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops, int reg_buff,
                      float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], int *nchannels)
{
    const struct rail_dt_cell *cell;
    float *flat = &table[0][0];

    if (!t || (unsigned)coll >= RAIL_NUM_COLLS || t->shape.nranks <= 1)
        return;
    if (t->rules_active && apply_rule(t, coll, nbytes, num_pipe_ops, reg_buff, table, nchannels))
        return;
    if (!t->model_active)
        return;
    int pipe = rail_dt_pipe(num_pipe_ops), bucket = rail_dt_bucket(nbytes);
    cell = &t->table.cell[coll][pipe][bucket];
    /* Exploring reads nothing a rank computes for itself: reg_buff (NCCL derives it from this
     * rank's registrations) never enters, and every call is counted, so every rank explores the
     * same calls (explore.h). */
    if (t->explore) {
        int e = rail_explore_pick(t->explore, coll, pipe, bucket);
        if (e >= 0 && flat[e] >= 0.0f) {
            flat[e] = 0.0f; /* no channel suggestion: the cell's is the choice's */
            return;
        }
    }
    for (int i = 0; i < cell->n; i++) {
        int c = cell->cand[i];
        if (flat[c] >= 0.0f) {
            flat[c] = 0.0f;
            if (i == 0 && cell->nchannels && nchannels)
                *nchannels = cell->nchannels;
            return;
        }
    }
    /* None of the model's candidates is available: NCCL's own choice stands. */
}

int rail_tuner_chunk_size(struct rail_tuner *t, int coll, size_t nbytes, int algo, int proto,
                          size_t *chunk_size)
{
    bool reduced;
    if (!t || !chunk_size || !t->rules_active || (unsigned)coll >= RAIL_NUM_COLLS)
        return 0;
    int c =
        rail_rules_chunk(&t->rules, coll, nbytes, t->shape.nnodes, t->shape.nranks, algo, proto);
    if (c == RAIL_RULE_KEEP || c <= 0)
        return 0;
    size_t v = rail_chunk_clamp(&t->buffs, coll, algo, proto, *chunk_size, (size_t)c, &reduced);
    if (v == 0)
        return 0; /* no bound known for this call: NCCL's value stands */
    unsigned bit = 1u << (algo * NCCL_NUM_PROTOCOLS + proto);
    if (reduced && !(__atomic_fetch_or(&t->chunk_warned, bit, __ATOMIC_RELAXED) & bit))
        RAIL_WARN(NCCL_TUNING,
                  "rules file: chunkSize %d for %s %s/%s is more than NCCL's buffers hold there "
                  "(%zu bytes%s): answered %zu instead (NCCL issue #2408: a larger chunk corrupts "
                  "results)",
                  c, rail_coll_name(coll), rail_algo_name(algo), rail_proto_name(proto),
                  rail_chunk_max(&t->buffs, coll, algo, proto, *chunk_size),
                  algo == NCCL_ALGO_NVLS || algo == NCCL_ALGO_NVLS_TREE ? ", NCCL's own NVLS chunk"
                  : proto == NCCL_PROTO_SIMPLE                          ? ", from NCCL_BUFFSIZE"
                  : proto == NCCL_PROTO_LL                              ? ", from NCCL_LL_BUFFSIZE"
                                           : ", from NCCL_LL128_BUFFSIZE",
                  v);
    *chunk_size = v;
    return 1;
}

static bool v2_allowed(int algo, int collnet_support, int nvls_support)
{
    if (algo == NCCL_ALGO_NVLS || algo == NCCL_ALGO_NVLS_TREE)
        return nvls_support != 0;
    if (algo == NCCL_ALGO_COLLNET_DIRECT || algo == NCCL_ALGO_COLLNET_CHAIN)
        return collnet_support != 0;
    return true;
}

void rail_tuner_choose_v2(struct rail_tuner *t, int coll, size_t nbytes, int collnet_support,
                          int nvls_support, int num_pipe_ops, int *algo, int *proto, int *nchannels)
{
    const struct rail_dt_cell *cell;

    /* v2 has no cost table, so it cannot see NCCL_ALGO/NCCL_PROTO restrictions: overriding
     * them would turn the user's choice into an error. */
    if (!t || (unsigned)coll >= RAIL_NUM_COLLS || t->shape.nranks <= 1 || t->user_forced)
        return;
    if (t->rules_active) {
        const struct rail_rule *r = rail_rules_match(&t->rules, coll, nbytes, t->shape.nnodes,
                                                     t->shape.nranks, num_pipe_ops, -1);
        if (r && v2_allowed(r->algo, collnet_support, nvls_support)) {
            *algo = r->algo;
            *proto = r->proto;
            if (r->nchannels > 0 && nchannels)
                *nchannels = r->nchannels;
            return;
        }
    }
    if (!t->model_active)
        return;
    cell = &t->table.cell[coll][rail_dt_pipe(num_pipe_ops)][rail_dt_bucket(nbytes)];
    for (int i = 0; i < cell->n; i++) {
        int a = cell->cand[i] / NCCL_NUM_PROTOCOLS, p = cell->cand[i] % NCCL_NUM_PROTOCOLS;
        if (v2_allowed(a, collnet_support, nvls_support)) {
            *algo = a;
            *proto = p;
            if (i == 0 && cell->nchannels && nchannels)
                *nchannels = cell->nchannels;
            return;
        }
    }
}

int rail_tuner_why(const struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops, char *buf,
                   size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!t || !t->model_active || (unsigned)coll >= RAIL_NUM_COLLS)
        return RAIL_DT_WHY_NONE;
    int why = t->table.why[coll][rail_dt_pipe(num_pipe_ops)][rail_dt_bucket(nbytes)];
    if (why == RAIL_DT_WHY_EXTRAPOLATED)
        snprintf(buf, len, "extrapolated from %d–%d nodes", t->extrap_from[coll][0],
                 t->extrap_from[coll][1]);
    else if (why == RAIL_DT_WHY_RING_STEP && t->ring_from[coll][1] > 0)
        snprintf(buf, len, "ring protocol measured at the same bytes per rank on %d and %d nodes",
                 t->ring_from[coll][0], t->ring_from[coll][1]);
    else if (why == RAIL_DT_WHY_RING_STEP)
        snprintf(buf, len, "ring protocol measured at the same bytes per rank on %d nodes",
                 t->ring_from[coll][0]);
    else
        snprintf(buf, len, "%s", rail_dt_why_name(why));
    return why;
}

const char *rail_decision_from_name(enum rail_decision_from f)
{
    static const char *const names[] = {"NCCL", "model", "calibration", "rules"};
    return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

int rail_tuner_explain(struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops, int *nch,
                       enum rail_decision_from *from)
{
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    const struct rail_rule *r;
    int choice = -1;

    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            table[a][p] = 1.0f;
    *nch = 0;
    *from = RAIL_FROM_NCCL;
    /* The decision, not an exploration (explain runs no collective): counters untouched. */
    struct rail_explore *explore = t ? t->explore : NULL;
    if (t)
        t->explore = NULL;
    rail_tuner_apply(t, coll, nbytes, num_pipe_ops, 0, table, nch);
    if (t)
        t->explore = explore;
    for (int c = 0; c < RAIL_DT_CANDIDATES && choice < 0; c++)
        if (table[c / NCCL_NUM_PROTOCOLS][c % NCCL_NUM_PROTOCOLS] == 0.0f)
            choice = c;
    if (choice < 0 || !t)
        return choice;
    r = t->rules_active ? rail_rules_match(&t->rules, coll, nbytes, t->shape.nnodes,
                                           t->shape.nranks, num_pipe_ops, 0)
                        : NULL;
    if (r)
        *from = RAIL_FROM_RULES;
    else if (t->table.source[coll][rail_dt_pipe(num_pipe_ops)][rail_dt_bucket(nbytes)] ==
             RAIL_DT_SRC_CALIBRATION)
        *from = RAIL_FROM_CALIBRATION;
    else
        *from = RAIL_FROM_MODEL;
    return choice;
}
