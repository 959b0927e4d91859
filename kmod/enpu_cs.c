// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * enpu command stream decoder, validator and executor (freestanding C,
 * shared by enpu.ko and userspace; see enpu_cs.h).
 */
#include "enpu_cs.h"

/*
 * Every command is copied into this union before it is looked at, so that
 * the stream may be unaligned and a concurrent writer (userspace) cannot
 * change a field between its check and its use.
 */
union cs_cmd {
	struct enpu_cs_cmd hdr;
	struct enpu_cs_conv2d conv;
	struct enpu_cs_matmul mm;
	struct enpu_cs_eltwise elt;
	struct enpu_cs_pool pool;
	struct enpu_cs_lut lut;
	struct enpu_cs_copy copy;
};

static void cs_copy(void *dst, const void *src, u32 n)
{
	u8 *d = dst;
	const u8 *s = src;

	while (n--)
		*d++ = *s++;
}

static u32 cs_cmd_size(u32 opcode)
{
	switch (opcode) {
	case ENPU_OP_NOP:
		return sizeof(struct enpu_cs_cmd);
	case ENPU_OP_CONV2D:
		return sizeof(struct enpu_cs_conv2d);
	case ENPU_OP_MATMUL:
		return sizeof(struct enpu_cs_matmul);
	case ENPU_OP_ELTWISE:
		return sizeof(struct enpu_cs_eltwise);
	case ENPU_OP_POOL:
		return sizeof(struct enpu_cs_pool);
	case ENPU_OP_LUT:
		return sizeof(struct enpu_cs_lut);
	case ENPU_OP_COPY:
		return sizeof(struct enpu_cs_copy);
	default:
		return 0;
	}
}

/* ---- validation ---------------------------------------------------------- */

struct cs_vctx {
	const u64 *size;
	u32 num_regions;
	struct enpu_cs_info info;
};

static u64 cs_mul_sat(u64 a, u64 b)
{
	if (a && b > U64_MAX / a)
		return U64_MAX;
	return a * b;
}

/*
 * Work is counted in units of about one multiply-accumulate of the
 * executor's inner loops (a MATMUL or POOL tap, one input channel of a
 * CONV2D tap). A CONV2D tap costs CS_TAP_WORK units on top of its channels;
 * producing one output element costs CS_OUT_WORK units, an ELTWISE element
 * (up to three requantisations) CS_ELTWISE_WORK, a LUT or COPY element
 * CS_BYTE_WORK, and each row of a LUT or COPY (a call of the yield hook)
 * CS_ROW_WORK. The formula is part of the uAPI: see ENPU_CS_MAX_WORK.
 */
#define CS_TAP_WORK	4
#define CS_OUT_WORK	16
#define CS_ELTWISE_WORK	16
#define CS_BYTE_WORK	4
#define CS_ROW_WORK	16

static void cs_add_work(struct cs_vctx *v, u64 work)
{
	v->info.work = work > U64_MAX - v->info.work ? U64_MAX : v->info.work + work;
}

static int cs_tensor_check(struct cs_vctx *v, const struct enpu_cs_tensor *t,
			   u32 elem_size, int write)
{
	u64 extent = elem_size;
	int i;

	if (t->reserved || t->region >= v->num_regions)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (!t->dim[i] || t->dim[i] > ENPU_CS_MAX_DIM)
			return -EINVAL;
		/* < 2^16 * 2^32 per term, four terms: cannot overflow */
		extent += (u64)(t->dim[i] - 1) * t->stride[i];
	}
	if (t->offset > U64_MAX - extent)
		return -ERANGE;
	if (t->offset + extent > v->size[t->region])
		return -ERANGE;
	if (write)
		v->info.write_mask |= 1ull << t->region;
	else
		v->info.read_mask |= 1ull << t->region;
	return 0;
}

/* An absent optional tensor: ENPU_CS_NO_REGION and every other field zero. */
static int cs_tensor_absent(const struct enpu_cs_tensor *t)
{
	int i;

	if (t->region != ENPU_CS_NO_REGION)
		return 0;
	if (t->reserved || t->offset)
		return -EINVAL;
	for (i = 0; i < 4; i++)
		if (t->dim[i] || t->stride[i])
			return -EINVAL;
	return 1;
}

/* Bias (elem 4) or requant table (elem 8): dims (n,1,1,1), or absent. */
static int cs_vector_check(struct cs_vctx *v, const struct enpu_cs_tensor *t,
			   u32 n, u32 elem_size)
{
	int ret = cs_tensor_absent(t);

	if (ret)
		return ret < 0 ? ret : 0;
	if (t->dim[0] != n || t->dim[1] != 1 || t->dim[2] != 1 || t->dim[3] != 1)
		return -EINVAL;
	return cs_tensor_check(v, t, elem_size, 0);
}

/* Per-channel (mult, shift) table: 8-byte entries that must not overlap. */
static int cs_requant_check(struct cs_vctx *v, const struct enpu_cs_tensor *t, u32 n)
{
	int ret = cs_vector_check(v, t, n, 8);

	if (ret)
		return ret;
	if (t->region != ENPU_CS_NO_REGION && t->stride[0] < 8)
		return -EINVAL;
	return 0;
}

static int cs_in_range(s32 x, s32 lo, s32 hi)
{
	return x >= lo && x <= hi;
}

static int cs_quant_check(const struct enpu_cs_quant *q)
{
	if (!cs_in_range(q->in_zp, -128, 127) || !cs_in_range(q->in2_zp, -128, 127) ||
	    !cs_in_range(q->out_zp, -128, 127))
		return -EINVAL;
	if (!cs_in_range(q->act_min, -128, 127) || !cs_in_range(q->act_max, q->act_min, 127))
		return -EINVAL;
	if (q->out_mult < 0 || !cs_in_range(q->out_shift, -31, 30) || q->reserved)
		return -EINVAL;
	return 0;
}

static int cs_same_dims(const struct enpu_cs_tensor *a, const struct enpu_cs_tensor *b)
{
	int i;

	for (i = 0; i < 4; i++)
		if (a->dim[i] != b->dim[i])
			return 0;
	return 1;
}

/* Output extent of a windowed op along one axis; 0 when the window does not fit. */
static u32 cs_out_extent(u32 in, u32 pad_a, u32 pad_b, u32 k, u32 dil, u32 stride)
{
	u64 padded = (u64)in + pad_a + pad_b;
	u64 eff = (u64)dil * (k - 1) + 1;

	if (padded < eff)
		return 0;
	return (u32)((padded - eff) / stride + 1);
}

/* The int8 tensors a command reads (@b may be NULL) and the one it writes. */
static int cs_io_check(struct cs_vctx *v, const struct enpu_cs_tensor *a,
		       const struct enpu_cs_tensor *b, const struct enpu_cs_tensor *out)
{
	int ret = cs_tensor_check(v, a, 1, 0);

	if (!ret && b)
		ret = cs_tensor_check(v, b, 1, 0);
	if (!ret)
		ret = cs_tensor_check(v, out, 1, 1);
	return ret;
}

static int cs_check_conv(struct cs_vctx *v, const struct enpu_cs_conv2d *c)
{
	const struct enpu_cs_tensor *in = &c->in, *w = &c->weights, *out = &c->out;
	u32 oh, ow, oc;
	int ret;

	if (c->hdr.flags || c->reserved)
		return -EINVAL;
	ret = cs_quant_check(&c->quant);
	if (ret)
		return ret;
	ret = cs_io_check(v, in, w, out);
	if (ret)
		return ret;
	if (!cs_in_range(c->stride_h, 1, 255) || !cs_in_range(c->stride_w, 1, 255) ||
	    !cs_in_range(c->dil_h, 1, 255) || !cs_in_range(c->dil_w, 1, 255) ||
	    c->pad_top > 255 || c->pad_left > 255 || c->pad_bottom > 255 || c->pad_right > 255)
		return -EINVAL;
	oc = w->dim[0];
	if (!c->groups || in->dim[3] % c->groups || oc % c->groups ||
	    w->dim[3] != in->dim[3] / c->groups)
		return -EINVAL;
	oh = cs_out_extent(in->dim[1], c->pad_top, c->pad_bottom, w->dim[1], c->dil_h, c->stride_h);
	ow = cs_out_extent(in->dim[2], c->pad_left, c->pad_right, w->dim[2], c->dil_w, c->stride_w);
	if (!oh || !ow || out->dim[0] != in->dim[0] || out->dim[1] != oh ||
	    out->dim[2] != ow || out->dim[3] != oc)
		return -EINVAL;
	ret = cs_vector_check(v, &c->bias, oc, 4);
	if (ret)
		return ret;
	ret = cs_requant_check(v, &c->requant, oc);
	if (ret)
		return ret;
	/* KH * KW * (ICg + CS_TAP_WORK) < 2^49: cannot overflow */
	cs_add_work(v, cs_mul_sat(cs_mul_sat((u64)out->dim[0] * oh, (u64)ow * oc),
				  (u64)w->dim[1] * w->dim[2] * (w->dim[3] + CS_TAP_WORK) +
				  CS_OUT_WORK));
	return 0;
}

static int cs_check_matmul(struct cs_vctx *v, const struct enpu_cs_matmul *m)
{
	const struct enpu_cs_tensor *a = &m->a, *w = &m->w, *out = &m->out;
	int ret;

	if (m->hdr.flags)
		return -EINVAL;
	ret = cs_quant_check(&m->quant);
	if (ret)
		return ret;
	ret = cs_io_check(v, a, w, out);
	if (ret)
		return ret;
	if (a->dim[3] != 1 || w->dim[3] != 1 || out->dim[3] != 1 ||
	    w->dim[0] != a->dim[0] || out->dim[0] != a->dim[0] ||
	    w->dim[2] != a->dim[2] || out->dim[1] != a->dim[1] || out->dim[2] != w->dim[1])
		return -EINVAL;
	ret = cs_vector_check(v, &m->bias, w->dim[1], 4);
	if (ret)
		return ret;
	ret = cs_requant_check(v, &m->requant, w->dim[1]);
	if (ret)
		return ret;
	cs_add_work(v, cs_mul_sat((u64)out->dim[0] * out->dim[1],
				  (u64)out->dim[2] * (a->dim[2] + CS_OUT_WORK)));
	return 0;
}

static int cs_broadcasts_to(const struct enpu_cs_tensor *x, const struct enpu_cs_tensor *out)
{
	int i;

	for (i = 0; i < 4; i++)
		if (x->dim[i] != out->dim[i] && x->dim[i] != 1)
			return 0;
	return 1;
}

static u64 cs_elems(const struct enpu_cs_tensor *t)
{
	return (u64)t->dim[0] * t->dim[1] * t->dim[2] * t->dim[3];
}

/* LUT and COPY: CS_BYTE_WORK per element, CS_ROW_WORK per row (dims 0..2) */
static u64 cs_byte_work(const struct enpu_cs_tensor *t)
{
	u64 rows = (u64)t->dim[0] * t->dim[1] * t->dim[2];

	/* < 2^48 * (2^16 * 4 + 16): cannot overflow */
	return rows * ((u64)t->dim[3] * CS_BYTE_WORK + CS_ROW_WORK);
}

static int cs_check_eltwise(struct cs_vctx *v, const struct enpu_cs_eltwise *e)
{
	int ret;

	if (e->hdr.flags || e->reserved)
		return -EINVAL;
	ret = cs_quant_check(&e->quant);
	if (ret)
		return ret;
	ret = cs_io_check(v, &e->a, &e->b, &e->out);
	if (ret)
		return ret;
	if (!cs_broadcasts_to(&e->a, &e->out) || !cs_broadcasts_to(&e->b, &e->out))
		return -EINVAL;
	switch (e->op) {
	case ENPU_ELTWISE_ADD:
		if (e->a_mult < 0 || e->b_mult < 0 || !cs_in_range(e->a_shift, -31, 0) ||
		    !cs_in_range(e->b_shift, -31, 0))
			return -EINVAL;
		break;
	case ENPU_ELTWISE_MUL:
		if (e->a_mult || e->b_mult || e->a_shift || e->b_shift)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	cs_add_work(v, cs_mul_sat(cs_elems(&e->out), CS_ELTWISE_WORK));
	return 0;
}

static int cs_check_pool(struct cs_vctx *v, const struct enpu_cs_pool *p)
{
	const struct enpu_cs_tensor *in = &p->in, *out = &p->out;
	const struct enpu_cs_quant *q = &p->quant;
	u32 oh, ow;
	int ret;

	if (p->hdr.flags || p->reserved)
		return -EINVAL;
	ret = cs_quant_check(q);
	if (ret)
		return ret;
	if (q->in_zp || q->in2_zp || q->out_zp || q->out_mult || q->out_shift)
		return -EINVAL;
	ret = cs_io_check(v, in, NULL, out);
	if (ret)
		return ret;
	if (p->mode == ENPU_POOL_GLOBAL_AVG) {
		if (p->kernel_h || p->kernel_w || p->stride_h || p->stride_w || p->pad_top ||
		    p->pad_left || p->pad_bottom || p->pad_right)
			return -EINVAL;
		oh = 1;
		ow = 1;
	} else if (p->mode == ENPU_POOL_MAX || p->mode == ENPU_POOL_AVG) {
		if (!cs_in_range(p->kernel_h, 1, 255) || !cs_in_range(p->kernel_w, 1, 255) ||
		    !cs_in_range(p->stride_h, 1, 255) || !cs_in_range(p->stride_w, 1, 255) ||
		    p->pad_top >= p->kernel_h || p->pad_bottom >= p->kernel_h ||
		    p->pad_left >= p->kernel_w || p->pad_right >= p->kernel_w)
			return -EINVAL;
		oh = cs_out_extent(in->dim[1], p->pad_top, p->pad_bottom, p->kernel_h, 1,
				   p->stride_h);
		ow = cs_out_extent(in->dim[2], p->pad_left, p->pad_right, p->kernel_w, 1,
				   p->stride_w);
	} else {
		return -EINVAL;
	}
	if (!oh || !ow || out->dim[0] != in->dim[0] || out->dim[1] != oh ||
	    out->dim[2] != ow || out->dim[3] != in->dim[3])
		return -EINVAL;
	/* every output element visits its whole window, padding included */
	if (p->mode == ENPU_POOL_GLOBAL_AVG)
		cs_add_work(v, cs_mul_sat(cs_elems(out),
					  (u64)in->dim[1] * in->dim[2] + CS_OUT_WORK));
	else
		cs_add_work(v, cs_mul_sat(cs_elems(out),
					  (u64)p->kernel_h * p->kernel_w + CS_OUT_WORK));
	return 0;
}

static int cs_check_lut(struct cs_vctx *v, const struct enpu_cs_lut *l)
{
	const struct enpu_cs_tensor *t = &l->table;
	int ret;

	if (l->hdr.flags)
		return -EINVAL;
	ret = cs_io_check(v, &l->in, t, &l->out);
	if (ret)
		return ret;
	if (t->dim[0] != 256 || t->dim[1] != 1 || t->dim[2] != 1 || t->dim[3] != 1 ||
	    t->stride[0] != 1 || !cs_same_dims(&l->in, &l->out))
		return -EINVAL;
	cs_add_work(v, cs_byte_work(&l->out));
	return 0;
}

/* One past the last byte of a checked tensor of 1-byte elements. */
static u64 cs_end(const struct enpu_cs_tensor *t)
{
	u64 end = t->offset + 1;
	int i;

	for (i = 0; i < 4; i++)
		end += (u64)(t->dim[i] - 1) * t->stride[i];
	return end;
}

/*
 * COPY in one region: the byte ranges the two tensors span must not
 * intersect, unless the tensors are identical (a copy onto itself).
 */
static int cs_copy_overlaps(const struct enpu_cs_tensor *src, const struct enpu_cs_tensor *dst)
{
	int i, same = src->offset == dst->offset;

	if (src->region != dst->region)
		return 0;
	for (i = 0; i < 4; i++)
		same &= src->stride[i] == dst->stride[i];
	if (same)
		return 0;
	return src->offset < cs_end(dst) && dst->offset < cs_end(src);
}

static int cs_check_copy(struct cs_vctx *v, const struct enpu_cs_copy *c)
{
	int ret;

	if (c->hdr.flags)
		return -EINVAL;
	ret = cs_io_check(v, &c->src, NULL, &c->dst);
	if (ret)
		return ret;
	if (!cs_same_dims(&c->src, &c->dst) || cs_copy_overlaps(&c->src, &c->dst))
		return -EINVAL;
	cs_add_work(v, cs_byte_work(&c->dst));
	return 0;
}

static int cs_check_cmd(struct cs_vctx *v, const union cs_cmd *c)
{
	switch (c->hdr.opcode) {
	case ENPU_OP_NOP:
		return c->hdr.flags ? -EINVAL : 0;
	case ENPU_OP_CONV2D:
		return cs_check_conv(v, &c->conv);
	case ENPU_OP_MATMUL:
		return cs_check_matmul(v, &c->mm);
	case ENPU_OP_ELTWISE:
		return cs_check_eltwise(v, &c->elt);
	case ENPU_OP_POOL:
		return cs_check_pool(v, &c->pool);
	case ENPU_OP_LUT:
		return cs_check_lut(v, &c->lut);
	case ENPU_OP_COPY:
		return cs_check_copy(v, &c->copy);
	default:
		return -EINVAL;
	}
}

int enpu_cs_validate(const void *stream, u64 len, const u64 *region_size,
		     u32 num_regions, struct enpu_cs_info *info)
{
	struct cs_vctx v = { .size = region_size, .num_regions = num_regions };
	struct enpu_cs_header hdr;
	const u8 *p = stream;
	union cs_cmd cmd;
	u64 pos;
	u32 i;
	int ret;

	if (num_regions > ENPU_CS_MAX_REGIONS || len < sizeof(hdr))
		return -EINVAL;
	cs_copy(&hdr, p, sizeof(hdr));
	if (hdr.magic != ENPU_CS_MAGIC || hdr.version != ENPU_CS_VERSION ||
	    hdr.reserved || hdr.size != len || hdr.num_cmds > ENPU_CS_MAX_CMDS)
		return -EINVAL;

	pos = sizeof(hdr);
	for (i = 0; i < hdr.num_cmds; i++) {
		u32 size;

		if (len - pos < sizeof(cmd.hdr))
			return -EINVAL;
		cs_copy(&cmd.hdr, p + pos, sizeof(cmd.hdr));
		size = cs_cmd_size(cmd.hdr.opcode);
		if (!size || cmd.hdr.size != size || len - pos < size)
			return -EINVAL;
		cs_copy(&cmd, p + pos, size);
		ret = cs_check_cmd(&v, &cmd);
		if (ret)
			return ret;
		if (v.info.work > ENPU_CS_MAX_WORK)
			return -E2BIG;
		v.info.op_count[cmd.hdr.opcode]++;
		pos += size;
	}
	if (pos != len)
		return -EINVAL;
	v.info.num_cmds = hdr.num_cmds;
	if (info)
		*info = v.info;
	return 0;
}

/* ---- execution ----------------------------------------------------------- */

/*
 * The executor calls the yield hook after every command and output row, and
 * in the inner loops at least once per CS_POLL_WORK units of work (the same
 * units as the validator's estimate), so that no command, however its
 * tensors are shaped, runs for long without a chance to stop.
 */
#define CS_POLL_WORK	(64 * 1024)

struct cs_xctx {
	void *const *region;
	enpu_cs_yield_fn yield;
	void *arg;
	u64 pending;	/* work done since the hook was last called */
	int stop;	/* the hook asked to stop */
};

/* Call the hook; non-zero when execution must stop. */
static int cs_yield(struct cs_xctx *x)
{
	x->pending = 0;
	if (!x->stop && x->yield && x->yield(x->arg))
		x->stop = 1;
	return x->stop;
}

/* Account @n units of work, calling the hook when enough has accumulated. */
static int cs_work(struct cs_xctx *x, u64 n)
{
	x->pending += n;
	if (x->pending >= CS_POLL_WORK)
		return cs_yield(x);
	return x->stop;
}

static u8 *cs_at(struct cs_xctx *x, const struct enpu_cs_tensor *t,
		 u32 i0, u32 i1, u32 i2, u32 i3)
{
	return (u8 *)x->region[t->region] + t->offset + (u64)i0 * t->stride[0] +
	       (u64)i1 * t->stride[1] + (u64)i2 * t->stride[2] + (u64)i3 * t->stride[3];
}

/* Little-endian loads that do not care about alignment. */
static s32 cs_load_s32(const u8 *p)
{
	return (s32)((u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24);
}

/* TFLite SaturatingRoundingDoublingHighMul */
static s32 cs_srdhm(s32 a, s32 b)
{
	s64 ab, nudge;

	if (a == b && a == S32_MIN)
		return S32_MAX;
	ab = (s64)a * b;
	nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
	return (s32)((ab + nudge) / ((s64)1 << 31));
}

/* TFLite RoundingDivideByPOT: round half away from zero */
static s32 cs_rdivpot(s32 x, int exponent)
{
	s64 mask, rem, thr;

	if (exponent <= 0)
		return x;
	mask = ((s64)1 << exponent) - 1;
	rem = (s64)x & mask;
	thr = (mask >> 1) + (x < 0 ? 1 : 0);
	return (s32)(((s64)x >> exponent) + (rem > thr ? 1 : 0));
}

static s32 cs_requant(s32 x, s32 mult, s32 shift)
{
	/* table values are read at run time: clamp them to stay defined */
	if (shift > 30)
		shift = 30;
	if (shift < -31)
		shift = -31;
	if (mult < 0)
		mult = 0;
	if (shift > 0)
		x = (s32)((u32)x << shift);
	return cs_rdivpot(cs_srdhm(x, mult), shift > 0 ? 0 : -shift);
}

static s8 cs_out8(s32 acc, const struct enpu_cs_quant *q)
{
	s64 v = (s64)acc + q->out_zp;

	if (v < q->act_min)
		v = q->act_min;
	if (v > q->act_max)
		v = q->act_max;
	return (s8)v;
}

static void cs_channel_quant(struct cs_xctx *x, const struct enpu_cs_tensor *bias,
			     const struct enpu_cs_tensor *rq, const struct enpu_cs_quant *q,
			     u32 o, s32 *b, s32 *m, s32 *s)
{
	*b = bias->region == ENPU_CS_NO_REGION ? 0 : cs_load_s32(cs_at(x, bias, o, 0, 0, 0));
	if (rq->region == ENPU_CS_NO_REGION) {
		*m = q->out_mult;
		*s = q->out_shift;
	} else {
		const u8 *p = cs_at(x, rq, o, 0, 0, 0);

		*m = cs_load_s32(p);
		*s = cs_load_s32(p + 4);
	}
}

/*
 * The accumulator of one CONV2D output element over its receptive field;
 * meaningless when the yield hook asked to stop (x->stop) on the way.
 */
static u32 cs_conv_acc(struct cs_xctx *x, const struct enpu_cs_conv2d *c,
		       u32 n, u32 oy, u32 ox, u32 o)
{
	const struct enpu_cs_tensor *in = &c->in, *w = &c->weights;
	const struct enpu_cs_quant *q = &c->quant;
	u32 icg = w->dim[3], ic0 = (o / (w->dim[0] / c->groups)) * icg;
	u32 acc = 0, ky, kx, i;

	for (ky = 0; ky < w->dim[1]; ky++) {
		s64 iy = (s64)oy * c->stride_h - c->pad_top + (s64)ky * c->dil_h;

		if (iy < 0 || iy >= in->dim[1]) {
			if (cs_work(x, (u64)w->dim[2] * (icg + CS_TAP_WORK)))
				return 0;
			continue;
		}
		for (kx = 0; kx < w->dim[2]; kx++) {
			s64 ix = (s64)ox * c->stride_w - c->pad_left + (s64)kx * c->dil_w;

			/* at most ENPU_CS_MAX_DIM multiply-accumulates per poll */
			if (cs_work(x, icg + CS_TAP_WORK))
				return 0;
			if (ix < 0 || ix >= in->dim[2])
				continue;
			for (i = 0; i < icg; i++) {
				s32 a = *(s8 *)cs_at(x, in, n, (u32)iy, (u32)ix, ic0 + i);
				s32 b = *(s8 *)cs_at(x, w, o, ky, kx, i);

				acc += (u32)((a - q->in_zp) * (b - q->in2_zp));
			}
		}
	}
	return acc;
}

static int cs_exec_conv(struct cs_xctx *x, const struct enpu_cs_conv2d *c)
{
	const struct enpu_cs_tensor *out = &c->out;
	u32 n, oy, ox, o;

	for (n = 0; n < out->dim[0]; n++) {
		for (oy = 0; oy < out->dim[1]; oy++) {
			for (ox = 0; ox < out->dim[2]; ox++) {
				for (o = 0; o < out->dim[3]; o++) {
					s32 bias, mult, shift, acc;

					cs_channel_quant(x, &c->bias, &c->requant, &c->quant, o,
							 &bias, &mult, &shift);
					acc = (s32)((u32)bias + cs_conv_acc(x, c, n, oy, ox, o));
					if (x->stop || cs_work(x, CS_OUT_WORK))
						return -ECANCELED;
					acc = cs_requant(acc, mult, shift);
					acc = cs_out8(acc, &c->quant);
					*(s8 *)cs_at(x, out, n, oy, ox, o) = (s8)acc;
				}
			}
			if (cs_yield(x))
				return -ECANCELED;
		}
	}
	return 0;
}

static int cs_exec_matmul(struct cs_xctx *x, const struct enpu_cs_matmul *mm)
{
	const struct enpu_cs_tensor *a = &mm->a, *w = &mm->w, *out = &mm->out;
	const struct enpu_cs_quant *q = &mm->quant;
	u32 b, m, n, k;

	for (b = 0; b < out->dim[0]; b++) {
		for (m = 0; m < out->dim[1]; m++) {
			for (n = 0; n < out->dim[2]; n++) {
				s32 bias, mult, shift;
				u32 acc;

				/* at most ENPU_CS_MAX_DIM multiply-accumulates per poll */
				if (cs_work(x, (u64)a->dim[2] + CS_OUT_WORK))
					return -ECANCELED;
				cs_channel_quant(x, &mm->bias, &mm->requant, q, n,
						 &bias, &mult, &shift);
				acc = (u32)bias;
				for (k = 0; k < a->dim[2]; k++) {
					s32 va = *(s8 *)cs_at(x, a, b, m, k, 0);
					s32 vw = *(s8 *)cs_at(x, w, b, n, k, 0);

					acc += (u32)((va - q->in_zp) * (vw - q->in2_zp));
				}
				*(s8 *)cs_at(x, out, b, m, n, 0) =
					cs_out8(cs_requant((s32)acc, mult, shift), q);
			}
			if (cs_yield(x))
				return -ECANCELED;
		}
	}
	return 0;
}

static u32 cs_bidx(const struct enpu_cs_tensor *t, int d, u32 i)
{
	return t->dim[d] == 1 ? 0 : i;
}

static int cs_exec_eltwise(struct cs_xctx *x, const struct enpu_cs_eltwise *e)
{
	const struct enpu_cs_tensor *ta = &e->a, *tb = &e->b, *out = &e->out;
	const struct enpu_cs_quant *q = &e->quant;
	u32 i0, i1, i2, i3;

	for (i0 = 0; i0 < out->dim[0]; i0++) {
		for (i1 = 0; i1 < out->dim[1]; i1++) {
			for (i2 = 0; i2 < out->dim[2]; i2++) {
				for (i3 = 0; i3 < out->dim[3]; i3++) {
					s32 a = *(s8 *)cs_at(x, ta, cs_bidx(ta, 0, i0),
							     cs_bidx(ta, 1, i1),
							     cs_bidx(ta, 2, i2),
							     cs_bidx(ta, 3, i3));
					s32 b = *(s8 *)cs_at(x, tb, cs_bidx(tb, 0, i0),
							     cs_bidx(tb, 1, i1),
							     cs_bidx(tb, 2, i2),
							     cs_bidx(tb, 3, i3));
					s32 r;

					if (cs_work(x, CS_ELTWISE_WORK))
						return -ECANCELED;
					a -= q->in_zp;
					b -= q->in2_zp;
					if (e->op == ENPU_ELTWISE_ADD) {
						s32 sa = cs_requant(a * (1 << 20), e->a_mult,
								    e->a_shift);
						s32 sb = cs_requant(b * (1 << 20), e->b_mult,
								    e->b_shift);

						r = (s32)((u32)sa + (u32)sb);
					} else {
						r = a * b;
					}
					r = cs_requant(r, q->out_mult, q->out_shift);
					*(s8 *)cs_at(x, out, i0, i1, i2, i3) = cs_out8(r, q);
				}
			}
			if (cs_yield(x))
				return -ECANCELED;
		}
	}
	return 0;
}

/*
 * One POOL output element; the window is clipped to the input. Meaningless
 * when the yield hook asked to stop (x->stop) on the way.
 */
static s8 cs_pool_point(struct cs_xctx *x, const struct enpu_cs_pool *p, const u32 *win,
			u32 n, u32 oy, u32 ox, u32 c)
{
	const struct enpu_cs_tensor *in = &p->in;
	s64 y0 = (s64)oy * win[2] - p->pad_top;
	s64 x0 = (s64)ox * win[3] - p->pad_left;
	s64 sum = 0, count = 0, r;
	s32 max = -128;
	u32 ky, kx;

	for (ky = 0; ky < win[0]; ky++) {
		s64 iy = y0 + ky;

		/* at most ENPU_CS_MAX_DIM taps per poll */
		if (cs_work(x, win[1]))
			return 0;
		if (iy < 0 || iy >= in->dim[1])
			continue;
		for (kx = 0; kx < win[1]; kx++) {
			s64 ix = x0 + kx;
			s32 v;

			if (ix < 0 || ix >= in->dim[2])
				continue;
			v = *(s8 *)cs_at(x, in, n, (u32)iy, (u32)ix, c);
			sum += v;
			count++;
			if (v > max)
				max = v;
		}
	}
	if (p->mode == ENPU_POOL_MAX)
		r = max;
	else if (!count)
		r = 0;
	else if (sum > 0)
		r = (sum + count / 2) / count;
	else
		r = (sum - count / 2) / count;
	if (r < p->quant.act_min)
		r = p->quant.act_min;
	if (r > p->quant.act_max)
		r = p->quant.act_max;
	return (s8)r;
}

static int cs_exec_pool(struct cs_xctx *x, const struct enpu_cs_pool *p)
{
	const struct enpu_cs_tensor *out = &p->out;
	/* window height, width, vertical and horizontal stride */
	u32 win[4] = { p->kernel_h, p->kernel_w, p->stride_h, p->stride_w };
	u32 n, oy, ox, c;

	if (p->mode == ENPU_POOL_GLOBAL_AVG) {
		win[0] = p->in.dim[1];
		win[1] = p->in.dim[2];
		win[2] = 1;
		win[3] = 1;
	}
	for (n = 0; n < out->dim[0]; n++) {
		for (oy = 0; oy < out->dim[1]; oy++) {
			for (ox = 0; ox < out->dim[2]; ox++) {
				for (c = 0; c < out->dim[3]; c++) {
					s8 r = cs_pool_point(x, p, win, n, oy, ox, c);

					if (x->stop || cs_work(x, CS_OUT_WORK))
						return -ECANCELED;
					*(s8 *)cs_at(x, out, n, oy, ox, c) = r;
				}
			}
			if (cs_yield(x))
				return -ECANCELED;
		}
	}
	return 0;
}

/* LUT and COPY: the same 4-D walk, one byte per element. */
static int cs_exec_bytes(struct cs_xctx *x, const struct enpu_cs_tensor *src,
			 const struct enpu_cs_tensor *dst, const struct enpu_cs_tensor *table)
{
	u32 i0, i1, i2, i3;

	for (i0 = 0; i0 < dst->dim[0]; i0++) {
		for (i1 = 0; i1 < dst->dim[1]; i1++) {
			for (i2 = 0; i2 < dst->dim[2]; i2++) {
				for (i3 = 0; i3 < dst->dim[3]; i3++) {
					u8 v;

					if (cs_work(x, CS_BYTE_WORK))
						return -ECANCELED;
					v = *cs_at(x, src, i0, i1, i2, i3);
					if (table)
						v = *cs_at(x, table, v, 0, 0, 0);
					*cs_at(x, dst, i0, i1, i2, i3) = v;
				}
				if (cs_yield(x))
					return -ECANCELED;
			}
		}
	}
	return 0;
}

static int cs_exec_cmd(struct cs_xctx *x, const union cs_cmd *c)
{
	switch (c->hdr.opcode) {
	case ENPU_OP_CONV2D:
		return cs_exec_conv(x, &c->conv);
	case ENPU_OP_MATMUL:
		return cs_exec_matmul(x, &c->mm);
	case ENPU_OP_ELTWISE:
		return cs_exec_eltwise(x, &c->elt);
	case ENPU_OP_POOL:
		return cs_exec_pool(x, &c->pool);
	case ENPU_OP_LUT:
		return cs_exec_bytes(x, &c->lut.in, &c->lut.out, &c->lut.table);
	case ENPU_OP_COPY:
		return cs_exec_bytes(x, &c->copy.src, &c->copy.dst, NULL);
	default:
		return 0;
	}
}

int enpu_cs_execute(const void *stream, void *const *region, u32 num_regions,
		    enpu_cs_yield_fn yield, void *arg)
{
	struct cs_xctx x = { .region = region, .yield = yield, .arg = arg };
	struct enpu_cs_header hdr;
	const u8 *p = stream;
	union cs_cmd cmd;
	u64 pos = sizeof(hdr);
	u32 i;
	int ret;

	cs_copy(&hdr, p, sizeof(hdr));
	for (i = 0; i < hdr.num_cmds; i++) {
		cs_copy(&cmd.hdr, p + pos, sizeof(cmd.hdr));
		cs_copy(&cmd, p + pos, cmd.hdr.size);
		ret = cs_exec_cmd(&x, &cmd);
		if (ret)
			return ret;
		if (cs_yield(&x))
			return -ECANCELED;
		pos += cmd.hdr.size;
	}
	return 0;
}
