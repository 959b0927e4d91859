/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: Resize and Upsample. Taps are built per axis into the
 * workspace at compute time (the sizes may come from values known only then),
 * then each output element sums its taps' product over all axes in double,
 * or, where that product would cost far more than the sizes (antialias
 * across shrinking and growing axes), the sum is taken one axis at a time.
 */
#include <string.h>

#include "cpu/ops/norm-access.h"
#include "cpu/ops/resize-kernels.h"
#include "cpu/ops/resize-taps.h"

struct rz_args {
	const struct ert_value *in;
	struct ert_value *out;
	int32_t rank;
	struct ert_resize_axis ax[ERT_MAX_RANK];
	int64_t in_stride[ERT_MAX_RANK];
	double extrapolation;
};

static double one_output(const struct rz_args *a, const int64_t *c)
{
	int32_t t[ERT_MAX_RANK] = { 0 }, cnt[ERT_MAX_RANK];
	const int64_t *idx[ERT_MAX_RANK];
	const double *w[ERT_MAX_RANK];
	double acc = 0.0;
	int32_t r = a->rank;

	for (int32_t d = 0; d < r; d++) {
		const struct ert_resize_axis *ax = &a->ax[d];

		cnt[d] = ax->count[c[d]];
		if (cnt[d] < 0)
			return a->extrapolation;
		if (cnt[d] == 0)
			return 0.0;
		idx[d] = ax->index + c[d] * ax->slots;
		w[d] = ax->weight + c[d] * ax->slots;
	}
	for (;;) {
		int64_t off = 0;
		double wt = 1.0;

		for (int32_t d = 0; d < r; d++) {
			off += idx[d][t[d]] * a->in_stride[d];
			wt *= w[d][t[d]];
		}
		acc += wt * ert_nx_ld(a->in->data, a->in->dtype, off);
		int32_t d = r - 1;

		for (; d >= 0; d--) {
			if (++t[d] < cnt[d])
				break;
			t[d] = 0;
		}
		if (d < 0)
			break;
	}
	return acc;
}

#define RZ_MAX_COMBOS 512

/* One product of outer-axis taps: input offset and weight. */
struct rz_combo {
	int64_t off;
	double w;
};

/*
 * Taps of the outer axes (all but the last) of the output row at coordinates @c:
 * their count, 0 for an empty product, -1 when too many (use one_output()),
 * -2 when the row lies outside the crop.
 */
static int32_t row_combos(const struct rz_args *a, const int64_t *c, struct rz_combo *cb)
{
	int32_t r = a->rank - 1, t[ERT_MAX_RANK] = { 0 }, cnt[ERT_MAX_RANK], n = 0;
	int64_t total = 1;

	for (int32_t d = 0; d < r; d++) {
		cnt[d] = a->ax[d].count[c[d]];
		if (cnt[d] < 0)
			return -2;
		total *= cnt[d];
	}
	if (total == 0)
		return 0;
	if (total > RZ_MAX_COMBOS)
		return -1;
	for (;;) {
		int64_t off = 0;
		double w = 1.0;
		int32_t d;

		for (d = 0; d < r; d++) {
			const struct ert_resize_axis *ax = &a->ax[d];

			off += ax->index[c[d] * ax->slots + t[d]] * a->in_stride[d];
			w *= ax->weight[c[d] * ax->slots + t[d]];
		}
		cb[n].off = off;
		cb[n++].w = w;
		for (d = r - 1; d >= 0; d--) {
			if (++t[d] < cnt[d])
				break;
			t[d] = 0;
		}
		if (d < 0)
			return n;
	}
}

static void row_f32(const struct rz_args *a, const struct rz_combo *cb, int32_t nc, float *y)
{
	const struct ert_resize_axis *l = &a->ax[a->rank - 1];
	const float *x = a->in->data;

	for (int64_t j = 0; j < l->out; j++) {
		int32_t cnt = l->count[j];
		const int64_t *il = l->index + j * l->slots;
		const double *wl = l->weight + j * l->slots;
		double acc = 0.0;

		if (cnt < 0) {
			y[j] = (float)a->extrapolation;
			continue;
		}
		for (int32_t k = 0; k < nc; k++) {
			const float *xr = x + cb[k].off;
			double part = 0.0;

			for (int32_t t = 0; t < cnt; t++)
				part += wl[t] * xr[il[t]];
			acc += cb[k].w * part;
		}
		y[j] = (float)acc;
	}
}

static void resize_rows(void *arg, int64_t begin, int64_t end)
{
	const struct rz_args *a = arg;
	const struct ert_resize_axis *l = &a->ax[a->rank - 1];
	bool is_int = !ert_nx_is_float(a->out->dtype);
	bool f32 = a->in->dtype == ERT_DTYPE_FLOAT32;
	struct rz_combo cb[RZ_MAX_COMBOS];
	int64_t c[ERT_MAX_RANK];

	for (int64_t row = begin; row < end; row++) {
		int64_t rest = row, base = row * l->out;
		int32_t nc;

		for (int32_t d = a->rank - 2; d >= 0; d--) {
			c[d] = rest % a->ax[d].out;
			rest /= a->ax[d].out;
		}
		nc = row_combos(a, c, cb);
		if (f32 && nc >= 0) {
			row_f32(a, cb, nc, (float *)a->out->data + base);
			continue;
		}
		for (int64_t j = 0; j < l->out; j++) {
			double v;

			c[a->rank - 1] = j;
			v = nc == -2 ? a->extrapolation : one_output(a, c);
			/* Integer outputs: the reference casts its float result, truncating. */
			if (is_int)
				v = trunc(v);
			ert_nx_st(a->out->data, a->out->dtype, base + j, v);
		}
	}
}

/*
 * Separable passes. Summing the product of every axis's taps per output costs
 * out x prod(slots): with antialias (a downsampling axis has in / out taps
 * per output) and an upsampling axis beside it, that grows with the product
 * of max(in, out) over the axes, beyond anything the sizes bound. The same
 * sum taken one axis at a time (shrinking axes first, so that every
 * intermediate holds at most max(in, out) elements) costs about sum over
 * axes of elements x slots. Such Resizes take the passes, through two
 * intermediate buffers of doubles in the workspace; the usual ones keep the
 * direct sum and its results.
 */
struct rz_shape {
	int32_t rank;
	int32_t slots[ERT_MAX_RANK];
	int32_t order[ERT_MAX_RANK];   /* axes in pass order */
	bool separable;
	int64_t inter;                 /* elements of the larger intermediate */
	size_t taps_bytes;
};

/*
 * From shapes and the mode alone (the sizes or scales may be known only when
 * it runs), so that the workspace and compute() agree.
 */
static void rz_shape_of(const struct ert_exec *x, struct rz_shape *sh)
{
	struct ert_resize_params p;
	const struct ert_value *in = x->in[0], *out = x->out[0];
	double direct = (double)out->numel, sep = 0.0, cur = (double)in->numel;
	int64_t dims[ERT_MAX_RANK], n = 0;

	memset(&p, 0, sizeof(p));
	memset(sh, 0, sizeof(*sh));
	p.mode = ERT_RESIZE_LINEAR;
	if (strcmp(ert_attr_string(x->node, "mode", "nearest"), "cubic") == 0)
		p.mode = ERT_RESIZE_CUBIC;
	p.antialias = ert_attr_int(x->node, "antialias", 0) != 0;
	sh->rank = in->rank;
	for (int32_t d = 0; d < in->rank; d++) {
		sh->slots[d] = ert_resize_slots(&p, in->dims[d], out->dims[d]);
		sh->taps_bytes += ert_resize_axis_bytes(out->dims[d], sh->slots[d]);
		direct *= sh->slots[d];
		dims[d] = in->dims[d];
	}
	/* shrinking axes first, then the others */
	for (int pass = 0; pass < 2; pass++)
		for (int32_t d = 0; d < in->rank; d++)
			if ((out->dims[d] < in->dims[d]) == (pass == 0))
				sh->order[n++] = d;
	for (int32_t i = 0; i < in->rank; i++) {
		int32_t d = sh->order[i];

		cur = dims[d] ? cur / (double)dims[d] * (double)out->dims[d] : 0.0;
		dims[d] = out->dims[d];
		sep += cur * sh->slots[d];
		if (i < in->rank - 1 && cur > (double)sh->inter)
			sh->inter = (int64_t)cur;
	}
	sh->separable = in->rank > 1 && out->numel > 0 && direct > 1e6 && direct > 8.0 * sep;
}

/* Workspace from shapes alone: the sizes/scales values may not be known yet. */
static size_t resize_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct rz_shape sh;

	rz_shape_of(x, &sh);
	return sh.taps_bytes + (sh.separable ? 2 * (size_t)sh.inter * sizeof(double) : 0);
}

struct rz_pass {
	const struct rz_args *a;
	const struct ert_resize_axis *ax;
	const double *src;             /* NULL: the input tensor */
	double *dst;                   /* NULL: the output tensor (the last pass) */
	int64_t outer, inner;          /* elements before and after the axis */
	int64_t out_dims[ERT_MAX_RANK];/* the output's dims, for the last pass */
};

/* Rows (outer index, output coordinate on the axis) [begin, end) of one pass. */
static void pass_rows(void *arg, int64_t begin, int64_t end)
{
	const struct rz_pass *ps = arg;
	const struct ert_resize_axis *ax = ps->ax;
	const struct rz_args *a = ps->a;
	bool is_int = !ert_nx_is_float(a->out->dtype);

	for (int64_t r = begin; r < end; r++) {
		int64_t o = r / ax->out, j = r % ax->out, base = (o * ax->out + j) * ps->inner;
		int32_t cnt = ax->count[j];
		const int64_t *idx = ax->index + j * ax->slots;
		const double *w = ax->weight + j * ax->slots;

		for (int64_t i = 0; i < ps->inner; i++) {
			double acc = 0.0;

			for (int32_t t = 0; t < cnt; t++) {
				int64_t off = (o * ax->in + idx[t]) * ps->inner + i;

				acc += w[t] * (ps->src ? ps->src[off]
						       : ert_nx_ld(a->in->data, a->in->dtype, off));
			}
			if (ps->dst) {
				ps->dst[base + i] = acc;
				continue;
			}
			/* the last pass: outside the crop on any axis extrapolates */
			int64_t rest = base + i;
			bool outside = false;

			for (int32_t d = a->rank - 1; d >= 0; d--) {
				outside |= a->ax[d].count[rest % ps->out_dims[d]] < 0;
				rest /= ps->out_dims[d];
			}
			if (outside)
				acc = a->extrapolation;
			/* Integer outputs: the reference casts its float result, truncating. */
			if (is_int)
				acc = trunc(acc);
			ert_nx_st(a->out->data, a->out->dtype, base + i, acc);
		}
	}
}

static void resize_separable(struct ert_cpu *cpu, const struct rz_args *a,
			     const struct rz_shape *sh, double *buf0, double *buf1)
{
	struct rz_pass ps = { .a = a };
	int64_t dims[ERT_MAX_RANK];

	for (int32_t d = 0; d < a->rank; d++) {
		dims[d] = a->in->dims[d];
		ps.out_dims[d] = a->ax[d].out;
	}
	for (int32_t i = 0; i < a->rank; i++) {
		int32_t d = sh->order[i];

		ps.ax = &a->ax[d];
		ps.outer = 1;
		ps.inner = 1;
		for (int32_t e = 0; e < d; e++)
			ps.outer *= dims[e];
		for (int32_t e = d + 1; e < a->rank; e++)
			ps.inner *= dims[e];
		ps.dst = i == a->rank - 1 ? NULL : (i % 2 ? buf1 : buf0);
		if (ps.outer > 0 && ps.inner > 0)
			ert_parallel_for(cpu->pool, ps.outer * ps.ax->out,
					 ps.inner >= 4096 ? 1 : 4096 / ps.inner, pass_rows, &ps);
		ps.src = ps.dst;
		dims[d] = ps.ax->out;
	}
}

static ert_status resize_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_resize_params p;
	struct rz_args a = { .in = in, .out = x->out[0], .rank = in->rank };
	char *mem = x->workspace;
	size_t used = 0;
	int64_t stride = 1;
	struct rz_shape sh;
	ert_status st;

	st = ert_resize_params_get(x->node, (const struct ert_value *const *)x->in, x->n_in, &p,
				   err);
	if (st != ERT_OK)
		return st;
	a.extrapolation = p.extrapolation;
	for (int32_t d = in->rank - 1; d >= 0; d--) {
		a.in_stride[d] = stride;
		stride *= in->dims[d];
	}
	for (int32_t d = 0; d < in->rank; d++) {
		int32_t slots;
		size_t bytes;

		if (p.out_dims[d] != x->out[0]->dims[d])
			return ert_node_fail(x->node, err, ERT_STATUS_SHAPE,
					     "output dim %d is %lld, planned %lld", (int)d,
					     (long long)p.out_dims[d],
					     (long long)x->out[0]->dims[d]);
		if (in->dims[d] == 0 && p.out_dims[d] > 0)
			return ert_node_fail(x->node, err, ERT_STATUS_SHAPE,
					     "cannot resize an empty axis %d to %lld", (int)d,
					     (long long)p.out_dims[d]);
		slots = ert_resize_slots(&p, in->dims[d], p.out_dims[d]);
		bytes = ert_resize_axis_bytes(p.out_dims[d], slots);
		if (used + bytes > x->workspace_size)
			return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
					     "workspace too small");
		st = ert_resize_axis_taps(x->node, &p, d, in->dims[d], mem + used, slots, &a.ax[d],
					  err);
		if (st != ERT_OK)
			return st;
		used += bytes;
	}
	if (in->rank == 0) {
		ert_nx_st(x->out[0]->data, in->dtype, 0, ert_nx_ld(in->data, in->dtype, 0));
		return ERT_OK;
	}
	rz_shape_of(x, &sh);
	if (sh.separable && x->out[0]->numel > 0) {
		double *b0 = (double *)(void *)(mem + used);   /* used: a multiple of 8 */

		if (sh.taps_bytes != used || used + 2 * (size_t)sh.inter * sizeof(double) >
						     x->workspace_size)
			return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
					     "workspace too small");
		resize_separable(cpu, &a, &sh, b0, b0 + sh.inter);
	} else if (x->out[0]->numel > 0) {
		int64_t w = a.ax[in->rank - 1].out, rows = x->out[0]->numel / w;

		ert_parallel_for(cpu->pool, rows, 4096 / w + 1, resize_rows, &a);
	}
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_resize[] = {
	{ .op = ERT_OP_Resize, .workspace = resize_workspace, .compute = resize_compute },
	{ .op = ERT_OP_Upsample, .workspace = resize_workspace, .compute = resize_compute },
	{ .op = ERT_OP_GridSample, .compute = ert_cpu_grid_sample },
	{ .op = ERT_OP_AffineGrid, .compute = ert_cpu_affine_grid },
	{ .op = ERT_OP_RoiAlign, .workspace = ert_cpu_roi_align_workspace, .compute = ert_cpu_roi_align },
	{ .compute = NULL },
};
