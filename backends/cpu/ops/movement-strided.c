/* SPDX-License-Identifier: MIT */
/*
 * CPU: the strided-copy engine and the ops that are nothing but one strided
 * copy (Transpose, DepthToSpace, SpaceToDepth, Expand, Tile, Slice).
 */
#include <string.h>

#include "movement-cpu.h"

/* Bytes a parallel chunk should move at least; smaller jobs stay on one thread. */
#define MV_CHUNK_BYTES (64 * 1024)
/* Edge of the square tiles of the blocked transpose. */
#define MV_TILE 32

void ert_mv_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
	int64_t s = 1;

	for (int32_t i = rank - 1; i >= 0; i--) {
		strides[i] = s;
		s *= dims[i];
	}
}

struct strided_job {
	char *dst;
	const char *src;
	size_t es;
	struct ert_mv_strided s; /* collapsed */
	int64_t inner;           /* dims[rank - 1] */
	int64_t inner_stride;    /* stride[rank - 1] */
};

static inline void copy_elems(char *dst, const char *src, size_t es, int64_t n, int64_t stride)
{
	int64_t sb = stride * (int64_t)es;

	/* Fixed sizes let the compiler turn each memcpy into one load and store. */
	switch (es) {
	case 1:
		for (int64_t i = 0; i < n; i++)
			dst[i] = src[i * sb];
		break;
	case 2:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 2 * i, src + i * sb, 2);
		break;
	case 4:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 4 * i, src + i * sb, 4);
		break;
	case 8:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 8 * i, src + i * sb, 8);
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + es * (size_t)i, src + i * sb, es);
		break;
	}
}

/* Source offset (elements) of outer row @row over axes [0, naxes). */
static int64_t row_offset(const struct ert_mv_strided *s, int32_t naxes, int64_t row,
			  int64_t *idx)
{
	int64_t off = s->base;

	for (int32_t i = naxes - 1; i >= 0; i--) {
		idx[i] = row % s->dims[i];
		row /= s->dims[i];
		off += idx[i] * s->stride[i];
	}
	return off;
}

/* Advance the odometer @idx over axes [0, naxes) and return the offset change. */
static int64_t row_next(const struct ert_mv_strided *s, int32_t naxes, int64_t *idx)
{
	int64_t delta = 0;

	for (int32_t i = naxes - 1; i >= 0; i--) {
		delta += s->stride[i];
		if (++idx[i] < s->dims[i])
			break;
		delta -= s->stride[i] * s->dims[i];
		idx[i] = 0;
	}
	return delta;
}

static void strided_rows(void *arg, int64_t begin, int64_t end)
{
	const struct strided_job *j = arg;
	int64_t idx[ERT_MV_STRIDED_MAX_RANK];
	int32_t outer = j->s.rank - 1;
	int64_t off = row_offset(&j->s, outer, begin, idx);
	size_t row_bytes = (size_t)j->inner * j->es;

	for (int64_t r = begin; r < end; r++) {
		char *d = j->dst + (size_t)r * row_bytes;
		const char *src = j->src + off * (int64_t)j->es;

		if (j->inner_stride == 1)
			memcpy(d, src, row_bytes);
		else
			copy_elems(d, src, j->es, j->inner, j->inner_stride);
		off += row_next(&j->s, outer, idx);
	}
}

/*
 * Batched transpose: the last two output axes (A, B) read the source with
 * strides (1, sb), i.e. each batch is a B x A source matrix written as A x B.
 * Work items are (batch, tile of A rows).
 */
static void transpose_tiles(void *arg, int64_t begin, int64_t end)
{
	const struct strided_job *j = arg;
	int32_t nb = j->s.rank - 2;
	int64_t a_dim = j->s.dims[nb], b_dim = j->inner, sb = j->inner_stride;
	int64_t tiles = (a_dim + MV_TILE - 1) / MV_TILE;
	int64_t idx[ERT_MV_STRIDED_MAX_RANK];
	size_t es = j->es;

	for (int64_t w = begin; w < end; w++) {
		int64_t batch = w / tiles, a0 = (w % tiles) * MV_TILE;
		int64_t a1 = a0 + MV_TILE < a_dim ? a0 + MV_TILE : a_dim;
		int64_t boff = row_offset(&j->s, nb, batch, idx);
		char *dbase = j->dst + (size_t)(batch * a_dim * b_dim) * es;

		for (int64_t b0 = 0; b0 < b_dim; b0 += MV_TILE) {
			int64_t b1 = b0 + MV_TILE < b_dim ? b0 + MV_TILE : b_dim;

			for (int64_t a = a0; a < a1; a++)
				copy_elems(dbase + (size_t)(a * b_dim + b0) * es,
					   j->src + (boff + a + b0 * sb) * (int64_t)es, es, b1 - b0,
					   sb);
		}
	}
}

void ert_mv_strided_copy(struct ert_cpu *cpu, void *dst, const void *src, size_t esize,
			 const struct ert_mv_strided *in)
{
	struct strided_job j = { .dst = dst, .src = src, .es = esize };
	struct ert_mv_strided *s = &j.s;
	int64_t total = 1;
	int32_t r = 0;

	s->base = in->base;
	/* Drop size-1 axes and merge axes that are contiguous in the source. */
	for (int32_t i = 0; i < in->rank; i++) {
		if (in->dims[i] == 0)
			return;
		total *= in->dims[i];
		if (in->dims[i] == 1)
			continue;
		if (r > 0 && s->stride[r - 1] == in->stride[i] * in->dims[i]) {
			s->dims[r - 1] *= in->dims[i];
			s->stride[r - 1] = in->stride[i];
			continue;
		}
		s->dims[r] = in->dims[i];
		s->stride[r] = in->stride[i];
		r++;
	}
	if (r == 0) {
		memcpy(dst, (const char *)src + s->base * (int64_t)esize, esize);
		return;
	}
	s->rank = r;
	j.inner = s->dims[r - 1];
	j.inner_stride = s->stride[r - 1];

	struct ert_threadpool *pool = cpu ? cpu->pool : NULL;

	if (r >= 2 && j.inner_stride != 1 && s->stride[r - 2] == 1 && s->dims[r - 2] >= 8) {
		int64_t tiles = (s->dims[r - 2] + MV_TILE - 1) / MV_TILE;
		int64_t items = total / (s->dims[r - 2] * j.inner) * tiles;
		int64_t per_item = (int64_t)esize * MV_TILE * j.inner;

		ert_parallel_for(pool, items, 1 + MV_CHUNK_BYTES / per_item, transpose_tiles, &j);
		return;
	}
	int64_t rows = total / j.inner;
	int64_t row_bytes = j.inner * (int64_t)esize;

	ert_parallel_for(pool, rows, 1 + MV_CHUNK_BYTES / row_bytes, strided_rows, &j);
}

ert_status ert_mv_cpu_transpose(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	int64_t in_strides[ERT_MAX_RANK];
	uint32_t np;
	const int64_t *perm = ert_attr_ints(x->node, "perm", &np);
	struct ert_mv_strided s = { .rank = in->rank };

	ert_mv_strides(in->rank, in->dims, in_strides);
	for (int32_t i = 0; i < in->rank; i++) {
		int64_t p = perm ? perm[i] : in->rank - 1 - i;

		s.dims[i] = out->dims[i];
		s.stride[i] = in_strides[p];
	}
	ert_mv_strided_copy(cpu, out->data, in->data, ert_dtype_size(in->dtype), &s);
	return ERT_OK;
}

ert_status ert_mv_cpu_space_depth(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	int64_t b = ert_attr_int(x->node, "blocksize", 1);
	int64_t n = in->dims[0], c = in->dims[1], h = in->dims[2], w = in->dims[3];
	struct ert_mv_strided s = { .rank = 6 };

	if (x->node->op == ERT_OP_DepthToSpace) {
		int64_t c2 = c / (b * b), hw = h * w;
		bool crd = !strcmp(ert_attr_string(x->node, "mode", "DCR"), "CRD");
		/* Output viewed as [n, c2, h, b1, w, b2]. */
		int64_t dims[6] = { n, c2, h, b, w, b };
		int64_t sb1 = crd ? b * hw : b * c2 * hw, sb2 = crd ? hw : c2 * hw;
		int64_t sc2 = crd ? b * b * hw : hw;
		int64_t strides[6] = { c * hw, sc2, w, sb1, 1, sb2 };

		memcpy(s.dims, dims, sizeof(dims));
		memcpy(s.stride, strides, sizeof(strides));
	} else {
		/* Input viewed as [n, c, h2, b1, w2, b2], output as [n, b1, b2, c, h2, w2]. */
		int64_t dims[6] = { n, b, b, c, h / b, w / b };
		int64_t strides[6] = { c * h * w, w, 1, h * w, b * w, b };

		memcpy(s.dims, dims, sizeof(dims));
		memcpy(s.stride, strides, sizeof(strides));
	}
	ert_mv_strided_copy(cpu, x->out[0]->data, in->data, ert_dtype_size(in->dtype), &s);
	return ERT_OK;
}

ert_status ert_mv_cpu_expand(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	int64_t in_strides[ERT_MAX_RANK];
	struct ert_mv_strided s = { .rank = out->rank };
	int32_t lead = out->rank - in->rank;

	ert_mv_strides(in->rank, in->dims, in_strides);
	for (int32_t i = 0; i < out->rank; i++) {
		int32_t k = i - lead;

		s.dims[i] = out->dims[i];
		s.stride[i] = k < 0 || in->dims[k] == 1 ? 0 : in_strides[k];
	}
	ert_mv_strided_copy(cpu, out->data, in->data, ert_dtype_size(in->dtype), &s);
	return ERT_OK;
}

ert_status ert_mv_cpu_tile(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	int64_t in_strides[ERT_MAX_RANK];
	struct ert_mv_strided s = { .rank = 2 * in->rank };

	/* Output axis i of size rep*dim is walked as (rep: stride 0, dim: stride). */
	ert_mv_strides(in->rank, in->dims, in_strides);
	for (int32_t i = 0; i < in->rank; i++) {
		s.dims[2 * i] = in->dims[i] ? out->dims[i] / in->dims[i] : 0;
		s.stride[2 * i] = 0;
		s.dims[2 * i + 1] = in->dims[i];
		s.stride[2 * i + 1] = in_strides[i];
	}
	ert_mv_strided_copy(cpu, out->data, in->data, ert_dtype_size(in->dtype), &s);
	return ERT_OK;
}

ert_status ert_mv_cpu_slice(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_mv_slice p;
	int64_t in_strides[ERT_MAX_RANK];
	struct ert_mv_strided s = { .rank = in->rank };
	ert_status st;

	st = ert_mv_slice_params(x->node, err, ert_mv_cin(x), x->n_in, &p);
	if (st != ERT_OK)
		return st;
	ert_mv_strides(in->rank, in->dims, in_strides);
	for (int32_t i = 0; i < in->rank; i++) {
		s.dims[i] = p.dims[i];
		/* a length-1 axis never steps; its step may be huge */
		s.stride[i] = p.dims[i] > 1 ? p.step[i] * in_strides[i] : 0;
		s.base += p.start[i] * in_strides[i];
	}
	ert_mv_strided_copy(cpu, x->out[0]->data, in->data, ert_dtype_size(in->dtype), &s);
	return ERT_OK;
}
