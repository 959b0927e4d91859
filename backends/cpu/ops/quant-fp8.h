/* SPDX-License-Identifier: MIT */
/*
 * quant-fp8.h — float8 encodings of ONNX (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) for
 * QuantizeLinear / DequantizeLinear. Encoding rounds to nearest even; with
 * @saturate, out-of-range values and infinities clamp to the largest finite
 * value, otherwise they become NaN (or infinity for E5M2), as ONNX defines.
 */
#ifndef ERT_CPU_QUANT_FP8_H
#define ERT_CPU_QUANT_FP8_H

#include <stdbool.h>
#include <stdint.h>

#include "edgert.h"

float ert_q_fp8_to_f32(uint8_t b, ert_dtype dt);
uint8_t ert_q_f32_to_fp8(float f, ert_dtype dt, bool saturate);

#endif /* ERT_CPU_QUANT_FP8_H */
