/* SPDX-License-Identifier: MIT */
/*
 * Transposes folded into MatMul (docs/model-format.md, "ert.perm_a",
 * "ert.perm_b", "ert.perm_y"; ops/linalg-geom.h).
 *
 * Input side: MatMul(Transpose(x, p), B) becomes MatMul(x, B) with
 * "ert.perm_a" = p (likewise B and "ert.perm_b"); the kernels read the
 * operand through the strides of its permuted dims, which the GEMM's packers
 * take at no cost where the rows stay contiguous. The Transpose stays while
 * something else reads it (the dead-node pass removes it otherwise).
 * Output side: Transpose(MatMul(A, B), p), the product read by that
 * Transpose alone, becomes the MatMul with "ert.perm_y" = p, writing its
 * rows where the Transpose would have put them; only for a p that keeps the
 * last dim last (rows of the product stay rows).
 *
 * A ViT's attention splits heads with Reshape + Transpose before Q K^T and
 * attention x V and merges them with Transpose + Reshape after: its 48
 * Transposes of q, k, v and the merge go (docs/performance.md).
 *
 * Float32 MatMul. A folded operand's rank is that of its Transpose (2 or
 * more); a folded output needs both operands of rank 2 or more, known from
 * shape inference or from the perm of the Transpose that writes them
 * (PyTorch's exports reshape by computed shapes, which leaves ranks
 * unknown). Not where the transposed tensor is a constant (constant folding
 * transposes weights once), where the other operand is one (a linear layer:
 * see below), or where a DequantizeLinear feeds the Transpose or the MatMul
 * (a QDQ pattern the int8 fusion reads; it leaves a folded MatMul alone).
 * ert_opt_unfold_matmul_perms() gives the Transposes back for the quantizer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/linalg-geom.h"
#include "opt/opt-private.h"

/*
 * Rank of tensor @t: its own where shape inference knew it, else the length
 * of the "perm" of the Transpose that writes it (PyTorch's exports reshape
 * by computed shapes, which leaves ranks unknown here); -1 if neither.
 */
static int32_t known_rank(const struct ert_graph *g, const int32_t *producer, int32_t t)
{
	uint32_t count = 0;

	if (g->tensors[t].rank >= 0)
		return g->tensors[t].rank;
	if (producer[t] >= 0 && g->nodes[producer[t]].op == ERT_OP_Transpose &&
	    ert_attr_ints(&g->nodes[producer[t]], "perm", &count))
		return (int32_t)count;
	return -1;
}

/* The permutation of Transpose @tr (its "perm", or the reversal) for rank @rank, into @perm. */
static bool transpose_perm(const struct ert_node *tr, int32_t rank, int64_t *perm)
{
	uint32_t count = 0;
	const int64_t *p = ert_attr_ints(tr, "perm", &count);
	bool seen[ERT_MAX_RANK] = { false };

	if (rank < 2 || rank > ERT_MAX_RANK)
		return false;
	if (!ert_node_attr(tr, "perm")) {
		for (int32_t d = 0; d < rank; d++)
			perm[d] = rank - 1 - d;
		return true;
	}
	if (!p || count != (uint32_t)rank)
		return false;
	for (int32_t d = 0; d < rank; d++) {
		if (p[d] < 0 || p[d] >= rank || seen[p[d]])
			return false;
		seen[p[d]] = true;
		perm[d] = p[d];
	}
	return true;
}

static bool is_transpose(const struct ert_node *n)
{
	return !n->dead && n->op == ERT_OP_Transpose && n->n_inputs == 1 && n->n_outputs == 1 &&
	       n->inputs[0] >= 0 && n->outputs[0] >= 0;
}

/* Rank of MatMul @mm's operand @s as the product sees it (after an ert.perm_* of its own). */
static int32_t operand_rank(const struct ert_graph *g, const int32_t *producer,
			    const struct ert_node *mm, int s)
{
	uint32_t count = 0;

	if (ert_attr_ints(mm, ert_matmul_perm_attr[s], &count))
		return (int32_t)count;
	return known_rank(g, producer, mm->inputs[s]);
}

static bool f32_or_unknown(const struct ert_tensor *t)
{
	return t->dtype == ERT_DTYPE_FLOAT32 || t->dtype == ERT_DTYPE_UNDEFINED;
}

/*
 * A MatMul with no attribute @which yet, float32 where the types are known
 * (MatMul runs on float32 alone). For a folded operand (@which A or B) that
 * operand's rank is the Transpose's (2 or more) and the other's may be
 * unknown; for a folded output both ranks must be known to be 2 or more,
 * and *@ry is the product's.
 */
static bool matmul_foldable(const struct ert_graph *g, const int32_t *producer,
			    const struct ert_node *mm, int which, int32_t *ry)
{
	int32_t r[2];

	if (mm->dead || mm->op != ERT_OP_MatMul || mm->n_inputs < 2 || mm->n_outputs != 1 ||
	    mm->inputs[0] < 0 || mm->inputs[1] < 0 || mm->outputs[0] < 0 ||
	    ert_node_attr(mm, ert_matmul_perm_attr[which]))
		return false;
	for (int s = 0; s < 2; s++) {
		int32_t t = mm->inputs[s];

		r[s] = operand_rank(g, producer, mm, s);
		/* a DequantizeLinear's output: an int8 pattern (QDQ fusion) */
		if (!f32_or_unknown(&g->tensors[t]) ||
		    (producer[t] >= 0 && g->nodes[producer[t]].op == ERT_OP_DequantizeLinear))
			return false;
	}
	*ry = r[0] > r[1] ? r[0] : r[1];
	return which != ERT_MATMUL_PERM_Y || (r[0] >= 2 && r[1] >= 2);
}

static bool from_op(const struct ert_graph *g, const int32_t *producer, int32_t t, enum ert_op op)
{
	return producer[t] >= 0 && g->nodes[producer[t]].op == op;
}

ert_status ert_opt_fold_matmul_transposes(struct ert_graph *g, bool *changed,
					   struct ert_err *err)
{
	int32_t *producer = ert_opt_producers(g);
	uint32_t *uses = ert_opt_count_uses(g);
	ert_status st = ERT_OK;
	int64_t perm[ERT_MAX_RANK];

	if (!producer || !uses) {
		ert_err_set(err, "failed to fold transposes into MatMul: out of memory");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ert_node *mm = &g->nodes[i];
		int32_t ry;

		/* input side: the operand read through the Transpose's permutation */
		for (int s = 0; s < 2; s++) {
			int32_t t = mm->op == ERT_OP_MatMul && mm->n_inputs >= 2 ? mm->inputs[s] : -1;

			if (t < 0 || !matmul_foldable(g, producer, mm, s, &ry) ||
			    !from_op(g, producer, t, ERT_OP_Transpose))
				continue;
			const struct ert_node *tr = &g->nodes[producer[t]];
			int32_t x = tr->inputs[0], r = known_rank(g, producer, t);

			/*
			 * Not beside a constant operand (a linear layer's weights): there
			 * the transposed rows of A may not fold into one GEMM's M (a
			 * batch of small products instead); attention's products multiply
			 * two activations.
			 */
			/* x's rank unknown: the perm's length (the Transpose refuses another) */
			int32_t rx = known_rank(g, producer, x);

			if (!is_transpose(tr) || r < 2 || (rx >= 0 && rx != r) ||
			    (g->tensors[mm->inputs[1 - s]].flags & ERT_TENSOR_CONST) ||
			    !f32_or_unknown(&g->tensors[x]) ||
			    (g->tensors[x].flags & ERT_TENSOR_CONST) ||
			    from_op(g, producer, x, ERT_OP_DequantizeLinear) ||
			    !transpose_perm(tr, r, perm))
				continue;
			if (!ert_node_set_attr_ints(g, mm, ert_matmul_perm_attr[s], perm, (uint32_t)r)) {
				ert_err_set(err, "failed to fold '%s' into '%s': out of memory",
					    tr->name, mm->name);
				st = ERT_STATUS_OUT_OF_MEMORY;
				goto out;
			}
			mm->inputs[s] = x;
			uses[t]--;
			uses[x]++;
			*changed = true;
		}
		/* output side: a Transpose that keeps rows, the product's only reader */
		int32_t y = mm->n_outputs == 1 ? mm->outputs[0] : -1;

		if (y < 0 || !matmul_foldable(g, producer, mm, ERT_MATMUL_PERM_Y, &ry) ||
		    uses[y] != 1 || ert_opt_is_graph_output(g, y))
			continue;
		for (uint32_t j = 0; j < g->n_nodes; j++) {
			struct ert_node *tr = &g->nodes[j];

			if (!is_transpose(tr) || tr->inputs[0] != y)
				continue;
			if (!transpose_perm(tr, ry, perm) || perm[ry - 1] != ry - 1)
				break;
			if (!ert_node_set_attr_ints(g, mm, "ert.perm_y", perm, (uint32_t)ry)) {
				ert_err_set(err, "failed to fold '%s' into '%s': out of memory",
					    tr->name, mm->name);
				st = ERT_STATUS_OUT_OF_MEMORY;
				goto out;
			}
			mm->outputs[0] = tr->outputs[0];
			producer[tr->outputs[0]] = (int32_t)i;
			tr->dead = true;
			*changed = true;
			break;
		}
	}
out:
	free(producer);
	free(uses);
	return st;
}

/* Drop attribute @name of @n (the arena keeps its bytes). */
static void drop_attr(struct ert_node *n, const char *name)
{
	for (uint32_t a = 0; a < n->n_attrs; a++)
		if (!strcmp(n->attrs[a].name, name)) {
			n->attrs[a] = n->attrs[--n->n_attrs];
			return;
		}
}

/*
 * A Transpose by @perm (@rank values) from @from to a new tensor, or the
 * other way round (@to_new false: from a new tensor to @from); the new
 * tensor's index, or -1 on out-of-memory.
 */
static int32_t add_transpose(struct ert_graph *g, uint32_t host, int32_t from, bool to_new,
			     const int64_t *perm, int32_t rank)
{
	char name[160];
	int32_t t, ti, io[2];

	snprintf(name, sizeof(name), "%.120s.%s", g->tensors[from].name,
		 to_new ? "transposed" : "pre_transpose");
	t = ert_graph_add_tensor_unique(g, name, g->tensors[from].dtype, -1, NULL);
	if (t < 0)
		return -1;
	io[0] = to_new ? from : t;
	io[1] = to_new ? t : from;
	snprintf(name, sizeof(name), "%.120s.%s", g->nodes[host].name,
		 to_new ? "transpose_in" : "transpose_out");
	ti = ert_graph_add_node(g, ERT_OP_Transpose, name, 1, &io[0], 1, &io[1]);
	if (ti < 0)
		return -1;
	g->nodes[ti].opset = g->nodes[host].opset;
	if (!ert_node_set_attr_ints(g, &g->nodes[ti], "perm", perm, (uint32_t)rank))
		return -1;
	return t;
}

ert_status ert_opt_unfold_matmul_perms(struct ert_graph *g, struct ert_err *err)
{
	uint32_t n_nodes = g->n_nodes;

	for (uint32_t i = 0; i < n_nodes; i++) {
		for (int w = 0; w < ERT_MATMUL_PERMS; w++) {
			struct ert_node *mm = &g->nodes[i];
			uint32_t count = 0;
			const int64_t *p = ert_attr_ints(mm, ert_matmul_perm_attr[w], &count);
			int64_t perm[ERT_MAX_RANK];
			int32_t slot = w == ERT_MATMUL_PERM_Y ? 0 : w, t;

			if (mm->dead || mm->op != ERT_OP_MatMul || !p || count > ERT_MAX_RANK ||
			    (w == ERT_MATMUL_PERM_Y ? mm->n_outputs < 1 : mm->n_inputs < 2))
				continue;
			memcpy(perm, p, count * sizeof(*perm));
			t = add_transpose(g, i, w == ERT_MATMUL_PERM_Y ? mm->outputs[0]
								  : mm->inputs[slot],
					  w != ERT_MATMUL_PERM_Y, perm, (int32_t)count);
			if (t < 0) {
				ert_err_set(err, "failed to split the folded transposes of '%s': out of memory",
					    g->nodes[i].name);
				return ERT_STATUS_OUT_OF_MEMORY;
			}
			mm = &g->nodes[i]; /* the node array may have moved */
			if (w == ERT_MATMUL_PERM_Y)
				mm->outputs[0] = t;
			else
				mm->inputs[slot] = t;
			drop_attr(mm, ert_matmul_perm_attr[w]);
		}
	}
	return ERT_OK;
}
