/* SPDX-License-Identifier: MIT */
/*
 * The byte pools and DequantizeLinear at every SIMD level this CPU
 * supports against the scalar reference, byte for byte (struct
 * ert_q8_pool_kernels, ert_q8_dequantize_<level>()): MaxPool of int8 and
 * uint8 (strides 1, 2 and 3, dilation, asymmetric pads, ceil_mode, rows
 * around the 32- and 64-byte vectors and shorter than one, 1-D to 3-D,
 * batch 2, rows past the row buffer), QLinearGlobalAveragePool (both
 * rules, clamps, planes of 1 to 390 values, the last plane's short tail,
 * channels_last) and DequantizeLinear (lengths around 8 and 16 lanes, zero
 * points at the ends of each type or none, scales from denormal to inf and
 * NaN); and the kernel each names in `edgert profile`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/ops/qlinear-kernels.h"
#include "edgert.h"
#include "ert-op-test.h"
#include "ert-test-int8.h"
#include "ert-test.h"

struct mp_case {
	const char *name;
	int32_t nsp;
	int64_t n, c, in[3], k[3], s[3], d[3], pads[6];
	bool ceil;
};

static const struct mp_case mp_cases[] = {
	{ "resnet stem 3x3 s2 p1", 2, 1, 3, { 56, 56 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 1, 1, 1, 1 }, false },
	/* interior outputs: 31 (short of a vector), 63 and 64 (tails) */
	{ "3x3 s2 p1, 31 inside", 2, 2, 3, { 9, 65 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 1, 1, 1, 1 }, false },
	{ "3x3 s2, 63 inside", 2, 1, 2, { 5, 129 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0, 1, 0, 0 },
	  false },
	{ "2x2 s2, 64 inside", 2, 1, 2, { 6, 128 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0 }, false },
	{ "3x3 s1 p1, 98 inside", 2, 2, 2, { 7, 100 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, false },
	{ "5x5 s1, asymmetric pads", 2, 1, 3, { 9, 71 }, { 5, 5 }, { 1, 1 }, { 1, 1 },
	  { 0, 1, 2, 3 }, false },
	{ "dilation 2, stride 2", 2, 1, 2, { 11, 150 }, { 3, 3 }, { 2, 2 }, { 2, 2 },
	  { 2, 2, 2, 2 }, false },
	{ "dilation 3, stride 1, odd taps", 2, 1, 2, { 8, 97 }, { 2, 4 }, { 1, 1 }, { 1, 3 },
	  { 1, 4, 0, 5 }, false },
	{ "ceil mode, stride 2", 2, 2, 2, { 10, 80 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0 }, true },
	{ "ceil mode, pads", 2, 1, 3, { 9, 67 }, { 3, 2 }, { 2, 2 }, { 1, 1 }, { 1, 0, 0, 1 },
	  true },
	{ "stride 3 (no vector taps)", 2, 1, 2, { 9, 100 }, { 3, 3 }, { 3, 3 }, { 1, 1 },
	  { 1, 1, 1, 1 }, false },
	{ "stride (1, 2), 7 wide", 2, 1, 2, { 12, 7 }, { 3, 3 }, { 1, 2 }, { 1, 1 },
	  { 1, 1, 1, 1 }, false },
	{ "one column", 2, 2, 2, { 5, 1 }, { 2, 1 }, { 1, 1 }, { 1, 1 }, { 0 }, false },
	{ "window wider than the row", 2, 1, 2, { 4, 3 }, { 3, 5 }, { 1, 1 }, { 1, 1 },
	  { 1, 2, 1, 2 }, false },
	{ "1-D k4 s2", 1, 2, 3, { 200 }, { 4 }, { 2 }, { 1 }, { 1, 2 }, false },
	{ "1-D s1, 33 wide", 1, 1, 5, { 33 }, { 2 }, { 1 }, { 1 }, { 0, 0 }, false },
	{ "3-D", 3, 1, 2, { 5, 6, 70 }, { 2, 3, 3 }, { 1, 2, 2 }, { 1, 1, 1 },
	  { 1, 1, 1, 0, 1, 1 }, false },
	{ "rows past the row buffer", 2, 1, 1, { 3, 4200 }, { 2, 3 }, { 1, 2 }, { 1, 1 },
	  { 0, 1, 0, 1 }, false },
};

ERT_TEST(maxpool_bytes_every_level)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(mp_cases) / sizeof(mp_cases[0]); i++)
		for (int s8 = 0; s8 < 2; s8++) {
			const struct mp_case *mc = &mp_cases[i];
			int64_t dims[5] = { mc->n, mc->c, mc->in[0], mc->in[1], mc->in[2] };
			uint32_t nsp = (uint32_t)mc->nsp;
			struct one o;
			char what[96];

			one_init(&o, ERT_OP_MaxPool, 12, 1, 1);
			in_bytes(&o, 0, s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8, mc->nsp + 2, dims);
			ert_node_set_attr_ints(o.g, o.n, "kernel_shape", mc->k, nsp);
			ert_node_set_attr_ints(o.g, o.n, "strides", mc->s, nsp);
			ert_node_set_attr_ints(o.g, o.n, "dilations", mc->d, nsp);
			ert_node_set_attr_ints(o.g, o.n, "pads", mc->pads, 2 * nsp);
			ert_node_set_attr_int(o.g, o.n, "ceil_mode", mc->ceil);
			snprintf(what, sizeof(what), "MaxPool %s %s", s8 ? "int8" : "uint8", mc->name);
			runs += compare_levels(ert_test_failed_, &o, what);
			one_fini(&o);
		}
	CHECK(runs > 0);
}

/*
 * Bytes where the signed and the unsigned max differ (0x7f against 0x80,
 * 0x00 against 0xff) at every position of a window, so a kernel that took
 * the other type's max fails.
 */
ERT_TEST(maxpool_bytes_sign)
{
	static const uint8_t pat[] = { 0x7f, 0x80, 0x00, 0xff, 0x01, 0xfe, 0x80, 0x7f, 0x81 };
	int64_t dims[4] = { 1, 2, 4, 131 };
	int64_t k[2] = { 2, 3 }, s[2] = { 1, 2 }, pads[4] = { 0, 1, 0, 1 };
	int runs = 0;

	for (int s8 = 0; s8 < 2; s8++)
		for (int st = 1; st <= 2; st++) {
			struct one o;
			struct ert_value *v;

			one_init(&o, ERT_OP_MaxPool, 12, 1, 1);
			v = one_in_alloc(&o, 0, s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8, 4, dims);
			for (int64_t q = 0; q < v->numel; q++)
				((uint8_t *)v->data)[q] = pat[(q * 7 + q / 131) % sizeof(pat)];
			s[1] = st;
			ert_node_set_attr_ints(o.g, o.n, "kernel_shape", k, 2);
			ert_node_set_attr_ints(o.g, o.n, "strides", s, 2);
			ert_node_set_attr_ints(o.g, o.n, "pads", pads, 4);
			runs += compare_levels(ert_test_failed_, &o, s8 ? "MaxPool int8 signs"
								      : "MaxPool uint8 signs");
			one_fini(&o);
		}
	CHECK(runs > 0);
}

enum { GAP_U8 = 1, GAP_FIXED = 2, GAP_CLAMP = 4, GAP_LAST = 8 };

ERT_TEST(qlinear_global_avgpool_every_level)
{
	static const struct {
		int32_t rank;
		int64_t d[5];
	} shapes[] = {
		{ 4, { 1, 2048, 7, 7 } }, { 4, { 2, 19, 5, 3 } }, { 4, { 2, 5, 8, 4 } },
		{ 3, { 1, 3, 65 } },      { 4, { 1, 17, 1, 1 } }, { 4, { 2, 6, 9, 11 } },
		{ 5, { 1, 4, 3, 4, 5 } }, { 4, { 1, 2, 130, 3 } }, { 4, { 1, 300, 2, 2 } },
	};
	int runs = 0;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (unsigned f = 0; f < 16; f++) {
			bool u8 = f & GAP_U8, fixed = f & GAP_FIXED;
			ert_dtype dt = u8 ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
			int zlo = u8 ? 0 : -128, zhi = u8 ? 255 : 127;
			struct one o;
			char what[96];

			/* the clamp and channels_last on some shapes only: fewer runs */
			if ((f & (GAP_CLAMP | GAP_LAST)) && (i + f) % 3)
				continue;
			one_init(&o, ERT_OP_QLinearGlobalAveragePool, 13, 5, 1);
			in_bytes(&o, 0, dt, shapes[i].rank, shapes[i].d);
			in_scales(&o, 1, 0, 0.05f, false);
			/* zero points at the ends of the type and in between */
			in_zp(&o, 2, dt, 0, i % 3 == 0 ? zlo : i % 3 == 1 ? zhi : zlo + 100,
			      i % 3 == 0 ? zlo : i % 3 == 1 ? zhi : zlo + 150);
			if (fixed) {
				o.in[3] = o.in[1];
				o.in[4] = o.in[2];
			} else {
				in_scales(&o, 3, 0, 0.02f, true);
				in_zp(&o, 4, dt, 0, zlo + 20, zhi - 20);
			}
			set_rule(&o, fixed, f & GAP_CLAMP ? zlo + 60 : 1, f & GAP_CLAMP ? zhi - 50 : 0);
			if (f & GAP_LAST)
				ert_node_set_attr_int(o.g, o.n, "channels_last", 1);
			snprintf(what, sizeof(what), "QLinearGlobalAveragePool shape %zu flags %u", i,
				 f);
			runs += compare_levels(ert_test_failed_, &o, what);
			one_fini(&o);
		}
	CHECK(runs > 0);
}

ERT_TEST(dequantize_every_level)
{
	static const int64_t lens[] = { 1, 7, 8, 9, 15, 16, 17, 33, 8192 + 13 };
	static const float scales[] = { 0.5f, 0.1f, 3.7e-3f, -0.25f, 1e38f, 1e-45f, INFINITY, NAN };
	int runs = 0;

	for (int s8 = 0; s8 < 2; s8++)
		for (int z = 0; z < 4; z++)
			for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
				ert_dtype dt = s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8;
				static const int zps[2][3] = { { 0, 128, 255 }, { -128, 0, 127 } };
				float sc = scales[(li + (size_t)z) % (sizeof(scales) / sizeof(scales[0]))];
				int64_t n = lens[li];
				struct one o;
				char what[80];

				/* z 3: no zero point */
				one_init(&o, ERT_OP_DequantizeLinear, 13, z < 3 ? 3 : 2, 1);
				in_bytes(&o, 0, dt, 1, &n);
				in_scales(&o, 1, 0, sc, false);
				if (z < 3)
					in_zp(&o, 2, dt, 0, zps[s8][z], zps[s8][z]);
				snprintf(what, sizeof(what), "dequantize %s zp %d n %lld scale %g",
					 s8 ? "int8" : "uint8", z < 3 ? zps[s8][z] : 0, (long long)n,
					 (double)sc);
				runs += compare_levels(ert_test_failed_, &o, what);
				one_fini(&o);
			}
	CHECK(runs > 0);
}

/* prepare()'s kernel name for node @o at level @isa (after a scalar run for the shapes). */
static const char *kernel_at(int *ert_test_failed_, struct one *o, enum ert_cpu_isa isa)
{
	const struct ert_cpu_op *op = ert_cpu_op_find(o->n->op);
	struct ert_cpu cpu = { .isa = isa, .num_threads = 1 };
	struct ert_value y[2];
	struct ert_value *inp[ONE_MAX_IO], *outp[2] = { &y[0], &y[1] };
	struct ert_err err;

	if (!op || !op->prepare ||
	    ert_cpu_eval_node(o->g, o->n, o->inp, o->n_in, y, o->n_out, &err) != ERT_OK) {
		*ert_test_failed_ = 1;
		return "(failed)";
	}
	for (uint32_t j = 0; j < o->n_in; j++)
		inp[j] = (struct ert_value *)o->inp[j];
	struct ert_exec x = { .graph = o->g, .node = o->n, .in = inp, .out = outp,
			      .n_in = o->n_in, .n_out = o->n_out };

	if (op->prepare(&cpu, &x, &err) != ERT_OK)
		*ert_test_failed_ = 1;
	for (uint32_t j = 0; j < o->n_out; j++)
		free(y[j].data);
	return x.kernel;
}

static void check_name(int *ert_test_failed_, const char *got, const char *want,
		       const char *what, enum ert_cpu_isa isa)
{
	if ((got == NULL) != (want == NULL) || (got && strcmp(got, want))) {
		fprintf(stderr, "%s at %s: kernel %s, want %s\n", what, ert_cpu_isa_name(isa),
			got ? got : "(none)", want ? want : "(none)");
		*ert_test_failed_ = 1;
	}
}

/*
 * Each op names the level's kernel where it runs it: q8-pool-<level> for
 * byte MaxPool without Indices and NCHW QLinearGlobalAveragePool,
 * q8-dequant-<level> for bytes to float32 with one scale; the scalar
 * loops (no name) for MaxPool with Indices, channels_last, a scale per
 * channel, int32 input.
 */
ERT_TEST(kernel_names)
{
	int64_t d4[4] = { 1, 4, 9, 9 }, k[2] = { 3, 3 }, n4 = 4, d1 = 12;

	for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++) {
		const struct ert_q8_pool_kernels *qk = ert_q8_pool_kernels_for((enum ert_cpu_isa)isa);
		const char *pool = qk ? qk->name : NULL;
		const char *dq = isa >= ERT_ISA_AVX512 ? "q8-dequant-avx512"
				 : isa >= ERT_ISA_AVX2 ? "q8-dequant-avx2" : NULL;
		enum ert_cpu_isa l = (enum ert_cpu_isa)isa;
		struct one o;

		CHECK((qk == NULL) == (isa == ERT_ISA_SCALAR));
		for (int idx = 0; idx < 2; idx++) {
			one_init(&o, ERT_OP_MaxPool, 12, 1, 1 + (uint32_t)idx);
			in_bytes(&o, 0, ERT_DTYPE_INT8, 4, d4);
			ert_node_set_attr_ints(o.g, o.n, "kernel_shape", k, 2);
			check_name(ert_test_failed_, kernel_at(ert_test_failed_, &o, l),
				   idx ? NULL : pool, idx ? "MaxPool with Indices" : "MaxPool", l);
			one_fini(&o);
		}
		for (int last = 0; last < 2; last++) {
			one_init(&o, ERT_OP_QLinearGlobalAveragePool, 13, 5, 1);
			in_bytes(&o, 0, ERT_DTYPE_UINT8, 4, d4);
			in_scales(&o, 1, 0, 0.1f, false);
			in_zp(&o, 2, ERT_DTYPE_UINT8, 0, 3, 3);
			in_scales(&o, 3, 0, 0.2f, false);
			in_zp(&o, 4, ERT_DTYPE_UINT8, 0, 5, 5);
			if (last)
				ert_node_set_attr_int(o.g, o.n, "channels_last", 1);
			check_name(ert_test_failed_, kernel_at(ert_test_failed_, &o, l),
				   last ? NULL : pool, "QLinearGlobalAveragePool", l);
			one_fini(&o);
		}
		for (int v = 0; v < 3; v++) {
			/* v 1: a scale per channel (axis 1); v 2: int32 input */
			one_init(&o, ERT_OP_DequantizeLinear, 13, 2, 1);
			in_bytes(&o, 0, ERT_DTYPE_INT8, 1, &d1);
			if (v == 2)
				in_i32(&o, 0, 1, &d1, 1000);
			if (v == 1) {
				in_bytes(&o, 0, ERT_DTYPE_INT8, 4, d4);
				in_scales(&o, 1, n4, 0.1f, true);
			} else {
				in_scales(&o, 1, 0, 0.1f, false);
			}
			check_name(ert_test_failed_, kernel_at(ert_test_failed_, &o, l),
				   v ? NULL : dq, "DequantizeLinear", l);
			one_fini(&o);
		}
	}
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(maxpool_bytes_every_level), ERT_TEST_ENTRY(maxpool_bytes_sign),
	      ERT_TEST_ENTRY(qlinear_global_avgpool_every_level),
	      ERT_TEST_ENTRY(dequantize_every_level), ERT_TEST_ENTRY(kernel_names))
