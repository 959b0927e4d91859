/* SPDX-License-Identifier: MIT */
/* The pass driver: runs the clean-up passes until nothing changes. */
#include "opt/opt-private.h"

typedef ert_status (*pass_fn)(struct ert_graph *g, bool *changed, struct ert_err *err);

/*
 * Order matters within a round: shapes first (Shape folding and fusion read
 * them), folding before Conv+BN (BN parameters may be folded constants), BN
 * folding before fusion (Conv→BN→Relu fuses only once BN is gone), activation
 * fusion before QDQ fusion (a fused Relu/Clip becomes the int8 op's clamp),
 * residual and MatMul bias fusion after both (they take the Add's fused
 * activation, and must not break up an int8 pattern; the int8 residual
 * fusion, ERT_FUSE_Q8_RESIDUAL, takes the QLinearAdds the QDQ fusion made), inverted-residual
 * fusion after residual fusion (the project conv takes its residual first);
 * Transposes fold into MatMuls after constant folding (which transposes constant weights itself)
 * and QDQ fusion (a Transpose between DequantizeLinear and QuantizeLinear
 * belongs to an int8 pattern); attention fuses after that (it takes the
 * folded Transposes along, and a QDQ pattern is a QLinearMatMul by then);
 * a MatMul's scale fuses after attention fusion (which takes the Mul
 * itself), and before a bias or residual Add of the scaled product fuses,
 * a round later, so that they follow it as in the graph.
 */
static const pass_fn passes[] = {
	ert_opt_infer_shapes,
	ert_opt_fold_constants,
	ert_opt_remove_identity,
	ert_opt_fold_conv_bn,
	ert_opt_fuse_activations,
	ert_opt_fuse_qdq,
	ert_opt_fuse_residual,
	ert_opt_fuse_q8_residual_pass,
	ert_opt_fuse_matmul_bias,
	ert_opt_fuse_irblock,
	ert_opt_fold_matmul_transposes,
	ert_opt_fuse_attention,
	ert_opt_fuse_matmul_scale,
	ert_opt_remove_dead,
};

/* Each round can only shrink the graph or learn shapes; a few rounds reach the fixed point. */
#define MAX_ROUNDS 8

ert_status ert_graph_optimize(struct ert_graph *g, struct ert_err *err)
{
	ert_status st;
	bool changed = true;

	/*
	 * Nothing to do without nodes or tensors; and toposort/compact would pass
	 * NULL arrays to memcpy/memset for such graphs.
	 */
	if (!g->n_nodes || !g->n_tensors)
		return ert_graph_validate(g, err);
	st = ert_graph_toposort(g, err);

	for (int round = 0; round < MAX_ROUNDS && changed && st == ERT_OK; round++) {
		changed = false;
		for (size_t p = 0; p < sizeof(passes) / sizeof(passes[0]) && st == ERT_OK; p++)
			st = passes[p](g, &changed, err);
		/* Even after a failed pass: dead nodes must not outlive the optimiser. */
		ert_status cst = ert_graph_compact(g);

		if (cst != ERT_OK && st == ERT_OK) {
			ert_err_set(err, "failed to compact graph: out of memory");
			st = cst;
		}
		if (st == ERT_OK && g->n_nodes)
			st = ert_graph_toposort(g, err);
	}
	if (st == ERT_OK)
		st = ert_graph_validate(g, err);
	return st;
}
