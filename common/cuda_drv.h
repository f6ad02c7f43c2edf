/* SPDX-License-Identifier: Apache-2.0 */
/* CUDA driver access without linking CUDA: libcuda is dlopen'ed on first use (once per process,
 * RTLD_NOW|RTLD_LOCAL, path from NCCL_RAIL_CUDA_LIBRARY), entry points are resolved through
 * cuGetProcAddress when the driver has it (else dlsym of the ABI-versioned names), and cuInit(0)
 * is called. Nothing here includes cuda.h: the few types and values used are declared below.
 *
 * Every function returns 0 or a negative errno. When libcuda is absent or cuInit fails, one INFO
 * line says so (once) and every call returns -ENODEV (the library is missing) or the error cuInit
 * gave; a function the driver lacks returns -EOPNOTSUPP. Thread-safe. */
#ifndef NCCL_RAIL_CUDA_DRV_H
#define NCCL_RAIL_CUDA_DRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Driver-API values this file relies on (cuda.h, CUDA 13.0; stable since they were introduced):
 *   CU_DEVICE_ATTRIBUTE_PCI_BUS_ID 33, _PCI_DEVICE_ID 34, _PCI_DOMAIN_ID 50,
 *   _COMPUTE_CAPABILITY_MAJOR 75, _COMPUTE_CAPABILITY_MINOR 76, _DMA_BUF_SUPPORTED 124;
 *   CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2; CU_MEMORYTYPE_HOST 1, _DEVICE 2, _ARRAY 3, _UNIFIED 4;
 *   CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1; CU_GET_PROC_ADDRESS_DEFAULT 0;
 *   CUDA_SUCCESS 0, CUDA_ERROR_INVALID_VALUE 1, _OUT_OF_MEMORY 2, _NOT_INITIALIZED 3,
 *   _DEINITIALIZED 4, _NO_DEVICE 100, _INVALID_DEVICE 101, _INVALID_HANDLE 400, _NOT_FOUND 500,
 *   _NOT_SUPPORTED 801. */
enum rail_cu_attr {
    RAIL_CU_ATTR_PCI_BUS_ID = 33,
    RAIL_CU_ATTR_PCI_DEVICE_ID = 34,
    RAIL_CU_ATTR_PCI_DOMAIN_ID = 50,
    RAIL_CU_ATTR_CC_MAJOR = 75,
    RAIL_CU_ATTR_CC_MINOR = 76,
    RAIL_CU_ATTR_DMA_BUF_SUPPORTED = 124,
};
enum { RAIL_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2 };
enum { RAIL_CU_MEMORYTYPE_HOST = 1, RAIL_CU_MEMORYTYPE_DEVICE = 2, RAIL_CU_MEMORYTYPE_UNIFIED = 4 };
enum { RAIL_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1 };
enum {
    RAIL_CUDA_SUCCESS = 0,
    RAIL_CUDA_ERROR_INVALID_VALUE = 1,
    RAIL_CUDA_ERROR_OUT_OF_MEMORY = 2,
    RAIL_CUDA_ERROR_NOT_INITIALIZED = 3,
    RAIL_CUDA_ERROR_DEINITIALIZED = 4,
    RAIL_CUDA_ERROR_NO_DEVICE = 100,
    RAIL_CUDA_ERROR_INVALID_DEVICE = 101,
    RAIL_CUDA_ERROR_INVALID_HANDLE = 400,
    RAIL_CUDA_ERROR_NOT_FOUND = 500,
    RAIL_CUDA_ERROR_NOT_SUPPORTED = 801,
};
/* The driver version that introduced cuMemGetHandleForAddressRange (dma-buf export). */
#define RAIL_CUDA_DMABUF_MIN_VERSION 11070

/* Loads the driver (first call only). 0 when usable; -ENODEV when libcuda cannot be loaded or
 * lacks cuInit; cuInit's error mapped to errno otherwise. */
int rail_cuda_init(void);
/* One line on the driver's state: "libcuda.so.1, driver 12040, 8 device(s)" or why it is absent. */
const char *rail_cuda_status(void);
/* CUresult -> negative errno (0 for success). */
int rail_cuda_errno(int curesult);

int rail_cuda_driver_version(int *version);
int rail_cuda_device_count(int *count);
/* Attribute of device ordinal dev (enum rail_cu_attr). */
int rail_cuda_device_attr(int dev, int attr, int *value);
/* PCI address of device ordinal dev as NCCL and sysfs write it: "0000:4e:00.0" (function 0). */
int rail_cuda_device_busid(int dev, char *buf, size_t len);

/* 0 and *is_device=true for device (or unified) memory of the driver; 0 and false for memory
 * the driver does not know (plain host memory) or host memory it allocated. */
int rail_cuda_ptr_is_device(const void *p, bool *is_device);
/* The allocation holding p. */
int rail_cuda_addr_range(const void *p, uintptr_t *base, size_t *size);
/* A dma-buf file descriptor for [base, base+size) (page-aligned, inside one allocation): the
 * caller closes it. -EOPNOTSUPP when the driver or the device cannot export dma-bufs. */
int rail_cuda_dmabuf_fd(uintptr_t base, size_t size, int *fd);

#endif
