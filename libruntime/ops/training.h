/* SPDX-License-Identifier: MIT */
/*
 * training.h — the input layout of ai.onnx.preview.training's optimizers,
 * shared by shape inference (ops/training.c) and the CPU kernels.
 */
#ifndef ERT_OPS_TRAINING_H
#define ERT_OPS_TRAINING_H

#include <string.h>

#include "ert-op-impl.h"

/*
 * State tensors per optimized input: Adagrad H, Momentum V, Adam V and H.
 * Inputs are R, T, X[k], G[k], then each state's [k]; outputs X_new[k]
 * and each state's new [k].
 */
uint32_t ert_optim_states(enum ert_op op);

#endif /* ERT_OPS_TRAINING_H */
