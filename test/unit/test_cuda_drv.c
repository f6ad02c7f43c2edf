/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA driver access (common/cuda_drv.c) against the fake libcuda (test/fakecuda): absent library,
 * a library without cuInit, cuInit failing, attributes and pointers through cuGetProcAddress and
 * through dlsym, dma-buf handles on and off. Loading happens once per process, so every case runs
 * in a forked child with its own environment. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cuda_drv.h"

#define FAKE RAIL_BINARY_DIR "/test/fakecuda/libcuda.so.1"

typedef int (*mem_alloc_fn)(unsigned long long *, size_t);
typedef int (*mem_free_fn)(unsigned long long);

/* Runs fn in a child with the given NAME=VALUE settings (NULL-terminated); the child's CHECK
 * counts come back through a pipe and add to this process's. */
static void in_child(const char *what, void (*fn)(void), const char *const *env)
{
    int fds[2], counts[2] = {0, 0};
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        g_checks_passed = g_checks_failed = 0;
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        fn();
        fflush(NULL);
        int out[2] = {g_checks_passed, g_checks_failed};
        _exit(write(fds[1], out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 1);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], counts, sizeof(counts));
    close(fds[0]);
    int st = 0;
    CHECK_MSG(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
                  got == (ssize_t)sizeof(counts),
              "case '%s' did not finish (status %#x)", what, st);
    g_checks_passed += counts[0];
    g_checks_failed += counts[1];
    if (counts[1])
        fprintf(stderr, "case '%s': %d check(s) failed\n", what, counts[1]);
}

static void absent(void)
{
    int v = 7;
    bool dev = true;
    uintptr_t base = 1;
    size_t size = 1;
    int fd = 5;
    CHECK_EQ_INT(rail_cuda_init(), -ENODEV);
    CHECK_EQ_INT(rail_cuda_init(), -ENODEV); /* once: same answer */
    CHECK(strstr(rail_cuda_status(), "no CUDA driver (dlopen /nonexistent/libcuda.so.1") != NULL);
    CHECK_EQ_INT(rail_cuda_driver_version(&v), -ENODEV);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(rail_cuda_device_count(&v), -ENODEV);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(rail_cuda_device_attr(0, RAIL_CU_ATTR_CC_MAJOR, &v), -ENODEV);
    char busid[16] = "x";
    CHECK_EQ_INT(rail_cuda_device_busid(0, busid, sizeof(busid)), -ENODEV);
    CHECK_EQ_STR(busid, "");
    CHECK_EQ_INT(rail_cuda_ptr_is_device(&v, &dev), -ENODEV);
    CHECK(!dev);
    CHECK_EQ_INT(rail_cuda_addr_range(&v, &base, &size), -ENODEV);
    CHECK(base == 0 && size == 0);
    CHECK_EQ_INT(rail_cuda_dmabuf_fd(4096, 4096, &fd), -ENODEV);
    CHECK_EQ_INT(fd, -1);
    CHECK_EQ_INT(rail_cuda_device_count(NULL), -EINVAL);
}

static void no_cuinit(void)
{
    CHECK_EQ_INT(rail_cuda_init(), -ENODEV);
    CHECK(strstr(rail_cuda_status(), "has no cuInit") != NULL);
}

static void init_fails(void)
{
    int n = 3;
    CHECK_EQ_INT(rail_cuda_init(), -ENODEV);
    CHECK(strstr(rail_cuda_status(), "cuInit failed with 100") != NULL);
    CHECK_EQ_INT(rail_cuda_device_count(&n), -ENODEV);
    CHECK_EQ_INT(n, 0);
}

/* Attributes, pointer queries and a dma-buf fd with the fake's defaults (CC 9.0, dma-buf on). */
static void present(void)
{
    int v = 0, n = 0;
    CHECK_EQ_INT(rail_cuda_init(), 0);
    CHECK(strstr(rail_cuda_status(), "CUDA driver 12040") != NULL);
    CHECK_EQ_INT(rail_cuda_driver_version(&v), 0);
    CHECK_EQ_INT(v, 12040);
    CHECK_EQ_INT(rail_cuda_device_count(&n), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(rail_cuda_device_attr(0, RAIL_CU_ATTR_CC_MAJOR, &v), 0);
    CHECK_EQ_INT(v, 9);
    CHECK_EQ_INT(rail_cuda_device_attr(1, RAIL_CU_ATTR_DMA_BUF_SUPPORTED, &v), 0);
    CHECK_EQ_INT(v, 1);
    CHECK_EQ_INT(rail_cuda_device_attr(1, RAIL_CU_ATTR_PCI_BUS_ID, &v), 0);
    CHECK_EQ_INT(v, 0x11);
    CHECK_EQ_INT(rail_cuda_device_attr(2, RAIL_CU_ATTR_CC_MAJOR, &v), -ENODEV);
    char busid[16];
    CHECK_EQ_INT(rail_cuda_device_busid(1, busid, sizeof(busid)), 0);
    CHECK_EQ_STR(busid, "0000:11:00.0");
    CHECK_EQ_INT(rail_cuda_device_busid(1, busid, 5), -ENAMETOOLONG);
    CHECK_EQ_INT(rail_cuda_device_busid(3, busid, sizeof(busid)), -ENODEV);
    CHECK_EQ_INT(rail_cuda_device_attr(0, 9999, &v), -EINVAL);

    void *lib = dlopen(FAKE, RTLD_NOW | RTLD_NOLOAD);
    CHECK_MSG(lib != NULL, "the fake is not the library cuda_drv loaded");
    if (!lib)
        return;
    mem_alloc_fn alloc = (mem_alloc_fn)dlsym(lib, "cuMemAlloc_v2");
    mem_free_fn release = (mem_free_fn)dlsym(lib, "cuMemFree_v2");
    unsigned long long d = 0;
    CHECK(alloc && release && alloc(&d, 100000) == 0 && d != 0);
    bool is_dev = false;
    CHECK_EQ_INT(rail_cuda_ptr_is_device((void *)(uintptr_t)(d + 5000), &is_dev), 0);
    CHECK(is_dev);
    char host[64];
    is_dev = true;
    CHECK_EQ_INT(rail_cuda_ptr_is_device(host, &is_dev), 0);
    CHECK(!is_dev);
    uintptr_t base = 0;
    size_t size = 0;
    CHECK_EQ_INT(rail_cuda_addr_range((void *)(uintptr_t)(d + 5000), &base, &size), 0);
    CHECK(base == d);
    CHECK(size >= 100000 && size % 4096 == 0);
    CHECK_EQ_INT(rail_cuda_addr_range(host, &base, &size), -ENOENT);
    int fd = -1;
    CHECK_EQ_INT(rail_cuda_dmabuf_fd((uintptr_t)d, 4096, &fd), 0);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK_EQ_INT(rail_cuda_dmabuf_fd((uintptr_t)host, 4096, &fd), -EINVAL);
    CHECK_EQ_INT(fd, -1);
    CHECK_EQ_INT(rail_cuda_dmabuf_fd((uintptr_t)d, 4096, NULL), -EINVAL);
    CHECK_EQ_INT(release(d), 0);
    CHECK_EQ_INT(rail_cuda_ptr_is_device((void *)(uintptr_t)d, &is_dev), 0);
    CHECK(!is_dev);
}

/* Ampere, dma-buf off, and no cuGetProcAddress: every entry point by its versioned name. */
static void dlsym_no_dmabuf(void)
{
    int v = 0;
    CHECK_EQ_INT(rail_cuda_init(), 0);
    CHECK_EQ_INT(rail_cuda_device_attr(0, RAIL_CU_ATTR_CC_MAJOR, &v), 0);
    CHECK_EQ_INT(v, 8);
    CHECK_EQ_INT(rail_cuda_device_attr(0, RAIL_CU_ATTR_CC_MINOR, &v), 0);
    CHECK_EQ_INT(v, 6);
    CHECK_EQ_INT(rail_cuda_device_attr(0, RAIL_CU_ATTR_DMA_BUF_SUPPORTED, &v), 0);
    CHECK_EQ_INT(v, 0);
    void *lib = dlopen(FAKE, RTLD_NOW | RTLD_NOLOAD);
    mem_alloc_fn alloc = lib ? (mem_alloc_fn)dlsym(lib, "cuMemAlloc_v2") : NULL;
    unsigned long long d = 0;
    CHECK(alloc && alloc(&d, 8192) == 0);
    uintptr_t base = 0;
    size_t size = 0;
    CHECK_EQ_INT(rail_cuda_addr_range((void *)(uintptr_t)(d + 1), &base, &size), 0);
    CHECK(base == d && size == 8192);
    int fd = 0;
    CHECK_EQ_INT(rail_cuda_dmabuf_fd((uintptr_t)d, 4096, &fd), -EOPNOTSUPP);
    CHECK_EQ_INT(fd, -1);
}

static void test_errno_map(void)
{
    CHECK_EQ_INT(rail_cuda_errno(RAIL_CUDA_SUCCESS), 0);
    CHECK_EQ_INT(rail_cuda_errno(RAIL_CUDA_ERROR_INVALID_VALUE), -EINVAL);
    CHECK_EQ_INT(rail_cuda_errno(RAIL_CUDA_ERROR_OUT_OF_MEMORY), -ENOMEM);
    CHECK_EQ_INT(rail_cuda_errno(RAIL_CUDA_ERROR_NOT_INITIALIZED), -ENXIO);
    CHECK_EQ_INT(rail_cuda_errno(RAIL_CUDA_ERROR_NO_DEVICE), -ENODEV);
    CHECK_EQ_INT(rail_cuda_errno(RAIL_CUDA_ERROR_NOT_FOUND), -ENOENT);
    CHECK_EQ_INT(rail_cuda_errno(RAIL_CUDA_ERROR_NOT_SUPPORTED), -EOPNOTSUPP);
    CHECK_EQ_INT(rail_cuda_errno(999), -EIO);
}

int main(void)
{
    static const char *const env_absent[] = {"NCCL_RAIL_CUDA_LIBRARY=/nonexistent/libcuda.so.1",
                                             NULL};
    static const char *const env_libc[] = {"NCCL_RAIL_CUDA_LIBRARY=libc.so.6", NULL};
    static const char *const env_fail[] = {"NCCL_RAIL_CUDA_LIBRARY=" FAKE,
                                           "RAIL_FAKE_CUDA_INIT_FAIL=1", NULL};
    static const char *const env_fake[] = {"NCCL_RAIL_CUDA_LIBRARY=" FAKE, "RAIL_FAKE_CUDA_NDEV=2",
                                           NULL};
    static const char *const env_dlsym[] = {"NCCL_RAIL_CUDA_LIBRARY=" FAKE,
                                            "RAIL_FAKE_CUDA_NO_GETPROC=1", "RAIL_FAKE_CUDA_CC=8.6",
                                            "RAIL_FAKE_CUDA_DMABUF=0", NULL};
    test_errno_map();
    in_child("absent", absent, env_absent);
    in_child("no cuInit", no_cuinit, env_libc);
    in_child("cuInit fails", init_fails, env_fail);
    in_child("present", present, env_fake);
    in_child("dlsym, no dma-buf", dlsym_no_dmabuf, env_dlsym);
    return check_report("test_cuda_drv");
}
