/* SPDX-License-Identifier: Apache-2.0 */
/* Rules file: strict parser for NCCL's example-tuner CSV format, loader, first-match lookup. */
#include "decide/rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "log.h"
#include "nccl_names.h"
#include "safe_file.h"
#include "strutil.h"

#define NFIELDS_MIN 8
#define NFIELDS_MAX 11

enum { F_COLL, F_MIN, F_MAX, F_ALGO, F_PROTO, F_CHAN, F_NODES, F_RANKS, F_PIPE, F_REG, F_CHUNK };

/* Column names, as in the header line the NCCL README suggests for spreadsheets. */
static const char *const k_columns[NFIELDS_MAX] = {
    "collective_type", "min_bytes", "max_bytes",  "algorithm", "protocol", "channels",
    "nNodes",          "nRanks",    "numPipeOps", "regBuff",   "chunkSize"};

/* A field: a trimmed slice of the line (not NUL-terminated). */
struct field {
    const char *s;
    size_t len;
};

static bool field_is(struct field f, const char *word)
{
    return strlen(word) == f.len && strncasecmp(f.s, word, f.len) == 0;
}

static int lookup(const struct rail_name_value *t, size_t n, struct field f)
{
    for (size_t i = 0; i < n; i++)
        if (field_is(f, t[i].name))
            return t[i].value;
    return -1;
}

/* 'text' for messages: at most 40 characters, anything unprintable as \xNN. */
static void quote(char *dst, size_t dstlen, const char *s, size_t len)
{
    size_t o = 0;
    const size_t shown = len > 40 ? 40 : len;

#define PUT(...) o += (size_t)snprintf(dst + o, o < dstlen ? dstlen - o : 0, __VA_ARGS__)
    PUT("'");
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\')
            PUT("\\x%02x", c);
        else
            PUT("%c", c);
    }
    PUT("%s'", shown < len ? "..." : "");
#undef PUT
}

/* "field N (name): " prefix plus the value in quotes, for the messages below. */
#define FIELD_FMT     "field %d (%s): "
#define FIELD_ARGS(i) (i) + 1, k_columns[i]
#define QUOTED(q, f)  (quote((q), sizeof(q), (f).s, (f).len), (q))

static int parse_bytes(int i, struct field f, uint64_t *out, char *err, size_t errlen)
{
    char q[200];
    const bool is_max = (i == F_MAX);
    size_t nd = f.len;
    unsigned shift = 0;

    if (field_is(f, "*")) {
        *out = is_max ? UINT64_MAX : 0;
        return 0;
    }
    if (field_is(f, "-1")) {
        if (!is_max)
            return rail_fail(err, errlen, FIELD_FMT "-1 is only allowed as max_bytes; use 0 or *",
                             FIELD_ARGS(i));
        *out = UINT64_MAX; /* what NCCL's strtoull makes of it */
        return 0;
    }
    if (nd > 1) {
        switch (f.s[nd - 1]) {
        case 'K':
        case 'k':
            shift = 10;
            break;
        case 'M':
        case 'm':
            shift = 20;
            break;
        case 'G':
        case 'g':
            shift = 30;
            break;
        default:
            break;
        }
        if (shift)
            nd--;
    }
    for (size_t k = 0; k < nd; k++)
        if (f.s[k] < '0' || f.s[k] > '9')
            return rail_fail(err, errlen,
                             FIELD_FMT
                             "bad byte count %s; expected digits with an optional K, M or G "
                             "suffix, or *",
                             FIELD_ARGS(i), QUOTED(q, f));
    if (rail_parse_digits(f.s, nd, SIZE_MAX, UINT64_MAX, out) != 0 ||
        (shift && *out > (UINT64_MAX >> shift)))
        return rail_fail(err, errlen, FIELD_FMT "byte count %s is larger than 2^64-1",
                         FIELD_ARGS(i), QUOTED(q, f));
    *out <<= shift;
    return 0;
}

/* -1 or * (both RAIL_RULE_ANY), or lo..INT_MAX. */
static int parse_int(int i, struct field f, int lo, int hi, const char *range, int *out, char *err,
                     size_t errlen)
{
    char q[200];
    uint64_t v;

    if (field_is(f, "*") || field_is(f, "-1")) {
        *out = -1;
        return 0;
    }
    for (size_t k = 0; k < f.len; k++)
        if (f.s[k] < '0' || f.s[k] > '9')
            return rail_fail(err, errlen, FIELD_FMT "bad number %s; expected %s", FIELD_ARGS(i),
                             QUOTED(q, f), range);
    if (rail_parse_digits(f.s, f.len, SIZE_MAX, UINT64_MAX, &v) != 0 || v < (uint64_t)lo ||
        v > (uint64_t)hi)
        return rail_fail(err, errlen, FIELD_FMT "%s is out of range; expected %s", FIELD_ARGS(i),
                         QUOTED(q, f), range);
    *out = (int)v;
    return 0;
}

static struct field trim(const char *b, const char *e)
{
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return (struct field){b, (size_t)(e - b)};
}

static int check_header(const struct field *f, int nf, char *err, size_t errlen)
{
    char q[200];
    if (nf < NFIELDS_MIN || nf > NFIELDS_MAX)
        return rail_fail(err, errlen, "column header with %d fields; expected 8 to 11", nf);
    for (int i = 0; i < nf; i++)
        if (!field_is(f[i], k_columns[i]))
            return rail_fail(err, errlen, "column header: field %d is %s, expected '%s'", i + 1,
                             QUOTED(q, f[i]), k_columns[i]);
    return 0;
}

static int parse_line(const char *line, struct rail_rule *out, char *err, size_t errlen)
{
    struct field f[NFIELDS_MAX + 1];
    char q[200];
    int nf = 0, rc;
    size_t len = strnlen(line, RAIL_RULES_MAX_LINE + 1);
    const char *p = line, *end = line + len;

    if (len > RAIL_RULES_MAX_LINE)
        return rail_fail(err, errlen, "line is longer than %d characters", RAIL_RULES_MAX_LINE);
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)line[k];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return rail_fail(err, errlen, "control character 0x%02x at column %zu", c, k + 1);
    }
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p == '#')
        return 0;

    for (const char *b = line;; nf++) {
        const char *comma = memchr(b, ',', (size_t)(end - b));
        if (nf <= NFIELDS_MAX)
            f[nf] = trim(b, comma ? comma : end);
        if (!comma) {
            nf++;
            break;
        }
        b = comma + 1;
    }
    if (field_is(f[0], k_columns[F_COLL]))
        return check_header(f, nf, err, errlen);
    if (nf < NFIELDS_MIN || nf > NFIELDS_MAX)
        return rail_fail(err, errlen,
                         "%d field%s; expected 8 to 11: collective_type,min_bytes,max_bytes,"
                         "algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff"
                         "[,chunkSize]]]",
                         nf, nf == 1 ? "" : "s");
    for (int i = 0; i < NFIELDS_MIN; i++)
        if (f[i].len == 0)
            return rail_fail(err, errlen, FIELD_FMT "empty", FIELD_ARGS(i));

    memset(out, 0, sizeof(*out));
    out->coll = lookup(rail_rules_colls, rail_rules_ncolls, f[F_COLL]);
    if (out->coll < 0)
        return rail_fail(err, errlen, FIELD_FMT "unknown collective %s; expected %s",
                         FIELD_ARGS(F_COLL), QUOTED(q, f[F_COLL]),
                         "broadcast, reduce, allgather, reducescatter or allreduce");
    if ((rc = parse_bytes(F_MIN, f[F_MIN], &out->min_bytes, err, errlen)) ||
        (rc = parse_bytes(F_MAX, f[F_MAX], &out->max_bytes, err, errlen)))
        return rc;
    out->algo = lookup(rail_rules_algos, rail_rules_nalgos, f[F_ALGO]);
    if (out->algo < 0)
        return rail_fail(err, errlen, FIELD_FMT "unknown algorithm %s; expected %s",
                         FIELD_ARGS(F_ALGO), QUOTED(q, f[F_ALGO]),
                         "tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree or pat");
    out->proto = lookup(rail_rules_protos, rail_rules_nprotos, f[F_PROTO]);
    if (out->proto < 0)
        return rail_fail(err, errlen, FIELD_FMT "unknown protocol %s; expected ll, ll128 or simple",
                         FIELD_ARGS(F_PROTO), QUOTED(q, f[F_PROTO]));

    rc = parse_int(F_CHAN, f[F_CHAN], 1, RAIL_RULE_MAX_CHANNEL, "-1 (keep NCCL's) or 1..64",
                   &out->nchannels, err, errlen);
    if (!rc)
        rc = parse_int(F_NODES, f[F_NODES], 1, INT_MAX, "-1 (any) or a count >= 1", &out->nnodes,
                       err, errlen);
    if (!rc)
        rc = parse_int(F_RANKS, f[F_RANKS], 1, INT_MAX, "-1 (any) or a count >= 1", &out->nranks,
                       err, errlen);
    out->pipe_ops = out->reg_buff = out->chunk_bytes = RAIL_RULE_ANY;
    if (!rc && nf > F_PIPE && f[F_PIPE].len)
        rc = parse_int(F_PIPE, f[F_PIPE], 1, INT_MAX, "-1 (any) or a count >= 1", &out->pipe_ops,
                       err, errlen);
    if (!rc && nf > F_REG && f[F_REG].len)
        rc = parse_int(F_REG, f[F_REG], 0, 1, "-1 (any), 0 or 1", &out->reg_buff, err, errlen);
    if (!rc && nf > F_CHUNK && f[F_CHUNK].len)
        rc = parse_int(F_CHUNK, f[F_CHUNK], RAIL_RULE_MIN_CHUNK, RAIL_RULE_MAX_CHUNK,
                       "-1 (keep NCCL's) or a chunk size in bytes, 512..1073741824",
                       &out->chunk_bytes, err, errlen);
    if (rc)
        return rc;
    if (out->min_bytes > out->max_bytes)
        return rail_fail(err, errlen, "min_bytes %llu is greater than max_bytes %llu",
                         (unsigned long long)out->min_bytes, (unsigned long long)out->max_bytes);
    if (out->nnodes != RAIL_RULE_ANY && out->nranks != RAIL_RULE_ANY && out->nranks < out->nnodes)
        return rail_fail(err, errlen, "nRanks %d is less than nNodes %d: the rule can never match",
                         out->nranks, out->nnodes);
    return 1;
}

int rail_rules_parse_line(const char *line, struct rail_rule *out, char *err, size_t errlen)
{
    int rc = parse_line(line, out, err, errlen);
    const char *first = line + strspn(line, " \t");

    /* "...,-1 # note" is a classic: NCCL's atoi ignored the note, this parser does not. */
    if (rc < 0 && *first != '#' && strchr(first, '#') && err && errlen) {
        size_t n = strnlen(err, errlen - 1);
        snprintf(err + n, errlen - n, " (a # comment must be on a line of its own)");
    }
    return rc;
}

int rail_rule_format(const struct rail_rule *r, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s,%llu,%llu,%s,%s,%d,%d,%d,%d,%d", rail_rules_coll_str(r->coll),
                     (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes,
                     rail_rules_algo_str(r->algo), rail_rules_proto_str(r->proto), r->nchannels,
                     r->nnodes, r->nranks, r->pipe_ops, r->reg_buff);
    if (n >= 0 && r->chunk_bytes != RAIL_RULE_KEEP) {
        size_t used = (size_t)n < len ? (size_t)n : len;
        n += snprintf(buf + used, len - used, ",%d", r->chunk_bytes);
    }
    return n;
}

/* The rule applies to the collective, the size and the communicator. */
static bool rule_fits(const struct rail_rule *x, int coll, uint64_t nb, int nnodes, int nranks)
{
    return x->coll == coll && nb >= x->min_bytes && nb <= x->max_bytes &&
           (x->nnodes == RAIL_RULE_ANY || x->nnodes == nnodes) &&
           (x->nranks == RAIL_RULE_ANY || x->nranks == nranks);
}

static bool has_coll(const struct rail_rules *r, int coll)
{
    return r && coll >= 0 && coll < NCCL_NUM_FUNCTIONS && (r->coll_mask & (1u << coll));
}

int rail_rules_chunk(const struct rail_rules *r, int coll, size_t nbytes, int nnodes, int nranks,
                     int algo, int proto)
{
    for (int i = 0; has_coll(r, coll) && i < r->n; i++) {
        const struct rail_rule *x = &r->rules[i];
        /* A rule that depends on what getChunkSize is not told (numPipeOps, regBuff) cannot be
         * checked: skipped. */
        if (rule_fits(x, coll, (uint64_t)nbytes, nnodes, nranks) && x->pipe_ops == RAIL_RULE_ANY &&
            x->reg_buff == RAIL_RULE_ANY && x->algo == algo && x->proto == proto)
            return x->chunk_bytes;
    }
    return RAIL_RULE_KEEP;
}

const struct rail_rule *rail_rules_match(const struct rail_rules *r, int coll, size_t nbytes,
                                         int nnodes, int nranks, int pipe_ops, int reg_buff)
{
    for (int i = 0; has_coll(r, coll) && i < r->n; i++) {
        const struct rail_rule *x = &r->rules[i];
        if (rule_fits(x, coll, (uint64_t)nbytes, nnodes, nranks) &&
            (x->pipe_ops == RAIL_RULE_ANY || x->pipe_ops == pipe_ops) &&
            (x->reg_buff == RAIL_RULE_ANY || x->reg_buff == reg_buff))
            return x;
    }
    return NULL;
}

void rail_rules_free(struct rail_rules *r)
{
    if (!r)
        return;
    free(r->rules);
    r->rules = NULL;
    r->n = 0;
    r->coll_mask = 0;
}

/* One raw line from f into buf (cap bytes, NUL-terminated), without "\n" or "\r\n".
 * Bytes beyond cap-1 are read and dropped; rl->total counts them all. A UTF-8 byte-order mark at
 * the start is dropped when skip_bom. Returns 1 for a line, 0 at end of file, -errno on error. */
struct raw_line {
    size_t total;   /* characters on the line */
    size_t nul_col; /* 1-based column of the first NUL byte, 0 if none */
};

static int read_raw_line(FILE *f, char *buf, size_t cap, bool skip_bom, size_t *budget,
                         struct raw_line *rl)
{
    size_t len = 0, total = 0, nul_col = 0;
    int c, last = -1;

    errno = 0;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (*budget == 0)
            return -EFBIG;
        --*budget;
        if (c == 0 && !nul_col)
            nul_col = total + 1;
        if (len + 1 < cap)
            buf[len++] = (char)c;
        total++;
        last = c;
        if (skip_bom && total == 3) {
            skip_bom = false;
            if (memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
                len = total = 0;
                last = -1;
            }
        }
    }
    if (c == EOF && ferror(f))
        return errno ? -errno : -EIO;
    if (c == EOF && total == 0 && last == -1)
        return 0;
    if (last == '\r') {
        if (len == total)
            len--;
        total--;
    }
    buf[len] = '\0';
    rl->total = total;
    rl->nul_col = nul_col;
    return 1;
}

static int add_rule(struct rail_rules *out, int *cap, const struct rail_rule *rule)
{
    if (out->n == *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        struct rail_rule *n = realloc(out->rules, (size_t)ncap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        out->rules = n;
        *cap = ncap;
    }
    out->rules[out->n++] = *rule;
    out->coll_mask |= 1u << rule->coll;
    return 0;
}

_Static_assert(RAIL_RULES_MAX_LINES == 1000000, "update the message in unreadable()");

/* The file cannot be read: an error, or (lenient) a WARN and no rules. */
static int unreadable(const char *path, int rc, bool lenient, struct rail_rules *out, char *err,
                      size_t errlen)
{
    char kind[64];
    const char *why = rc == -EFBIG    ? "file is larger than 64 MiB"
                      : rc == -E2BIG  ? "more than 1000000 lines"
                      : rc == -EINVAL ? "not a regular file"
                      : rc == -EISDIR ? "not a regular file (a directory)"
                      : rc == -ENOENT ? "no such file"
                                      : strerror(-rc);
    if (rc == -EINVAL && rail_file_kind(path, 0)) {
        snprintf(kind, sizeof(kind), "not a regular file (%s)", rail_file_kind(path, 0));
        why = kind;
    }

    rail_rules_free(out);
    if (lenient) {
        RAIL_WARN(NCCL_TUNING | NCCL_ENV,
                  "rules file %s: %s; continuing without rules (NCCL_RAIL_CONFIG_LENIENT=1)", path,
                  why);
        return 0;
    }
    snprintf(err, errlen, "%s: cannot read rules file: %s", path, why);
    return rc;
}

int rail_rules_load(const char *path, bool lenient, struct rail_rules *out, char *err,
                    size_t errlen)
{
    char buf[RAIL_RULES_MAX_LINE + 2], why[512];
    struct raw_line rl = {0, 0};
    struct rail_rule rule;
    int lineno = 0, cap = 0, rc = 0;
    size_t budget = RAIL_RULES_MAX_FILE, text_len = 0, nlines = 0;
    char *text = NULL;
    FILE *f;

    memset(out, 0, sizeof(*out));
    rail_clear_err(err, errlen);
    if (!err || !errlen) { /* keep the messages below simple */
        static char sink[1];
        err = sink;
        errlen = sizeof(sink);
    }
    if (!path || !*path) {
        snprintf(err, errlen, "empty rules file path");
        return -EINVAL;
    }
    if (strlen(path) >= sizeof(out->path)) {
        snprintf(err, errlen, "rules file path is longer than %zu characters",
                 sizeof(out->path) - 1);
        return -ENAMETOOLONG;
    }
    snprintf(out->path, sizeof(out->path), "%s", path);

    /* Read the one safe way (non-blocking, regular files only, bounded), then parse from
     * memory. A file of little but line endings is refused before any parsing. */
    rc = rail_file_read_all(path, RAIL_RULES_MAX_FILE, 0, &text, &text_len, why, sizeof(why));
    if (rc)
        return unreadable(path, rc, lenient, out, err, errlen);
    for (const char *p = text; (p = memchr(p, '\n', text_len - (size_t)(p - text))) != NULL; p++)
        if (++nlines > RAIL_RULES_MAX_LINES) {
            free(text);
            return unreadable(path, -E2BIG, lenient, out, err, errlen);
        }
    if (text_len == 0) {
        free(text);
        return 0;
    }
    f = fmemopen(text, text_len, "r");
    if (!f) {
        free(text);
        return unreadable(path, -ENOMEM, lenient, out, err, errlen);
    }

    while ((rc = read_raw_line(f, buf, sizeof(buf), lineno == 0, &budget, &rl)) > 0) {
        lineno++;
        if (rl.nul_col)
            rc = rail_fail(why, sizeof(why), "NUL byte at column %zu", rl.nul_col);
        else if (rl.total > RAIL_RULES_MAX_LINE)
            rc = rail_fail(why, sizeof(why), "line is longer than %d characters (%zu)",
                           RAIL_RULES_MAX_LINE, rl.total);
        else
            rc = rail_rules_parse_line(buf, &rule, why, sizeof(why));
        if (rc == 0)
            continue;
        if (rc < 0) {
            if (!lenient)
                break;
            RAIL_WARN(NCCL_TUNING | NCCL_ENV,
                      "%s:%d: %s; line skipped (NCCL_RAIL_CONFIG_LENIENT=1)", path, lineno, why);
            out->skipped++;
            continue;
        }
        if (out->n >= RAIL_RULES_MAX_RULES) {
            rc = rail_fail(why, sizeof(why), "more than %d rules", RAIL_RULES_MAX_RULES);
            if (!lenient)
                break;
            RAIL_WARN(NCCL_TUNING | NCCL_ENV, "%s:%d: %s; the rest of the file is ignored", path,
                      lineno, why);
            out->skipped++;
            rc = 0;
            break;
        }
        rule.line = lineno;
        if ((rc = add_rule(out, &cap, &rule)) < 0) {
            snprintf(why, sizeof(why), "out of memory");
            break;
        }
    }
    fclose(f);
    free(text);
    if (rc == -EINVAL || rc == -ENOMEM) {
        snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
        rail_rules_free(out);
        return rc;
    }
    if (rc < 0)
        return unreadable(path, rc, lenient, out, err, errlen);
    return 0;
}
