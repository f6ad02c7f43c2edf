/* SPDX-License-Identifier: Apache-2.0 */
/* Memory handles checked per message (rail_mr_check, net_reg.h) through the ABI on the shm verbs
 * provider, both ends in this process (send comm on shm0, receive comm on shm1): a comm
 * remembers the handle that last passed its check, and that shortcut must not survive the
 * handle. Deregistered and registered again at the same address, through the other comm's
 * device, the new handle is refused by the receive comm (its device is shm0, the comm's shm1),
 * where a cache keyed by the address alone would take it for the handle it checked before. The
 * remembered handle's buffer range is checked on every call. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_net.h"
#include "shm_plugin.h"
#include "warn_capture.h"

/* One 8-byte message sc -> rc with the given handles, both requests tested until done. */
static int one_message(const ncclNet_v11_t *n, void *sc, void *rc, uint8_t *sbuf, void *smh,
                       uint8_t *rbuf, void *rmh)
{
    void *rreq = NULL, *sreq = NULL;
    size_t rsize = 4096;
    int tag = 7, done_r = 0, done_s = 0;
    double t0 = now_s();
    if (n->irecv(rc, 1, (void **)&rbuf, &rsize, &tag, &rmh, NULL, &rreq) != ncclSuccess || !rreq)
        return -1;
    memcpy(sbuf, "8 bytes", 8);
    while (!sreq && now_s() - t0 < 30)
        if (n->isend(sc, sbuf, 8, tag, smh, NULL, &sreq) != ncclSuccess)
            return -2;
    while ((!done_r || !done_s) && now_s() - t0 < 30) {
        if (!done_r && n->test(rreq, &done_r, NULL) != ncclSuccess)
            return -3;
        if (!done_s && n->test(sreq, &done_s, NULL) != ncclSuccess)
            return -4;
    }
    return done_r && done_s && memcmp(rbuf, "8 bytes", 8) == 0 ? 0 : -5;
}

int main(int argc, char **argv)
{
    (void)argc;
    /* glibc's calloc does not take blocks from the thread cache: without it, a freed handle's
     * block is what the next registration gets (under ASan the quarantine delays any reuse). */
    if (!getenv("GLIBC_TUNABLES")) {
        setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
        execv("/proc/self/exe", argv);
    }
    struct shm_plugin pl;
    shm_plugin_open(&pl, "mr-reuse", "shm0,shm1,shm2,shm3", capture);
    const ncclNet_v11_t *n = pl.n;
    void *ctx = pl.ctx;
    const char *shm = pl.shm;
    int sdev = shm_plugin_dev(&pl, "shm0"), rdev = shm_plugin_dev(&pl, "shm1");
    CHECK(sdev >= 0 && rdev >= 0);
    if (!n || sdev < 0 || rdev < 0) {
        unlink(shm);
        return check_report("test_mr_reuse");
    }

    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL, *sc = NULL, *rc = NULL;
    CHECK(n->listen(ctx, rdev, handle, &lc) == ncclSuccess && lc);
    double t0 = now_s();
    while ((!sc || !rc) && now_s() - t0 < 30) {
        if (!sc && n->connect(ctx, sdev, handle, &sc, NULL) != ncclSuccess)
            break;
        if (!rc && n->accept(lc, &rc, NULL) != ncclSuccess)
            break;
    }
    CHECK(sc && rc);
    if (!sc || !rc) {
        unlink(shm);
        return check_report("test_mr_reuse");
    }

    uint8_t *sbuf = aligned_alloc(4096, 4096), *rbuf = aligned_alloc(4096, 8192);
    void *smh = NULL, *rmh = NULL;
    CHECK(n->regMr(sc, sbuf, 4096, NCCL_PTR_HOST, &smh) == ncclSuccess);
    CHECK(n->regMr(rc, rbuf, 4096, NCCL_PTR_HOST, &rmh) == ncclSuccess);
    /* Twice: the second irecv and isend pass through the remembered handles. */
    CHECK_EQ_INT(one_message(n, sc, rc, sbuf, smh, rbuf, rmh), 0);
    CHECK_EQ_INT(one_message(n, sc, rc, sbuf, smh, rbuf, rmh), 0);

    /* The remembered handle, a buffer past its registration: refused with a WARN. */
    void *req = (void *)0x1, *past = rbuf + 4096;
    size_t sz = 4096;
    int tag = 7, w = g_warns;
    CHECK(n->irecv(rc, 1, &past, &sz, &tag, &rmh, NULL, &req) != ncclSuccess);
    CHECK(req == NULL);
    CHECK(g_warns == w + 1 && strstr(g_warn, "outside its registration"));

    /* The receive comm's handle freed, a handle of the send comm's device made: usually at the
     * same address (the allocator hands the freed block back). */
    void *old = rmh, *xmh = NULL;
    CHECK(n->deregMr(rc, rmh) == ncclSuccess);
    CHECK(n->regMr(sc, rbuf, 4096, NCCL_PTR_HOST, &xmh) == ncclSuccess);
    /* The ASan runtime (loaded with a sanitized plugin) has its own allocator and quarantine. */
    if (xmh != old && dlsym(RTLD_DEFAULT, "__asan_init"))
        printf("test_mr_reuse: under ASan the new handle is not at the freed one's address: the "
               "refusal below is checked, not the reuse\n");
    else
        CHECK_MSG(xmh == old,
                  "the new handle %p is not at the freed one's address %p: the case is not "
                  "exercised",
                  xmh, old);
    req = (void *)0x1;
    w = g_warns;
    void *data = rbuf;
    CHECK(n->irecv(rc, 1, &data, &sz, &tag, &xmh, NULL, &req) != ncclSuccess);
    CHECK(req == NULL);
    CHECK_MSG(g_warns == w + 1 && strstr(g_warn, "registered on shm0"),
              "want one WARN naming the handle's device, got %d: %s", g_warns - w, g_warn);

    /* A handle registered through the right comm again: accepted. */
    CHECK(n->regMr(rc, rbuf, 4096, NCCL_PTR_HOST, &rmh) == ncclSuccess);
    CHECK_EQ_INT(one_message(n, sc, rc, sbuf, smh, rbuf, rmh), 0);

    CHECK(n->deregMr(sc, xmh) == ncclSuccess);
    CHECK(n->deregMr(rc, rmh) == ncclSuccess);
    CHECK(n->deregMr(sc, smh) == ncclSuccess);
    CHECK(n->closeSend(sc) == ncclSuccess);
    CHECK(n->closeRecv(rc) == ncclSuccess);
    CHECK(n->closeListen(lc) == ncclSuccess);
    CHECK(n->finalize(ctx) == ncclSuccess);
    free(sbuf);
    free(rbuf);
    unlink(shm);
    return check_report("test_mr_reuse");
}
