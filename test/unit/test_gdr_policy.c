/* SPDX-License-Identifier: Apache-2.0 */
/* GPUDirect policy (gdr_policy.c): every branch of ptrSupport, flush, forceFlush, the level knob,
 * the registration method and relaxed ordering, and the reason line. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "gdr/gdr_policy.h"
#include "nccl/nccl_net.h"
#include "topo.h"

#define PEERMEM "/sys/module/nvidia_peermem/version"

/* A node with everything: peermem, CUDA 12.4 with dma-buf, an HCA that accepts dma-buf (EBADF for
 * the fd -1 probe), Ampere, defaults for the knobs. */
static struct rail_gdr_inputs full(void)
{
    struct rail_gdr_inputs in = {
        .dev = "mlx5_0",
        .peermem = PEERMEM,
        .cuda = 1,
        .cuda_version = 12040,
        .cuda_dmabuf = 1,
        .cc_major = 8,
        .dmabuf_probe = EBADF,
        .path = RAIL_GDR_PATH_UNKNOWN,
        .gdr_level = NULL,
        .dmabuf_enable = true,
    };
    return in;
}

static bool has(const char *s, const char *sub)
{
    bool ok = strstr(s, sub) != NULL;
    if (!ok)
        fprintf(stderr, "  '%s' lacks '%s'\n", s, sub);
    return ok;
}

static void test_ptr_support(void)
{
    struct rail_gdr_inputs in = full();
    struct rail_gdr_decision d;

    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
    CHECK(d.gdr && d.peermem && d.dmabuf);
    CHECK(has(d.reason,
              "GDR enabled for mlx5_0: nvidia-peermem loaded (" PEERMEM "), dma-buf supported"));

    /* rxe: peermem, dma-buf probe says EOPNOTSUPP */
    in.dev = "rxe0";
    in.dmabuf_probe = EOPNOTSUPP;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA);
    CHECK(has(d.reason, "GDR enabled for rxe0: nvidia-peermem loaded"));
    CHECK(has(d.reason, "dma-buf unsupported (EOPNOTSUPP)"));
    in.dmabuf_probe = EPROTONOSUPPORT;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA);
    CHECK(has(d.reason, "(EPROTONOSUPPORT)"));

    /* no peermem, dma-buf works: DMABUF only */
    in = full();
    in.peermem = NULL;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST | NCCL_PTR_DMABUF);
    CHECK(d.gdr && !d.peermem && d.dmabuf);
    CHECK(has(d.reason, "GDR enabled for mlx5_0: no nvidia-peermem, dma-buf supported"));
    in.dmabuf_probe = 0; /* the probe call succeeded: supported too */
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST | NCCL_PTR_DMABUF);

    /* nothing: HOST only, with the dma-buf blocker named */
    in = full();
    in.peermem = NULL;
    in.dmabuf_probe = EOPNOTSUPP;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST);
    CHECK(!d.gdr && !d.flush && d.force_flush == 0);
    CHECK(has(d.reason,
              "GDR disabled for mlx5_0: no nvidia-peermem and no dma-buf (dma-buf unsupported "
              "(EOPNOTSUPP))"));

    in = full();
    in.peermem = NULL;
    in.dmabuf_enable = false;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST);
    CHECK(has(d.reason, "NCCL_DMABUF_ENABLE=0"));

    in = full();
    in.peermem = NULL;
    in.dmabuf_probe = RAIL_GDR_PROBE_NONE;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST);
    CHECK(has(d.reason, "not probed"));

    in = full();
    in.peermem = NULL;
    in.cuda = 0;
    in.cuda_version = 0;
    in.cuda_dmabuf = -1;
    in.cc_major = 0;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST);
    CHECK(has(d.reason, "no CUDA driver"));

    in = full();
    in.peermem = NULL;
    in.cuda_version = 11040;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST);
    CHECK(has(d.reason, "CUDA driver 11040 older than 11.7"));

    in = full();
    in.peermem = NULL;
    in.cuda_dmabuf = 0;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST);
    CHECK(has(d.reason, "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED"));

    in.cuda_dmabuf = -1;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST);
    CHECK(has(d.reason, "unknown"));

    /* peermem alone does not need CUDA at all */
    in = full();
    in.cuda = 0;
    in.cuda_version = 0;
    in.cuda_dmabuf = -1;
    in.cc_major = 0;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA);
    CHECK(has(d.reason, "dma-buf unusable: no CUDA driver"));
}

static void test_flush(void)
{
    struct rail_gdr_inputs in = full();
    struct rail_gdr_decision d;

    /* Ampere: flush, not forced */
    rail_gdr_decide(&in, &d);
    CHECK(d.flush);
    CHECK_EQ_INT(d.force_flush, 0);
    CHECK(has(d.reason, "flush by RDMA read (compute capability 8.x < 9)"));
    /* unknown GPU: flush to be safe */
    in.cc_major = 0;
    rail_gdr_decide(&in, &d);
    CHECK(d.flush);
    CHECK(has(d.reason, "compute capability unknown"));
    /* Hopper: no flush unless forced */
    in.cc_major = 9;
    rail_gdr_decide(&in, &d);
    CHECK(!d.flush);
    CHECK_EQ_INT(d.force_flush, 0);
    CHECK(has(d.reason, "no flush needed (compute capability 9.x)"));
    in.force_flush = true;
    rail_gdr_decide(&in, &d);
    CHECK(d.flush);
    CHECK_EQ_INT(d.force_flush, 1);
    CHECK(has(d.reason, "NCCL_NET_FORCE_FLUSH=1"));
    /* disabled wins over forced and over pre-Hopper */
    in.flush_disable = true;
    rail_gdr_decide(&in, &d);
    CHECK(!d.flush);
    CHECK_EQ_INT(d.force_flush, 0);
    CHECK(has(d.reason, "no flush (NCCL_GDR_FLUSH_DISABLE=1)"));
    in.force_flush = false;
    in.cc_major = 7;
    rail_gdr_decide(&in, &d);
    CHECK(!d.flush);
    /* no GDR: never a flush, even forced */
    in = full();
    in.peermem = NULL;
    in.dmabuf_probe = EOPNOTSUPP;
    in.force_flush = true;
    rail_gdr_decide(&in, &d);
    CHECK(!d.flush);
    CHECK_EQ_INT(d.force_flush, 0);
    /* dma-buf only GDR flushes too */
    in = full();
    in.peermem = NULL;
    rail_gdr_decide(&in, &d);
    CHECK(d.flush);
}

static void test_level(void)
{
    CHECK_EQ_INT(rail_gdr_parse_level(NULL), -ENOENT);
    CHECK_EQ_INT(rail_gdr_parse_level(""), -ENOENT);
    CHECK_EQ_INT(rail_gdr_parse_level("LOC"), RAIL_PATH_LOC);
    CHECK_EQ_INT(rail_gdr_parse_level("PIX"), RAIL_PATH_PIX);
    CHECK_EQ_INT(rail_gdr_parse_level("pxb"), RAIL_PATH_PXB);
    CHECK_EQ_INT(rail_gdr_parse_level("PHB"), RAIL_PATH_PHB);
    CHECK_EQ_INT(rail_gdr_parse_level("SYS"), RAIL_PATH_SYS);
    CHECK_EQ_INT(rail_gdr_parse_level("C2C"), RAIL_PATH_C2C);
    CHECK_EQ_INT(rail_gdr_parse_level("PXN"), RAIL_PATH_PXN);
    CHECK_EQ_INT(rail_gdr_parse_level("0"), RAIL_PATH_LOC);
    CHECK_EQ_INT(rail_gdr_parse_level("1"), RAIL_PATH_PIX);
    CHECK_EQ_INT(rail_gdr_parse_level("2"), RAIL_PATH_PXB);
    CHECK_EQ_INT(rail_gdr_parse_level("3"), RAIL_PATH_PHB);
    CHECK_EQ_INT(rail_gdr_parse_level("4"), RAIL_PATH_SYS);
    CHECK_EQ_INT(rail_gdr_parse_level("7"), RAIL_PATH_SYS);
    CHECK_EQ_INT(rail_gdr_parse_level("123456789012345678901234567890"), RAIL_PATH_SYS);
    CHECK_EQ_INT(rail_gdr_parse_level("NET"), -EINVAL); /* beyond SYS: not a GDR level */
    CHECK_EQ_INT(rail_gdr_parse_level("DIS"), -EINVAL);
    CHECK_EQ_INT(rail_gdr_parse_level("-1"), -EINVAL);
    CHECK_EQ_INT(rail_gdr_parse_level("PXBX"), -EINVAL);

    struct rail_gdr_inputs in = full();
    struct rail_gdr_decision d;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(d.level, RAIL_PATH_PXB); /* NCCL's default */
    CHECK(d.path_ok && !d.level_invalid);
    /* a known path within the default level */
    in.path = RAIL_PATH_PIX;
    rail_gdr_decide(&in, &d);
    CHECK(d.path_ok && d.flush);
    in.path = RAIL_PATH_PXB;
    rail_gdr_decide(&in, &d);
    CHECK(d.path_ok);
    /* beyond: NCCL will not use GDR, no flush QPs; ptrSupport still says what the NIC can do */
    in.path = RAIL_PATH_PHB;
    rail_gdr_decide(&in, &d);
    CHECK(!d.path_ok && !d.flush);
    CHECK_EQ_INT(d.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
    CHECK(has(d.reason, "GPU-NIC path PHB is beyond NCCL_NET_GDR_LEVEL=PXB"));
    in.gdr_level = "SYS";
    rail_gdr_decide(&in, &d);
    CHECK(d.path_ok && d.flush);
    in.gdr_level = "3"; /* legacy PHB */
    rail_gdr_decide(&in, &d);
    CHECK(d.path_ok);
    in.gdr_level = "LOC";
    in.path = RAIL_PATH_PIX;
    rail_gdr_decide(&in, &d);
    CHECK(!d.path_ok);
    CHECK(has(d.reason, "NCCL_NET_GDR_LEVEL=LOC"));
    /* invalid knob: default PXB and a note */
    in.gdr_level = "bogus";
    in.path = RAIL_PATH_PXB;
    rail_gdr_decide(&in, &d);
    CHECK(d.level_invalid && d.level == RAIL_PATH_PXB && d.path_ok);
    CHECK(has(d.reason, "NCCL_NET_GDR_LEVEL='bogus' not understood, using PXB"));
    /* NULL device name does not crash */
    in.dev = NULL;
    rail_gdr_decide(&in, &d);
    CHECK(has(d.reason, "GDR enabled for ?"));
}

static void test_reg_method(void)
{
    struct rail_gdr_inputs in = full();
    struct rail_gdr_decision d;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(rail_gdr_reg_method(&d, NCCL_PTR_HOST), RAIL_GDR_REG_PLAIN);
    CHECK_EQ_INT(rail_gdr_reg_method(&d, NCCL_PTR_CUDA), RAIL_GDR_REG_PLAIN); /* peermem wins */
    CHECK_EQ_INT(rail_gdr_reg_method(&d, 0x40), RAIL_GDR_REG_REFUSE);
    CHECK_EQ_INT(rail_gdr_reg_method(NULL, NCCL_PTR_CUDA), RAIL_GDR_REG_REFUSE);
    CHECK_EQ_INT(rail_gdr_reg_method(NULL, NCCL_PTR_HOST), RAIL_GDR_REG_PLAIN);
    in.peermem = NULL;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(rail_gdr_reg_method(&d, NCCL_PTR_CUDA), RAIL_GDR_REG_DMABUF);
    CHECK_EQ_INT(rail_gdr_reg_method(&d, NCCL_PTR_HOST), RAIL_GDR_REG_PLAIN);
    in.dmabuf_probe = EOPNOTSUPP;
    rail_gdr_decide(&in, &d);
    CHECK_EQ_INT(rail_gdr_reg_method(&d, NCCL_PTR_CUDA), RAIL_GDR_REG_REFUSE);
    CHECK_EQ_INT(rail_gdr_reg_method(&d, NCCL_PTR_HOST), RAIL_GDR_REG_PLAIN);
}

static void test_relaxed_ordering(void)
{
    CHECK(!rail_gdr_relaxed_ordering(0, true));
    CHECK(rail_gdr_relaxed_ordering(1, true));
    CHECK(rail_gdr_relaxed_ordering(2, true));
    CHECK(!rail_gdr_relaxed_ordering(1, false));
    CHECK(!rail_gdr_relaxed_ordering(2, false));
}

static void test_peermem_files(void)
{
    int n = 0;
    for (; rail_gdr_peermem_files[n]; n++)
        CHECK(rail_gdr_peermem_files[n][0] == '/');
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_STR(rail_gdr_peermem_files[2], PEERMEM);
}

int main(void)
{
    test_ptr_support();
    test_flush();
    test_level();
    test_reg_method();
    test_relaxed_ordering();
    test_peermem_files();
    return check_report("test_gdr_policy");
}
