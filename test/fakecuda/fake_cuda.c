/* SPDX-License-Identifier: Apache-2.0 */
/* Fake CUDA driver (tests only): the few driver entry points the net plugin resolves, plus
 * cuMemAlloc_v2 / cuMemFree_v2 for the tests. "Device memory" is page-aligned host memory the
 * fake remembers; cuPointerGetAttribute calls it DEVICE memory. Behaviour from the environment:
 *   RAIL_FAKE_CUDA_CC=M.m        compute capability of every device (default 9.0)
 *   RAIL_FAKE_CUDA_NDEV=n        device count (default 1)
 *   RAIL_FAKE_CUDA_VERSION=v     cuDriverGetVersion (default 12040)
 *   RAIL_FAKE_CUDA_DMABUF=0|1    DMA_BUF_SUPPORTED and cuMemGetHandleForAddressRange (default 1:
 *                                the handle is a memfd, not a real dma-buf)
 *   RAIL_FAKE_CUDA_INIT_FAIL=1   cuInit returns CUDA_ERROR_NO_DEVICE
 *   RAIL_FAKE_CUDA_NO_GETPROC=1  cuGetProcAddress finds nothing (callers fall back to dlsym)
 * Values are CUDA's (see common/cuda_drv.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

enum {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    NOT_FOUND = 500,
    NOT_SUPPORTED = 801,
};

#define MAX_ALLOCS 256

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    unsigned long long base;
    size_t size;
} g_allocs[MAX_ALLOCS];
static int g_init;

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

static void env_cc(int *major, int *minor)
{
    const char *v = getenv("RAIL_FAKE_CUDA_CC");
    *major = 9;
    *minor = 0;
    if (v && *v && sscanf(v, "%d.%d", major, minor) < 1)
        *major = 9;
}

API int cuDriverGetVersion(int *v)
{
    if (!v)
        return INVALID_VALUE;
    *v = env_int("RAIL_FAKE_CUDA_VERSION", 12040);
    return OK;
}

API int cuInit(unsigned int flags)
{
    if (flags != 0)
        return INVALID_VALUE;
    if (env_int("RAIL_FAKE_CUDA_INIT_FAIL", 0))
        return NO_DEVICE;
    g_init = 1;
    return OK;
}

API int cuDeviceGetCount(int *n)
{
    if (!g_init)
        return NOT_INITIALIZED;
    if (!n)
        return INVALID_VALUE;
    *n = env_int("RAIL_FAKE_CUDA_NDEV", 1);
    return OK;
}

API int cuDeviceGet(int *dev, int ordinal)
{
    if (!g_init)
        return NOT_INITIALIZED;
    if (!dev || ordinal < 0 || ordinal >= env_int("RAIL_FAKE_CUDA_NDEV", 1))
        return INVALID_DEVICE;
    *dev = ordinal;
    return OK;
}

API int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    int major, minor;
    if (!g_init)
        return NOT_INITIALIZED;
    if (!v)
        return INVALID_VALUE;
    if (dev < 0 || dev >= env_int("RAIL_FAKE_CUDA_NDEV", 1))
        return INVALID_DEVICE;
    env_cc(&major, &minor);
    switch (attr) {
    case 33: /* PCI bus */
        *v = 0x10 + dev;
        return OK;
    case 34: /* PCI device */
    case 50: /* PCI domain */
        *v = 0;
        return OK;
    case 75:
        *v = major;
        return OK;
    case 76:
        *v = minor;
        return OK;
    case 124: /* DMA_BUF_SUPPORTED */
        *v = env_int("RAIL_FAKE_CUDA_DMABUF", 1) ? 1 : 0;
        return OK;
    default:
        return INVALID_VALUE;
    }
}

/* Index of the allocation holding p, -1 if none. Called with g_lock held. */
static int find(unsigned long long p)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (g_allocs[i].size && p >= g_allocs[i].base && p < g_allocs[i].base + g_allocs[i].size)
            return i;
    return -1;
}

API int cuMemAlloc_v2(unsigned long long *dptr, size_t size)
{
    if (!g_init)
        return NOT_INITIALIZED;
    if (!dptr || size == 0)
        return INVALID_VALUE;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (size + page - 1) / page * page;
    void *p = aligned_alloc(page, len);
    if (!p)
        return OUT_OF_MEMORY;
    memset(p, 0, len);
    pthread_mutex_lock(&g_lock);
    int slot = -1;
    for (int i = 0; i < MAX_ALLOCS && slot < 0; i++)
        if (!g_allocs[i].size)
            slot = i;
    if (slot >= 0) {
        g_allocs[slot].base = (unsigned long long)(uintptr_t)p;
        g_allocs[slot].size = len;
    }
    pthread_mutex_unlock(&g_lock);
    if (slot < 0) {
        free(p);
        return OUT_OF_MEMORY;
    }
    *dptr = (unsigned long long)(uintptr_t)p;
    return OK;
}

API int cuMemFree_v2(unsigned long long dptr)
{
    pthread_mutex_lock(&g_lock);
    int i = find(dptr);
    if (i >= 0 && g_allocs[i].base == dptr)
        g_allocs[i].size = 0;
    else
        i = -1;
    pthread_mutex_unlock(&g_lock);
    if (i < 0)
        return INVALID_VALUE;
    free((void *)(uintptr_t)dptr);
    return OK;
}

API int cuPointerGetAttribute(void *data, int attr, unsigned long long ptr)
{
    if (!g_init)
        return NOT_INITIALIZED;
    if (!data || attr != 2 /* MEMORY_TYPE */)
        return INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    int i = find(ptr);
    pthread_mutex_unlock(&g_lock);
    if (i < 0)
        return INVALID_VALUE;  /* like the driver for memory it does not know */
    *(unsigned int *)data = 2; /* CU_MEMORYTYPE_DEVICE */
    return OK;
}

API int cuMemGetAddressRange_v2(unsigned long long *base, size_t *size, unsigned long long ptr)
{
    if (!g_init)
        return NOT_INITIALIZED;
    pthread_mutex_lock(&g_lock);
    int i = find(ptr);
    if (i >= 0) {
        if (base)
            *base = g_allocs[i].base;
        if (size)
            *size = g_allocs[i].size;
    }
    pthread_mutex_unlock(&g_lock);
    return i < 0 ? NOT_FOUND : OK;
}

API int cuMemGetHandleForAddressRange(void *handle, unsigned long long ptr, size_t size, int type,
                                      unsigned long long flags)
{
    if (!g_init)
        return NOT_INITIALIZED;
    if (!env_int("RAIL_FAKE_CUDA_DMABUF", 1))
        return NOT_SUPPORTED;
    if (!handle || type != 1 || flags != 0 || size == 0)
        return INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    int i = find(ptr);
    int inside = i >= 0 && ptr + size <= g_allocs[i].base + g_allocs[i].size;
    pthread_mutex_unlock(&g_lock);
    if (!inside)
        return INVALID_VALUE;
    int fd = memfd_create("fake-cuda-dmabuf", MFD_CLOEXEC);
    if (fd < 0)
        return OUT_OF_MEMORY;
    *(int *)handle = fd;
    return OK;
}

static const struct {
    const char *name;
    void *fn;
} k_table[] = {
    {"cuDriverGetVersion", (void *)cuDriverGetVersion},
    {"cuInit", (void *)cuInit},
    {"cuDeviceGetCount", (void *)cuDeviceGetCount},
    {"cuDeviceGet", (void *)cuDeviceGet},
    {"cuDeviceGetAttribute", (void *)cuDeviceGetAttribute},
    {"cuMemAlloc", (void *)cuMemAlloc_v2},
    {"cuMemFree", (void *)cuMemFree_v2},
    {"cuPointerGetAttribute", (void *)cuPointerGetAttribute},
    {"cuMemGetAddressRange", (void *)cuMemGetAddressRange_v2},
    {"cuMemGetHandleForAddressRange", (void *)cuMemGetHandleForAddressRange},
};

/* The CUDA 11.3 (4-argument) ABI of cuGetProcAddress. */
API int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
    (void)flags;
    if (!symbol || !pfn)
        return INVALID_VALUE;
    *pfn = NULL;
    if (env_int("RAIL_FAKE_CUDA_NO_GETPROC", 0))
        return NOT_FOUND;
    if (!strcmp(symbol, "cuMemGetHandleForAddressRange") && version < 11070)
        return NOT_FOUND;
    for (size_t i = 0; i < sizeof(k_table) / sizeof(k_table[0]); i++) {
        if (!strcmp(symbol, k_table[i].name)) {
            *pfn = k_table[i].fn;
            return OK;
        }
    }
    return NOT_FOUND;
}
