/* SPDX-License-Identifier: Apache-2.0 */
/* The one place where internal -errno results become ncclResult_t. */
#ifndef NCCL_RAIL_RESULT_H
#define NCCL_RAIL_RESULT_H

#include "nccl/nccl_common.h"

ncclResult_t rail_result(int rc);

#endif
