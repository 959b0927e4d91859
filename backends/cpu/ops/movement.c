/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: movement ops. This file has the table, the plain
 * copies (Reshape, Flatten, Squeeze, Unsqueeze), Concat and Split; the rest
 * live in movement-*.c.
 */
#include <string.h>

#include "movement-cpu.h"

#define MV_COPY_CHUNK (256 * 1024)

bool ert_mv_cpu_supports(const struct ert_exec *x)
{
	for (uint32_t i = 0; i < x->n_out; i++)
		if (x->out[i] && ert_dtype_size(x->out[i]->dtype) == 0)
			return false;
	return true;
}

struct copy_job {
	char *dst;
	const char *src;
	size_t n;
};

static void copy_chunks(void *arg, int64_t begin, int64_t end)
{
	const struct copy_job *j = arg;
	size_t b = (size_t)begin * MV_COPY_CHUNK, e = (size_t)end * MV_COPY_CHUNK;

	if (e > j->n)
		e = j->n;
	memcpy(j->dst + b, j->src + b, e - b);
}

void ert_mv_copy(struct ert_cpu *cpu, void *dst, const void *src, size_t nbytes)
{
	const char *s = src;
	char *d = dst;

	if (d == s || nbytes == 0)
		return;
	if ((d < s && d + nbytes > s) || (s < d && s + nbytes > d)) {
		memmove(d, s, nbytes);
		return;
	}
	struct copy_job j = { d, s, nbytes };
	int64_t chunks = (int64_t)((nbytes + MV_COPY_CHUNK - 1) / MV_COPY_CHUNK);

	ert_parallel_for(cpu ? cpu->pool : NULL, chunks, 1, copy_chunks, &j);
}

void ert_mv_fill(void *dst, const void *elem, size_t esize, int64_t count)
{
	char *d = dst;
	const unsigned char *e = elem;
	size_t k;

	for (k = 0; k < esize && e[k] == e[0]; k++)
		;
	if (k == esize) { /* every byte alike (zero, all ones): memset */
		memset(d, e[0], esize * (size_t)count);
		return;
	}
	if (count <= 0)
		return;
	/*
	 * One element, then what is written copied after itself (doubling) up
	 * to 64 KiB, then that block again and again: memcpy's speed with its
	 * source in cache, where a memcpy call per element ran at 3 GB/s (151
	 * MB of float, the ONNX light AlexNet's ConstantOfShape weight, into a
	 * buffer already mapped: 49 -> 16.5 ms on Sapphire Rapids). Every copy
	 * is a whole number of elements.
	 */
	size_t done = esize, total = esize * (size_t)count, blk;

	memcpy(d, elem, esize);
	while (done < total && done < ((size_t)64 << 10)) {
		size_t n = done < total - done ? done : total - done;

		memcpy(d + done, d, n);
		done += n;
	}
	blk = done;
	while (done < total) {
		size_t n = blk < total - done ? blk : total - done;

		memcpy(d + done, d, n);
		done += n;
	}
}

static ert_status cpu_copy(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	ert_mv_copy(cpu, x->out[0]->data, x->in[0]->data, x->out[0]->nbytes);
	return ERT_OK;
}

/* Concat and Split move blocks of [outer][axis * inner] between buffers. */
struct block_job {
	char *big;                 /* the concatenated tensor */
	char *part;                /* one input (Concat) or output (Split) */
	size_t big_row, part_row;  /* bytes per outer index */
	size_t offset;             /* of the part inside a big row */
	bool to_big;
};

static void block_rows(void *arg, int64_t begin, int64_t end)
{
	const struct block_job *j = arg;

	for (int64_t o = begin; o < end; o++) {
		char *b = j->big + (size_t)o * j->big_row + j->offset;
		char *p = j->part + (size_t)o * j->part_row;

		if (j->to_big)
			memcpy(b, p, j->part_row);
		else
			memcpy(p, b, j->part_row);
	}
}

static void move_blocks(struct ert_cpu *cpu, const struct ert_value *big, int32_t axis,
			struct ert_value *part, size_t offset_elems, bool to_big)
{
	size_t es = ert_dtype_size(big->dtype);
	int64_t outer = ert_shape_numel(axis, big->dims);
	int64_t inner = ert_shape_numel(big->rank - axis - 1, big->dims + axis + 1);
	struct block_job j = {
		.big = big->data,
		.part = part->data,
		.big_row = (size_t)(big->dims[axis] * inner) * es,
		.part_row = (size_t)(part->dims[axis] * inner) * es,
		.offset = offset_elems * (size_t)inner * es,
		.to_big = to_big,
	};

	if (j.part_row == 0 || outer == 0)
		return;
	ert_parallel_for(cpu ? cpu->pool : NULL, outer, 1 + (int64_t)(MV_COPY_CHUNK / j.part_row),
			 block_rows, &j);
}

static ert_status cpu_concat(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value *out = x->out[0];
	int32_t axis;
	size_t off = 0;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 1), out->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "bad axis");
	for (uint32_t i = 0; i < x->n_in; i++) {
		if (!x->in[i])
			continue;
		move_blocks(cpu, out, axis, x->in[i], off, true);
		off += (size_t)x->in[i]->dims[axis];
	}
	return ERT_OK;
}

static ert_status cpu_split(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	int32_t axis;
	size_t off = 0;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "bad axis");
	for (uint32_t i = 0; i < x->n_out; i++) {
		if (!x->out[i]) /* omitted outputs still take their share of the axis */
			return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
					     "omitted output %u", i);
		move_blocks(cpu, in, axis, x->out[i], off, false);
		off += (size_t)x->out[i]->dims[axis];
	}
	return ERT_OK;
}

#define MV_OP(name, fn) { .op = ERT_OP_##name, .supports = ert_mv_cpu_supports, .compute = fn }
/* Plain byte copies: any type, packed 4-bit ones included. */
#define MV_COPY_OP(name) { .op = ERT_OP_##name, .compute = cpu_copy }

const struct ert_cpu_op ert_cpu_ops_movement[] = {
	MV_COPY_OP(Reshape),
	MV_COPY_OP(Flatten),
	MV_COPY_OP(Squeeze),
	MV_COPY_OP(Unsqueeze),
	MV_OP(Concat, cpu_concat),
	MV_OP(Split, cpu_split),
	MV_OP(Transpose, ert_mv_cpu_transpose),
	MV_OP(DepthToSpace, ert_mv_cpu_space_depth),
	MV_OP(SpaceToDepth, ert_mv_cpu_space_depth),
	MV_OP(Expand, ert_mv_cpu_expand),
	MV_OP(Tile, ert_mv_cpu_tile),
	MV_OP(Slice, ert_mv_cpu_slice),
	MV_OP(Pad, ert_mv_cpu_pad),
	MV_OP(CenterCropPad, ert_mv_cpu_pad),
	MV_OP(Gather, ert_mv_cpu_gather),
	MV_OP(GatherElements, ert_mv_cpu_gather_elements),
	MV_OP(GatherND, ert_mv_cpu_gather_nd),
	MV_OP(ScatterElements, ert_mv_cpu_scatter_elements),
	MV_OP(Scatter, ert_mv_cpu_scatter_elements),
	MV_OP(ScatterND, ert_mv_cpu_scatter_nd),
	MV_OP(Shape, ert_mv_cpu_shape),
	MV_OP(Size, ert_mv_cpu_size),
	MV_OP(Constant, ert_mv_cpu_constant),
	MV_OP(ConstantOfShape, ert_mv_cpu_constant_of_shape),
	MV_OP(Range, ert_mv_cpu_range),
	MV_OP(EyeLike, ert_mv_cpu_eye_like),
	MV_OP(OneHot, ert_mv_cpu_one_hot),
	MV_OP(Trilu, ert_mv_cpu_trilu),
	{ .compute = NULL },
};
