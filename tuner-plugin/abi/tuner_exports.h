/* SPDX-License-Identifier: Apache-2.0 */
/* The versioned tuner ABI tables, shared by libnccl-tuner-rail.so and libnccl-net-rail.so. */
#ifndef NCCL_RAIL_TUNER_EXPORTS_H
#define NCCL_RAIL_TUNER_EXPORTS_H

#include "nccl/nccl_tuner.h"

#define RAIL_EXPORT __attribute__((visibility("default")))

extern RAIL_EXPORT const ncclTuner_v7_t ncclTunerPlugin_v7;
extern RAIL_EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6;
extern RAIL_EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5;
extern RAIL_EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4;
extern RAIL_EXPORT const ncclTuner_v3_t ncclTunerPlugin_v3;
extern RAIL_EXPORT const ncclTuner_v2_t ncclTunerPlugin_v2;

#endif
