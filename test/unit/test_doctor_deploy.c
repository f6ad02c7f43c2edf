/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor's deployment checks: NCCL's configuration files merged with NCCL's precedence
 * (environment > NCCL_CONF_FILE or ~/.nccl.conf > /etc/nccl.conf, read under --root), bounded and
 * FIFO-safe reads, and the plugin lookup NCCL's loader does (names tried, net list order, tuner
 * fallback to the net library), through a fake lookup, and the real lookup and ELF reader on the
 * built plugin (nothing is loaded). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "doctor.h"
#include "doctor_deploy.h"
#include "safe_file.h"
#include "tmpfiles.h"

/* ---- line parsing: exactly NCCL's rules ---- */
static void test_parse_line(void)
{
    char n[1100], v[1100];
#define PARSE(s) doctor_conf_parse_line((s), strlen(s), n, sizeof(n), v, sizeof(v))
    CHECK_EQ_INT(PARSE("# NCCL_DEBUG=INFO"), 0);
    CHECK_EQ_INT(PARSE(""), 0);
    CHECK_EQ_INT(PARSE("NCCL_DEBUG"), 0);
    CHECK_EQ_INT(PARSE("NCCL_DEBUG=INFO"), 1);
    CHECK_EQ_STR(n, "NCCL_DEBUG");
    CHECK_EQ_STR(v, "INFO");
    CHECK_EQ_INT(PARSE("A==b"), 1); /* split at the first '=' */
    CHECK_EQ_STR(n, "A");
    CHECK_EQ_STR(v, "=b");
    CHECK_EQ_INT(PARSE(" A = b"), 1); /* taken literally */
    CHECK_EQ_STR(n, " A ");
    CHECK_EQ_STR(v, " b");
    CHECK_EQ_INT(PARSE("A=b\r"), 1); /* only the newline is removed by NCCL */
    CHECK_EQ_STR(v, "b\r");
    CHECK_EQ_INT(PARSE("A="), 1);
    CHECK_EQ_STR(v, "");
    char big[3000];
    memset(big, 'x', 2000);
    big[2000] = '=';
    memset(big + 2001, 'y', 998);
    big[2999] = '\0';
    CHECK_EQ_INT(PARSE(big), 1);
    CHECK_EQ_INT(strlen(n), 1023); /* cut at 1023 like NCCL's envVar[1024] */
    CHECK_EQ_INT(strlen(v), 998);
#undef PARSE
}

/* ---- names NCCL tries ---- */
static void test_names(void)
{
    char c[2][256];
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", NULL, c), 1);
    CHECK_EQ_STR(c[0], "libnccl-net.so");
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "", c), 1);
    CHECK_EQ_STR(c[0], "libnccl-net.so");
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "rail", c), 2);
    CHECK_EQ_STR(c[0], "rail");
    CHECK_EQ_STR(c[1], "libnccl-net-rail.so");
    CHECK_EQ_INT(doctor_plugin_names("libnccl-tuner", "rail", c), 2);
    CHECK_EQ_STR(c[1], "libnccl-tuner-rail.so");
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "libnccl-net-rail.so", c), 1);
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "/opt/x/plugin", c), 1);
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "foo.so", c), 2); /* not lib*.so */
    CHECK_EQ_STR(c[1], "libnccl-net-foo.so.so");
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "libfoo", c), 2);
    CHECK_EQ_STR(c[1], "libnccl-net-libfoo.so");
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "static", c), 1); /* prefix of STATIC_PLUGIN */
    CHECK_EQ_STR(c[0], "");
    CHECK_EQ_INT(doctor_plugin_names("libnccl-net", "STATIC_PLUGINX", c), 2);
}

/* ---- a fake loader ---- */
struct fake_lib {
    const char *name, *path;
    int net_abi, tuner_abi;
    const char *net_name, *tuner_name;
};
struct fake {
    const struct fake_lib *libs;
    char tried[1024];
};

static void fake_open(void *ctx, const char *name, struct doctor_lib_probe *out)
{
    struct fake *f = ctx;
    size_t l = strlen(f->tried);
    memset(out, 0, sizeof(*out));
    snprintf(f->tried + l, sizeof(f->tried) - l, "%s%s", l ? " " : "", name ? name : "(null)");
    for (const struct fake_lib *x = f->libs; x && x->name; x++) {
        if (name && strcmp(name, x->name) == 0) {
            out->found = true;
            snprintf(out->path, sizeof(out->path), "%s", x->path);
            out->net_abi = x->net_abi;
            out->tuner_abi = x->tuner_abi;
            snprintf(out->net_name, sizeof(out->net_name), "%s", x->net_name ? x->net_name : "");
            snprintf(out->tuner_name, sizeof(out->tuner_name), "%s",
                     x->tuner_name ? x->tuner_name : "");
            return;
        }
    }
    snprintf(out->err, sizeof(out->err), "%s: cannot open shared object file",
             name ? name : "(null)");
}

static const struct fake_lib RAIL_NET = {
    "libnccl-net-rail.so", "/usr/lib/x86_64-linux-gnu/libnccl-net-rail.so", 11, 5, "RAIL", "rail"};
static const struct fake_lib RAIL_TUNER = {
    "libnccl-tuner-rail.so", "/usr/lib/x86_64-linux-gnu/libnccl-tuner-rail.so", 0, 5, NULL, "rail"};
static const struct fake_lib OTHER_NET = {
    "libnccl-net.so", "/opt/ofi/lib/libnccl-net.so", 11, 0, "AWS Libfabric", NULL};
static const struct fake_lib OFI = {
    "libnccl-net-ofi.so", "/opt/ofi/lib/libnccl-net-ofi.so", 10, 0, "AWS Libfabric", NULL};

static char g_root[256];

/* Run conf + plugin checks with env and the fake libraries; returns the report (caller frees). */
static const char *g_run_root;

static void run(char **env, const struct fake_lib *libs, struct fake *f, struct doctor_report *r)
{
    struct doctor_ctx c = {
        .root = g_run_root ? g_run_root : g_root, .env = {.vars = env}, .home = "/home/u"};
    memset(f, 0, sizeof(*f));
    f->libs = libs;
    c.plugin_open = fake_open;
    c.plugin_open_ctx = f;
    doctor_report_init(r);
    doctor_read_conf(&c, r);
    doctor_check_plugins(&c, r);
    doctor_conf_release(&c);
    CHECK(c.env.vars == env); /* release gives the caller's environment back */
}

static int sev(const struct doctor_report *r, const char *id, const char *subject)
{
    const struct doctor_finding *x = doctor_find(r, id, subject);
    return x ? (int)x->sev : -1;
}

static void test_plugins(void)
{
    struct doctor_report r;
    struct fake f;
    const struct doctor_finding *x;

    /* A snapshot (--root) that names no plugin: no lookup on this machine's loader. */
    char *e0[] = {NULL};
    run(e0, NULL, &f, &r);
    CHECK(doctor_find(&r, "plugin.net", NULL) == NULL);
    CHECK_EQ_STR(f.tried, "");
    doctor_report_free(&r);

    /* The live node ("/"; ~ is a home without .nccl.conf) with NCCL_NET_PLUGIN unset. Skipped
     * when this machine has an /etc/nccl.conf, which would take part. */
    if (access("/etc/nccl.conf", F_OK) == 0) {
        printf("test_doctor_deploy: /etc/nccl.conf exists here, live-node cases skipped\n");
        goto named;
    }
    g_run_root = "/";
    /* Unset, nothing installed: NCCL's own transport, no tuner. */
    run(e0, NULL, &f, &r);
    CHECK_EQ_INT(sev(&r, "plugin.net", "NCCL_NET_PLUGIN"), DOCTOR_WARN);
    CHECK_EQ_INT(sev(&r, "plugin.tuner", "NCCL_TUNER_PLUGIN"), DOCTOR_WARN);
    CHECK_EQ_STR(f.tried, "libnccl-net.so libnccl-tuner.so");
    CHECK_EQ_INT(doctor_count(&r, DOCTOR_ERROR), 0);
    doctor_report_free(&r);

    /* Unset while another vendor's libnccl-net.so is installed: that one wins. */
    const struct fake_lib other[] = {OTHER_NET, RAIL_NET, {0}};
    run(e0, other, &f, &r);
    x = doctor_find(&r, "plugin.net", "libnccl-net.so");
    CHECK(x && x->sev == DOCTOR_WARN && strstr(x->message, "/opt/ofi/lib/libnccl-net.so") &&
          strstr(x->message, "wins"));
    doctor_report_free(&r);
    g_run_root = NULL;

named:
    /* NCCL_NET_PLUGIN=rail: "rail", then libnccl-net-rail.so; the tuner from the net library. */
    char *e1[] = {"NCCL_NET_PLUGIN=rail", NULL};
    const struct fake_lib both[] = {RAIL_NET, OTHER_NET, {0}};
    run(e1, both, &f, &r);
    x = doctor_find(&r, "plugin.net", "libnccl-net-rail.so");
    CHECK(x && x->sev == DOCTOR_OK && strstr(x->message, RAIL_NET.path) &&
          strstr(x->message, "ABI v11"));
    x = doctor_find(&r, "plugin.tuner", "libnccl-net-rail.so");
    CHECK(x && x->sev == DOCTOR_OK && strstr(x->message, "net plugin library"));
    CHECK_EQ_INT(sev(&r, "plugin.net", "libnccl-net.so"), DOCTOR_INFO); /* another one exists */
    CHECK_EQ_STR(f.tried, "rail libnccl-net-rail.so libnccl-net.so libnccl-tuner.so");
    doctor_report_free(&r);

    /* NCCL_NET_PLUGIN=rail with nothing installed: NCCL falls back silently, so an error. */
    run(e1, NULL, &f, &r);
    CHECK_EQ_INT(sev(&r, "plugin.net", "NCCL_NET_PLUGIN"), DOCTOR_ERROR);
    CHECK_EQ_INT(sev(&r, "plugin.net", "rail"), DOCTOR_WARN);
    doctor_report_free(&r);

    /* A list: the first entry that loads is tried first. */
    char *e2[] = {"NCCL_NET_PLUGIN=ofi,rail", "NCCL_TUNER_PLUGIN=rail", NULL};
    const struct fake_lib list[] = {OFI, RAIL_NET, RAIL_TUNER, {0}};
    run(e2, list, &f, &r);
    CHECK_EQ_INT(sev(&r, "plugin.net", "libnccl-net-ofi.so"), DOCTOR_WARN);
    CHECK_EQ_INT(sev(&r, "plugin.net", "libnccl-net-rail.so"), DOCTOR_INFO);
    CHECK_EQ_INT(sev(&r, "plugin.tuner", "libnccl-tuner-rail.so"), DOCTOR_OK);
    doctor_report_free(&r);

    /* none */
    char *e3[] = {"NCCL_NET_PLUGIN=None", "NCCL_TUNER_PLUGIN=none", NULL};
    run(e3, both, &f, &r);
    CHECK_EQ_INT(sev(&r, "plugin.net", "NCCL_NET_PLUGIN"), DOCTOR_WARN);
    CHECK_EQ_INT(sev(&r, "plugin.tuner", "NCCL_TUNER_PLUGIN"), DOCTOR_WARN);
    CHECK_EQ_STR(f.tried, "");
    doctor_report_free(&r);

    /* NCCL_TUNER_PLUGIN named but missing, and the net library has no tuner: an error. */
    char *e4[] = {"NCCL_NET_PLUGIN=ofi", "NCCL_TUNER_PLUGIN=rail", NULL};
    const struct fake_lib ofi_only[] = {OFI, {0}};
    run(e4, ofi_only, &f, &r);
    CHECK_EQ_INT(sev(&r, "plugin.tuner", "NCCL_TUNER_PLUGIN"), DOCTOR_ERROR);
    doctor_report_free(&r);
}

/* ---- configuration files: precedence, root prefix, hostile files ---- */
static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof(p), "%s%s", g_root, rel);
    tmp_put(p, text);
}

static void test_conf(void)
{
    struct doctor_report r;
    struct fake f;
    const struct doctor_finding *x;
    const struct fake_lib libs[] = {RAIL_NET, RAIL_TUNER, OTHER_NET, {0}};

    put("/etc/nccl.conf", "# system defaults\nNCCL_DEBUG=INFO\nNCCL_NET_PLUGIN=frometc\n"
                          "NCCL_ALGO=Ring\nNCCL_TUNER_PLUGIN=rail\n");
    put("/home/u/.nccl.conf", "NCCL_NET_PLUGIN=rail\nNCCL_PROTO=LL\n");
    put("/conf/job.conf", "NCCL_NET_PLUGIN=fromjob\n");

    /* Environment > ~/.nccl.conf > /etc/nccl.conf, seen by doctor_env_get after the merge. */
    char *env[] = {"NCCL_DEBUG=WARN", NULL};
    struct doctor_ctx c = {.root = g_root, .env = {.vars = env}, .home = "/home/u"};
    doctor_report_init(&r);
    doctor_read_conf(&c, &r);
    CHECK_EQ_STR(doctor_env_get(&c.env, "NCCL_DEBUG"), "WARN");
    CHECK_EQ_STR(doctor_env_get(&c.env, "NCCL_NET_PLUGIN"), "rail");
    CHECK_EQ_STR(doctor_env_get(&c.env, "NCCL_ALGO"), "Ring");
    CHECK_EQ_STR(doctor_env_get(&c.env, "NCCL_PROTO"), "LL");
    x = doctor_find(&r, "conf.file", "/etc/nccl.conf");
    CHECK(x && x->sev == DOCTOR_INFO && strstr(x->message, "4 variables, 2 in effect") &&
          strstr(x->message, "NCCL_DEBUG (environment)") &&
          strstr(x->message, "NCCL_NET_PLUGIN (earlier file)"));
    CHECK(doctor_find(&r, "conf.file", "/home/u/.nccl.conf") != NULL);
    doctor_conf_release(&c);
    doctor_report_free(&r);

    /* NCCL_CONF_FILE replaces ~/.nccl.conf (not read at all); /etc/nccl.conf still fills in. */
    char *env2[] = {"NCCL_CONF_FILE=/conf/job.conf", NULL};
    struct doctor_ctx c2 = {.root = g_root, .env = {.vars = env2}, .home = "/home/u"};
    doctor_report_init(&r);
    doctor_read_conf(&c2, &r);
    CHECK_EQ_STR(doctor_env_get(&c2.env, "NCCL_NET_PLUGIN"), "fromjob");
    CHECK(doctor_env_get(&c2.env, "NCCL_PROTO") == NULL);
    CHECK_EQ_STR(doctor_env_get(&c2.env, "NCCL_ALGO"), "Ring");
    CHECK(doctor_find(&r, "conf.file", "/home/u/.nccl.conf") == NULL);
    doctor_conf_release(&c2);
    doctor_report_free(&r);

    /* The plugin check judges the merged view: NCCL_NET_PLUGIN=rail from ~/.nccl.conf. */
    run(env, libs, &f, &r);
    CHECK_EQ_INT(sev(&r, "plugin.net", "libnccl-net-rail.so"), DOCTOR_OK);
    CHECK_EQ_INT(sev(&r, "plugin.tuner", "libnccl-tuner-rail.so"), DOCTOR_OK);
    doctor_report_free(&r);

    /* NCCL_CONF_FILE that does not exist: NCCL ignores it silently, doctor warns. */
    char *env3[] = {"NCCL_CONF_FILE=/conf/missing.conf", NULL};
    run(env3, libs, &f, &r);
    x = doctor_find(&r, "conf.file", "NCCL_CONF_FILE=/conf/missing.conf");
    CHECK(x && x->sev == DOCTOR_WARN);
    doctor_report_free(&r);

    /* A FIFO is refused without blocking; a file over 1 MiB is not read; CRLF and spaced names
     * are explained. */
    char p[512];
    snprintf(p, sizeof(p), "%s/conf/fifo.conf", g_root);
    CHECK(mkfifo(p, 0644) == 0);
    char *env4[] = {"NCCL_CONF_FILE=/conf/fifo.conf", NULL};
    run(env4, libs, &f, &r);
    x = doctor_find(&r, "conf.file", "NCCL_CONF_FILE=/conf/fifo.conf");
    CHECK(x && x->sev == DOCTOR_WARN && strstr(x->message, "not a regular file"));
    doctor_report_free(&r);

    char *bigtext = malloc(DOCTOR_CONF_MAX_BYTES + 100);
    CHECK(bigtext != NULL);
    if (bigtext) {
        memset(bigtext, '#', DOCTOR_CONF_MAX_BYTES + 99);
        bigtext[DOCTOR_CONF_MAX_BYTES + 99] = '\0';
        put("/conf/big.conf", bigtext);
        free(bigtext);
    }
    char *env5[] = {"NCCL_CONF_FILE=/conf/big.conf", NULL};
    run(env5, libs, &f, &r);
    x = doctor_find(&r, "conf.file", "NCCL_CONF_FILE=/conf/big.conf");
    CHECK(x && x->sev == DOCTOR_WARN && strstr(x->message, "1 MiB"));
    doctor_report_free(&r);

    put("/conf/dos.conf", "NCCL_NET_PLUGIN=rail\r\nNCCL_ALGO = Tree\n");
    char *env6[] = {"NCCL_CONF_FILE=/conf/dos.conf", NULL};
    run(env6, libs, &f, &r);
    CHECK(doctor_find(&r, "conf.line", "NCCL_CONF_FILE=/conf/dos.conf") != NULL);
    CHECK_EQ_INT(doctor_worst(&r, "conf.line"), DOCTOR_WARN);
    int n = 0;
    for (int i = 0; i < r.n; i++)
        n += strcmp(r.f[i].id, "conf.line") == 0;
    CHECK_EQ_INT(n, 2);
    /* "rail\r" is what NCCL would look up: the fake loader knows no such name. */
    CHECK_EQ_INT(sev(&r, "plugin.net", "NCCL_NET_PLUGIN"), DOCTOR_ERROR);
    doctor_report_free(&r);
}

/* ---- the lookup and the reader on the built plugin: nothing is loaded ---- */
static void test_real_lookup(void)
{
    char llp[4200], path[4200];
    struct doctor_lib_probe p;
    snprintf(llp, sizeof(llp), "LD_LIBRARY_PATH=/nonexistent:%s", RAIL_BINARY_DIR);
    char *env[] = {llp, NULL};
    struct doctor_ctx c = {.root = "/", .env = {.vars = env}};

    doctor_lib_locate(&c, "libnccl-net-rail.so", &p);
    CHECK(p.found);
    CHECK_EQ_INT(p.net_abi, 11); /* what NCCL 2.28 picks (v12 is 2.30's) */
    CHECK_EQ_STR(p.net_name, "RAIL");
    CHECK_EQ_INT(p.tuner_abi, 5);
    CHECK_EQ_STR(p.tuner_name, "rail");
    snprintf(path, sizeof(path), "%s/libnccl-net-rail.so", RAIL_BINARY_DIR);
    CHECK_EQ_STR(p.path, path);
    doctor_lib_locate(&c, path, &p); /* a name with a '/' is that path */
    CHECK(p.found && p.net_abi == 11);
    snprintf(path, sizeof(path), "%s/libnccl-tuner-rail.so", RAIL_BINARY_DIR);
    doctor_lib_locate(&c, path, &p);
    CHECK(p.found && p.net_abi == 0 && p.tuner_abi == 5 && strcmp(p.tuner_name, "rail") == 0);
    doctor_lib_locate(&c, "libnccl-net-does-not-exist.so", &p);
    CHECK(!p.found);
    CHECK(strstr(p.err, "libnccl-net-does-not-exist.so: not found in LD_LIBRARY_PATH") != NULL);
    /* Not a library: skipped with the reason, as the loader skips it. */
    snprintf(path, sizeof(path), "%s/notelf/libnccl-net-x.so", g_root);
    tmp_put(path, "#!/bin/sh\n");
    doctor_lib_locate(&c, path, &p);
    CHECK(!p.found && strstr(p.err, "not an ELF file") != NULL);
    /* This machine's loader cache, when it has one: libc is in it. */
    char *cache = NULL, err[256];
    size_t len = 0;
    if (rail_file_read_all("/etc/ld.so.cache", 16u << 20, 0, &cache, &len, err, sizeof(err)) == 0) {
        CHECK_EQ_INT(doctor_ldcache_lookup(cache, len, "libc.so.6", path, sizeof(path)), 0);
        CHECK(strstr(path, "/libc.so.6") != NULL);
        CHECK_EQ_INT(doctor_ldcache_lookup(cache, len, "libnope.so.9", path, sizeof(path)),
                     -ENOENT);
        CHECK_EQ_INT(doctor_ldcache_lookup(cache, 40, "libc.so.6", path, sizeof(path)), -EINVAL);
        free(cache);
    }
}

/* The fuzzer's seeds are what they say (a small library with both tables, a one-entry cache). */
static void test_fuzz_seeds(void)
{
    char path[4200], *data = NULL, err[256], out[256];
    size_t len = 0;
    struct doctor_lib_probe p;
    snprintf(path, sizeof(path), "%s/test/fuzz/corpus/fuzz_plugin_elf/elf_two_tables",
             RAIL_SOURCE_DIR);
    CHECK(rail_file_read_all(path, 1 << 20, 0, &data, &len, err, sizeof(err)) == 0);
#if defined(__x86_64__)
    CHECK(data && doctor_elf_tables(data + 1, len - 1, &p, err, sizeof(err)) == 0 &&
          p.net_abi == 11 && strcmp(p.net_name, "SEED") == 0 && p.tuner_abi == 5 &&
          strcmp(p.tuner_name, "seed") == 0);
    CHECK(data && doctor_elf_tables(data + 1, len / 2, &p, err, sizeof(err)) < 0); /* cut */
#endif
    free(data);
    snprintf(path, sizeof(path), "%s/test/fuzz/corpus/fuzz_plugin_elf/ldcache_one_entry",
             RAIL_SOURCE_DIR);
    CHECK(rail_file_read_all(path, 1 << 20, 0, &data, &len, err, sizeof(err)) == 0);
#if defined(__x86_64__)
    CHECK(data &&
          doctor_ldcache_lookup(data + 1, len - 1, "libnccl-net.so", out, sizeof(out)) == 0 &&
          strcmp(out, "/usr/lib/x86_64-linux-gnu/libnccl-net.so") == 0);
#endif
    free(data);
}

/* Found by fuzz_plugin_elf: a string table of type SHT_NOBITS with a size made the reader take
 * bytes past the end of the file. NOBITS sections have no bytes in the file. */
static void test_elf_regressions(void)
{
    char path[4200], *data = NULL, err[256];
    size_t len = 0;
    struct doctor_lib_probe p;
    snprintf(path, sizeof(path), "%s/test/fuzz/regressions/fuzz_plugin_elf/nobits-strtab",
             RAIL_SOURCE_DIR);
    CHECK(rail_file_read_all(path, 1 << 20, 0, &data, &len, err, sizeof(err)) == 0);
    if (data) {                       /* the fuzzer's first byte picks the ELF reader */
        char *copy = malloc(len - 1); /* exactly the input: ASan sees a read past it */
        CHECK(copy != NULL);
        if (copy) {
            memcpy(copy, data + 1, len - 1);
            int rc = doctor_elf_tables(copy, len - 1, &p, err, sizeof(err));
            CHECK(rc == 0 || rc == -ENOEXEC);
            free(copy);
        }
    }
    free(data);
}

/* A cache built here: entries of another architecture or kind are not this machine's. */
static void test_ldcache_synthetic(void)
{
    unsigned char c[48 + 3 * 24 + 64] = "glibc-ld.so.cache1.1";
    char out[64];
    uint32_t n = 3, off = 48 + 3 * 24;
    int32_t flags[3] = {0x0303, 0x0a03, 0x0300};
#if defined(__aarch64__)
    flags[0] = 0x0a03, flags[1] = 0x0303;
#endif
    memcpy(c + 20, &n, 4);
    memcpy(c + off, "libx.so\0/lib/a/libx.so\0", 24);
    for (int i = 0; i < 3; i++) {
        uint32_t key = off, value = off + 8;
        memcpy(c + 48 + i * 24, &flags[2 - i], 4); /* the good entry last */
        memcpy(c + 48 + i * 24 + 4, &key, 4);
        memcpy(c + 48 + i * 24 + 8, &value, 4);
    }
    CHECK_EQ_INT(doctor_ldcache_lookup(c, sizeof(c), "libx.so", out, sizeof(out)), 0);
    CHECK_EQ_STR(out, "/lib/a/libx.so");
    n = 1000; /* more entries than the file holds */
    memcpy(c + 20, &n, 4);
    CHECK_EQ_INT(doctor_ldcache_lookup(c, sizeof(c), "libx.so", out, sizeof(out)), -EINVAL);
}

int main(void)
{
    snprintf(g_root, sizeof(g_root), "/tmp/rail-doctor-deploy-XXXXXX");
    CHECK(mkdtemp(g_root) != NULL);
    test_parse_line();
    test_names();
    test_plugins();
    test_conf();
    test_real_lookup();
    test_ldcache_synthetic();
    test_fuzz_seeds();
    test_elf_regressions();
    tmp_remove_tree(g_root);
    return check_report("test_doctor_deploy");
}
