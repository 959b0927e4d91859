/* SPDX-License-Identifier: MIT */
/*
 * CPU == NPU for the int8 ops under the fixed-point rule (docs/int8.md): for
 * seeded random shapes and parameters, each op runs on the CPU backend's
 * kernel (ert.requant = 1) and as the equivalent enpu command, executed by
 * the command stream executor itself (kmod/enpu_cs.c, linked into this test),
 * and every output byte must agree:
 *
 *   QLinearConv           CONV2D (groups, depthwise, strides, pads, dilations)
 *   QLinearMatMul, QGemm  MATMUL (batches, shared weights, transposes, bias)
 *   QLinearAdd, Mul       ELTWISE ADD / MUL with broadcast
 *   QLinearAveragePool    POOL AVG; QLinearGlobalAveragePool: POOL GLOBAL_AVG
 *   MaxPool (int8)        POOL MAX
 *
 * The CPU tensors are NCHW / row-major; the commands read and write the same
 * buffers through strides. Requantisation tables come from ert_quant_*, the
 * functions the NPU lowering uses; ert_requant_fixed itself is checked
 * against the executor's requantisation on raw (acc, m, s) triples first.
 */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"
#include "kmod/enpu_cs.h"
#include "ops/quant-fixed.h"

/* ---- command streams ---- */

struct stream {
	uint8_t buf[1024];
	uint32_t len;
	uint16_t n;
};

static void *cmd_add(struct stream *s, uint16_t opcode, size_t size)
{
	struct enpu_cs_cmd *c;

	if (!s->len)
		s->len = sizeof(struct enpu_cs_header);
	if (s->len + size > sizeof(s->buf))
		abort(); /* test scaffolding */
	c = (struct enpu_cs_cmd *)(s->buf + s->len);
	memset(c, 0, size);
	c->opcode = opcode;
	c->size = (uint16_t)size;
	s->len += (uint32_t)size;
	s->n++;
	return c;
}

static struct enpu_cs_tensor tens(uint32_t region, uint32_t d0, uint32_t d1, uint32_t d2,
				  uint32_t d3, uint32_t s0, uint32_t s1, uint32_t s2, uint32_t s3)
{
	struct enpu_cs_tensor t = { .region = region, .dim = { d0, d1, d2, d3 },
				    .stride = { s0, s1, s2, s3 } };

	return t;
}

static struct enpu_cs_tensor absent(void)
{
	struct enpu_cs_tensor t = { .region = ENPU_CS_NO_REGION };

	return t;
}

/* Validate against the buffers' sizes, then execute; the validator's verdict is returned. */
static int stream_run(struct stream *s, void **region, const u64 *size, uint32_t n)
{
	struct enpu_cs_header h = { .magic = ENPU_CS_MAGIC, .version = ENPU_CS_VERSION,
				    .num_cmds = s->n, .size = s->len };
	int ret;

	memcpy(s->buf, &h, sizeof(h));
	ret = enpu_cs_validate(s->buf, s->len, size, n, NULL);
	if (ret)
		return ret;
	return enpu_cs_execute(s->buf, region, n, NULL, NULL);
}

/* ---- random parameters ---- */

static uint32_t seed = 20260123u;

static int rnd(int lo, int hi)
{
	return lo + (int)(lcg_next(&seed) % (uint32_t)(hi - lo + 1));
}

static float rnd_log(float lo, float hi)
{
	double u = (double)(lcg_next(&seed) >> 8) / 16777216.0;

	return (float)(lo * pow(hi / lo, u));
}

static void fill_i8(int8_t *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		p[i] = (int8_t)(lcg_next(&seed) >> 24);
}

/* An output clamp: usually the whole range, sometimes a fused Relu or a Clip. */
static void rnd_clamp(int zp, int *lo, int *hi)
{
	*lo = -128;
	*hi = 127;
	switch (rnd(0, 3)) {
	case 1:
		*lo = zp;
		break;
	case 2:
		*lo = rnd(-128, 0);
		*hi = rnd(*lo, 127);
		break;
	default:
		break;
	}
}

static void set_rule(struct one *o, int lo, int hi)
{
	ert_node_set_attr_int(o->g, o->n, "ert.requant", 1);
	if (lo != -128 || hi != 127) {
		int64_t c[2] = { lo, hi };

		ert_node_set_attr_ints(o->g, o->n, "ert.clamp", c, 2);
	}
}

/* Output bytes compared, and how many were not at the int8 range's ends. */
static int64_t compared, interior;

/* Compare two byte buffers; print the first difference under @what. */
static bool same_bytes(const void *cpu, const void *npu, int64_t n, const char *what, int iter)
{
	for (int64_t i = 0; i < n; i++)
		interior += ((const int8_t *)cpu)[i] > -128 && ((const int8_t *)cpu)[i] < 127;
	compared += n;
	for (int64_t i = 0; i < n; i++)
		if (((const int8_t *)cpu)[i] != ((const int8_t *)npu)[i]) {
			fprintf(stderr, "%s case %d: element %lld: cpu %d, npu %d\n", what, iter,
				(long long)i, ((const int8_t *)cpu)[i], ((const int8_t *)npu)[i]);
			return false;
		}
	return true;
}

static void put_chan(uint8_t *table, int64_t c, int32_t m, int32_t s)
{
	memcpy(table + c * 8, &m, 4);
	memcpy(table + c * 8 + 4, &s, 4);
}

/* ---- requantisation itself ---- */

/*
 * One CONV2D of 1x1x1x1 zero input and OC channels: out[o] = clamp(requant(
 * bias[o], m[o], s[o])), so each channel checks one triple, against
 * ert_requant_fixed. Triples aim at rounding ties and at the extremes.
 */
ERT_TEST(requant_matches_executor)
{
	enum { OC = 4096 };
	static int32_t bias[OC];
	static uint8_t table[OC * 8];
	static int8_t x = 0, w = 0, out[OC];
	uint32_t matched = 0;

	for (int o = 0; o < OC; o++) {
		int32_t m = (int32_t)((1u << 30) + (lcg_next(&seed) >> 2));
		int32_t s = rnd(-31, 30);
		double target = rnd(-140, 140) + 0.5 * rnd(-1, 1), real, xv;

		if (o % 8 == 0)
			m = 1 << 30; /* exact halves: ties in srdhm and rdivpot */
		if (o % 16 == 1)
			m = INT32_MAX;
		real = ldexp((double)m, s - 31);
		xv = target / real + rnd(-2, 2);
		if (!(xv > -2147483648.0 && xv < 2147483647.0))
			xv = (lcg_next(&seed) & 1) ? INT32_MAX : INT32_MIN;
		if (o % 32 == 3)
			xv = (int32_t)lcg_next(&seed); /* anything, left shifts wrap */
		bias[o] = (int32_t)xv;
		put_chan(table, o, m, s);
	}
	struct stream st = { .len = 0 };
	struct enpu_cs_conv2d *c = cmd_add(&st, ENPU_OP_CONV2D, sizeof(*c));

	c->in = tens(0, 1, 1, 1, 1, 1, 1, 1, 1);
	c->weights = tens(1, OC, 1, 1, 1, 1, 1, 1, 1);
	c->weights.stride[0] = 0; /* one zero weight for every channel */
	c->bias = tens(2, OC, 1, 1, 1, 4, 0, 0, 0);
	c->requant = tens(3, OC, 1, 1, 1, 8, 0, 0, 0);
	c->out = tens(4, 1, 1, 1, OC, 0, 0, 0, 1);
	c->quant.act_min = -128;
	c->quant.act_max = 127;
	c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
	c->groups = 1;
	void *region[5] = { &x, &w, bias, table, out };
	u64 size[5] = { 1, 1, sizeof(bias), sizeof(table), sizeof(out) };

	REQUIRE(stream_run(&st, region, size, 5) == 0);
	for (int o = 0; o < OC; o++) {
		int32_t m, s, r;

		memcpy(&m, table + o * 8, 4);
		memcpy(&s, table + o * 8 + 4, 4);
		r = ert_requant_fixed(bias[o], m, s);
		r = r < -128 ? -128 : r > 127 ? 127 : r;
		if (out[o] != r) {
			fprintf(stderr, "requant(%d, %d, %d): cpu %d, npu %d\n", bias[o], m, s, r,
				out[o]);
			CHECK(0);
			break;
		}
		matched += r > -128 && r < 127;
	}
	/* most triples must land inside the int8 range, or this proves little */
	CHECK(matched > OC / 2);
}

/* ---- CONV2D ---- */

enum { MAXC = 24 };

struct conv_case {
	int n, c, h, w, oc, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups;
	int xzp, wzp, yzp, lo, hi;
	bool bias;
	float xs, ys, ws[MAXC * 2];
};

static void rnd_conv(struct conv_case *k)
{
	memset(k, 0, sizeof(*k));
	k->n = rnd(1, 2);
	k->c = rnd(1, 16);
	switch (rnd(0, 2)) {
	case 0:
		k->groups = 1;
		k->oc = rnd(1, MAXC);
		break;
	case 1: /* depthwise, channel multiplier 1 or 2 */
		k->groups = k->c;
		k->oc = k->c * rnd(1, 2);
		break;
	default:
		k->groups = k->c % 2 == 0 ? 2 : 1;
		k->oc = k->groups * rnd(1, MAXC / 2);
		break;
	}
	do {
		k->h = rnd(1, 12);
		k->w = rnd(1, 12);
		k->kh = rnd(1, 5);
		k->kw = rnd(1, 5);
		k->sh = rnd(1, 3);
		k->sw = rnd(1, 3);
		k->dh = rnd(1, 3);
		k->dw = rnd(1, 3);
		k->pt = rnd(0, k->kh);
		k->pb = rnd(0, k->kh);
		k->pl = rnd(0, k->kw);
		k->pr = rnd(0, k->kw);
	} while (k->h + k->pt + k->pb < k->dh * (k->kh - 1) + 1 ||
		 k->w + k->pl + k->pr < k->dw * (k->kw - 1) + 1);
	k->xzp = rnd(-128, 127);
	k->wzp = rnd(0, 3) ? 0 : rnd(-20, 20);
	k->yzp = rnd(0, 3) ? rnd(-64, 64) : rnd(-128, 127);
	rnd_clamp(k->yzp, &k->lo, &k->hi);
	k->bias = rnd(0, 3) != 0;
	k->xs = rnd_log(0.002f, 0.1f);
	for (int o = 0; o < k->oc; o++)
		k->ws[o] = rnd_log(0.002f, 0.008f);
	/*
	 * (x - x_zp)(w - w_zp) has a spread of about 74 * 74 per tap: outputs
	 * mostly inside the int8 range, in one case in ten saturating or tiny
	 */
	double taps = (double)k->kh * k->kw * (k->c / k->groups);
	double f = rnd(0, 9) ? rnd_log(1.0f, 6.0f) : rnd_log(0.001f, 1000.0f);

	k->ys = (float)(k->xs * 0.004 * sqrt(taps) * 128.0 * f);
}

/*
 * A test whose outputs mostly saturate compares little: at least half of the
 * bytes a test compares must lie strictly inside the int8 range.
 */
static void check_spread(int *ert_test_failed_, int64_t c0, int64_t i0, const char *what)
{
	int64_t c = compared - c0, i = interior - i0;

	if (c == 0 || 2 * i < c) {
		fprintf(stderr, "%s: %lld of %lld bytes inside the int8 range\n", what,
			(long long)i, (long long)c);
		*ert_test_failed_ = 1;
	}
}

ERT_TEST(conv2d)
{
	int64_t c0 = compared, i0 = interior;
	int failures = 0;

	for (int it = 0; it < 300 && failures < 3; it++) {
		struct conv_case k;
		struct one o;

		rnd_conv(&k);
		int icg = k.c / k.groups;
		int oh = (k.h + k.pt + k.pb - k.dh * (k.kh - 1) - 1) / k.sh + 1;
		int ow = (k.w + k.pl + k.pr - k.dw * (k.kw - 1) - 1) / k.sw + 1;
		int64_t nx = (int64_t)k.n * k.c * k.h * k.w, nw = (int64_t)k.oc * icg * k.kh * k.kw;
		int64_t ny = (int64_t)k.n * k.oc * oh * ow;
		int8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw), *y = malloc((size_t)ny);
		int32_t bias[MAXC * 2];
		uint8_t table[MAXC * 2 * 8];
		int8_t xzp = (int8_t)k.xzp, wzp = (int8_t)k.wzp, yzp = (int8_t)k.yzp;
		int64_t dx[4] = { k.n, k.c, k.h, k.w }, dw[4] = { k.oc, icg, k.kh, k.kw };
		int64_t dm[1] = { k.oc }, pads[4] = { k.pt, k.pl, k.pb, k.pr };
		int64_t st[2] = { k.sh, k.sw }, dil[2] = { k.dh, k.dw };

		fill_i8(x, nx);
		fill_i8(w, nw);
		for (int c = 0; c < k.oc; c++) {
			int32_t m, s;

			bias[c] = (int32_t)(lcg_next(&seed) % 200001) - 100000;
			REQUIRE(ert_quant_product_multiplier(k.xs, k.ws[c], k.ys, &m, &s));
			put_chan(table, c, m, s);
		}
		/* the CPU kernel */
		one_init(&o, ERT_OP_QLinearConv, 13, k.bias ? 9 : 8, 1);
		set_in(&o, 0, ERT_DTYPE_INT8, 4, dx, x);
		set_in(&o, 1, ERT_DTYPE_FLOAT32, 0, NULL, &k.xs);
		set_in(&o, 2, ERT_DTYPE_INT8, 0, NULL, &xzp);
		set_in(&o, 3, ERT_DTYPE_INT8, 4, dw, w);
		set_in(&o, 4, ERT_DTYPE_FLOAT32, 1, dm, k.ws);
		set_in(&o, 5, ERT_DTYPE_INT8, 0, NULL, &wzp);
		set_in(&o, 6, ERT_DTYPE_FLOAT32, 0, NULL, &k.ys);
		set_in(&o, 7, ERT_DTYPE_INT8, 0, NULL, &yzp);
		if (k.bias)
			set_in(&o, 8, ERT_DTYPE_INT32, 1, dm, bias);
		ert_node_set_attr_ints(o.g, o.n, "pads", pads, 4);
		ert_node_set_attr_ints(o.g, o.n, "strides", st, 2);
		ert_node_set_attr_ints(o.g, o.n, "dilations", dil, 2);
		ert_node_set_attr_int(o.g, o.n, "group", k.groups);
		set_rule(&o, k.lo, k.hi);
		if (one_run(&o) != ERT_OK) {
			fprintf(stderr, "conv case %d: %s\n", it, o.err.msg);
			CHECK(0);
			failures++;
			goto next;
		}
		REQUIRE(o.out[0].numel == ny);
		/* the same buffers as an NHWC CONV2D */
		struct stream sm = { .len = 0 };
		struct enpu_cs_conv2d *c = cmd_add(&sm, ENPU_OP_CONV2D, sizeof(*c));

		c->in = tens(0, k.n, k.h, k.w, k.c, k.c * k.h * k.w, k.w, 1, k.h * k.w);
		c->weights = tens(1, k.oc, k.kh, k.kw, icg, icg * k.kh * k.kw, k.kw, 1, k.kh * k.kw);
		c->bias = k.bias ? tens(2, k.oc, 1, 1, 1, 4, 0, 0, 0) : absent();
		c->requant = tens(3, k.oc, 1, 1, 1, 8, 0, 0, 0);
		c->out = tens(4, k.n, oh, ow, k.oc, k.oc * oh * ow, ow, 1, oh * ow);
		c->quant = (struct enpu_cs_quant){ .in_zp = k.xzp, .in2_zp = k.wzp, .out_zp = k.yzp,
						   .act_min = k.lo, .act_max = k.hi };
		c->stride_h = (uint16_t)k.sh;
		c->stride_w = (uint16_t)k.sw;
		c->dil_h = (uint16_t)k.dh;
		c->dil_w = (uint16_t)k.dw;
		c->pad_top = (uint16_t)k.pt;
		c->pad_left = (uint16_t)k.pl;
		c->pad_bottom = (uint16_t)k.pb;
		c->pad_right = (uint16_t)k.pr;
		c->groups = (uint32_t)k.groups;
		void *region[5] = { x, w, bias, table, y };
		u64 size[5] = { (u64)nx, (u64)nw, sizeof(bias), sizeof(table),
				     (u64)ny };

		memset(y, 0x55, (size_t)ny);
		if (stream_run(&sm, region, size, 5) != 0) {
			fprintf(stderr, "conv case %d: the command was refused\n", it);
			CHECK(0);
			failures++;
		} else if (!same_bytes(o.out[0].data, y, ny, "conv", it)) {
			fprintf(stderr, "  n %d c %d h %d w %d oc %d k %dx%d s %d,%d d %d,%d "
				"pads %d %d %d %d groups %d zp %d %d %d clamp %d %d\n", k.n, k.c,
				k.h, k.w, k.oc, k.kh, k.kw, k.sh, k.sw, k.dh, k.dw, k.pt, k.pl, k.pb,
				k.pr, k.groups, k.xzp, k.wzp, k.yzp, k.lo, k.hi);
			CHECK(0);
			failures++;
		}
next:
		one_fini(&o);
		free(x);
		free(w);
		free(y);
	}
	check_spread(ert_test_failed_, c0, i0, "conv2d");
}

/* ---- MATMUL ---- */

ERT_TEST(matmul_and_gemm)
{
	int64_t c0 = compared, i0 = interior;
	int failures = 0;

	for (int it = 0; it < 300 && failures < 3; it++) {
		bool gemm = it % 2 == 1;
		int b = gemm ? 1 : rnd(1, 3), m = rnd(1, 9), kk = rnd(1, 40), n = rnd(1, MAXC);
		bool shared = gemm || rnd(0, 1), ta = gemm && rnd(0, 1), tb = gemm && rnd(0, 1);
		bool has_bias = gemm && rnd(0, 2) != 0;
		int azp = rnd(-128, 127), bzp = rnd(0, 2) ? 0 : rnd(-30, 30), yzp = rnd(-128, 127);
		int lo, hi;
		int64_t na = (int64_t)b * m * kk, nb = (int64_t)(shared ? 1 : b) * kk * n;
		int64_t ny = (int64_t)b * m * n;
		int8_t *a = malloc((size_t)na), *w = malloc((size_t)nb), *y = malloc((size_t)ny);
		int8_t az = (int8_t)azp, bz = (int8_t)bzp, yz = (int8_t)yzp;
		float as = rnd_log(0.002f, 0.1f), bs[MAXC], ys;
		int32_t bias[MAXC];
		uint8_t table[MAXC * 8];
		struct one o;

		rnd_clamp(yzp, &lo, &hi);
		fill_i8(a, na);
		fill_i8(w, nb);
		for (int c = 0; c < n; c++)
			bs[c] = rnd_log(0.002f, 0.008f);
		ys = (float)(as * 0.004 * sqrt((double)kk) * 128.0 *
			     (rnd(0, 9) ? rnd_log(0.5f, 3.0f) : rnd_log(0.001f, 1000.0f)));
		for (int c = 0; c < n; c++) {
			int32_t mm, ss;

			bias[c] = (int32_t)(lcg_next(&seed) % 60001) - 30000;
			REQUIRE(ert_quant_product_multiplier(as, bs[c], ys, &mm, &ss));
			put_chan(table, c, mm, ss);
		}
		int64_t dn[1] = { n };

		if (gemm) {
			int64_t da[2] = { ta ? kk : m, ta ? m : kk }, db[2] = { tb ? n : kk, tb ? kk : n };

			one_init(&o, ERT_OP_QGemm, 13, 9, 1);
			set_in(&o, 0, ERT_DTYPE_INT8, 2, da, a);
			set_in(&o, 3, ERT_DTYPE_INT8, 2, db, w);
			set_in(&o, 6, ERT_DTYPE_INT32, 1, dn, bias);
			if (!has_bias)
				o.inp[6] = NULL;
			set_in(&o, 7, ERT_DTYPE_FLOAT32, 0, NULL, &ys);
			set_in(&o, 8, ERT_DTYPE_INT8, 0, NULL, &yz);
			ert_node_set_attr_int(o.g, o.n, "transA", ta);
			ert_node_set_attr_int(o.g, o.n, "transB", tb);
		} else {
			int64_t da[3] = { b, m, kk }, db[3] = { shared ? 1 : b, kk, n };

			one_init(&o, ERT_OP_QLinearMatMul, 13, 8, 1);
			/* rank 2 weights when shared, rank 3 otherwise; a drops its batch of 1 */
			if (b == 1 && rnd(0, 1))
				set_in(&o, 0, ERT_DTYPE_INT8, 2, da + 1, a);
			else
				set_in(&o, 0, ERT_DTYPE_INT8, 3, da, a);
			set_in(&o, 3, ERT_DTYPE_INT8, shared ? 2 : 3, shared ? db + 1 : db, w);
			set_in(&o, 6, ERT_DTYPE_FLOAT32, 0, NULL, &ys);
			set_in(&o, 7, ERT_DTYPE_INT8, 0, NULL, &yz);
		}
		set_in(&o, 1, ERT_DTYPE_FLOAT32, 0, NULL, &as);
		set_in(&o, 2, ERT_DTYPE_INT8, 0, NULL, &az);
		set_in(&o, 4, ERT_DTYPE_FLOAT32, 1, dn, bs);
		set_in(&o, 5, ERT_DTYPE_INT8, 0, NULL, &bz);
		set_rule(&o, lo, hi);
		if (one_run(&o) != ERT_OK) {
			fprintf(stderr, "matmul case %d: %s\n", it, o.err.msg);
			CHECK(0);
			failures++;
			goto next;
		}
		REQUIRE(o.out[0].numel == ny);
		struct stream sm = { .len = 0 };
		struct enpu_cs_matmul *c = cmd_add(&sm, ENPU_OP_MATMUL, sizeof(*c));

		/* a[b, m, k]; w indexed [b, n, k] over B (k, n) or, transposed, (n, k) */
		c->a = tens(0, b, m, kk, 1, m * kk, ta ? 1 : kk, ta ? m : 1, 0);
		c->w = tens(1, b, n, kk, 1, shared ? 0 : kk * n, tb ? kk : 1, tb ? 1 : n, 0);
		c->bias = has_bias ? tens(2, n, 1, 1, 1, 4, 0, 0, 0) : absent();
		c->requant = tens(3, n, 1, 1, 1, 8, 0, 0, 0);
		c->out = tens(4, b, m, n, 1, m * n, n, 1, 0);
		c->quant = (struct enpu_cs_quant){ .in_zp = azp, .in2_zp = bzp, .out_zp = yzp,
						   .act_min = lo, .act_max = hi };
		void *region[5] = { a, w, bias, table, y };
		u64 size[5] = { (u64)na, (u64)nb, sizeof(bias), sizeof(table),
				     (u64)ny };

		memset(y, 0x55, (size_t)ny);
		if (stream_run(&sm, region, size, 5) != 0) {
			fprintf(stderr, "matmul case %d: the command was refused\n", it);
			CHECK(0);
			failures++;
		} else if (!same_bytes(o.out[0].data, y, ny, gemm ? "gemm" : "matmul", it)) {
			fprintf(stderr, "  b %d m %d k %d n %d shared %d ta %d tb %d bias %d\n", b, m,
				kk, n, shared, ta, tb, has_bias);
			CHECK(0);
			failures++;
		}
next:
		one_fini(&o);
		free(a);
		free(w);
		free(y);
	}
	check_spread(ert_test_failed_, c0, i0, "matmul");
}

/* ---- ELTWISE ---- */

ERT_TEST(eltwise_broadcast)
{
	int64_t c0 = compared, i0 = interior;
	int failures = 0;

	for (int it = 0; it < 400 && failures < 3; it++) {
		bool mul = it % 2 == 1;
		uint32_t od[4], ad[4], bd[4];
		int64_t na = 1, nb = 1, ny = 1, da[4], db[4];
		int azp = rnd(-128, 127), bzp = rnd(-128, 127), yzp = rnd(-128, 127), lo, hi;
		float as = rnd_log(0.001f, 0.2f), bs = rnd_log(0.001f, 0.2f), ys;
		int32_t m = 0, s = 0;
		struct ert_quant_add p;
		struct one o;

		memset(&p, 0, sizeof(p));
		for (int i = 0; i < 4; i++) {
			od[i] = (uint32_t)rnd(1, 6);
			ad[i] = rnd(0, 2) ? od[i] : 1;
			bd[i] = rnd(0, 2) ? od[i] : 1;
			/* at least one input covers each output dimension */
			if (ad[i] == 1 && bd[i] == 1)
				ad[i] = od[i];
			na *= ad[i];
			nb *= bd[i];
			ny *= od[i];
			da[i] = ad[i];
			db[i] = bd[i];
		}
		if (mul)
			ys = (float)(as * bs * 128.0 * 128.0 / 128.0 * rnd_log(0.05f, 5.0f));
		else
			ys = (float)((as > bs ? as : bs) * rnd_log(0.3f, 4.0f));
		rnd_clamp(yzp, &lo, &hi);
		int8_t *a = malloc((size_t)na), *b = malloc((size_t)nb), *y = malloc((size_t)ny);
		int8_t az = (int8_t)azp, bz = (int8_t)bzp, yz = (int8_t)yzp;

		fill_i8(a, na);
		fill_i8(b, nb);
		if (mul)
			REQUIRE(ert_quant_product_multiplier(as, bs, ys, &m, &s));
		else
			REQUIRE(ert_quant_add_params(as, bs, ys, &p));
		one_init(&o, mul ? ERT_OP_QLinearMul : ERT_OP_QLinearAdd, 13, 8, 1);
		set_in(&o, 0, ERT_DTYPE_INT8, 4, da, a);
		set_in(&o, 1, ERT_DTYPE_FLOAT32, 0, NULL, &as);
		set_in(&o, 2, ERT_DTYPE_INT8, 0, NULL, &az);
		/* b's leading 1s may be dropped: numpy aligns from the right */
		int32_t rb = 4;

		while (rb > 1 && db[4 - rb] == 1 && rnd(0, 1))
			rb--;
		set_in(&o, 3, ERT_DTYPE_INT8, rb, db + (4 - rb), b);
		set_in(&o, 4, ERT_DTYPE_FLOAT32, 0, NULL, &bs);
		set_in(&o, 5, ERT_DTYPE_INT8, 0, NULL, &bz);
		set_in(&o, 6, ERT_DTYPE_FLOAT32, 0, NULL, &ys);
		set_in(&o, 7, ERT_DTYPE_INT8, 0, NULL, &yz);
		set_rule(&o, lo, hi);
		if (one_run(&o) != ERT_OK) {
			fprintf(stderr, "eltwise case %d: %s\n", it, o.err.msg);
			CHECK(0);
			failures++;
			goto next;
		}
		REQUIRE(o.out[0].numel == ny);
		struct stream sm = { .len = 0 };
		struct enpu_cs_eltwise *e = cmd_add(&sm, ENPU_OP_ELTWISE, sizeof(*e));

		e->a = tens(0, ad[0], ad[1], ad[2], ad[3], ad[1] * ad[2] * ad[3], ad[2] * ad[3], ad[3], 1);
		e->b = tens(1, bd[0], bd[1], bd[2], bd[3], bd[1] * bd[2] * bd[3], bd[2] * bd[3], bd[3], 1);
		e->out = tens(2, od[0], od[1], od[2], od[3], od[1] * od[2] * od[3], od[2] * od[3], od[3], 1);
		e->quant = (struct enpu_cs_quant){ .in_zp = azp, .in2_zp = bzp, .out_zp = yzp,
						   .act_min = lo, .act_max = hi };
		if (mul) {
			e->op = ENPU_ELTWISE_MUL;
			e->quant.out_mult = m;
			e->quant.out_shift = s;
		} else {
			e->op = ENPU_ELTWISE_ADD;
			e->quant.out_mult = p.out_mult;
			e->quant.out_shift = p.out_shift;
			e->a_mult = p.a_mult;
			e->a_shift = p.a_shift;
			e->b_mult = p.b_mult;
			e->b_shift = p.b_shift;
		}
		void *region[3] = { a, b, y };
		u64 size[3] = { (u64)na, (u64)nb, (u64)ny };

		memset(y, 0x55, (size_t)ny);
		if (stream_run(&sm, region, size, 3) != 0) {
			fprintf(stderr, "eltwise case %d: the command was refused\n", it);
			CHECK(0);
			failures++;
		} else if (!same_bytes(o.out[0].data, y, ny, mul ? "mul" : "add", it)) {
			fprintf(stderr, "  out %ux%ux%ux%u a %ux%ux%ux%u b %ux%ux%ux%u\n", od[0], od[1],
				od[2], od[3], ad[0], ad[1], ad[2], ad[3], bd[0], bd[1], bd[2], bd[3]);
			CHECK(0);
			failures++;
		}
next:
		one_fini(&o);
		free(a);
		free(b);
		free(y);
	}
	check_spread(ert_test_failed_, c0, i0, "eltwise");
}

/* ---- POOL ---- */

ERT_TEST(pools)
{
	int64_t c0 = compared, i0 = interior;
	int failures = 0;

	for (int it = 0; it < 450 && failures < 3; it++) {
		int mode = it % 3; /* ENPU_POOL_MAX, _AVG, _GLOBAL_AVG */
		int n = rnd(1, 2), c = rnd(1, 8), h = rnd(1, 12), w = rnd(1, 12);
		int kh = mode == ENPU_POOL_GLOBAL_AVG ? h : rnd(1, h < 5 ? h : 5);
		int kw = mode == ENPU_POOL_GLOBAL_AVG ? w : rnd(1, w < 5 ? w : 5);
		int sh = mode == ENPU_POOL_GLOBAL_AVG ? 1 : rnd(1, 3);
		int sw = mode == ENPU_POOL_GLOBAL_AVG ? 1 : rnd(1, 3);
		int pt = 0, pl = 0, pb = 0, pr = 0, zp = rnd(-128, 127), lo = -128, hi = 127;
		float sc = rnd_log(0.001f, 0.5f);
		struct one o;

		if (mode != ENPU_POOL_GLOBAL_AVG) {
			pt = rnd(0, kh - 1);
			pb = rnd(0, kh - 1);
			pl = rnd(0, kw - 1);
			pr = rnd(0, kw - 1);
		}
		if (mode != ENPU_POOL_MAX)
			rnd_clamp(zp, &lo, &hi);
		int oh = (h + pt + pb - kh) / sh + 1, ow = (w + pl + pr - kw) / sw + 1;
		int64_t nx = (int64_t)n * c * h * w, ny = (int64_t)n * c * oh * ow;
		int64_t dx[4] = { n, c, h, w }, ks[2] = { kh, kw }, st[2] = { sh, sw };
		int64_t pads[4] = { pt, pl, pb, pr };
		int8_t *x = malloc((size_t)nx), *y = malloc((size_t)ny), z = (int8_t)zp;

		fill_i8(x, nx);
		if (mode == ENPU_POOL_MAX) {
			one_init(&o, ERT_OP_MaxPool, 13, 1, 1);
			set_in(&o, 0, ERT_DTYPE_INT8, 4, dx, x);
		} else {
			one_init(&o, mode == ENPU_POOL_AVG ? ERT_OP_QLinearAveragePool
							   : ERT_OP_QLinearGlobalAveragePool, 13, 5, 1);
			set_in(&o, 0, ERT_DTYPE_INT8, 4, dx, x);
			set_in(&o, 1, ERT_DTYPE_FLOAT32, 0, NULL, &sc);
			set_in(&o, 2, ERT_DTYPE_INT8, 0, NULL, &z);
			set_in(&o, 3, ERT_DTYPE_FLOAT32, 0, NULL, &sc);
			set_in(&o, 4, ERT_DTYPE_INT8, 0, NULL, &z);
			set_rule(&o, lo, hi);
		}
		if (mode != ENPU_POOL_GLOBAL_AVG) {
			ert_node_set_attr_ints(o.g, o.n, "kernel_shape", ks, 2);
			ert_node_set_attr_ints(o.g, o.n, "strides", st, 2);
			ert_node_set_attr_ints(o.g, o.n, "pads", pads, 4);
		}
		if (one_run(&o) != ERT_OK) {
			fprintf(stderr, "pool case %d: %s\n", it, o.err.msg);
			CHECK(0);
			failures++;
			goto next;
		}
		REQUIRE(o.out[0].numel == ny);
		struct stream sm = { .len = 0 };
		struct enpu_cs_pool *p = cmd_add(&sm, ENPU_OP_POOL, sizeof(*p));

		p->in = tens(0, n, h, w, c, c * h * w, w, 1, h * w);
		p->out = tens(1, n, oh, ow, c, c * oh * ow, ow, 1, oh * ow);
		p->quant.act_min = lo;
		p->quant.act_max = hi;
		p->mode = (uint32_t)mode;
		if (mode != ENPU_POOL_GLOBAL_AVG) {
			p->kernel_h = (uint16_t)kh;
			p->kernel_w = (uint16_t)kw;
			p->stride_h = (uint16_t)sh;
			p->stride_w = (uint16_t)sw;
			p->pad_top = (uint16_t)pt;
			p->pad_left = (uint16_t)pl;
			p->pad_bottom = (uint16_t)pb;
			p->pad_right = (uint16_t)pr;
		}
		void *region[2] = { x, y };
		u64 size[2] = { (u64)nx, (u64)ny };

		memset(y, 0x55, (size_t)ny);
		if (stream_run(&sm, region, size, 2) != 0) {
			fprintf(stderr, "pool case %d: the command was refused\n", it);
			CHECK(0);
			failures++;
		} else if (!same_bytes(o.out[0].data, y, ny, "pool", it)) {
			fprintf(stderr, "  mode %d n %d c %d h %d w %d k %dx%d s %d,%d pads %d %d %d %d\n",
				mode, n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr);
			CHECK(0);
			failures++;
		}
next:
		one_fini(&o);
		free(x);
		free(y);
	}
	check_spread(ert_test_failed_, c0, i0, "pools");
}

/* The streams above are little-endian; so must the machine be. */
ERT_TEST(little_endian)
{
	uint32_t v = 1;

	CHECK(*(uint8_t *)&v == 1);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(little_endian), ERT_TEST_ENTRY(requant_matches_executor),
	      ERT_TEST_ENTRY(conv2d), ERT_TEST_ENTRY(matmul_and_gemm),
	      ERT_TEST_ENTRY(eltwise_broadcast), ERT_TEST_ENTRY(pools))
