/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA driver entry points through dlopen: see cuda_drv.h. The function pointer types below are
 * the driver API's C signatures with CUdevice = int, CUdeviceptr = unsigned long long (64-bit
 * builds), CUresult = int and enums passed as int (all 32-bit in the driver's C ABI). */
#include "cuda_drv.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "params.h"

_Static_assert(sizeof(unsigned long long) == 8, "CUdeviceptr is 64-bit");
_Static_assert(sizeof(uintptr_t) == 8, "the driver API needs a 64-bit build");

typedef unsigned long long cu_ptr_t;

struct cu_fns {
    int (*get_proc)(const char *sym, void **pfn, int version, unsigned long long flags);
    int (*init)(unsigned int flags);
    int (*driver_version)(int *v);
    int (*device_get)(int *dev, int ordinal);
    int (*device_count)(int *n);
    int (*device_attr)(int *v, int attr, int dev);
    int (*ptr_attr)(void *data, int attr, cu_ptr_t ptr);
    int (*addr_range)(cu_ptr_t *base, size_t *size, cu_ptr_t ptr);
    int (*range_handle)(void *handle, cu_ptr_t ptr, size_t size, int type, unsigned long long fl);
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static struct cu_fns g_cu;
static int g_rc = -ENODEV;
static int g_version, g_count;
static char g_status[320] = "CUDA driver not loaded yet";

int rail_cuda_errno(int r)
{
    switch (r) {
    case RAIL_CUDA_SUCCESS:
        return 0;
    case RAIL_CUDA_ERROR_INVALID_VALUE:
    case RAIL_CUDA_ERROR_INVALID_HANDLE:
        return -EINVAL;
    case RAIL_CUDA_ERROR_OUT_OF_MEMORY:
        return -ENOMEM;
    case RAIL_CUDA_ERROR_NOT_INITIALIZED:
    case RAIL_CUDA_ERROR_DEINITIALIZED:
        return -ENXIO;
    case RAIL_CUDA_ERROR_NO_DEVICE:
    case RAIL_CUDA_ERROR_INVALID_DEVICE:
        return -ENODEV;
    case RAIL_CUDA_ERROR_NOT_FOUND:
        return -ENOENT;
    case RAIL_CUDA_ERROR_NOT_SUPPORTED:
        return -EOPNOTSUPP;
    default:
        return -EIO;
    }
}

/* cuGetProcAddress first (it knows the ABI version we ask for), then the versioned symbol. */
static void *resolve(void *lib, const char *name, const char *dlsym_name, int version)
{
    void *fn = NULL;
    if (g_cu.get_proc && g_cu.get_proc(name, &fn, version, 0) == RAIL_CUDA_SUCCESS && fn)
        return fn;
    return dlsym(lib, dlsym_name);
}

static void load(void)
{
    const char *path = rail_param_str(RAIL_PARAM_CUDA_LIBRARY);
    void *lib;

    if (!path)
        path = "libcuda.so.1";
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(g_status, sizeof(g_status), "no CUDA driver (dlopen %s: %s)", path,
                 e ? e : "unknown error");
        g_rc = -ENODEV;
        RAIL_INFO(NCCL_INIT | NCCL_NET, "%s: GPU buffers only through nvidia-peermem", g_status);
        return;
    }
    g_cu.get_proc =
        (int (*)(const char *, void **, int, unsigned long long))dlsym(lib, "cuGetProcAddress");
    g_cu.driver_version = (int (*)(int *))dlsym(lib, "cuDriverGetVersion");
    if (g_cu.driver_version && g_cu.driver_version(&g_version) != RAIL_CUDA_SUCCESS)
        g_version = 0;
    /* Ask for the ABI of 11.7 (cuMemGetAddressRange_v2 etc.), the oldest with dma-buf export. */
    const int v = RAIL_CUDA_DMABUF_MIN_VERSION;
    g_cu.init = (int (*)(unsigned int))resolve(lib, "cuInit", "cuInit", v);
    g_cu.device_get = (int (*)(int *, int))resolve(lib, "cuDeviceGet", "cuDeviceGet", v);
    g_cu.device_count = (int (*)(int *))resolve(lib, "cuDeviceGetCount", "cuDeviceGetCount", v);
    g_cu.device_attr =
        (int (*)(int *, int, int))resolve(lib, "cuDeviceGetAttribute", "cuDeviceGetAttribute", v);
    g_cu.ptr_attr = (int (*)(void *, int, cu_ptr_t))resolve(lib, "cuPointerGetAttribute",
                                                            "cuPointerGetAttribute", v);
    g_cu.addr_range = (int (*)(cu_ptr_t *, size_t *, cu_ptr_t))resolve(
        lib, "cuMemGetAddressRange", "cuMemGetAddressRange_v2", v);
    g_cu.range_handle = (int (*)(void *, cu_ptr_t, size_t, int, unsigned long long))resolve(
        lib, "cuMemGetHandleForAddressRange", "cuMemGetHandleForAddressRange", v);
    if (!g_cu.init) {
        snprintf(g_status, sizeof(g_status), "no CUDA driver (%s has no cuInit)", path);
        g_rc = -ENODEV;
    } else {
        int r = g_cu.init(0);
        g_rc = rail_cuda_errno(r);
        if (g_rc == 0 && g_cu.device_count && g_cu.device_count(&g_count) != RAIL_CUDA_SUCCESS)
            g_count = 0;
        if (g_rc == 0)
            snprintf(g_status, sizeof(g_status), "CUDA driver %d (%s), %d device(s)", g_version,
                     path, g_count);
        else
            snprintf(g_status, sizeof(g_status), "CUDA driver %d (%s): cuInit failed with %d (%s)",
                     g_version, path, r, strerror(-g_rc));
    }
    if (g_rc < 0) {
        /* Keep the library loaded: its code may still be referenced by a pointer we resolved. */
        RAIL_INFO(NCCL_INIT | NCCL_NET, "%s: GPU buffers only through nvidia-peermem", g_status);
        return;
    }
    RAIL_INFO(NCCL_INIT | NCCL_NET, "%s%s", g_status,
              g_cu.get_proc ? "" : " (no cuGetProcAddress: symbols by name)");
}

int rail_cuda_init(void)
{
    pthread_once(&g_once, load);
    return g_rc;
}

const char *rail_cuda_status(void)
{
    rail_cuda_init();
    return g_status;
}

int rail_cuda_driver_version(int *version)
{
    int rc = rail_cuda_init();
    if (!version)
        return -EINVAL;
    *version = rc == 0 ? g_version : 0;
    return rc;
}

int rail_cuda_device_count(int *count)
{
    int rc = rail_cuda_init();
    if (!count)
        return -EINVAL;
    *count = rc == 0 ? g_count : 0;
    return rc;
}

int rail_cuda_device_attr(int dev, int attr, int *value)
{
    int rc = rail_cuda_init(), cudev = 0;
    if (!value)
        return -EINVAL;
    *value = 0;
    if (rc < 0)
        return rc;
    if (!g_cu.device_get || !g_cu.device_attr)
        return -EOPNOTSUPP;
    if (dev < 0 || dev >= g_count)
        return -ENODEV;
    rc = rail_cuda_errno(g_cu.device_get(&cudev, dev));
    if (rc == 0)
        rc = rail_cuda_errno(g_cu.device_attr(value, attr, cudev));
    return rc;
}

int rail_cuda_device_busid(int dev, char *buf, size_t len)
{
    int domain = 0, bus = 0, device = 0;
    if (!buf || len == 0)
        return -EINVAL;
    buf[0] = '\0';
    int rc = rail_cuda_device_attr(dev, RAIL_CU_ATTR_PCI_DOMAIN_ID, &domain);
    if (rc == 0)
        rc = rail_cuda_device_attr(dev, RAIL_CU_ATTR_PCI_BUS_ID, &bus);
    if (rc == 0)
        rc = rail_cuda_device_attr(dev, RAIL_CU_ATTR_PCI_DEVICE_ID, &device);
    if (rc < 0)
        return rc;
    int n = snprintf(buf, len, "%04x:%02x:%02x.0", domain, bus, device);
    return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

int rail_cuda_ptr_is_device(const void *p, bool *is_device)
{
    int rc = rail_cuda_init();
    unsigned int type = 0;
    if (!is_device)
        return -EINVAL;
    *is_device = false;
    if (rc < 0)
        return rc;
    if (!g_cu.ptr_attr)
        return -EOPNOTSUPP;
    int r = g_cu.ptr_attr(&type, RAIL_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (cu_ptr_t)(uintptr_t)p);
    if (r == RAIL_CUDA_ERROR_INVALID_VALUE)
        return 0; /* not a pointer the driver knows: host memory */
    if (r != RAIL_CUDA_SUCCESS)
        return rail_cuda_errno(r);
    *is_device = type == RAIL_CU_MEMORYTYPE_DEVICE || type == RAIL_CU_MEMORYTYPE_UNIFIED;
    return 0;
}

int rail_cuda_addr_range(const void *p, uintptr_t *base, size_t *size)
{
    int rc = rail_cuda_init();
    cu_ptr_t b = 0;
    size_t s = 0;
    if (!base || !size)
        return -EINVAL;
    *base = 0;
    *size = 0;
    if (rc < 0)
        return rc;
    if (!g_cu.addr_range)
        return -EOPNOTSUPP;
    rc = rail_cuda_errno(g_cu.addr_range(&b, &s, (cu_ptr_t)(uintptr_t)p));
    if (rc == 0) {
        *base = (uintptr_t)b;
        *size = s;
    }
    return rc;
}

int rail_cuda_dmabuf_fd(uintptr_t base, size_t size, int *fd)
{
    int rc = rail_cuda_init();
    int h = -1;
    if (!fd)
        return -EINVAL;
    *fd = -1;
    if (rc < 0)
        return rc;
    if (!g_cu.range_handle)
        return -EOPNOTSUPP;
    rc = rail_cuda_errno(
        g_cu.range_handle(&h, (cu_ptr_t)base, size, RAIL_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
    if (rc == 0 && h < 0)
        rc = -EIO;
    if (rc == 0)
        *fd = h;
    return rc;
}
