/* SPDX-License-Identifier: MIT */
/*
 * opt-private.h — the passes behind ert_graph_optimize() and their helpers.
 *
 * Each pass walks the (topologically sorted) graph once, marks replaced nodes
 * dead and sets *changed when it rewrote anything. Passes allocate everything a
 * rewrite needs before touching the graph, so a failure leaves it valid.
 */
#ifndef ERT_OPT_PRIVATE_H
#define ERT_OPT_PRIVATE_H

#include "opt/passes.h"

/* Folded outputs above this many bytes are kept only when folding does not grow the model. */
#define ERT_OPT_FOLD_MAX_BYTES ((size_t)4 << 20)
/* Heavy ops (matmul, convolution, pooling) fold only below this many multiply-adds. */
#define ERT_OPT_FOLD_MAX_WORK ((int64_t)1 << 26)

ert_status ert_opt_infer_shapes(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_fold_constants(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_remove_identity(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_fold_conv_bn(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_fuse_activations(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_fuse_qdq(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_fuse_residual(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_fuse_matmul_bias(struct ert_graph *g, bool *changed, struct ert_err *err);
/*
 * Mul(MatMul(A, B), constant scalar) as the MatMul's "ert.scale"
 * (fuse-residual.c); ERT_FUSE_MATMUL_SCALE=0 in the environment turns it off,
 * as ERT_FUSE_MATMUL_RESIDUAL=0 does the residual fusion of MatMuls.
 */
ert_status ert_opt_fuse_matmul_scale(struct ert_graph *g, bool *changed, struct ert_err *err);
/*
 * The int8 residual fusion as one of the optimiser's passes (fuse-residual.c):
 * ERT_FUSE_Q8_RESIDUAL=0 / 1 in the environment, else
 * ERT_OPT_Q8_RESIDUAL_DEFAULT: off, as on Sapphire Rapids the conv
 * epilogue's fused Add was measured slower than the two ops (docs/int8.md).
 */
#define ERT_OPT_Q8_RESIDUAL_DEFAULT false
ert_status ert_opt_fuse_q8_residual_pass(struct ert_graph *g, bool *changed,
					 struct ert_err *err);
/*
 * Conv 1x1 -> depthwise Conv 3x3 -> Conv 1x1 as one InvertedResidual
 * (fuse-irblock.c): ERT_FUSE_IRBLOCK=0 / 1 in the environment, else
 * ERT_OPT_IRBLOCK_DEFAULT: on, since the band GEMMs read B in place and only
 * blocks over ERT_OPT_IRBLOCK_MIN_BYTES fuse (docs/cpu-kernels.md,
 * docs/performance-mobilenet.md: mobilenet_v2 faster at 1 and 2 threads on Sapphire
 * Rapids, the same bits). A session with a device backend plans the Convs
 * instead (ert_model_unfused_irblock()), and the quantizer unfuses them.
 */
#define ERT_OPT_IRBLOCK_DEFAULT true
/*
 * The smallest expanded tensor (the depthwise conv's input, bytes an image)
 * of a block the pass fuses: all of mobilenet_v2's blocks whose planes take
 * the band (its 112x112 to 14x14 ones, 0.3 to 4.8 MB; the 7x7 ones are left
 * to the small-plane GEMM by the plane rule). Until the band kept to a
 * thread's share of the rows and each thread its own rows (cpu/conv/
 * irblock.c), the 28x28 and 14x14 blocks stayed out (1 MiB): at 2 threads a
 * 14x14 block ran on one thread. Measured since on the Sapphire Rapids VM
 * (2 MiB L2; mobilenet_v2, per-op minima of 200 runs, alternated): fused,
 * they take 0.85-0.95x the three Convs at 2 threads, 0.98-1.02x at 1
 * (docs/performance-mobilenet.md, "mobilenet_v2 at two threads: each block's
 * rows on one thread"). Below 256 KiB nothing was measured.
 */
#define ERT_OPT_IRBLOCK_MIN_BYTES (256 << 10)
ert_status ert_opt_fuse_irblock(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_fold_matmul_transposes(struct ert_graph *g, bool *changed,
					   struct ert_err *err);
/* Give the Transposes folded into MatMuls back (for the quantizer; fold-transpose.c). */
ert_status ert_opt_unfold_matmul_perms(struct ert_graph *g, struct ert_err *err);
ert_status ert_opt_remove_dead(struct ert_graph *g, bool *changed, struct ert_err *err);
/*
 * MatMul -> scale -> Softmax -> MatMul as one FusedAttention (fuse-attention.c),
 * switched by ERT_FUSE_ATTENTION; ert_opt_unfuse_attention() undoes it.
 */
ert_status ert_opt_fuse_attention(struct ert_graph *g, bool *changed, struct ert_err *err);
ert_status ert_opt_unfuse_attention(struct ert_graph *g, struct ert_err *err);
/*
 * Whether the pass runs without ERT_FUSE_ATTENTION in the environment: off,
 * as on Sapphire Rapids it gained only 2-3 % at 1 thread (docs/cpu-kernels.md)
 * and it puts the attention of a GPU run on the CPU.
 */
#define ERT_OPT_ATTENTION_DEFAULT false

/*
 * An optional pass's switch: the environment variable @name set to "0" is
 * off, to anything else non-empty on; unset or empty, @dflt.
 */
bool ert_opt_env_switch(const char *name, bool dflt);

/* Per tensor: live node inputs plus graph outputs reading it (malloc'd; NULL on OOM). */
uint32_t *ert_opt_count_uses(const struct ert_graph *g);
/* Per tensor: index of the live node producing it, or -1 (malloc'd; NULL on OOM). */
int32_t *ert_opt_producers(const struct ert_graph *g);
/* Make every live node input that reads @from read @to instead. */
void ert_opt_replace_uses(struct ert_graph *g, int32_t from, int32_t to);
bool ert_opt_is_graph_output(const struct ert_graph *g, int32_t t);
/* Rank and every dimension known. */
bool ert_opt_shape_static(const struct ert_tensor *t);
/* Describe tensor @t as a value (data only for constants). */
void ert_opt_tensor_value(const struct ert_graph *g, int32_t t, struct ert_value *v);
/* Constant float32 tensor @t with @numel elements, or NULL. */
const float *ert_opt_const_f32(const struct ert_graph *g, int32_t t, int64_t numel);
/* Add an owned constant (takes @data, frees it on failure); -1 on out-of-memory. */
int32_t ert_opt_add_const(struct ert_graph *g, const char *hint, ert_dtype dt, int32_t rank,
			  const int64_t *dims, void *data, size_t nbytes);
/* Set a FLOATS attribute (copied into the arena). */
bool ert_opt_set_attr_floats(struct ert_graph *g, struct ert_node *n, const char *name,
			     const float *v, uint32_t count);

#endif
