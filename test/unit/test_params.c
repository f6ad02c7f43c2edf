/* SPDX-License-Identifier: Apache-2.0 */
/* Parameter table and logging: parsing, ranges, WARN naming the variable, prefix and format. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "params.h"
#include "result.h"

static char g_last[1024];
static int g_level, g_count;

static void capture(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                    const char *fmt, ...)
{
    va_list ap;
    (void)flags;
    (void)file;
    (void)line;
    va_start(ap, fmt);
    vsnprintf(g_last, sizeof(g_last), fmt, ap);
    va_end(ap);
    g_level = level;
    g_count++;
}

static void test_table(void)
{
    int names_ok = 1, docs_ok = 1, defaults_ok = 1;
    for (int i = 0; i < RAIL_PARAM_COUNT; i++) {
        const struct rail_param_def *d = rail_param_def((enum rail_param_id)i);
        long long v;
        char err[64];
        if (!d->name || strncmp(d->name, "NCCL_", 5) != 0) {
            if (!d->name || strncmp(d->name, "HWLOC_", 6) != 0)
                names_ok = 0;
        }
        if (!d->doc || strlen(d->doc) < 10)
            docs_ok = 0;
        for (int j = 0; j < i; j++)
            if (strcmp(rail_param_def((enum rail_param_id)j)->name, d->name) == 0)
                names_ok = 0; /* declared once */
        if ((d->type == RAIL_PT_INT || d->type == RAIL_PT_BOOL) &&
            rail_param_parse_int(d, d->def, &v, err, sizeof(err)) != 0)
            defaults_ok = 0; /* every default is inside its own range */
    }
    CHECK(names_ok);
    CHECK(docs_ok);
    CHECK(defaults_ok);
    CHECK(rail_param_def(RAIL_PARAM_COUNT) == NULL);
}

static void test_parse_int(void)
{
    const struct rail_param_def *d = rail_param_def(RAIL_PARAM_IB_TIMEOUT);
    long long v = 0;
    char err[64];
    CHECK_EQ_INT(rail_param_parse_int(d, "22", &v, err, sizeof(err)), 0);
    CHECK_EQ_INT(v, 22);
    CHECK_EQ_INT(rail_param_parse_int(d, " 0x10 ", &v, err, sizeof(err)), 0);
    CHECK_EQ_INT(v, 16);
    CHECK_EQ_INT(rail_param_parse_int(d, "32", &v, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_param_parse_int(d, "0", &v, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_param_parse_int(d, "abc", &v, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_param_parse_int(d, "12abc", &v, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_param_parse_int(d, "", &v, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_param_parse_int(d, "99999999999999999999999", &v, err, sizeof(err)), -EINVAL);
}

static void test_env(void)
{
    rail_log_set_logger(capture);
    unsetenv("NCCL_IB_TIMEOUT");
    CHECK_EQ_INT(rail_param_int(RAIL_PARAM_IB_TIMEOUT), 20); /* NCCL's default */
    setenv("NCCL_IB_TIMEOUT", "18", 1);
    CHECK_EQ_INT(rail_param_int(RAIL_PARAM_IB_TIMEOUT), 18);
    g_count = 0;
    setenv("NCCL_IB_TIMEOUT", "fast", 1);
    CHECK_EQ_INT(rail_param_int(RAIL_PARAM_IB_TIMEOUT), 20);
    CHECK_EQ_INT(g_count, 1);
    CHECK_EQ_INT(g_level, NCCL_LOG_WARN);
    CHECK(strstr(g_last, "NCCL_IB_TIMEOUT") != NULL);
    CHECK(strstr(g_last, "fast") != NULL);
    CHECK(strstr(g_last, "[1, 31]") != NULL);
    CHECK(strncmp(g_last, RAIL_LOG_PREFIX, strlen(RAIL_LOG_PREFIX)) == 0);
    unsetenv("NCCL_IB_TIMEOUT");

    setenv("NCCL_RAIL_CONFIG_LENIENT", "2", 1);
    g_count = 0;
    CHECK(!rail_param_bool(RAIL_PARAM_CONFIG_LENIENT));
    CHECK_EQ_INT(g_count, 1);
    unsetenv("NCCL_RAIL_CONFIG_LENIENT");

    setenv("NCCL_RAIL_TOPO_PROFILE", "DGX-H100", 1);
    CHECK_EQ_INT(rail_param_enum(RAIL_PARAM_TOPO_PROFILE), 1);
    g_count = 0;
    setenv("NCCL_RAIL_TOPO_PROFILE", "dgx-h1000", 1);
    CHECK_EQ_INT(rail_param_enum(RAIL_PARAM_TOPO_PROFILE), -1);
    CHECK_EQ_INT(g_count, 1);
    CHECK(strstr(g_last, "NCCL_RAIL_TOPO_PROFILE") && strstr(g_last, "dgx-a100"));
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    CHECK_EQ_INT(rail_param_enum(RAIL_PARAM_TOPO_PROFILE), -1);

    CHECK(rail_param_str(RAIL_PARAM_TOPO_FILE) == NULL || getenv("NCCL_TOPO_FILE"));
    CHECK_EQ_STR(rail_param_str(RAIL_PARAM_SYSFS_ROOT), "/");

    /* A message with format characters in its arguments goes through verbatim. */
    RAIL_WARN(NCCL_NET, "value %s", "%s%n%d");
    CHECK(strstr(g_last, "%s%n%d") != NULL);
    rail_log_set_logger(NULL);
}

/* stderr of a child that logs one INFO line with NCCL_RAIL_LOG_STDERR=value (NULL: unset). */
static void child_stderr(const char *value, char *out, size_t len)
{
    int p[2];
    size_t got = 0;
    ssize_t n;
    pid_t pid;
    out[0] = '\0';
    if (pipe(p) != 0 || (pid = fork()) < 0) {
        CHECK(0);
        return;
    }
    if (pid == 0) {
        dup2(p[1], 2);
        if (value)
            setenv("NCCL_RAIL_LOG_STDERR", value, 1);
        else
            unsetenv("NCCL_RAIL_LOG_STDERR");
        RAIL_INFO(NCCL_INIT, "hello");
        _exit(0);
    }
    close(p[1]);
    while (got + 1 < len && (n = read(p[0], out + got, len - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(p[0]);
    waitpid(pid, NULL, 0);
}

/* Issue 22: NCCL_RAIL_LOG_STDERR goes through the parameter parser like every knob; it used to
 * be compared with "1" and anything else was silently "off". */
static void test_log_stderr_knob(void)
{
    char out[1024];
    child_stderr("yes", out, sizeof(out));
    CHECK_MSG(strstr(out, "WARN RAIL NCCL_RAIL_LOG_STDERR='yes' is invalid") != NULL &&
                  !strstr(out, "hello"),
              "%s", out);
    child_stderr("2", out, sizeof(out));
    CHECK_MSG(strstr(out, "NCCL_RAIL_LOG_STDERR='2' is invalid (out of range)") != NULL, "%s", out);
    child_stderr("1", out, sizeof(out));
    CHECK_MSG(strstr(out, "INFO RAIL hello") != NULL && !strstr(out, "WARN"), "%s", out);
    child_stderr(" 1 ", out, sizeof(out)); /* what the parser accepts for every knob */
    CHECK_MSG(strstr(out, "INFO RAIL hello") != NULL, "%s", out);
    child_stderr("0", out, sizeof(out));
    CHECK_EQ_STR(out, "");
    child_stderr(NULL, out, sizeof(out));
    CHECK_EQ_STR(out, "");
}

static void test_markdown(void)
{
    size_t need = rail_params_markdown(NULL, 0);
    char *buf = malloc(need + 1);
    CHECK(need > 100 && buf);
    if (!buf)
        return;
    CHECK_EQ_INT(rail_params_markdown(buf, need + 1), need);
    CHECK(strlen(buf) == need);
    for (int i = 0; i < RAIL_PARAM_COUNT; i++)
        CHECK(strstr(buf, rail_param_def((enum rail_param_id)i)->name) != NULL);
    /* Truncation is safe. */
    char small[16];
    rail_params_markdown(small, sizeof(small));
    CHECK(strlen(small) == sizeof(small) - 1);
    free(buf);
}

static void test_result_map(void)
{
    CHECK_EQ_INT(rail_result(0), ncclSuccess);
    CHECK_EQ_INT(rail_result(5), ncclSuccess);
    CHECK_EQ_INT(rail_result(-EINVAL), ncclInvalidUsage);
    CHECK_EQ_INT(rail_result(-ENOMEM), ncclSystemError);
    CHECK_EQ_INT(rail_result(-ECONNRESET), ncclRemoteError);
    CHECK_EQ_INT(rail_result(-EAGAIN), ncclInProgress);
    CHECK_EQ_INT(rail_result(-12345), ncclInternalError);
}

int main(void)
{
    test_log_stderr_knob(); /* first: the stderr level is decided once per process */
    test_table();
    test_parse_int();
    test_env();
    test_markdown();
    test_result_map();
    return check_report("test_params");
}
