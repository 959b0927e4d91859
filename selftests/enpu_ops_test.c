// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Every opcode run on the device and checked element by element against a
 * plain implementation written here from the uAPI's description (not the
 * shared executor): TFLite int8 rules, per-channel requantisation, zero
 * points, bias and the fused clamp.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define ARENA (1u << 20)
#define SEC 1000000000ll

/* ---- reference arithmetic ------------------------------------------------- */

static int32_t ref_high_mul(int32_t a, int32_t b)
{
	int64_t ab = (int64_t)a * b;

	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	if (ab >= 0)
		return (int32_t)((ab + (1ll << 30)) >> 31);
	return (int32_t)-((-ab + (1ll << 30) - 1) >> 31);
}

static int32_t ref_shift_round(int32_t x, int e)
{
	int64_t half;

	if (e == 0)
		return x;
	half = 1ll << (e - 1);
	if (x >= 0)
		return (int32_t)(((int64_t)x + half) >> e);
	return (int32_t)-((-(int64_t)x + half) >> e);
}

static int32_t ref_requant(int32_t x, int32_t m, int32_t s)
{
	int64_t shifted = (int64_t)x * (s > 0 ? (1ll << s) : 1);

	return ref_shift_round(ref_high_mul((int32_t)shifted, m), s > 0 ? 0 : -s);
}

static int8_t ref_out(int32_t v, const struct enpu_cs_quant *q)
{
	int64_t r = (int64_t)v + q->out_zp;

	return (int8_t)(r < q->act_min ? q->act_min : r > q->act_max ? q->act_max : r);
}

/* ---- test plumbing -------------------------------------------------------- */

struct rng {
	uint32_t s;
};

static uint32_t rnd(struct rng *r)
{
	r->s = r->s * 1664525u + 1013904223u;
	return r->s >> 8;
}

static int32_t rnd_range(struct rng *r, int32_t lo, int32_t hi)
{
	return lo + (int32_t)(rnd(r) % (uint32_t)(hi - lo + 1));
}

FIXTURE(ops) {
	int fd;
	uint32_t bo, syncobj;
	uint8_t *map;
	uint32_t used;
	struct enpu_cs cs;
	struct rng rng;
};

/* 0, or -ENODEV to skip */
static int arena_setup(struct __test_metadata *_metadata, FIXTURE_DATA(ops) *self)
{
	self->fd = enpu_open();
	if (self->fd < 0)
		return -ENODEV;
	ASSERT_EQ(0, enpu_bo_new(self->fd, ARENA, &self->bo));
	self->map = enpu_bo_map(self->fd, self->bo, ARENA);
	ASSERT_NE(NULL, self->map);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &self->syncobj));
	self->rng.s = 12345;
	enpu_cs_begin(&self->cs);
	return 0;
}

FIXTURE_SETUP(ops)
{
	if (arena_setup(_metadata, self))
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
}

FIXTURE_TEARDOWN(ops)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* bump-allocate n bytes of the arena, 64-byte aligned, filled with noise */
static uint32_t arena_alloc(struct _test_data_ops *self, uint32_t n)
{
	uint32_t off = self->used, i;

	self->used = (self->used + n + 63) & ~63u;
	for (i = 0; i < n; i++)
		self->map[off + i] = (uint8_t)rnd(&self->rng);
	return off;
}

static int run_stream(struct _test_data_ops *self)
{
	uint32_t handles[1] = { self->bo };
	struct enpu_job_desc d = {
		.cs = self->cs.buf, .handles = handles, .bo_count = 1,
		.out_syncobj = self->syncobj,
	};
	int ret;

	d.cs_size = enpu_cs_end(&self->cs);
	ret = enpu_submit_one(self->fd, &d);
	if (ret)
		return ret;
	ret = enpu_syncobj_wait(self->fd, self->syncobj, 60 * SEC);
	if (ret)
		return ret;
	return enpu_syncobj_status(self->fd, self->syncobj) == 1 ? 0 : -EIO;
}

static int32_t load32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void store32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

static struct enpu_cs_quant rand_quant(struct rng *r)
{
	struct enpu_cs_quant q = {
		.in_zp = rnd_range(r, -20, 20),
		.in2_zp = rnd_range(r, -5, 5),
		.out_zp = rnd_range(r, -10, 10),
		.act_min = -100,
		.act_max = 110,
		.out_mult = rnd_range(r, 1 << 30, 0x7fffffff),
		.out_shift = rnd_range(r, -9, -6),
	};

	return q;
}

/* ---- CONV2D --------------------------------------------------------------- */

/* CONV2D has its own fixture so that only it runs once per variant */
FIXTURE(conv) {
	FIXTURE_DATA(ops) o;
};

FIXTURE_SETUP(conv)
{
	if (arena_setup(_metadata, &self->o))
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
}

FIXTURE_TEARDOWN(conv)
{
	if (self->o.fd >= 0)
		close(self->o.fd);
}

FIXTURE_VARIANT(conv) {
	uint32_t n, h, w, c, oc, kh, kw, groups;
	uint16_t stride_h, stride_w, dil_h, dil_w;
	uint16_t pad_t, pad_l, pad_b, pad_r;
	int bias, per_channel;
};

FIXTURE_VARIANT_ADD(conv, conv3x3_same) {
	.n = 1, .h = 7, .w = 6, .c = 5, .oc = 4, .kh = 3, .kw = 3, .groups = 1,
	.stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1,
	.pad_t = 1, .pad_l = 1, .pad_b = 1, .pad_r = 1, .bias = 1, .per_channel = 1,
};

FIXTURE_VARIANT_ADD(conv, conv_stride2_asym_pad) {
	.n = 2, .h = 9, .w = 8, .c = 3, .oc = 6, .kh = 3, .kw = 2, .groups = 1,
	.stride_h = 2, .stride_w = 3, .dil_h = 1, .dil_w = 1,
	.pad_t = 0, .pad_l = 1, .pad_b = 2, .pad_r = 0, .bias = 1, .per_channel = 0,
};

FIXTURE_VARIANT_ADD(conv, conv_dilated) {
	.n = 1, .h = 10, .w = 10, .c = 4, .oc = 3, .kh = 3, .kw = 3, .groups = 1,
	.stride_h = 1, .stride_w = 1, .dil_h = 2, .dil_w = 3,
	.pad_t = 2, .pad_l = 3, .pad_b = 2, .pad_r = 3, .bias = 0, .per_channel = 1,
};

FIXTURE_VARIANT_ADD(conv, conv_grouped) {
	.n = 1, .h = 6, .w = 6, .c = 8, .oc = 6, .kh = 3, .kw = 3, .groups = 2,
	.stride_h = 1, .stride_w = 2, .dil_h = 1, .dil_w = 1,
	.pad_t = 1, .pad_l = 1, .pad_b = 1, .pad_r = 1, .bias = 1, .per_channel = 1,
};

FIXTURE_VARIANT_ADD(conv, conv_depthwise_x2) {
	.n = 1, .h = 8, .w = 7, .c = 6, .oc = 12, .kh = 3, .kw = 3, .groups = 6,
	.stride_h = 2, .stride_w = 2, .dil_h = 1, .dil_w = 1,
	.pad_t = 1, .pad_l = 1, .pad_b = 1, .pad_r = 1, .bias = 1, .per_channel = 1,
};

FIXTURE_VARIANT_ADD(conv, conv_pointwise) {
	.n = 3, .h = 4, .w = 5, .c = 16, .oc = 8, .kh = 1, .kw = 1, .groups = 1,
	.stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1,
	.bias = 0, .per_channel = 0,
};

TEST_F(conv, conv2d)
{
	const FIXTURE_VARIANT(conv) *v = variant;
	FIXTURE_DATA(ops) *ar = &self->o;
	uint32_t icg = v->c / v->groups, ocg = v->oc / v->groups;
	uint32_t oh = (v->h + v->pad_t + v->pad_b - v->dil_h * (v->kh - 1) - 1) / v->stride_h + 1;
	uint32_t ow = (v->w + v->pad_l + v->pad_r - v->dil_w * (v->kw - 1) - 1) / v->stride_w + 1;
	uint32_t in, wt, bias = 0, rq = 0, out, n, y, x, o, ky, kx, i;
	struct enpu_cs_conv2d *c;
	struct enpu_cs_quant q;

	q = rand_quant(&ar->rng);
	in = arena_alloc(ar, v->n * v->h * v->w * v->c);
	wt = arena_alloc(ar, v->oc * v->kh * v->kw * icg);
	out = arena_alloc(ar, v->n * oh * ow * v->oc);
	if (v->bias) {
		bias = arena_alloc(ar, 4 * v->oc);
		for (o = 0; o < v->oc; o++)
			store32(ar->map + bias + 4 * o, rnd_range(&ar->rng, -3000, 3000));
	}
	if (v->per_channel) {
		rq = arena_alloc(ar, 8 * v->oc);
		for (o = 0; o < v->oc; o++) {
			store32(ar->map + rq + 8 * o, rnd_range(&ar->rng, 1 << 30, 0x7fffffff));
			store32(ar->map + rq + 8 * o + 4, rnd_range(&ar->rng, -9, -5));
		}
	}

	c = enpu_cs_add(&ar->cs, ENPU_OP_CONV2D, sizeof(*c));
	c->in = enpu_tensor(0, in, v->n, v->h, v->w, v->c);
	c->weights = enpu_tensor(0, wt, v->oc, v->kh, v->kw, icg);
	c->out = enpu_tensor(0, out, v->n, oh, ow, v->oc);
	c->bias = v->bias ? enpu_tensor(0, bias, v->oc, 1, 1, 1) : enpu_tensor_none();
	if (v->bias)
		c->bias.stride[0] = 4;
	c->requant = v->per_channel ? enpu_tensor(0, rq, v->oc, 1, 1, 1) : enpu_tensor_none();
	if (v->per_channel)
		c->requant.stride[0] = 8;
	c->quant = q;
	c->stride_h = v->stride_h;
	c->stride_w = v->stride_w;
	c->dil_h = v->dil_h;
	c->dil_w = v->dil_w;
	c->pad_top = v->pad_t;
	c->pad_left = v->pad_l;
	c->pad_bottom = v->pad_b;
	c->pad_right = v->pad_r;
	c->groups = v->groups;
	ASSERT_EQ(0, run_stream(ar));

	for (n = 0; n < v->n; n++)
	for (y = 0; y < oh; y++)
	for (x = 0; x < ow; x++)
	for (o = 0; o < v->oc; o++) {
		int32_t acc = v->bias ? load32(ar->map + bias + 4 * o) : 0;
		int32_t m = v->per_channel ? load32(ar->map + rq + 8 * o) : q.out_mult;
		int32_t s = v->per_channel ? load32(ar->map + rq + 8 * o + 4) : q.out_shift;
		uint32_t g = o / ocg;
		int8_t want, got;

		for (ky = 0; ky < v->kh; ky++)
		for (kx = 0; kx < v->kw; kx++) {
			int iy = (int)(y * v->stride_h + ky * v->dil_h) - v->pad_t;
			int ix = (int)(x * v->stride_w + kx * v->dil_w) - v->pad_l;

			if (iy < 0 || ix < 0 || iy >= (int)v->h || ix >= (int)v->w)
				continue;
			for (i = 0; i < icg; i++) {
				int8_t a = (int8_t)ar->map[in + ((n * v->h + iy) * v->w + ix) * v->c +
							     g * icg + i];
				int8_t b = (int8_t)ar->map[wt + ((o * v->kh + ky) * v->kw + kx) * icg + i];

				acc += (a - q.in_zp) * (b - q.in2_zp);
			}
		}
		want = ref_out(ref_requant(acc, m, s), &q);
		got = (int8_t)ar->map[out + ((n * oh + y) * ow + x) * v->oc + o];
		ASSERT_EQ(want, got) {
			TH_LOG("n=%u y=%u x=%u o=%u acc=%d", n, y, x, o, acc);
		}
	}
}

/* ---- MATMUL --------------------------------------------------------------- */

static void matmul_case(struct __test_metadata *_metadata, struct _test_data_ops *self,
			uint32_t B, uint32_t M, uint32_t K, uint32_t N, int shared_w,
			int transposed, int per_channel)
{
	struct enpu_cs_quant q = rand_quant(&self->rng);
	uint32_t a, w, bias, rq = 0, out, b, m, n, k;
	struct enpu_cs_matmul *mm;

	a = arena_alloc(self, B * M * K);
	w = arena_alloc(self, (shared_w ? 1 : B) * N * K);
	out = arena_alloc(self, B * M * N);
	bias = arena_alloc(self, 4 * N);
	for (n = 0; n < N; n++)
		store32(self->map + bias + 4 * n, rnd_range(&self->rng, -5000, 5000));
	if (per_channel) {
		rq = arena_alloc(self, 8 * N);
		for (n = 0; n < N; n++) {
			store32(self->map + rq + 8 * n, rnd_range(&self->rng, 1 << 30, 0x7fffffff));
			store32(self->map + rq + 8 * n + 4, rnd_range(&self->rng, -10, -6));
		}
	}
	mm = enpu_cs_add(&self->cs, ENPU_OP_MATMUL, sizeof(*mm));
	mm->a = enpu_tensor(0, a, B, M, K, 1);
	/* weights stored [b][n][k], or [b][k][n] when transposed */
	mm->w = enpu_tensor(0, w, B, N, K, 1);
	if (transposed) {
		mm->w.stride[1] = 1;
		mm->w.stride[2] = N;
	}
	if (shared_w)
		mm->w.stride[0] = 0;
	mm->bias = enpu_tensor(0, bias, N, 1, 1, 1);
	mm->bias.stride[0] = 4;
	mm->requant = per_channel ? enpu_tensor(0, rq, N, 1, 1, 1) : enpu_tensor_none();
	if (per_channel)
		mm->requant.stride[0] = 8;
	mm->out = enpu_tensor(0, out, B, M, N, 1);
	mm->quant = q;
	ASSERT_EQ(0, run_stream(self));

	for (b = 0; b < B; b++)
	for (m = 0; m < M; m++)
	for (n = 0; n < N; n++) {
		int32_t acc = load32(self->map + bias + 4 * n);
		int32_t mult = per_channel ? load32(self->map + rq + 8 * n) : q.out_mult;
		int32_t sh = per_channel ? load32(self->map + rq + 8 * n + 4) : q.out_shift;
		uint32_t wb = shared_w ? 0 : b;

		for (k = 0; k < K; k++) {
			int8_t va = (int8_t)self->map[a + (b * M + m) * K + k];
			int8_t vw = (int8_t)self->map[w + wb * N * K +
						      (transposed ? k * N + n : n * K + k)];

			acc += (va - q.in_zp) * (vw - q.in2_zp);
		}
		ASSERT_EQ(ref_out(ref_requant(acc, mult, sh), &q),
			  (int8_t)self->map[out + (b * M + m) * N + n]);
	}
}

TEST_F(ops, fully_connected_per_channel)
{
	matmul_case(_metadata, self, 1, 4, 33, 7, 0, 0, 1);
}

TEST_F(ops, matmul_batched_shared_transposed)
{
	matmul_case(_metadata, self, 3, 5, 17, 9, 1, 1, 0);
}

TEST_F(ops, matmul_batched_per_batch_weights)
{
	matmul_case(_metadata, self, 2, 6, 40, 3, 0, 0, 0);
}

/* ---- ELTWISE -------------------------------------------------------------- */

static void eltwise_case(struct __test_metadata *_metadata, struct _test_data_ops *self,
			 uint32_t op, const uint32_t *da, const uint32_t *db, const uint32_t *dout)
{
	struct enpu_cs_quant q = rand_quant(&self->rng);
	uint32_t a, b, out, i0, i1, i2, i3;
	struct enpu_cs_eltwise *e;
	int32_t am = 0, as = 0, bm = 0, bs = 0;

	a = arena_alloc(self, da[0] * da[1] * da[2] * da[3]);
	b = arena_alloc(self, db[0] * db[1] * db[2] * db[3]);
	out = arena_alloc(self, dout[0] * dout[1] * dout[2] * dout[3]);
	if (op == ENPU_ELTWISE_ADD) {
		am = rnd_range(&self->rng, 1 << 30, 0x7fffffff);
		bm = rnd_range(&self->rng, 1 << 30, 0x7fffffff);
		as = rnd_range(&self->rng, -3, 0);
		bs = rnd_range(&self->rng, -3, 0);
		q.out_shift = rnd_range(&self->rng, -22, -19);
	}
	e = enpu_cs_add(&self->cs, ENPU_OP_ELTWISE, sizeof(*e));
	e->a = enpu_tensor(0, a, da[0], da[1], da[2], da[3]);
	e->b = enpu_tensor(0, b, db[0], db[1], db[2], db[3]);
	e->out = enpu_tensor(0, out, dout[0], dout[1], dout[2], dout[3]);
	e->quant = q;
	e->op = op;
	e->a_mult = am;
	e->a_shift = as;
	e->b_mult = bm;
	e->b_shift = bs;
	ASSERT_EQ(0, run_stream(self));

	for (i0 = 0; i0 < dout[0]; i0++)
	for (i1 = 0; i1 < dout[1]; i1++)
	for (i2 = 0; i2 < dout[2]; i2++)
	for (i3 = 0; i3 < dout[3]; i3++) {
		uint32_t ia = (((i0 % da[0]) * da[1] + i1 % da[1]) * da[2] + i2 % da[2]) * da[3] +
			      i3 % da[3];
		uint32_t ib = (((i0 % db[0]) * db[1] + i1 % db[1]) * db[2] + i2 % db[2]) * db[3] +
			      i3 % db[3];
		uint32_t io = ((i0 * dout[1] + i1) * dout[2] + i2) * dout[3] + i3;
		int32_t va = (int8_t)self->map[a + ia] - q.in_zp;
		int32_t vb = (int8_t)self->map[b + ib] - q.in2_zp;
		int32_t r;

		if (op == ENPU_ELTWISE_ADD)
			r = ref_requant(va * (1 << 20), am, as) + ref_requant(vb * (1 << 20), bm, bs);
		else
			r = va * vb;
		ASSERT_EQ(ref_out(ref_requant(r, q.out_mult, q.out_shift), &q),
			  (int8_t)self->map[out + io]);
	}
}

TEST_F(ops, eltwise_add_same_shape)
{
	uint32_t d[4] = { 2, 3, 4, 5 };

	eltwise_case(_metadata, self, ENPU_ELTWISE_ADD, d, d, d);
}

TEST_F(ops, eltwise_add_broadcast_channels)
{
	uint32_t da[4] = { 1, 4, 6, 8 }, db[4] = { 1, 1, 1, 8 };

	eltwise_case(_metadata, self, ENPU_ELTWISE_ADD, da, db, da);
}

TEST_F(ops, eltwise_mul_broadcast_both)
{
	uint32_t da[4] = { 2, 1, 5, 3 }, db[4] = { 1, 4, 1, 3 }, dout[4] = { 2, 4, 5, 3 };

	eltwise_case(_metadata, self, ENPU_ELTWISE_MUL, da, db, dout);
}

/* ---- POOL ----------------------------------------------------------------- */

static void pool_case(struct __test_metadata *_metadata, struct _test_data_ops *self,
		      uint32_t mode, uint32_t N, uint32_t H, uint32_t W, uint32_t C,
		      uint32_t k, uint32_t s, uint32_t pad)
{
	uint32_t kh = k, kw = k, sh = s, sw = s, pt = pad, pl = pad, pb = pad, pr = pad;
	uint32_t oh, ow, in, out, n, y, x, c, ky, kx;
	struct enpu_cs_pool *p;

	if (mode == ENPU_POOL_GLOBAL_AVG) {
		kh = H;
		kw = W;
		sh = sw = 1;
		pt = pl = pb = pr = 0;
	}
	oh = (H + pt + pb - kh) / sh + 1;
	ow = (W + pl + pr - kw) / sw + 1;
	in = arena_alloc(self, N * H * W * C);
	out = arena_alloc(self, N * oh * ow * C);
	p = enpu_cs_add(&self->cs, ENPU_OP_POOL, sizeof(*p));
	p->in = enpu_tensor(0, in, N, H, W, C);
	p->out = enpu_tensor(0, out, N, oh, ow, C);
	p->quant.act_min = -120;
	p->quant.act_max = 100;
	p->mode = mode;
	if (mode != ENPU_POOL_GLOBAL_AVG) {
		p->kernel_h = p->kernel_w = k;
		p->stride_h = p->stride_w = s;
		p->pad_top = p->pad_left = p->pad_bottom = p->pad_right = pad;
	}
	ASSERT_EQ(0, run_stream(self));

	for (n = 0; n < N; n++)
	for (y = 0; y < oh; y++)
	for (x = 0; x < ow; x++)
	for (c = 0; c < C; c++) {
		int32_t sum = 0, cnt = 0, mx = -128, r;

		for (ky = 0; ky < kh; ky++)
		for (kx = 0; kx < kw; kx++) {
			int iy = (int)(y * sh + ky) - (int)pt, ix = (int)(x * sw + kx) - (int)pl;
			int8_t val;

			if (iy < 0 || ix < 0 || iy >= (int)H || ix >= (int)W)
				continue;
			val = (int8_t)self->map[in + ((n * H + iy) * W + ix) * C + c];
			sum += val;
			cnt++;
			mx = val > mx ? val : mx;
		}
		if (mode == ENPU_POOL_MAX) {
			r = mx;
		} else {
			/* round half away from zero */
			r = (2 * abs(sum) + cnt) / (2 * cnt);
			r = sum < 0 ? -r : r;
		}
		r = r < -120 ? -120 : r > 100 ? 100 : r;
		ASSERT_EQ(r, (int8_t)self->map[out + ((n * oh + y) * ow + x) * C + c]);
	}
}

TEST_F(ops, pool_max_padded)
{
	pool_case(_metadata, self, ENPU_POOL_MAX, 2, 7, 7, 5, 3, 2, 1);
}

TEST_F(ops, pool_avg_padded)
{
	pool_case(_metadata, self, ENPU_POOL_AVG, 1, 9, 8, 6, 3, 2, 1);
}

TEST_F(ops, pool_global_avg)
{
	pool_case(_metadata, self, ENPU_POOL_GLOBAL_AVG, 2, 7, 5, 9, 0, 0, 0);
}

/* ---- LUT and COPY ---------------------------------------------------------- */

TEST_F(ops, lut)
{
	uint32_t in = arena_alloc(self, 3 * 100), table = arena_alloc(self, 256);
	uint32_t out = arena_alloc(self, 3 * 100), i;
	struct enpu_cs_lut *l;

	l = enpu_cs_add(&self->cs, ENPU_OP_LUT, sizeof(*l));
	l->in = enpu_tensor(0, in, 1, 3, 10, 10);
	l->table = enpu_tensor(0, table, 256, 1, 1, 1);
	l->table.stride[0] = 1;
	l->out = enpu_tensor(0, out, 1, 3, 10, 10);
	ASSERT_EQ(0, run_stream(self));
	for (i = 0; i < 300; i++)
		ASSERT_EQ(self->map[table + self->map[in + i]], self->map[out + i]);
}

TEST_F(ops, copy_transpose_nhwc_to_nchw)
{
	const uint32_t N = 2, H = 3, W = 4, C = 5;
	uint32_t in = arena_alloc(self, N * H * W * C), out = arena_alloc(self, N * H * W * C);
	uint32_t n, h, w, c;
	struct enpu_cs_copy *cp;

	cp = enpu_cs_add(&self->cs, ENPU_OP_COPY, sizeof(*cp));
	cp->src = enpu_tensor(0, in, N, H, W, C);
	/* destination indexed [n][h][w][c] but laid out NCHW */
	cp->dst = enpu_tensor(0, out, N, H, W, C);
	cp->dst.stride[0] = C * H * W;
	cp->dst.stride[1] = W;
	cp->dst.stride[2] = 1;
	cp->dst.stride[3] = H * W;
	ASSERT_EQ(0, run_stream(self));
	for (n = 0; n < N; n++)
		for (c = 0; c < C; c++)
			for (h = 0; h < H; h++)
				for (w = 0; w < W; w++)
					ASSERT_EQ(self->map[in + ((n * H + h) * W + w) * C + c],
						  self->map[out + ((n * C + c) * H + h) * W + w]);
}

TEST_F(ops, copy_slice_concat_pad)
{
	const uint32_t H = 6, W = 6;
	uint32_t a = arena_alloc(self, H * W), b = arena_alloc(self, H * W);
	uint32_t cat = arena_alloc(self, H * 2 * W), pad = arena_alloc(self, 8 * 8);
	uint32_t y, x;
	struct enpu_cs_copy *cp;

	memset(self->map + pad, 0x7f, 64);
	/* concat along W: a into the left half, b into the right */
	cp = enpu_cs_add(&self->cs, ENPU_OP_COPY, sizeof(*cp));
	cp->src = enpu_tensor(0, a, 1, 1, H, W);
	cp->dst = enpu_tensor(0, cat, 1, 1, H, W);
	cp->dst.stride[2] = 2 * W;
	cp = enpu_cs_add(&self->cs, ENPU_OP_COPY, sizeof(*cp));
	cp->src = enpu_tensor(0, b, 1, 1, H, W);
	cp->dst = enpu_tensor(0, cat + W, 1, 1, H, W);
	cp->dst.stride[2] = 2 * W;
	/* slice a[1:5, 2:6] into the middle of an 8x8 pre-filled pad buffer */
	cp = enpu_cs_add(&self->cs, ENPU_OP_COPY, sizeof(*cp));
	cp->src = enpu_tensor(0, a + 1 * W + 2, 1, 1, 4, 4);
	cp->src.stride[2] = W;
	cp->dst = enpu_tensor(0, pad + 2 * 8 + 2, 1, 1, 4, 4);
	cp->dst.stride[2] = 8;
	ASSERT_EQ(0, run_stream(self));
	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++) {
			ASSERT_EQ(self->map[a + y * W + x], self->map[cat + y * 2 * W + x]);
			ASSERT_EQ(self->map[b + y * W + x], self->map[cat + y * 2 * W + W + x]);
		}
	for (y = 0; y < 8; y++)
		for (x = 0; x < 8; x++) {
			int inside = y >= 2 && y < 6 && x >= 2 && x < 6;
			uint8_t want = inside ? self->map[a + (y - 1) * W + x] : 0x7f;

			ASSERT_EQ(want, self->map[pad + y * 8 + x]);
		}
}

/* ---- streams, userptr, imported buffers ------------------------------------ */

TEST_F(ops, chained_commands_in_one_stream)
{
	/* COPY -> LUT -> POOL(max): each command sees the previous one's output */
	uint32_t src = arena_alloc(self, 64), mid = arena_alloc(self, 64);
	uint32_t lut = arena_alloc(self, 64), table = arena_alloc(self, 256);
	uint32_t out = arena_alloc(self, 16), y, x, i, k;
	struct enpu_cs_copy *cp;
	struct enpu_cs_lut *l;
	struct enpu_cs_pool *p;

	for (i = 0; i < 256; i++)
		self->map[table + i] = (uint8_t)(255 - i);
	cp = enpu_cs_add(&self->cs, ENPU_OP_COPY, sizeof(*cp));
	cp->src = enpu_tensor(0, src, 1, 8, 8, 1);
	cp->dst = enpu_tensor(0, mid, 1, 8, 8, 1);
	l = enpu_cs_add(&self->cs, ENPU_OP_LUT, sizeof(*l));
	l->in = enpu_tensor(0, mid, 1, 8, 8, 1);
	l->table = enpu_tensor(0, table, 256, 1, 1, 1);
	l->table.stride[0] = 1;
	l->out = enpu_tensor(0, lut, 1, 8, 8, 1);
	p = enpu_cs_add(&self->cs, ENPU_OP_POOL, sizeof(*p));
	p->in = enpu_tensor(0, lut, 1, 8, 8, 1);
	p->out = enpu_tensor(0, out, 1, 4, 4, 1);
	p->quant.act_min = -128;
	p->quant.act_max = 127;
	p->mode = ENPU_POOL_MAX;
	p->kernel_h = p->kernel_w = p->stride_h = p->stride_w = 2;
	ASSERT_EQ(0, run_stream(self));
	for (y = 0; y < 4; y++)
		for (x = 0; x < 4; x++) {
			int mx = -128;

			for (k = 0; k < 4; k++) {
				uint8_t s = self->map[src + (2 * y + k / 2) * 8 + 2 * x + k % 2];
				int v = (int8_t)(255 - s);

				mx = v > mx ? v : mx;
			}
			ASSERT_EQ(mx, (int8_t)self->map[out + y * 4 + x]);
		}
}

TEST_F(ops, userptr_in_and_out)
{
	static struct enpu_cs cs;
	struct drm_enpu_bo_userptr uin = { .size = 4096, .flags = ENPU_USERPTR_READONLY };
	struct drm_enpu_bo_userptr uout = { .size = 4096 };
	uint8_t *min = aligned_alloc(4096, 4096), *mout = aligned_alloc(4096, 4096);
	uint32_t handles[2], flags[2] = { ENPU_JOB_BO_READ, ENPU_JOB_BO_WRITE }, i;
	struct enpu_job_desc d = { .cs = cs.buf, .handles = handles, .bo_flags = flags,
				   .bo_count = 2, .out_syncobj = self->syncobj };

	for (i = 0; i < 4096; i++) {
		min[i] = (uint8_t)(i * 13);
		mout[i] = 0;
	}
	uin.user_ptr = (uintptr_t)min;
	uout.user_ptr = (uintptr_t)mout;
	enpu_bo_userptr_ok(self->fd, &uin);
	enpu_bo_userptr_ok(self->fd, &uout);
	handles[0] = uin.handle;
	handles[1] = uout.handle;
	d.cs_size = enpu_cs_copy_bytes(&cs, 0, 0, 1, 0, 4096);
	ASSERT_EQ(0, enpu_submit_one(self->fd, &d));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, 60 * SEC));
	/* the NPU wrote straight into this process's memory */
	for (i = 0; i < 4096; i++)
		ASSERT_EQ((uint8_t)(i * 13), mout[i]);
	ASSERT_EQ(0, enpu_bo_close(self->fd, uin.handle));
	ASSERT_EQ(0, enpu_bo_close(self->fd, uout.handle));
	free(min);
	free(mout);
}

TEST_F(ops, prime_imported_output)
{
	static struct enpu_cs cs;
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	uint32_t handles[2], s, i;
	struct enpu_job_desc d = { .cs = cs.buf, .handles = handles, .bo_count = 2 };
	uint8_t *dmabuf;
	int fd2 = enpu_open();

	ASSERT_GE(fd2, 0);
	exp.handle = self->bo;
	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, enpu_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	handles[0] = imp.handle;
	ASSERT_EQ(0, enpu_bo_new(fd2, 4096, &handles[1]));
	ASSERT_EQ(0, enpu_syncobj_new(fd2, 0, &s));
	/* file 2 copies the arena's first page into its own BO and back at offset 8192 */
	for (i = 0; i < 4096; i++)
		self->map[i] = (uint8_t)(i ^ 0x5a);
	enpu_cs_begin(&cs);
	d.cs_size = enpu_cs_copy_bytes(&cs, 0, 0, 1, 0, 4096);
	d.out_syncobj = 0;
	ASSERT_EQ(0, enpu_submit_one(fd2, &d));
	d.cs_size = enpu_cs_copy_bytes(&cs, 1, 0, 0, 8192, 4096);
	d.out_syncobj = s;
	ASSERT_EQ(0, enpu_submit_one(fd2, &d));
	ASSERT_EQ(0, enpu_syncobj_wait(fd2, s, 60 * SEC));
	dmabuf = mmap(NULL, ARENA, PROT_READ, MAP_SHARED, exp.fd, 0);
	ASSERT_NE(MAP_FAILED, dmabuf);
	for (i = 0; i < 4096; i++) {
		ASSERT_EQ((uint8_t)(i ^ 0x5a), self->map[8192 + i]);
		ASSERT_EQ((uint8_t)(i ^ 0x5a), dmabuf[8192 + i]);
	}
	munmap(dmabuf, ARENA);
	close(exp.fd);
	close(fd2);
}

TEST_HARNESS_MAIN
