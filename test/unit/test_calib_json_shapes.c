/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 29 item 4: NCCL Inspector JSON under the read cap whose shape is wrong (millions of
 * zeros, empty arrays or members in one object) used to cost gigabytes of json-c tree before it
 * was refused. Each document is parsed in a child process; the growth of its peak resident
 * memory (ru_maxrss) during the parse must stay within the document's own size plus a small
 * constant, and the document must be refused with FILE:LINE: reason. Documents of the same shape
 * as the 64 MiB ones, scaled to 4 MiB (json-c's cost is per value, so it scales). Valid
 * records padded to the per-object bounds are read, with the same memory bound. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/calib_inspector.h"
#include "measure/calib_job.h"
#include "check.h"
#include "model/cost_model.h"

#define DOC_BYTES (4u << 20)

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
/* AddressSanitizer keeps freed memory in quarantine (256 MiB by default): the padded records'
 * trees, each freed, would add up there. A small quarantine keeps the bound meaningful. */
/* Default visibility: the project builds with -fvisibility=hidden, and the sanitizer runtime
 * finds this hook only in the executable's dynamic symbol table. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
    return "quarantine_size_mb=4";
}
#endif

struct result {
    int rc;
    long records;
    long grew_kb; /* peak RSS growth during the parse */
    char err[400];
};

static long maxrss_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* A document of about DOC_BYTES: head, then unit repeated (a '#' in it replaced by the unit's
 * number, for distinct keys), then tail. */
static char *make_doc(const char *head, const char *unit, const char *tail, size_t *len)
{
    size_t h = strlen(head), t = strlen(tail), n = h;
    const char *hash = strchr(unit, '#');
    char *d = malloc(DOC_BYTES + 64);
    if (!d)
        return NULL;
    memcpy(d, head, h);
    for (size_t i = 0; n + 64 + t < DOC_BYTES; i++) {
        if (hash)
            n += (size_t)snprintf(d + n, 64, "%.*s%zu%s", (int)(hash - unit), unit, i, hash + 1);
        else
            n += (size_t)snprintf(d + n, 64, "%s", unit);
    }
    if (n > h && d[n - 1] == ',') /* no trailing comma before the tail */
        d[n - 1] = ' ';
    memcpy(d + n, tail, t + 1);
    *len = n + t;
    return d;
}

/* Parse in a child; the result through a pipe. */
static struct result parse_in_child(const char *doc, size_t len)
{
    struct result r = {.rc = -999};
    int fd[2];
    if (pipe(fd) != 0)
        return r;
    pid_t pid = fork();
    if (pid == 0) {
        struct rail_job_set s = {0};
        struct rail_calib_hint h = {-1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE};
        struct result c = {0};
        long before = maxrss_kb();
        c.rc = rail_calib_inspector_parse(doc, len, "big.json", &h, &s, c.err, sizeof(c.err));
        c.grew_kb = maxrss_kb() - before;
        c.records = (long)s.n;
        rail_job_free(&s);
        if (write(fd[1], &c, sizeof(c)) != (ssize_t)sizeof(c))
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (pid > 0 && read(fd[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
        r.rc = -998;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return r;
}

#define HDR                                                                                        \
    "{\"header\":{\"id\":\"0x7f8c\",\"rank\":0,\"n_ranks\":1,\"nnodes\":1},"                       \
    "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":1024,"            \
    "\"coll_exec_time_us\":40,\"coll_timing_source\":\"kernel_gpu\"}"

int main(void)
{
    static const struct {
        const char *what, *head, *unit, *tail, *want;
    } bad[] = {
        {"zeros", HDR ",\"pad\":[", "0,", "]}", "big.json:1: more than 4096 JSON values"},
        {"empty arrays", HDR ",\"pad\":[", "[],", "]}", "big.json:1: more than 4096 JSON values"},
        {"members", HDR ",\"pad\":{", "\"k#\":0,", "}}", "big.json:1: more than 4096 JSON values"},
        {"one string", HDR ",\"pad\":\"", "x", "\"}",
         "big.json:1: one JSON object longer than 65536 bytes"},
        {"arrays in lines", HDR ",\"pad\":[", "[],\n", "]}",
         "big.json:4084: more than 4096 JSON values"},
        {"deep", "{\"a\":", "[", "", "big.json:1: JSON nested deeper than 16 levels"},
        {"not an object", "[", "0,", "]", "big.json:1: not a JSON object"},
    };
    const long slack_kb = 16 * 1024; /* json-c's tree of one bounded object, stdio, the records */

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t len;
        char *doc = make_doc(bad[i].head, bad[i].unit, bad[i].tail, &len);
        CHECK(doc != NULL);
        if (!doc)
            continue;
        struct result r = parse_in_child(doc, len);
        printf("%-16s %zu bytes: rc %d, peak RSS +%ld KB: %s\n", bad[i].what, len, r.rc, r.grew_kb,
               r.err);
        CHECK_MSG(r.rc == -EINVAL && strstr(r.err, bad[i].want), "%s: rc %d '%s'", bad[i].what,
                  r.rc, r.err);
        CHECK_MSG(r.grew_kb >= 0 && r.grew_kb < (long)(len / 1024) + slack_kb,
                  "%s: peak RSS grew %ld KB for a %zu-byte document", bad[i].what, r.grew_kb, len);
        free(doc);
    }

    /* Small objects: each within the bounds, so the document is read object by object (and
     * refused at the first, which is not an Inspector record). */
    {
        size_t len = 0;
        char *doc = malloc(DOC_BYTES + 64);
        CHECK(doc != NULL);
        while (doc && len + 64 < DOC_BYTES) {
            len += (size_t)sprintf(doc + len, "{\"k%zu\":0,\"j%zu\":[]}\n", len, len);
        }
        if (doc) {
            struct result r = parse_in_child(doc, len);
            printf("%-16s %zu bytes: rc %d, peak RSS +%ld KB: %s\n", "distinct keys", len, r.rc,
                   r.grew_kb, r.err);
            CHECK_MSG(r.rc == -EINVAL && strstr(r.err, "big.json:1: not an NCCL Inspector record"),
                      "rc %d '%s'", r.rc, r.err);
            CHECK(r.grew_kb < (long)(len / 1024) + slack_kb);
        }
        free(doc);
    }

    /* Valid records padded to just under the value bound: read one by one, memory bounded. */
    {
        char rec[16384];
        size_t k = (size_t)snprintf(rec, sizeof(rec), "%s,\"pad\":[", HDR);
        for (int v = 0; v < 4000; v++)
            k += (size_t)snprintf(rec + k, sizeof(rec) - k, "%s0", v ? "," : "");
        k += (size_t)snprintf(rec + k, sizeof(rec) - k, "]}\n");
        size_t n = DOC_BYTES / k, len = n * k;
        char *doc = malloc(len + 1);
        CHECK(doc != NULL);
        if (doc) {
            for (size_t i = 0; i < n; i++)
                memcpy(doc + i * k, rec, k);
            struct result r = parse_in_child(doc, len);
            printf("%-16s %zu bytes: rc %d, %ld records, peak RSS +%ld KB\n", "padded records", len,
                   r.rc, r.records, r.grew_kb);
            CHECK_MSG(r.rc == 0 && r.records == (long)n, "rc %d, %ld records: %s", r.rc, r.records,
                      r.err);
            CHECK(r.grew_kb < (long)(len / 1024) + slack_kb);
        }
        free(doc);
    }
    return check_report("test_calib_json_shapes");
}
