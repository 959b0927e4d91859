/* SPDX-License-Identifier: MIT */
/*
 * Conv, Gemm and MatMul on float32, as the GPU backends run them. Everything
 * but depthwise convolution is one tiled GEMM: Gemm and MatMul with their
 * transposes as strides and their batches as a table of offsets, dense and
 * grouped convolutions as an implicit GEMM per image and group (1x1
 * convolutions of stride 1 as a plain one). Fused activations ("ert.act"),
 * Conv's residual ("ert.residual", input 3), bias, Gemm's C and MatMul's
 * fused bias ("ert.bias", input 2), residual ("ert.residual", input 3) and
 * scale ("ert.scale", as alpha) are applied in its epilogue.
 */
#include <stdlib.h>

#include "gpu-common/gpu-ops-impl.h"
#include "ops/linalg-geom.h"

static int32_t *table_alloc(size_t batches, const struct ert_node *n, struct ert_err *err)
{
	int32_t *t = calloc(batches ? 4 * batches : 4, sizeof(*t));

	if (!t)
		ert_node_fail(n, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory while preparing");
	return t;
}

void ert_gpu_gemm_free(struct ert_gpu_gemm *g)
{
	free(g->boff);
	g->boff = NULL;
}

uint32_t ert_gpu_gemm_inputs(const struct ert_gpu_gemm *g, uint32_t *in)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < 4; k++)
		if (k == g->a_in || k == g->b_in || (int32_t)k == g->bias_in ||
		    (int32_t)k == g->res_in)
			in[n++] = k;
	return n;
}

/* ---- Conv ---- */

/* Geometry of a 1-D or 2-D Conv; false for other ranks or bad attributes. */
static bool conv_geom(const struct ert_exec *x, struct ert_conv_geom *g)
{
	const struct ert_value *in = x->in[0], *w = x->in[1];
	struct ert_err err;

	if (in->rank < 3 || in->rank > 4 || w->rank != in->rank)
		return false;
	return ert_geom_conv(x->node, in->rank - 2, in->dims + 2, w->dims + 2, false, g, &err) ==
	       ERT_OK && g->nsp <= 2;
}

static ert_status conv_geom_or_fail(const struct ert_exec *x, struct ert_conv_geom *g,
				    struct ert_err *err)
{
	if (conv_geom(x, g))
		return ERT_OK;
	return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "unsupported geometry");
}

bool ert_gpu_conv_supports(const struct ert_exec *x)
{
	const struct ert_value *r = ert_gpu_opt_in(x, 3);
	struct ert_conv_geom g;
	int64_t group = ert_attr_int(x->node, "group", 1);

	if (x->n_in < 2 || !ert_gpu_is_f32(x->in[0]) || !ert_gpu_is_f32(x->in[1]) ||
	    !ert_gpu_all_f32(x, 4) || x->n_out != 1 || !conv_geom(x, &g))
		return false;
	if (group < 1 || x->in[0]->dims[1] % group || x->in[1]->dims[0] % group)
		return false;
	return !r || r->numel == x->out[0]->numel;
}

bool ert_gpu_conv_is_dw(const struct ert_exec *x)
{
	return x->in[1]->dims[1] == 1;
}

ert_status ert_gpu_conv_dw_plan(const struct ert_exec *x, struct ert_gpu_conv_dw *d,
				struct ert_err *err)
{
	const struct ert_value *xv = x->in[0];
	int64_t oc = x->in[1]->dims[0], c = xv->dims[1];
	struct ert_conv_geom g;
	ert_status s = conv_geom_or_fail(x, &g, err);

	if (s != ERT_OK)
		return s;
	*d = (struct ert_gpu_conv_dw){
		.n = x->out[0]->numel,
		.geo = { g.in[1], g.in[2], g.k[1], g.k[2], g.stride[1], g.stride[2], g.pad_b[1],
			 g.pad_b[2] },
		.geob = { g.dil[1], g.dil[2], g.out[1], g.out[2], c, oc, oc / c, xv->dims[0] },
		.has_bias = ert_gpu_opt_in(x, 2) != NULL,
		.has_res = ert_gpu_opt_in(x, 3) != NULL,
		.act = ert_node_act(x->node),
	};
	return ERT_OK;
}

static ert_status conv_gemm_plan(const struct ert_exec *x, struct ert_gpu_gemm *d,
				 struct ert_err *err)
{
	const struct ert_value *xv = x->in[0], *w = x->in[1];
	struct ert_conv_geom g;
	ert_status s = conv_geom_or_fail(x, &g, err);

	if (s != ERT_OK)
		return s;

	int64_t group = ert_attr_int(x->node, "group", 1);
	int64_t nimg = xv->dims[0], c = xv->dims[1], oc = w->dims[0];
	int64_t cg = c / group, ocg = oc / group;
	int64_t hw = g.in[1] * g.in[2], p = g.out[1] * g.out[2], k = cg * g.k[1] * g.k[2];
	bool pointwise = g.k[1] == 1 && g.k[2] == 1 && g.stride[1] == 1 && g.stride[2] == 1 &&
			 !g.pad_b[1] && !g.pad_b[2] && !g.pad_e[1] && !g.pad_e[2];

	*d = (struct ert_gpu_gemm){
		.a_in = 1, .b_in = 0,
		.bias_in = ert_gpu_opt_in(x, 2) ? 2 : -1, .res_in = ert_gpu_opt_in(x, 3) ? 3 : -1,
		.a_rs = (int32_t)k, .a_cs = 1, .b_rs = (int32_t)hw, .b_cs = 1,
		.ldc = (int32_t)p, .m = (int32_t)ocg, .n = (int32_t)p, .k = (int32_t)k,
		.bias_rs = 1, .bias_cs = 0,
		.alpha = 1.0f, .beta = 1.0f, .act = ert_node_act(x->node), .conv = !pointwise,
		.geo = { g.in[1], g.in[2], g.k[1], g.k[2], g.stride[1], g.stride[2], g.pad_b[1],
			 g.pad_b[2], g.dil[1], g.dil[2], g.out[2] },
		.batches = (size_t)(nimg * group),
	};
	d->boff = table_alloc(d->batches, x->node, err);
	if (!d->boff)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (int64_t n = 0; n < nimg; n++) {
		for (int64_t gi = 0; gi < group; gi++) {
			int32_t *t = d->boff + 4 * (n * group + gi);

			t[0] = (int32_t)(gi * ocg * k);
			t[1] = (int32_t)((n * c + gi * cg) * hw);
			t[2] = (int32_t)((n * oc + gi * ocg) * p);
			t[3] = (int32_t)(gi * ocg);
		}
	}
	return ERT_OK;
}

/* ---- Gemm ---- */

bool ert_gpu_gemm_supports(const struct ert_exec *x)
{
	return x->n_in >= 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) &&
	       ert_gpu_all_f32(x, 3) && x->in[0]->rank == 2 && x->in[1]->rank == 2;
}

static ert_status gemm_plan(const struct ert_exec *x, struct ert_gpu_gemm *d, struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *c = ert_gpu_opt_in(x, 2);
	bool ta = ert_attr_int(x->node, "transA", 0) != 0;
	bool tb = ert_attr_int(x->node, "transB", 0) != 0;
	int64_t m = x->out[0]->dims[0], n = x->out[0]->dims[1], k = a->dims[ta ? 0 : 1];
	bool has_bias = c && c->numel > 0;

	*d = (struct ert_gpu_gemm){
		.a_in = 0, .b_in = 1, .bias_in = has_bias ? 2 : -1, .res_in = -1,
		.a_rs = (int32_t)(ta ? 1 : k), .a_cs = (int32_t)(ta ? m : 1),
		.b_rs = (int32_t)(tb ? 1 : n), .b_cs = (int32_t)(tb ? k : 1),
		.ldc = (int32_t)n, .m = (int32_t)m, .n = (int32_t)n, .k = (int32_t)k,
		.alpha = ert_attr_float(x->node, "alpha", 1.0f),
		.beta = ert_attr_float(x->node, "beta", 1.0f),
		.act = ert_node_act(x->node), .batches = 1,
	};
	if (has_bias) {
		/* C broadcast to M x N, aligned on the right */
		int64_t rows = c->rank == 2 ? c->dims[0] : 1, cols = c->rank ? c->dims[c->rank - 1] : 1;

		d->bias_rs = rows == 1 ? 0 : (int32_t)cols;
		d->bias_cs = cols == 1 ? 0 : 1;
	}
	d->boff = table_alloc(1, x->node, err);
	return d->boff ? ERT_OK : ERT_STATUS_OUT_OF_MEMORY;
}

/* ---- MatMul ---- */

/*
 * The optimiser's fused bias ("ert.bias", opt/fuse-residual.c): input 2, a
 * float32 vector of N added to every row of the product.
 */
static bool matmul_bias(const struct ert_exec *x)
{
	return ert_attr_int(x->node, "ert.bias", 0) && x->n_in >= 3 && x->in[2] &&
	       ert_gpu_is_f32(x->in[2]);
}

/*
 * The fused residual ("ert.residual"): input 3, of the stored output's shape,
 * read at C's offsets after the bias, as Conv's.
 */
static bool matmul_residual(const struct ert_exec *x)
{
	const struct ert_value *r = ert_gpu_opt_in(x, 3);

	return ert_attr_int(x->node, "ert.residual", 0) && x->n_in == 4 && r &&
	       ert_gpu_is_f32(r) && r->numel == x->out[0]->numel;
}

bool ert_gpu_matmul_supports(const struct ert_exec *x)
{
	bool bias = ert_attr_int(x->node, "ert.bias", 0) != 0;
	bool res = ert_attr_int(x->node, "ert.residual", 0) != 0;

	if (x->n_in < 2 || x->n_in > 4 || (bias && !matmul_bias(x)) ||
	    (res && !matmul_residual(x)) || (!bias && x->n_in > 2 && x->in[2]) ||
	    (!res && x->n_in > 3))
		return false;
	return ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) && ert_gpu_all_f32(x, 4) &&
	       x->out[0]->rank <= ERT_MAX_RANK;
}

/*
 * Folded Transposes (ert.perm_a, ert.perm_b, ert.perm_y: ops/linalg-geom.h)
 * are views, as on the CPU: A and B read through the strides of their
 * permuted dims, Y written with the row stride and batch offsets of the
 * stored Transpose(Y, perm_y) (its rows stay contiguous).
 */
static ert_status matmul_plan(const struct ert_exec *x, struct ert_gpu_gemm *d,
			      struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *b = x->in[1], *y = x->out[0];
	int ra = a->rank, rb = b->rank, ry = y->rank;
	int32_t perm[ERT_MAX_RANK];
	int64_t ad[ERT_MAX_RANK], as[ERT_MAX_RANK], bd[ERT_MAX_RANK], bs[ERT_MAX_RANK];
	int64_t yd[ERT_MAX_RANK], ys[ERT_MAX_RANK];
	bool perm_y = ert_node_attr(x->node, ert_matmul_perm_attr[ERT_MATMUL_PERM_Y]) != NULL;

	ert_matmul_perm(x->node, ERT_MATMUL_PERM_A, ra, perm);
	ert_perm_view(ra, a->dims, perm, false, ad, as);
	ert_matmul_perm(x->node, ERT_MATMUL_PERM_B, rb, perm);
	ert_perm_view(rb, b->dims, perm, false, bd, bs);
	ert_matmul_perm(x->node, ERT_MATMUL_PERM_Y, ry, perm);
	ert_perm_view(ry, y->dims, perm, true, yd, ys);

	int64_t m = ra == 1 ? 1 : ad[ra - 2], k = ad[ra - 1];
	int64_t n = rb == 1 ? 1 : bd[rb - 1];
	/* batch dims: A's and B's leading dims, broadcast, aligned on the right */
	int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, nbat = na > nb ? na : nb;
	int64_t bdims[ERT_MAX_RANK], sa[ERT_MAX_RANK], sb[ERT_MAX_RANK];
	int64_t batches = 1;

	*d = (struct ert_gpu_gemm){
		.a_in = 0, .b_in = 1, .bias_in = -1, .res_in = -1,
		.a_rs = (int32_t)(ra > 1 ? as[ra - 2] : k), .a_cs = (int32_t)as[ra - 1],
		.b_rs = (int32_t)(rb > 1 ? bs[rb - 2] : 1), .b_cs = (int32_t)(rb > 1 ? bs[rb - 1] : 0),
		/* a folded output Transpose needs A and B of rank 2 or more: Y's last two dims are M, N */
		.ldc = (int32_t)(perm_y ? ys[ry - 2] : n), .m = (int32_t)m, .n = (int32_t)n,
		.k = (int32_t)k, .alpha = ert_attr_float(x->node, "ert.scale", 1.0f), .beta = 0.0f,
		.act = ert_node_act(x->node),
	};
	/* the epilogue's alpha * sum + bias + residual is the fused order (ert.scale first) */
	if (matmul_residual(x))
		d->res_in = 3;
	if (matmul_bias(x)) {
		d->bias_in = 2;
		d->beta = 1.0f;
		d->bias_rs = 0;
		d->bias_cs = 1;
	}
	for (int i = nbat - 1; i >= 0; i--) {
		int ia = i - (nbat - na), ib = i - (nbat - nb);
		int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;

		bdims[i] = da > db ? da : db;
		sa[i] = da == 1 ? 0 : as[ia];
		sb[i] = db == 1 ? 0 : bs[ib];
		batches *= bdims[i];
	}
	d->batches = (size_t)batches;
	d->boff = table_alloc(d->batches, x->node, err);
	if (!d->boff)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (int64_t z = 0; z < batches; z++) {
		int64_t r = z, oa = 0, ob = 0, oc = 0;

		for (int i = nbat - 1; i >= 0; i--) {
			int64_t ci = r % bdims[i];

			r /= bdims[i];
			oa += ci * sa[i];
			ob += ci * sb[i];
			/* Y's batch dims lead it; contiguous Y: z * m * n */
			oc += ci * ys[i];
		}
		d->boff[4 * z] = (int32_t)oa;
		d->boff[4 * z + 1] = (int32_t)ob;
		d->boff[4 * z + 2] = (int32_t)oc;
	}
	return ERT_OK;
}

ert_status ert_gpu_gemm_plan(const struct ert_exec *x, struct ert_gpu_gemm *g, struct ert_err *err)
{
	switch (x->node->op) {
	case ERT_OP_Conv: return conv_gemm_plan(x, g, err);
	case ERT_OP_Gemm: return gemm_plan(x, g, err);
	case ERT_OP_MatMul: return matmul_plan(x, g, err);
	default:
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL, "not a GEMM");
	}
}
