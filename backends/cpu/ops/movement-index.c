/* SPDX-License-Identifier: MIT */
/* CPU: Pad, CenterCropPad and the gathers (Gather, GatherElements, GatherND). */
#include <string.h>

#include "movement-cpu.h"

#define MV_CHUNK_BYTES (64 * 1024)

/* Source index along one axis for output index @o, or -1 for the constant. */
static int64_t pad_src(enum ert_mv_pad_mode mode, int64_t o, int64_t begin, int64_t dim)
{
	int64_t i = o - begin, period;

	if (i >= 0 && i < dim)
		return i;
	switch (mode) {
	case ERT_MV_PAD_EDGE:
		return i < 0 ? 0 : dim - 1;
	case ERT_MV_PAD_WRAP:
		return ((i % dim) + dim) % dim;
	case ERT_MV_PAD_REFLECT:
		if (dim == 1)
			return 0;
		period = 2 * (dim - 1);
		i = ((i % period) + period) % period;
		return i < dim ? i : period - i;
	case ERT_MV_PAD_CONSTANT:
		break;
	}
	return -1;
}

struct pad_job {
	const struct ert_mv_pad *p;
	const int64_t *in_dims;
	int64_t in_strides[ERT_MAX_RANK];
	const char *src;
	char *dst;
	size_t es;
	const void *value;
};

static void pad_rows(void *arg, int64_t begin, int64_t end)
{
	const struct pad_job *j = arg;
	const struct ert_mv_pad *p = j->p;
	int32_t last = p->rank - 1;
	int64_t ow = p->dims[last], iw = j->in_dims[last], b = p->begin[last];
	/* Output columns [c0, c1) map straight onto input columns [c0 - b, c1 - b). */
	int64_t c0 = b > 0 ? b : 0, c1 = b + iw < ow ? b + iw : ow;
	size_t es = j->es;

	for (int64_t r = begin; r < end; r++) {
		char *d = j->dst + (size_t)(r * ow) * es;
		int64_t rem = r, off = 0;
		bool constant = false;

		for (int32_t a = last - 1; a >= 0; a--) {
			int64_t o = rem % p->dims[a], s;

			rem /= p->dims[a];
			s = pad_src(p->mode, o, p->begin[a], j->in_dims[a]);
			if (s < 0) {
				constant = true;
				break;
			}
			off += s * j->in_strides[a];
		}
		if (constant) {
			ert_mv_fill(d, j->value, es, ow);
			continue;
		}
		const char *srow = j->src + (size_t)off * es;

		for (int64_t c = 0; c < ow; c++) {
			if (c == c0 && c1 > c0) {
				memcpy(d + (size_t)c * es, srow + (size_t)(c0 - b) * es,
				       (size_t)(c1 - c0) * es);
				c = c1 - 1;
				continue;
			}
			int64_t s = pad_src(p->mode, c, b, iw);

			if (s < 0)
				memcpy(d + (size_t)c * es, j->value, es);
			else
				memcpy(d + (size_t)c * es, srow + (size_t)s * es, es);
		}
	}
}

ert_status ert_mv_cpu_pad(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	struct ert_mv_pad p;
	unsigned char value[16] = { 0 };
	size_t es = ert_dtype_size(in->dtype);
	ert_status st;

	st = ert_mv_pad_params(x->node, err, ert_mv_cin(x), x->n_in, &p);
	if (st != ERT_OK)
		return st;
	if (p.has_value_input)
		memcpy(value, x->in[2]->data, es);
	else if (!ert_mv_store_scalar(in->dtype, p.value, value))
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "no constant of type %s", ert_dtype_name(in->dtype));
	if (out->numel == 0)
		return ERT_OK;
	if (in->rank == 0) {
		memcpy(out->data, in->data, es);
		return ERT_OK;
	}
	struct pad_job j = {
		.p = &p, .in_dims = in->dims, .src = in->data, .dst = out->data,
		.es = es, .value = value,
	};
	int64_t rows = out->numel / p.dims[p.rank - 1];
	int64_t row_bytes = p.dims[p.rank - 1] * (int64_t)es;

	ert_mv_strides(in->rank, in->dims, j.in_strides);
	ert_parallel_for(cpu->pool, rows, 1 + MV_CHUNK_BYTES / row_bytes, pad_rows, &j);
	return ERT_OK;
}

static int64_t index_at(const struct ert_value *v, int64_t i)
{
	return v->dtype == ERT_DTYPE_INT32 ? ((const int32_t *)v->data)[i]
					   : ((const int64_t *)v->data)[i];
}

/* Every index in [-dim, dim)? Reports the first that is not. */
static ert_status check_indices(const struct ert_exec *x, struct ert_err *err,
				const struct ert_value *idx, int64_t dim)
{
	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t k = index_at(idx, i);

		if (k < -dim || k >= dim)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "index %lld out of range for an axis of size %lld",
					     (long long)k, (long long)dim);
	}
	return ERT_OK;
}

struct gather_job {
	const char *src;
	char *dst;
	const struct ert_value *idx;
	int64_t nidx, axis_dim;
	size_t block; /* bytes per (outer, index): inner elements */
};

static void gather_items(void *arg, int64_t begin, int64_t end)
{
	const struct gather_job *j = arg;

	for (int64_t w = begin; w < end; w++) {
		int64_t o = w / j->nidx, k = index_at(j->idx, w % j->nidx);

		if (k < 0)
			k += j->axis_dim;
		memcpy(j->dst + (size_t)w * j->block,
		       j->src + (size_t)(o * j->axis_dim + k) * j->block, j->block);
	}
}

ert_status ert_mv_cpu_gather(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1];
	int32_t axis;
	ert_status st;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "bad axis");
	st = check_indices(x, err, idx, in->dims[axis]);
	if (st != ERT_OK)
		return st;
	struct gather_job j = {
		.src = in->data, .dst = x->out[0]->data, .idx = idx, .nidx = idx->numel,
		.axis_dim = in->dims[axis],
	};
	int64_t outer = ert_shape_numel(axis, in->dims);
	int64_t inner = ert_shape_numel(in->rank - axis - 1, in->dims + axis + 1);

	j.block = (size_t)inner * ert_dtype_size(in->dtype);
	if (j.block == 0 || outer * j.nidx == 0)
		return ERT_OK;
	ert_parallel_for(cpu->pool, outer * j.nidx, 1 + MV_CHUNK_BYTES / (int64_t)j.block,
			 gather_items, &j);
	return ERT_OK;
}

ert_status ert_mv_cpu_gather_elements(struct ert_cpu *cpu, struct ert_exec *x,
				      struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1];
	int64_t in_strides[ERT_MAX_RANK], pos[ERT_MAX_RANK] = { 0 };
	size_t es = ert_dtype_size(in->dtype);
	char *dst = x->out[0]->data;
	const char *src = in->data;
	int32_t axis;
	ert_status st;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "bad axis");
	st = check_indices(x, err, idx, in->dims[axis]);
	if (st != ERT_OK)
		return st;
	ert_mv_strides(in->rank, in->dims, in_strides);
	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t off = 0, k = index_at(idx, i);

		if (k < 0)
			k += in->dims[axis];
		for (int32_t a = 0; a < in->rank; a++)
			off += (a == axis ? k : pos[a]) * in_strides[a];
		memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
		for (int32_t a = idx->rank - 1; a >= 0; a--) {
			if (++pos[a] < idx->dims[a])
				break;
			pos[a] = 0;
		}
	}
	return ERT_OK;
}

ert_status ert_mv_cpu_gather_nd(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1];
	int64_t b = ert_attr_int(x->node, "batch_dims", 0);
	int64_t k = idx->dims[idx->rank - 1], in_strides[ERT_MAX_RANK];
	int64_t batches = ert_shape_numel((int32_t)b, idx->dims);
	int64_t tuples = batches ? idx->numel / k / batches : 0;
	int64_t slice = ert_shape_numel(in->rank - (int32_t)(b + k), in->dims + b + k);
	int64_t batch_stride = ert_shape_numel(in->rank - (int32_t)b, in->dims + b);
	size_t es = ert_dtype_size(in->dtype), sbytes = (size_t)slice * es;
	char *dst = x->out[0]->data;
	const char *src = in->data;

	ert_mv_strides(in->rank, in->dims, in_strides);
	for (int64_t bt = 0; bt < batches; bt++) {
		for (int64_t t = 0; t < tuples; t++) {
			int64_t base = (bt * tuples + t) * k, off = bt * batch_stride;

			for (int64_t c = 0; c < k; c++) {
				int64_t d = in->dims[b + c], v = index_at(idx, base + c);

				if (v < -d || v >= d)
					return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
							     "index %lld out of range for an axis of "
							     "size %lld", (long long)v, (long long)d);
				off += (v < 0 ? v + d : v) * in_strides[b + c];
			}
			memcpy(dst + (size_t)(bt * tuples + t) * sbytes, src + (size_t)off * es,
			       sbytes);
		}
	}
	return ERT_OK;
}
