/* SPDX-License-Identifier: MIT */
/*
 * passes.h — graph clean-up after import: constant folding (including the
 * Shape→Gather→Unsqueeze→Concat→Reshape chains PyTorch exports), Conv+BatchNorm
 * folding, activation fusion, QDQ fusion into int8 ops (docs/int8.md),
 * Identity/Dropout removal, dead-node removal.
 */
#ifndef ERT_PASSES_H
#define ERT_PASSES_H

#include "ert-op-impl.h"

/* Run every pass to a fixed point. The graph stays valid on failure. */
ert_status ert_graph_optimize(struct ert_graph *g, struct ert_err *err);

/*
 * Undo residual fusion (a Conv with "ert.residual" becomes the Conv and an
 * Add again, the Add taking the Conv's activation; likewise a MatMul with
 * "ert.bias"; and the Transposes folded into a MatMul, "ert.perm_a",
 * "ert.perm_b", "ert.perm_y", become Transpose nodes again), and activation fusion
 * for the activations an int8 op cannot clamp to (LeakyRelu, Sigmoid,
 * HardSwish, HardSigmoid, Tanh): each becomes its own node again after its
 * host, which writes a new tensor. For the quantizer, which needs the
 * Conv's own output and whose int8 form of those activations is a table
 * lookup of their own. A FusedAttention (opt/fuse-attention.c) becomes its
 * MatMul, Mul by the scale, Softmax and MatMul again first.
 */
ert_status ert_opt_unfuse_activations(struct ert_graph *g, struct ert_err *err);
/*
 * Each InvertedResidual (opt/fuse-irblock.c) as its two or three Convs again:
 * for the quantizer, and for a session with a GPU backend
 * (only the CPU runs the fused op; ert_model_unfused_irblock()).
 */
ert_status ert_opt_unfuse_irblock(struct ert_graph *g, struct ert_err *err);

/*
 * The int8 residual fusion (a fixed-rule QLinearAdd folded into the
 * QLinearConv before it, "ert.residual"), which ert_graph_optimize() runs
 * only with ERT_FUSE_Q8_RESIDUAL=1 in the environment (opt-private.h):
 * supported by the loader, the CPU and the NPU, but measured slower than the
 * two ops before the conv epilogue's 32-bit Add (fuse-residual.c,
 * docs/int8.md). This runs it whatever the switch, then the optimiser's
 * passes. Sets *changed when it fused.
 */
ert_status ert_opt_fuse_q8_residual(struct ert_graph *g, bool *changed, struct ert_err *err);

/*
 * Elementwise float ops whose value depends on the element alone (Sigmoid,
 * Tanh, HardSwish, LeakyRelu, ...): between a DequantizeLinear and a
 * QuantizeLinear, the QDQ fusion makes them a 256-entry QLinearLookup.
 */
bool ert_opt_table_op(enum ert_op op);

#endif
