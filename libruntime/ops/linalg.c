/* SPDX-License-Identifier: MIT */
/* Shape inference: Conv, ConvTranspose, Gemm, MatMul, Einsum. */
#include <string.h>

#include "ops/linalg-einsum.h"
#include "ops/linalg-geom.h"

static bool is_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32;
}

/* Shared by Conv and ConvTranspose: X (N, C, spatial...), W, optional B. */
static ert_status conv_check(struct ert_infer_ctx *ctx, const struct ert_value *x,
			     const struct ert_value *w, int64_t *group)
{
	if (ctx->n_in < 2 || !x || !w || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs inputs X, W and output Y");
	if (x->rank < 3 || x->rank > 5)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "X has rank %d, expected 3 to 5",
				      (int)x->rank);
	if (w->rank != x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "W has rank %d, X has rank %d",
				      (int)w->rank, (int)x->rank);
	*group = ert_attr_int(ctx->node, "group", 1);
	if (*group < 1 || *group > x->dims[1] + 1)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "bad group %lld",
				      (long long)*group);
	uint32_t nk;
	const int64_t *ks = ert_attr_ints(ctx->node, "kernel_shape", &nk);

	if (ks) {
		if ((int32_t)nk != x->rank - 2)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      "kernel_shape has %u values, expected %d", nk,
					      (int)x->rank - 2);
		for (uint32_t i = 0; i < nk; i++)
			if (ks[i] != w->dims[2 + i])
				return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
						      "kernel_shape[%u] = %lld but W has %lld", i,
						      (long long)ks[i], (long long)w->dims[2 + i]);
	}
	return ERT_OK;
}

static ert_status bias_check(struct ert_infer_ctx *ctx, int64_t m)
{
	const struct ert_value *b = ctx->n_in > 2 ? ctx->in[2] : NULL;

	if (!b)
		return ERT_OK;
	if (b->dtype != ctx->in[0]->dtype || b->rank != 1 || b->dims[0] != m)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "B must be a vector of %lld %s",
				      (long long)m, ert_dtype_name(ctx->in[0]->dtype));
	return ERT_OK;
}

ert_status ert_conv_shape(struct ert_infer_ctx *ctx, const struct ert_value *x,
			  const struct ert_value *w, ert_dtype out_dt)
{
	struct ert_conv_geom g;
	int64_t group, dims[ERT_MAX_RANK], cin;
	ert_status st = conv_check(ctx, x, w, &group);

	if (st != ERT_OK)
		return st;
	/* W's dims and group are each <= 2^48: their product may not fit */
	if (!ert_mul_i64(w->dims[1], group, &cin) || x->dims[1] != cin || w->dims[0] % group)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "X has %lld channels, W expects %lld x group %lld (M = %lld)",
				      (long long)x->dims[1], (long long)w->dims[1],
				      (long long)group, (long long)w->dims[0]);
	st = ert_geom_conv(ctx->node, x->rank - 2, x->dims + 2, w->dims + 2, false, &g, ctx->err);
	if (st != ERT_OK)
		return st;
	dims[0] = x->dims[0];
	dims[1] = w->dims[0];
	for (int32_t i = 0; i < x->rank - 2; i++)
		dims[2 + i] = g.out[3 - (x->rank - 2) + i];
	ert_value_set_shape(ctx->out[0], out_dt, x->rank, dims);
	return ERT_OK;
}

/*
 * The residual the optimiser's fusion gives a Conv (opt/fuse-residual.c):
 * with "ert.residual" = 1, input 3 is added to the output, which it must
 * match in shape and type; without it there is no input 3.
 */
static ert_status residual_check(struct ert_infer_ctx *ctx)
{
	const struct ert_value *r = ctx->n_in > 3 ? ctx->in[3] : NULL, *y = ctx->out[0];
	bool want = ert_attr_int(ctx->node, "ert.residual", 0) != 0;

	if (ctx->n_in > 4 || (!want && ctx->n_in > 3) || (want && !r))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      want ? "ert.residual needs input 3 and no more"
					   : "takes at most 3 inputs");
	if (!want)
		return ERT_OK;
	if (r->dtype != y->dtype || r->rank != y->rank ||
	    memcmp(r->dims, y->dims, (size_t)y->rank * sizeof(y->dims[0])))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "the residual input must have the output's shape and type");
	return ERT_OK;
}

static ert_status infer_conv(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->in[0], *w = ctx->n_in > 1 ? ctx->in[1] : NULL;
	ert_status st;

	if (x && w && (!is_float(x->dtype) || w->dtype != x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X and W must be float32 (got %s, %s)",
				      ert_dtype_name(x->dtype), ert_dtype_name(w->dtype));
	st = ert_conv_shape(ctx, x, w, x ? x->dtype : ERT_DTYPE_FLOAT32);
	if (st == ERT_OK)
		st = bias_check(ctx, w->dims[0]);
	if (st == ERT_OK)
		st = residual_check(ctx);
	return st;
}

/* @v: float32 of rank @rank whose dims are @d (-1: any), or not. */
static bool irb_dims(const struct ert_value *v, int32_t rank, const int64_t *d)
{
	if (!v || v->dtype != ERT_DTYPE_FLOAT32 || v->rank != rank)
		return false;
	for (int32_t i = 0; i < rank; i++)
		if (d[i] >= 0 && v->dims[i] != d[i])
			return false;
	return true;
}

/*
 * InvertedResidual (edgert's own, opt/fuse-irblock.c): X [N, C, H, W], the
 * depthwise conv's W [Cm, 1, kh, kw] and B [Cm], the project conv's W
 * [Co, Cm, 1, 1] and B [Co]; with 7 or 8 inputs the expand conv's W [Cm, C,
 * 1, 1] and B [Cm] (else Cm = C), and with "ert.residual" R at 7, of the
 * output's shape. The depthwise conv's strides, pads and dilations are the
 * node's; its activation "ert.dw_act", the expand conv's "ert.ex_act", the
 * project conv's "ert.act" (each with its _params).
 */
static ert_status infer_irblock(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->in[0], *wd = ctx->n_in > 1 ? ctx->in[1] : NULL;
	bool expand = ctx->n_in >= 7, res = ert_attr_int(ctx->node, "ert.residual", 0) != 0;
	struct ert_conv_geom g;
	int64_t cm, co, dims[4];
	ert_status st;

	if ((ctx->n_in != 5 && ctx->n_in != 7 && ctx->n_in != 8) || res != (ctx->n_in == 8) ||
	    ctx->n_out != 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "takes 5, 7 or 8 inputs (8 with ert.residual) and one output");
	if (!irb_dims(x, 4, (int64_t[]){ -1, -1, -1, -1 }) ||
	    !irb_dims(wd, 4, (int64_t[]){ -1, 1, -1, -1 }))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "X and W must be float32 of rank 4");
	cm = wd->dims[0];
	co = ctx->in[3] ? ctx->in[3]->dims[0] : -1;
	if (!irb_dims(ctx->in[2], 1, &cm) || !irb_dims(ctx->in[3], 4, (int64_t[]){ -1, cm, 1, 1 }) ||
	    !irb_dims(ctx->in[4], 1, &co) ||
	    (expand && (!irb_dims(ctx->in[5], 4, (int64_t[]){ cm, x->dims[1], 1, 1 }) ||
			!irb_dims(ctx->in[6], 1, &cm))) ||
	    (!expand && cm != x->dims[1]))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "weights and biases do not match");
	st = ert_geom_conv(ctx->node, 2, x->dims + 2, wd->dims + 2, false, &g, ctx->err);
	if (st != ERT_OK)
		return st;
	dims[0] = x->dims[0];
	dims[1] = co;
	dims[2] = g.out[1];
	dims[3] = g.out[2];
	if (res && !irb_dims(ctx->in[7], 4, dims))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "the residual input must have the output's shape and type");
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_FLOAT32, 4, dims);
	return ERT_OK;
}

static ert_status infer_convt(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->in[0], *w = ctx->n_in > 1 ? ctx->in[1] : NULL;
	struct ert_conv_geom g;
	int64_t group, dims[ERT_MAX_RANK];
	ert_status st = conv_check(ctx, x, w, &group);

	if (st != ERT_OK)
		return st;
	if (!is_float(x->dtype) || w->dtype != x->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X and W must be float32 (got %s, %s)",
				      ert_dtype_name(x->dtype), ert_dtype_name(w->dtype));
	if (x->dims[1] != w->dims[0] || w->dims[0] % group)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "X has %lld channels, W has %lld (group %lld)",
				      (long long)x->dims[1], (long long)w->dims[0], (long long)group);
	if (!ert_mul_i64(w->dims[1], group, &dims[1]) || dims[1] > ERT_DIM_MAX)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "W's %lld output channels a group times group %lld exceed 2^48",
				      (long long)w->dims[1], (long long)group);
	st = bias_check(ctx, dims[1]);
	if (st != ERT_OK)
		return st;
	st = ert_geom_convt(ctx->node, x->rank - 2, x->dims + 2, w->dims + 2, &g, ctx->err);
	if (st != ERT_OK)
		return st;
	dims[0] = x->dims[0];
	for (int32_t i = 0; i < x->rank - 2; i++)
		dims[2 + i] = g.out[3 - (x->rank - 2) + i];
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	return ERT_OK;
}

static ert_status infer_gemm(struct ert_infer_ctx *ctx)
{
	const struct ert_value *a = ctx->in[0], *b = ctx->n_in > 1 ? ctx->in[1] : NULL;
	const struct ert_value *c = ctx->n_in > 2 ? ctx->in[2] : NULL;
	bool ta = ert_attr_int(ctx->node, "transA", 0) != 0;
	bool tb = ert_attr_int(ctx->node, "transB", 0) != 0;

	if (!a || !b || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs inputs A, B and output Y");
	if (!is_float(a->dtype) || b->dtype != a->dtype || (c && c->dtype != a->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "A, B and C must be float32");
	if (a->rank != 2 || b->rank != 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "A and B must be matrices (ranks %d, %d)",
				      (int)a->rank, (int)b->rank);
	int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
	int64_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];

	if (k != kb)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "inner sizes differ: %lld vs %lld (transA %d, transB %d)",
				      (long long)k, (long long)kb, (int)ta, (int)tb);
	if (c) {
		if (c->rank > 2 || (c->rank == 2 && c->dims[0] != 1 && c->dims[0] != m) ||
		    (c->rank >= 1 && c->dims[c->rank - 1] != 1 && c->dims[c->rank - 1] != n))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "C does not broadcast to %lld x %lld", (long long)m,
					      (long long)n);
	}
	ert_value_set_shape(ctx->out[0], a->dtype, 2, (int64_t[]){ m, n });
	return ERT_OK;
}

ert_status ert_matmul_shape(struct ert_infer_ctx *ctx, const struct ert_value *a,
			    const struct ert_value *b, ert_dtype out_dt)
{
	int64_t dims[ERT_MAX_RANK];
	int32_t ra = a->rank, rb = b->rank, r;

	if (ra < 1 || rb < 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "operands must have rank >= 1");
	int64_t k = a->dims[ra - 1];
	int64_t kb = rb == 1 ? b->dims[0] : b->dims[rb - 2];

	if (k != kb)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "inner sizes differ: %lld vs %lld",
				      (long long)k, (long long)kb);
	int32_t ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
	int32_t nb = ba > bb ? ba : bb;

	for (int32_t i = 0; i < nb; i++) {
		int32_t ia = i - (nb - ba), ib = i - (nb - bb);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "batch dimensions %lld and %lld do not broadcast",
					      (long long)da, (long long)db);
		dims[i] = da == 1 ? db : da;
	}
	r = nb;
	if (ra > 1)
		dims[r++] = a->dims[ra - 2];
	if (rb > 1)
		dims[r++] = b->dims[rb - 1];
	ert_value_set_shape(ctx->out[0], out_dt, r, dims);
	return ERT_OK;
}

const char *const ert_matmul_perm_attr[ERT_MATMUL_PERMS] = {
	"ert.perm_a", "ert.perm_b", "ert.perm_y",
};

bool ert_matmul_has_perm(const struct ert_node *n)
{
	for (int w = 0; w < ERT_MATMUL_PERMS; w++)
		if (ert_node_attr(n, ert_matmul_perm_attr[w]))
			return true;
	return false;
}

bool ert_perm_attr(const struct ert_node *n, const char *name, int32_t rank, bool keep_last,
		   int32_t *perm)
{
	uint32_t count = 0;
	const int64_t *p = ert_attr_ints(n, name, &count);
	bool seen[ERT_MAX_RANK] = { false };
	bool ok = rank >= 0 && rank <= ERT_MAX_RANK;

	for (int32_t d = 0; ok && d < rank; d++)
		perm[d] = d;
	if (!ok || !ert_node_attr(n, name))
		return ok;
	ok = p && count == (uint32_t)rank;
	for (int32_t d = 0; ok && d < rank; d++) {
		ok = p[d] >= 0 && p[d] < rank && !seen[p[d]];
		if (ok)
			seen[p[d]] = true;
	}
	if (ok && keep_last)
		ok = rank >= 1 && p[rank - 1] == rank - 1;
	for (int32_t d = 0; ok && d < rank; d++)
		perm[d] = (int32_t)p[d];
	return ok;
}

bool ert_matmul_perm(const struct ert_node *n, int which, int32_t rank, int32_t *perm)
{
	return ert_perm_attr(n, ert_matmul_perm_attr[which], rank, which == ERT_MATMUL_PERM_Y,
			     perm);
}

void ert_perm_view(int32_t rank, const int64_t *dims, const int32_t *perm, bool inverse,
		   int64_t *vdims, int64_t *vstrides)
{
	int64_t st[ERT_MAX_RANK], s = 1;

	for (int32_t d = rank - 1; d >= 0 && vstrides; d--) {
		st[d] = s;
		s *= dims[d];
	}
	for (int32_t d = 0; d < rank; d++) {
		int32_t from = inverse ? d : perm[d], to = inverse ? perm[d] : d;

		vdims[to] = dims[from];
		if (vstrides)
			vstrides[to] = st[from];
	}
}

/*
 * MatMul's fused bias (opt/fuse-residual.c): with "ert.bias" = 1, input 2 is
 * a vector of N (B's last dim; B of rank 2 or more) added to every row of
 * the product before the fused activation; without it there is no input 2.
 * Its fused residual: with "ert.residual" = 1, input 3 is a tensor of the
 * output's shape added after the bias; its fused scale: the float
 * "ert.scale" multiplies the complete product before the bias.
 * With the folded Transposes (ert_matmul_perm()) A and B are the permuted
 * inputs, and the output the permuted product.
 */
static ert_status infer_matmul(struct ert_infer_ctx *ctx)
{
	const struct ert_value *a = ctx->in[0], *b = ctx->n_in > 1 ? ctx->in[1] : NULL;
	bool want = ert_attr_int(ctx->node, "ert.bias", 0) != 0;
	bool want_r = ert_attr_int(ctx->node, "ert.residual", 0) != 0;
	const struct ert_value *c = ctx->n_in > 2 ? ctx->in[2] : NULL;
	const struct ert_value *r = ctx->n_in > 3 ? ctx->in[3] : NULL;
	const struct ert_attr *scale = ert_node_attr(ctx->node, "ert.scale");
	struct ert_value pa, pb;
	int32_t perm[ERT_MATMUL_PERMS][ERT_MAX_RANK];
	int64_t dims[ERT_MAX_RANK];
	ert_status rc;

	if (!a || !b || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs inputs A, B and output Y");
	if ((ctx->n_in > 4 && ctx->in[4]) || want != (c != NULL))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      want ? "ert.bias needs input 2" : "takes 2 inputs");
	if (want_r != (r != NULL))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      want_r ? "ert.residual needs input 3" : "takes 2 inputs");
	if (scale && (scale->type != ERT_ATTR_FLOAT || scale->count != 1))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "ert.scale must be one float");
	if (!is_float(a->dtype) || b->dtype != a->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "A and B must be float32 (got %s, %s)",
				      ert_dtype_name(a->dtype), ert_dtype_name(b->dtype));
	int32_t ry = a->rank > b->rank ? a->rank : b->rank;
	int32_t ranks[ERT_MATMUL_PERMS] = { a->rank, b->rank, ry };
	bool perm_y = ert_node_attr(ctx->node, ert_matmul_perm_attr[ERT_MATMUL_PERM_Y]) != NULL;

	for (int w = 0; w < ERT_MATMUL_PERMS; w++) {
		bool has = ert_node_attr(ctx->node, ert_matmul_perm_attr[w]) != NULL;

		if (has && (w == ERT_MATMUL_PERM_Y ? a->rank < 2 || b->rank < 2 : ranks[w] < 2))
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      w == ERT_MATMUL_PERM_Y
						      ? "%s needs A and B of rank 2 or more"
						      : "%s needs its operand of rank 2 or more",
					      ert_matmul_perm_attr[w]);
		if (!ert_matmul_perm(ctx->node, w, ranks[w], perm[w]))
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      w == ERT_MATMUL_PERM_Y
						      ? "%s must be a permutation of %d dims that keeps the last one last"
						      : "%s must be a permutation of %d dims",
					      ert_matmul_perm_attr[w], (int)ranks[w]);
	}
	pa = *a;
	pb = *b;
	ert_perm_view(a->rank, a->dims, perm[ERT_MATMUL_PERM_A], false, pa.dims, NULL);
	ert_perm_view(b->rank, b->dims, perm[ERT_MATMUL_PERM_B], false, pb.dims, NULL);
	if (c && (pb.rank < 2 || c->dtype != a->dtype || c->rank != 1 ||
		  c->dims[0] != pb.dims[pb.rank - 1]))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "the ert.bias input must be a float32 vector of B's last dim");
	rc = ert_matmul_shape(ctx, &pa, &pb, a->dtype);
	if (rc != ERT_OK)
		return rc;
	if (perm_y) {
		/* the stored output: dim d is Y's dim perm_y[d] */
		for (int32_t d = 0; d < ry; d++)
			dims[d] = ctx->out[0]->dims[perm[ERT_MATMUL_PERM_Y][d]];
		ert_value_set_shape(ctx->out[0], a->dtype, ry, dims);
	}
	if (r && (r->dtype != a->dtype || r->rank != ctx->out[0]->rank ||
		  memcmp(r->dims, ctx->out[0]->dims, (size_t)r->rank * sizeof(r->dims[0]))))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "the ert.residual input must have the output's type and shape");
	return ERT_OK;
}

static ert_status infer_einsum(struct ert_infer_ctx *ctx)
{
	const char *eq = ert_attr_string(ctx->node, "equation", NULL);
	struct ert_einsum e;
	int64_t dims[ERT_MAX_RANK];
	ert_status st;

	if (!eq || ctx->n_in < 1 || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs an equation and inputs");
	for (uint32_t i = 0; i < ctx->n_in; i++)
		if (!ctx->in[i] || ctx->in[i]->dtype != ctx->in[0]->dtype ||
		    (ctx->in[i]->dtype != ERT_DTYPE_FLOAT32 && ctx->in[i]->dtype != ERT_DTYPE_FLOAT64))
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
					      "inputs must all be float32 or all float64");
	st = ert_einsum_parse(&e, eq, ctx->n_in, ctx->in, ctx->err, ctx->node->name);
	if (st != ERT_OK)
		return st;
	for (int32_t a = 0; a < e.out_rank; a++)
		dims[a] = e.size[e.out_label[a]];
	ert_value_set_shape(ctx->out[0], ctx->in[0]->dtype, e.out_rank, dims);
	return ERT_OK;
}

/* Integer attributes (ert_attr_rule); geometry re-checks its own in linalg-geom.c. */
#define CONV_RULES                                                                \
	ERT_RULE_INT("group", 1, ERT_DIM_MAX), ERT_RULE_SPATIAL("kernel_shape", 1),       \
	ERT_RULE_SPATIAL("strides", 1), ERT_RULE_SPATIAL("dilations", 1),                 \
	ERT_RULE_SPATIAL("pads", 0), ERT_RULE_INT("ert.act", ERT_ACT_NONE, ERT_ACT_GELU)

static const struct ert_attr_rule conv_rules[] = { CONV_RULES, ERT_RULE_END };
static const struct ert_attr_rule irblock_rules[] = {
	ERT_RULE_SPATIAL("strides", 1), ERT_RULE_SPATIAL("dilations", 1),
	ERT_RULE_SPATIAL("pads", 0), ERT_RULE_INT("ert.act", ERT_ACT_NONE, ERT_ACT_GELU),
	ERT_RULE_INT("ert.dw_act", ERT_ACT_NONE, ERT_ACT_GELU),
	ERT_RULE_INT("ert.ex_act", ERT_ACT_NONE, ERT_ACT_GELU), ERT_RULE_FLAG("ert.residual"),
	ERT_RULE_END,
};
static const struct ert_attr_rule convt_rules[] = {
	CONV_RULES,
	ERT_RULE_SPATIAL("output_padding", 0),
	/* may list N and C before the spatial sizes */
	ERT_RULE_INTS("output_shape", ERT_MAX_RANK, 0, ERT_ATTR_SIZE_MAX),
	ERT_RULE_END,
};
static const struct ert_attr_rule gemm_rules[] = {
	ERT_RULE_FLAG("transA"), ERT_RULE_FLAG("transB"), ERT_RULE_FLAG("broadcast"),
	ERT_RULE_INT("ert.act", ERT_ACT_NONE, ERT_ACT_GELU), ERT_RULE_END,
};
static const struct ert_attr_rule matmul_rules[] = {
	ERT_RULE_INT("ert.act", ERT_ACT_NONE, ERT_ACT_GELU), ERT_RULE_FLAG("ert.bias"),
	ERT_RULE_FLAG("ert.residual"),
	ERT_RULE_INTS("ert.perm_a", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1),
	ERT_RULE_INTS("ert.perm_b", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1),
	ERT_RULE_INTS("ert.perm_y", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_linalg[] = {
	{ ERT_OP_Conv, infer_conv, conv_rules },
	{ ERT_OP_ConvTranspose, infer_convt, convt_rules },
	{ ERT_OP_Gemm, infer_gemm, gemm_rules },
	{ ERT_OP_MatMul, infer_matmul, matmul_rules },
	{ ERT_OP_Einsum, infer_einsum, NULL },
	{ ERT_OP_InvertedResidual, infer_irblock, irblock_rules },
	{ .infer = NULL },
};
