/* SPDX-License-Identifier: MIT */
/*
 * The fp32 vector kernels outside GEMM (cpu/vec/, cpu/conv/dwconv*) at every
 * level this CPU supports, against the scalar level's kernels, on awkward
 * shapes: lengths around every vector width, broadcasts, batch > 1, strides,
 * dilations, asymmetric and oversized padding, ceil_mode, 1-D and 3-D
 * windows, one and two threads. Where the arithmetic is the reference's the
 * outputs must be the same bits (NaN and signed zeros included); the
 * approximations are held to the bounds stated in cpu/vec/vmath.h against
 * double-precision libm.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv/dwconv.h"
#include "cpu/cpu-impl.h"
#include "cpu/ops/norm-kernels.h"
#include "cpu/vec/vec.h"
#include "edgert.h"
#include "ert-op-test.h"
#include "ert-test.h"
#include "opt/opt-private.h"

static uint32_t seed = 4242;

/* @o's input @i, @rank x @dims, seeded values in [-scale, scale). */
static float *in_rand(struct one *o, uint32_t i, int32_t rank, const int64_t *dims, float scale)
{
	struct ert_value *v = one_in_alloc(o, i, ERT_DTYPE_FLOAT32, rank, dims);
	float *p = v->data;

	for (int64_t k = 0; k < v->numel; k++)
		p[k] = frand_r(&seed) * scale;
	return p;
}

/* A sprinkle of the values kernels get wrong: NaN, infinities, signed zeros, ties. */
static void in_specials(float *p, int64_t n)
{
	static const float sp[] = { NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f,
				    1.0f, 6.0f, -3.0f, FLT_MIN, -FLT_TRUE_MIN };

	for (int64_t k = 0; k < n; k += 7)
		p[k] = sp[(k / 7) % (sizeof(sp) / sizeof(sp[0]))];
}

/* Spacing of floats at |r| (the subnormal spacing at 0). */
static double ulp_of(double r)
{
	int e;

	if (r == 0 || fabs(r) < FLT_MIN)
		return ldexp(1.0, -149);
	frexp(fabs(r), &e);
	return ldexp(1.0, e - 24);
}

/* |got - ref| in ulps of ref; NaN/inf must match exactly. */
static double ulp_err(float got, double ref)
{
	float rf = (float)ref;

	if (isnan(ref))
		return isnan(got) ? 0 : INFINITY;
	if (isinf(rf))
		return got == rf ? 0 : INFINITY;
	return fabs((double)got - ref) / ulp_of(ref);
}

/* Output comparisons: 0 = the same bits; >0 = relative to the output's magnitude (>= 1). */
static double mag_diff(const struct ert_value *a, const struct ert_value *ref)
{
	const float *x = a->data, *r = ref->data;
	double worst = 0, mag = 1;

	for (int64_t i = 0; i < ref->numel; i++)
		mag = isfinite(r[i]) && fabs(r[i]) > mag ? fabs(r[i]) : mag;
	for (int64_t i = 0; i < ref->numel; i++) {
		double d = fabs((double)x[i] - r[i]);

		if (isnan(x[i]) != isnan(r[i]) || (isinf(r[i]) && x[i] != r[i]))
			return INFINITY;
		if (isfinite(r[i]))
			worst = d > worst ? d : worst;
	}
	return worst / mag;
}

/*
 * The same bits, or both NaN: which operand's payload a NaN result carries
 * depends on the operand order the compiler picks for a commutative op.
 */
static bool same_bits(const struct ert_value *a, const struct ert_value *ref)
{
	const float *x = a->data, *r = ref->data;

	if (ref->dtype != ERT_DTYPE_FLOAT32)
		return !memcmp(a->data, ref->data, ref->nbytes);
	for (int64_t i = 0; i < ref->numel; i++)
		if (!(isnan(x[i]) && isnan(r[i])) && memcmp(&x[i], &r[i], sizeof(float)))
			return false;
	return true;
}

/*
 * one_compare_levels_with()'s check: @tol 0 asks for the same bits (NaNs
 * alike), else a difference within @tol of the output's magnitude.
 */
static bool close_enough(const struct ert_value *got, const struct ert_value *ref, double tol,
			 char *why, size_t why_len)
{
	bool f32 = ref->dtype == ERT_DTYPE_FLOAT32;

	if (tol == 0 ? same_bits(got, ref) : mag_diff(got, ref) <= tol)
		return true;
	snprintf(why, why_len, "differs (%g)", f32 ? mag_diff(got, ref) : -1.0);
	return false;
}

/*
 * @o at every level above scalar, one thread and two (weights prepacked),
 * against the scalar level on one thread: @tol 0 asks for identical bits in
 * every output, else output 0 within @tol of its magnitude and the others
 * within 1e-6.
 */
static int compare_levels(int *ert_test_failed_, struct one *o, const char *what, double tol)
{
	return one_compare_levels_with(ert_test_failed_, o, what, close_enough, tol,
				       tol == 0 ? 0 : 1e-6, ERT_ISA_AVX2,
				       ONE_RUN_PACKED | ONE_RUN_POOL);
}

/* ---- the vector math against double libm ---- */

static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double r_gelu_tanh(double x)
{
	double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);

	/* 0.5 x (1 + tanh u), written without its cancellation */
	return x / (1.0 + exp(-2.0 * u));
}

/* Every float with a mantissa multiple of 2^-12 in [2^-40, hi], both signs (-lo at most). */
static int64_t sweep(float *x, double lo, double hi)
{
	int64_t n = 0;

	for (uint32_t b = 0x2b800000u;; b += 1u << 11) {
		float v;

		memcpy(&v, &b, sizeof(v));
		if (v > hi)
			break;
		if (v <= -lo)
			x[n++] = -v;
		x[n++] = v;
	}
	return n;
}

ERT_TEST(vmath_bounds)
{
	static const struct {
		const char *name;
		enum ert_vec_unary id;
		double (*ref)(double);
		double lo, hi;            /* sweep range */
		double split;             /* ulp bound for x >= split, abs bound below */
		double ulps, abs_below;
	} fns[] = {
		{ "exp", ERT_VEC_EXP, exp, -110, 100, -INFINITY, 1, 0 },
		{ "sigmoid", ERT_VEC_SIGMOID, r_sigmoid, -120, 120, -INFINITY, 3, 0 },
		{ "tanh", ERT_VEC_TANH, tanh, -30, 30, -INFINITY, 3, 0 },
		{ "erf", ERT_VEC_ERF, erf, -12, 12, -INFINITY, 3, 0 },
		{ "gelu", ERT_VEC_GELU, r_gelu, -20, 20, -10, 5, 1e-22 },
		{ "gelu_tanh, x >= -1", ERT_VEC_GELU_TANH, r_gelu_tanh, -1, 20, -1, 3, 0 },
		{ "gelu_tanh, x >= -3", ERT_VEC_GELU_TANH, r_gelu_tanh, -3, 20, -3, 12, 0 },
		{ "gelu_tanh", ERT_VEC_GELU_TANH, r_gelu_tanh, -20, 20, -8, 70, 1e-20 },
	};
	static float x[1 << 20], y[1 << 20];
	struct ert_vec_uparams p = { 0 };
	int levels = 0;

	for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++, levels++) {
		const struct ert_vec_kernels *vk = ert_vec_kernels_for((enum ert_cpu_isa)isa);

		REQUIRE(vk != NULL);
		for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
			int64_t n = sweep(x, fns[f].lo, fns[f].hi);
			double worst = 0, worst_abs = 0;
			float wx = 0;

			REQUIRE(n < (int64_t)(sizeof(x) / sizeof(x[0])));
			vk->unary[fns[f].id](x, y, n, &p);
			for (int64_t i = 0; i < n; i++) {
				double r = fns[f].ref(x[i]);

				if (x[i] >= fns[f].split) {
					double e = ulp_err(y[i], r);

					if (e > worst) {
						worst = e;
						wx = x[i];
					}
				} else if (fabs(y[i] - r) > worst_abs) {
					worst_abs = fabs(y[i] - r);
				}
			}
			if (!(worst <= fns[f].ulps) || !(worst_abs <= fns[f].abs_below)) {
				fprintf(stderr, "%s at %s: %.3f ulp at %.9g (bound %g), %g below %g\n",
					fns[f].name, vk->level, worst, wx, fns[f].ulps, worst_abs,
					fns[f].split);
				CHECK(0);
			}
		}

		/* special values, in place, in a tail */
		float sp[5] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f }, o[5];

		vk->unary[ERT_VEC_EXP](sp, o, 5, &p);
		CHECK(isnan(o[0]) && o[1] == INFINITY && o[2] == 0.0f && o[3] == 1.0f && o[4] == 1.0f);
		vk->unary[ERT_VEC_SIGMOID](sp, o, 5, &p);
		CHECK(isnan(o[0]) && o[1] == 1.0f && o[2] == 0.0f && o[3] == 0.5f && o[4] == 0.5f);
		vk->unary[ERT_VEC_TANH](sp, o, 5, &p);
		CHECK(isnan(o[0]) && o[1] == 1.0f && o[2] == -1.0f && o[3] == 0.0f && !signbit(o[3]) &&
		      o[4] == 0.0f && signbit(o[4]));
		vk->unary[ERT_VEC_ERF](sp, o, 5, &p);
		CHECK(isnan(o[0]) && o[1] == 1.0f && o[2] == -1.0f && o[3] == 0.0f && signbit(o[4]));
		vk->unary[ERT_VEC_GELU](sp, o, 5, &p);
		CHECK(isnan(o[0]) && o[1] == INFINITY && o[3] == 0.0f && !signbit(o[3]) &&
		      signbit(o[4]));
		vk->unary[ERT_VEC_GELU](sp, sp, 5, &p);
		CHECK(isnan(sp[0]) && sp[1] == INFINITY);
	}
	CHECK(levels > 0 || ert_cpu_isa_best() == ERT_ISA_SCALAR);
}

/*
 * GELU (erf form) over every 16th float with |x| in [2^-40, 20], both signs
 * (46 million inputs, 128 times the grid of vmath_bounds), at every level:
 * vmath.h's 5 ulp for x >= -10, |error| <= 1e-22 below. The reference is
 * computed once per block and shared by the levels.
 */
ERT_TEST(gelu_dense_sweep)
{
	enum { B = 1 << 16 };
	static float x[B], y[B];
	static double ref[B];
	struct ert_vec_uparams p = { 0 };
	double worst[ERT_ISA_COUNT] = { 0 }, worst_abs[ERT_ISA_COUNT] = { 0 };
	float wx[ERT_ISA_COUNT] = { 0 };
	uint32_t b = 0x2b800000u;   /* 2^-40 */
	bool done = false;

	while (!done) {
		int64_t n = 0;

		for (; n < B; b += 16) {
			float v;

			memcpy(&v, &b, sizeof(v));
			if (v > 20) {
				done = true;
				break;
			}
			x[n++] = v;
			x[n++] = -v;
		}
		for (int64_t i = 0; i < n; i++)
			ref[i] = r_gelu(x[i]);
		for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
			const struct ert_vec_kernels *vk = ert_vec_kernels_for((enum ert_cpu_isa)isa);

			REQUIRE(vk != NULL);
			if (isa > ERT_ISA_AVX2 && vk->unary[ERT_VEC_GELU] ==
			    ert_vec_kernels_for((enum ert_cpu_isa)(isa - 1))->unary[ERT_VEC_GELU])
				continue;   /* the level below's kernel, already swept */
			vk->unary[ERT_VEC_GELU](x, y, n, &p);
			for (int64_t i = 0; i < n; i++) {
				if (x[i] < -10) {
					if (fabs(y[i] - ref[i]) > worst_abs[isa])
						worst_abs[isa] = fabs(y[i] - ref[i]);
				} else if (ulp_err(y[i], ref[i]) > worst[isa]) {
					worst[isa] = ulp_err(y[i], ref[i]);
					wx[isa] = x[i];
				}
			}
		}
	}
	for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
		if (!(worst[isa] <= 5) || !(worst_abs[isa] <= 1e-22)) {
			fprintf(stderr, "gelu at %s: %.3f ulp at %.9g (bound 5), %g below -10\n",
				ert_vec_kernels_for((enum ert_cpu_isa)isa)->level, worst[isa], wx[isa],
				worst_abs[isa]);
			CHECK(0);
		}
	}
}

/*
 * The activation pass against ert_act_apply(): the same bits except Sigmoid
 * and Tanh (3 ulp of the exact value) and Gelu (vmath.h's bounds: 5 ulp for
 * the erf form, 70 for the tanh form, outputs below 1e-20 within 1e-20).
 */
ERT_TEST(act_pass_matches_reference)
{
	static const struct ert_act_desc acts[] = {
		{ ERT_ACT_RELU, 0, 0 }, { ERT_ACT_CLIP, -0.5f, 0.7f }, { ERT_ACT_CLIP, 0.7f, -0.5f },
		{ ERT_ACT_LEAKY_RELU, 0.1f, 0 }, { ERT_ACT_HARD_SWISH, 0, 0 },
		{ ERT_ACT_HARD_SIGMOID, 0.2f, 0.5f }, { ERT_ACT_SIGMOID, 0, 0 },
		{ ERT_ACT_TANH, 0, 0 }, { ERT_ACT_GELU, 0, 0 }, { ERT_ACT_GELU, 1, 0 },
	};
	enum { N = 203 };
	float x[N], want[N], got[N];

	for (int i = 0; i < N; i++)
		x[i] = frand_r(&seed) * 8.0f;
	in_specials(x, N);
	for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
		const struct ert_vec_kernels *vk = ert_vec_kernels_for((enum ert_cpu_isa)isa);

		for (size_t a = 0; a < sizeof(acts) / sizeof(acts[0]); a++) {
			for (int n = 0; n <= N; n += n < 40 ? 1 : 37) {
				memcpy(want, x, sizeof(x));
				memcpy(got, x, sizeof(x));
				ert_act_apply(&acts[a], want, n);
				vk->act(&acts[a], got, n);
				if (!ert_act_is_approx(acts[a].type)) {
					CHECK(!memcmp(want, got, sizeof(x)));
					continue;
				}
				for (int i = 0; i < N; i++) {
					enum ert_act t = acts[a].type;
					double r = t == ERT_ACT_SIGMOID ? r_sigmoid(x[i])
						   : t == ERT_ACT_TANH ? tanh(x[i])
						   : acts[a].p0 != 0 ? r_gelu_tanh(x[i]) : r_gelu(x[i]);
					double tol = t != ERT_ACT_GELU ? 3 : acts[a].p0 != 0 ? 70 : 5;
					bool tiny = t == ERT_ACT_GELU && i < n && fabs(r) < 1e-20 &&
						    fabs(got[i] - r) <= 1e-20;

					if (!tiny && !(ulp_err(got[i], i < n ? r : x[i]) <= tol)) {
						fprintf(stderr, "act %d at %s, n %d: [%d] %g\n",
							acts[a].type, vk->level, n, i, got[i]);
						CHECK(0);
						break;
					}
				}
			}
		}
	}
}

/* ---- ops, every level against scalar ---- */

static void set_string(struct one *o, const char *name, const char *v)
{
	struct ert_attr *a = ert_node_add_attr(o->g, o->n, name, ERT_ATTR_STRING);

	if (!a)
		abort();
	a->s = v;
	a->len = (uint32_t)strlen(v);
}

ERT_TEST(unary_ops_every_level)
{
	static const struct {
		enum ert_op op;
		int opset;
		double tol;     /* 0: the same bits */
		float scale;
	} ops[] = {
		{ ERT_OP_Relu, 14, 0, 4 }, { ERT_OP_Clip, 6, 0, 4 }, { ERT_OP_LeakyRelu, 16, 0, 4 },
		{ ERT_OP_HardSigmoid, 6, 0, 8 }, { ERT_OP_HardSwish, 14, 0, 8 },
		/* the scalar level's own approximations (unary-vmath.c) are within 2e-6 */
		{ ERT_OP_Sigmoid, 13, 3e-6, 12 }, { ERT_OP_Tanh, 13, 3e-6, 6 },
		{ ERT_OP_Erf, 13, 3e-6, 4 }, { ERT_OP_Gelu, 20, 3e-6, 6 }, { ERT_OP_Exp, 13, 1e-6, 6 },
	};
	static const int64_t lens[] = { 1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 16384 * 3 + 5 };
	int runs = 0;

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			for (int form = 0; form < (ops[k].op == ERT_OP_Gelu ? 2 : 1); form++) {
				struct one o;
				int64_t dims[2] = { 2, lens[l] };
				char what[64];

				one_init(&o, ops[k].op, ops[k].opset, 1, 1);
				float *x = in_rand(&o, 0, 2, dims, ops[k].scale);

				if (ops[k].tol == 0)
					in_specials(x, 2 * lens[l]);
				if (ops[k].op == ERT_OP_Clip) {
					ert_node_set_attr_float(o.g, o.n, "min", -0.75f);
					ert_node_set_attr_float(o.g, o.n, "max", l & 1 ? 1.5f : -1.0f);
				}
				if (ops[k].op == ERT_OP_LeakyRelu)
					ert_node_set_attr_float(o.g, o.n, "alpha", 0.3f);
				if (form)
					set_string(&o, "approximate", "tanh");
				snprintf(what, sizeof(what), "%s%s x %lld", ert_op_name(ops[k].op),
					 form ? " (tanh)" : "", (long long)lens[l]);
				runs += compare_levels(ert_test_failed_, &o, what, ops[k].tol);
				one_fini(&o);
			}
		}
	}
	CHECK(runs > 0 || ert_cpu_isa_best() == ERT_ISA_SCALAR);
}

/* fp16 goes through float32 chunks: the vector kernel there too, the same bits. */
ERT_TEST(unary_half_every_level)
{
	struct one o;
	int64_t dims[1] = { 1000 };
	uint16_t *h;

	one_init(&o, ERT_OP_HardSwish, 14, 1, 1);
	h = one_in_alloc(&o, 0, ERT_DTYPE_FLOAT16, 1, dims)->data;
	for (int i = 0; i < 1000; i++)
		h[i] = ert_fp32_to_fp16(frand_r(&seed) * 8.0f);
	compare_levels(ert_test_failed_, &o, "HardSwish fp16", 0);
	one_fini(&o);
}

ERT_TEST(binary_ops_every_level)
{
	static const enum ert_op ops[] = { ERT_OP_Add, ERT_OP_Sub, ERT_OP_Mul, ERT_OP_Div,
					   ERT_OP_Max, ERT_OP_Min };
	static const struct {
		int32_t ra, rb;
		int64_t a[4], b[4];
	} shapes[] = {
		{ 4, 4, { 2, 3, 5, 7 }, { 2, 3, 5, 7 } },
		{ 4, 1, { 2, 3, 5, 7 }, { 7 } },              /* row bias */
		{ 4, 4, { 2, 3, 5, 7 }, { 1, 3, 1, 1 } },     /* per channel */
		{ 1, 4, { 1 }, { 2, 3, 5, 17 } },             /* scalar first */
		{ 3, 3, { 2, 1, 33 }, { 1, 4, 1 } },          /* both broadcast */
		{ 1, 1, { 1 }, { 1 } },
		{ 2, 1, { 197, 384 }, { 384 } },
		{ 2, 2, { 3, 16385 }, { 3, 16385 } },
	};
	int runs = 0;

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			struct one o;
			char what[64];
			bool variadic = ops[k] == ERT_OP_Max || ops[k] == ERT_OP_Min;

			one_init(&o, ops[k], 13, 2, 1);
			float *a = in_rand(&o, 0, shapes[s].ra, shapes[s].a, 4);
			float *b = in_rand(&o, 1, shapes[s].rb, shapes[s].b, 4);

			in_specials(a, o.in[0].numel);
			if (o.in[1].numel > 3)
				in_specials(b + 3, o.in[1].numel - 3);
			snprintf(what, sizeof(what), "%s shape %zu%s", ert_op_name(ops[k]), s,
				 variadic ? " (variadic)" : "");
			runs += compare_levels(ert_test_failed_, &o, what, 0);
			one_fini(&o);
		}
	}
	/* Sum and Mean of three, and Add with each fused activation */
	for (int v = 0; v < 2; v++) {
		struct one o;
		int64_t d[3] = { 2, 5, 19 }, c[1] = { 19 };

		one_init(&o, v ? ERT_OP_Mean : ERT_OP_Sum, 13, 3, 1);
		in_rand(&o, 0, 3, d, 3);
		in_rand(&o, 1, 1, c, 3);
		in_rand(&o, 2, 3, d, 3);
		runs += compare_levels(ert_test_failed_, &o, v ? "Mean of 3" : "Sum of 3", 0);
		one_fini(&o);
	}
	for (int act = ERT_ACT_RELU; act <= ERT_ACT_GELU; act++) {
		struct one o;
		int64_t d[2] = { 3, 77 };
		float p[2] = { act == ERT_ACT_HARD_SIGMOID ? 0.2f : -0.4f, 0.6f };
		char what[32];

		one_init(&o, ERT_OP_Add, 14, 2, 1);
		in_rand(&o, 0, 2, d, 4);
		in_rand(&o, 1, 2, d, 4);
		ert_node_set_attr_int(o.g, o.n, "ert.act", act);
		ert_opt_set_attr_floats(o.g, o.n, "ert.act_params", p, 2);
		snprintf(what, sizeof(what), "Add + act %d", act);
		runs += compare_levels(ert_test_failed_, &o, what,
				       ert_act_is_approx((enum ert_act)act) ? 1e-6 : 0);
		one_fini(&o);
	}
	CHECK(runs > 0 || ert_cpu_isa_best() == ERT_ISA_SCALAR);
}

/* Softmax: each output within 5 ulp of the exact softmax, and near the scalar level's. */
ERT_TEST(softmax_every_level)
{
	static const struct {
		int32_t rank;
		int64_t d[4];
		int64_t axis;
		int opset;
	} cases[] = {
		{ 1, { 1 }, -1, 13 }, { 2, { 3, 7 }, -1, 13 }, { 2, { 2, 16 }, 1, 13 },
		{ 3, { 2, 3, 17 }, -1, 13 }, { 4, { 1, 6, 197, 197 }, -1, 13 },
		{ 2, { 4, 1000 }, -1, 13 }, { 3, { 2, 3, 11 }, 1, 11 }, /* legacy: 2-D at axis */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct one o;
		struct ert_value got;

		one_init(&o, ERT_OP_Softmax, cases[c].opset, 1, 1);
		float *x = in_rand(&o, 0, cases[c].rank, cases[c].d, 30);

		if (c == 2)
			x[3] = -INFINITY;
		ert_node_set_attr_int(o.g, o.n, "axis", cases[c].axis);
		compare_levels(ert_test_failed_, &o, "Softmax", 1e-6);
		for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
			int64_t n = cases[c].opset < 13 ? o.in[0].numel / cases[c].d[0]
							: cases[c].d[cases[c].rank - 1];
			double worst = 0;

			REQUIRE(one_run_at(&o, (enum ert_cpu_isa)isa, NULL, true, ERT_LEVEL_NORMAL,
					   &got) == ERT_OK);
			for (int64_t r = 0; r < o.in[0].numel / n; r++) {
				const float *xr = x + r * n, *yr = (const float *)got.data + r * n;
				double mx = -INFINITY, sum = 0;

				for (int64_t i = 0; i < n; i++)
					mx = xr[i] > mx ? xr[i] : mx;
				for (int64_t i = 0; i < n; i++)
					sum += exp((double)xr[i] - mx);
				for (int64_t i = 0; i < n; i++) {
					double e = ulp_err(yr[i], exp((double)xr[i] - mx) / sum);

					worst = e > worst ? e : worst;
				}
			}
			if (!(worst <= 5)) {
				fprintf(stderr, "Softmax case %zu at %s: %.2f ulp\n", c,
					ert_cpu_isa_name((enum ert_cpu_isa)isa), worst);
				CHECK(0);
			}
			free(got.data);
		}
		one_fini(&o);
	}
}

/*
 * Softmax's exponential (vmath.h's vexp_nonpos) swept densely through the
 * row kernel: rows of 35 (the two-vector loop and a masked tail at both
 * widths), 0 then 34 consecutive values of every 16th float in [-110,
 * -2^-40] (subnormal and zero results at the low end), each output within
 * 3 ulp of the exact softmax (measured 2.22 at avx2 and avx512, 2.19 with
 * vexp() before it: the rounding of 1/sum and of the product dominate); the
 * special rows against the reference row kernel: -inf entries give 0, a row
 * with a NaN or +inf or only -inf is all NaN, all-equal rows give 1/n, huge
 * and tiny magnitudes.
 */
ERT_TEST(softmax_dense_sweep)
{
	enum { N = 35, ROWS = 4096 };
	static float x[ROWS * N], y[ROWS * N];
	double worst[ERT_ISA_COUNT] = { 0 };
	float wx[ERT_ISA_COUNT] = { 0 };
	uint32_t b = 0x2b800000u;   /* 2^-40 */
	bool done = false;

	while (!done) {
		int64_t rows = 0;

		for (; rows < ROWS && !done; rows++) {
			float *r = x + rows * N;

			r[0] = 0;
			for (int k = 1; k < N; k++, b += 16) {
				memcpy(&r[k], &b, sizeof(r[k]));
				if (r[k] > 110) {
					r[k] = 110;
					done = true;
				}
				r[k] = -r[k];
			}
		}
		for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
			const struct ert_vec_kernels *vk = ert_vec_kernels_for((enum ert_cpu_isa)isa);

			REQUIRE(vk != NULL);
			if (isa > ERT_ISA_AVX2 &&
			    vk->softmax == ert_vec_kernels_for((enum ert_cpu_isa)(isa - 1))->softmax)
				continue;   /* the level below's kernel, already swept */
			for (int64_t r = 0; r < rows; r++)
				vk->softmax(x + r * N, y + r * N, N);
			for (int64_t r = 0; r < rows; r++) {
				const float *xr = x + r * N, *yr = y + r * N;
				double sum = 0;

				for (int k = 0; k < N; k++)
					sum += exp((double)xr[k]);
				for (int k = 0; k < N; k++) {
					double e = ulp_err(yr[k], exp((double)xr[k]) / sum);

					if (e > worst[isa]) {
						worst[isa] = e;
						wx[isa] = xr[k];
					}
				}
			}
		}
	}
	for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
		if (!(worst[isa] <= 3)) {
			fprintf(stderr, "softmax sweep at %s: %.3f ulp at %.9g (bound 3)\n",
				ert_vec_kernels_for((enum ert_cpu_isa)isa)->level, worst[isa], wx[isa]);
			CHECK(0);
		}
	}

	static const float sp[][5] = {
		{ 1.0f, -INFINITY, 2.0f, -INFINITY, 0.5f },
		{ 1.0f, NAN, 2.0f, 3.0f, 0.5f },
		{ 1.0f, 2.0f, INFINITY, 3.0f, 0.5f },
		{ -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY },
		{ 7.0f, 7.0f, 7.0f, 7.0f, 7.0f },
		{ 3e38f, -3e38f, 1e38f, 3e38f, 0 },
		{ 1e-40f, -1e-40f, 0, -0.0f, FLT_MIN },
		{ -1e30f, -2e30f, -1e30f, -5e29f, -1e31f },
	};

	for (size_t c = 0; c < sizeof(sp) / sizeof(sp[0]); c++) {
		for (int len = 1; len <= 40; len++) {
			float in[40], ref[40], got[40];

			for (int k = 0; k < len; k++)
				in[k] = sp[c][(k * 3 + len) % 5];
			ert_cpu_softmax_row_f32(in, ref, len);
			for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
				ert_vec_kernels_for((enum ert_cpu_isa)isa)->softmax(in, got, len);
				for (int k = 0; k < len; k++) {
					/* the reference within 1 ulp of exact for these */
					bool ok = isnan(ref[k]) ? isnan(got[k])
						  : ref[k] == 0 ? got[k] == 0
						  : ulp_err(got[k], ref[k]) <= 2;

					if (!ok) {
						fprintf(stderr, "softmax special row %zu, n %d, [%d] at "
							"%s: %g, reference %g\n", c, len, k,
							ert_cpu_isa_name((enum ert_cpu_isa)isa),
							got[k], ref[k]);
						CHECK(0);
					}
				}
			}
		}
	}
}

ERT_TEST(layer_norm_every_level)
{
	static const struct {
		int32_t rank;
		int64_t d[3];
		int64_t axis;
		bool bias;
		float off;     /* added to every input */
		int special;   /* 1: x[0] of each row an outlier; 2: NaN, inf and zeros */
	} cases[] = {
		{ 3, { 2, 197, 384 }, -1, true, 10, 0 }, { 3, { 3, 5, 17 }, -1, false, 10, 0 },
		{ 2, { 1, 1 }, -1, true, 10, 0 }, { 3, { 2, 3, 7 }, 1, true, 10, 0 },
		{ 2, { 4, 1000 }, 1, true, 10, 0 },
		/* the one-pass statistics (rows-tmpl.h ln_stats): far offsets, x[0] far out */
		{ 3, { 2, 197, 384 }, -1, true, 3e4f, 0 }, { 2, { 6, 384 }, -1, true, -500, 1 },
		{ 2, { 5, 40 }, -1, true, 0, 1 }, { 2, { 40, 33 }, -1, true, 1, 2 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct one o;
		int64_t sd[3];
		int32_t sr = 0, axis = cases[c].axis < 0 ? cases[c].rank - 1 : (int32_t)cases[c].axis;

		for (int32_t k = axis; k < cases[c].rank; k++)
			sd[sr++] = cases[c].d[k];
		one_init(&o, ERT_OP_LayerNormalization, 17, cases[c].bias ? 3 : 2, 3);
		float *x = in_rand(&o, 0, cases[c].rank, cases[c].d, 3);

		/* an offset mean, so the two-pass variance matters */
		for (int64_t i = 0; i < o.in[0].numel; i++)
			x[i] += cases[c].off;
		if (cases[c].special == 1)
			for (int64_t i = 0; i < o.in[0].numel; i += cases[c].d[cases[c].rank - 1])
				x[i] = cases[c].off + 900.0f;
		if (cases[c].special == 2)
			in_specials(x, o.in[0].numel);
		in_rand(&o, 1, sr, sd, 2);
		if (cases[c].bias)
			in_rand(&o, 2, sr, sd, 2);
		ert_node_set_attr_int(o.g, o.n, "axis", cases[c].axis);
		compare_levels(ert_test_failed_, &o, "LayerNormalization", 1e-6);
		one_fini(&o);
	}
}

/*
 * The row kernel's mean and 1/sqrt(var + eps) against norm-stats.c's
 * ln_row_f32 (restated here): the one-pass statistics (rows-tmpl.h
 * ln_stats) may round 1/sqrt to the next float, the reference's own d * d
 * being rounded to float; the mean the same but for a double rounding at a
 * tie. Rows of 384 (vit_s16's) and 37, spreads 1 and 0.01, offsets 0 to
 * 3e4 and x[0] far out. Measured: the mean the same in every row, 1/sqrt
 * 1 ulp apart in 334-361 of the 4800 rows (7 %) at avx2 and avx512.
 */
static void ln_ref_stats(const float *x, int64_t n, double eps, float *mean_out, float *inv_out)
{
	double sum = 0.0, sq = 0.0;
	float mean;

	for (int64_t j = 0; j < n; j++)
		sum += x[j];
	mean = (float)(sum / (double)n);
	for (int64_t j = 0; j < n; j++) {
		float d = x[j] - mean;

		sq += (double)(d * d);
	}
	*mean_out = mean;
	*inv_out = (float)(1.0 / sqrt(sq / (double)n + eps));
}

static int32_t ulps_apart(float a, float b)
{
	int32_t x, y;

	memcpy(&x, &a, sizeof(x));
	memcpy(&y, &b, sizeof(y));
	return x > y ? x - y : y - x;
}

ERT_TEST(layer_norm_stats_match_reference)
{
	static const float offs[] = { 0, 10, -1000, 3e4f };
	static float x[384], y[384], sc[384];
	static const int64_t lens[] = { 384, 37 };

	for (int i = 0; i < 384; i++)
		sc[i] = 1.0f;
	for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best(); isa++) {
		const struct ert_vec_kernels *vk = ert_vec_kernels_for((enum ert_cpu_isa)isa);
		int32_t worst_m = 0, worst_i = 0;
		int differ = 0, rows = 0;

		REQUIRE(vk != NULL);
		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
			for (size_t l = 0; l < 2; l++) {
				for (int r = 0; r < 600; r++, rows++) {
					int64_t n = lens[l];
					float m0, i0, m1, i1;

					for (int64_t i = 0; i < n; i++)
						x[i] = offs[o] + frand_r(&seed) * (r % 3 ? 1.0f : 0.01f);
					if (r % 5 == 0)
						x[0] = offs[o] + 50.0f;
					ln_ref_stats(x, n, 1e-6, &m0, &i0);
					vk->layer_norm(x, sc, NULL, y, n, 1e-6, &m1, &i1);
					if (ulps_apart(m0, m1) > worst_m)
						worst_m = ulps_apart(m0, m1);
					if (ulps_apart(i0, i1) > worst_i)
						worst_i = ulps_apart(i0, i1);
					differ += i0 != i1;
				}
			}
		}
		if (!(worst_m <= 1 && worst_i <= 2 && differ * 10 < rows)) {
			fprintf(stderr, "layer_norm stats at %s: mean %d ulp, 1/sqrt %d ulp, "
				"%d of %d rows differ (bounds 1, 2, 10 %%)\n", vk->level, worst_m,
				worst_i, differ, rows);
			CHECK(0);
		}
	}
}

ERT_TEST(reduce_every_level)
{
	static const enum ert_op ops[] = { ERT_OP_ReduceMean, ERT_OP_ReduceSum,
					   ERT_OP_ReduceSumSquare, ERT_OP_ReduceL2 };
	static const struct {
		int32_t rank;
		int64_t d[3];
		int64_t axes[2];
		uint32_t n_axes;
	} cases[] = {
		{ 3, { 2, 197, 384 }, { -1 }, 1 }, { 2, { 3, 17 }, { 1 }, 1 },
		{ 3, { 2, 3, 5 }, { 1, 2 }, 2 }, { 2, { 5, 1 }, { 1 }, 1 }, { 1, { 100003 }, { 0 }, 1 },
	};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			struct one o;

			/* opset 11: axes as an attribute for every Reduce* */
			one_init(&o, ops[k], 11, 1, 1);
			in_rand(&o, 0, cases[c].rank, cases[c].d, 2);
			ert_node_set_attr_ints(o.g, o.n, "axes", cases[c].axes, cases[c].n_axes);
			/* sums in double in another order: at most the float rounding apart */
			compare_levels(ert_test_failed_, &o, ert_op_name(ops[k]), 2.5e-7);
			one_fini(&o);
		}
	}
}

struct pool_case {
	const char *name;
	int32_t nsp;
	int64_t n, c, in[3], k[3], s[3], d[3], pads[6];
	bool ceil, include_pad;
};

static const struct pool_case pool_cases[] = {
	{ "resnet 3x3 s2 p1", 2, 1, 3, { 112, 112 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 },
	  false, false },
	{ "2x2 s2, odd size", 2, 2, 3, { 17, 33 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0 }, false, false },
	{ "3x3 s1 p1", 2, 1, 2, { 9, 47 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, false,
	  false },
	{ "5x5 s3 (gather)", 2, 1, 2, { 23, 70 }, { 5, 5 }, { 3, 3 }, { 1, 1 }, { 2, 2, 2, 2 },
	  false, false },
	{ "dilation 2, asymmetric pads", 2, 2, 2, { 19, 37 }, { 3, 3 }, { 1, 2 }, { 2, 2 },
	  { 0, 3, 2, 1 }, false, false },
	{ "ceil mode", 2, 1, 3, { 14, 35 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0 }, true, false },
	{ "ceil mode, include pad", 2, 1, 3, { 14, 35 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 0, 0 },
	  true, true },
	{ "include pad", 2, 1, 2, { 16, 64 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, false,
	  true },
	{ "pads as wide as allowed", 2, 1, 2, { 6, 20 }, { 3, 3 }, { 2, 3 }, { 1, 1 },
	  { 2, 2, 2, 2 }, false, false },
	{ "1-D", 1, 2, 3, { 50 }, { 4 }, { 2 }, { 1 }, { 1, 2 }, false, false },
	{ "3-D", 3, 1, 2, { 5, 9, 21 }, { 2, 3, 3 }, { 1, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1, 0, 1, 1 },
	  false, false },
	{ "wide", 2, 1, 1, { 3, 300 }, { 3, 7 }, { 1, 1 }, { 1, 1 }, { 1, 3, 1, 3 }, false, false },
	{ "whole plane", 2, 2, 37, { 7, 7 }, { 7, 7 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 }, false,
	  false },
	{ "whole 3-D", 3, 1, 5, { 2, 3, 5 }, { 2, 3, 5 }, { 1, 1, 1 }, { 1, 1, 1 },
	  { 0, 0, 0, 0, 0, 0 }, false, false },
};

ERT_TEST(pool_every_level)
{
	for (size_t i = 0; i < sizeof(pool_cases) / sizeof(pool_cases[0]); i++) {
		const struct pool_case *pc = &pool_cases[i];

		for (int kind = 0; kind < 2; kind++) {
			struct one o;
			int64_t dims[5] = { pc->n, pc->c, pc->in[0], pc->in[1], pc->in[2] };
			char what[96];

			one_init(&o, kind ? ERT_OP_AveragePool : ERT_OP_MaxPool, 19, 1, 1);
			float *x = in_rand(&o, 0, pc->nsp + 2, dims, 4);

			/* repeated values and signed zeros make max ties; NaN must win */
			for (int64_t q = 0; q < o.in[0].numel; q += 5)
				x[q] = q % 3 ? 0.25f : (q & 1 ? -0.0f : 0.0f);
			if (!kind)
				in_specials(x, o.in[0].numel);
			ert_node_set_attr_ints(o.g, o.n, "kernel_shape", pc->k, (uint32_t)pc->nsp);
			ert_node_set_attr_ints(o.g, o.n, "strides", pc->s, (uint32_t)pc->nsp);
			ert_node_set_attr_ints(o.g, o.n, "pads", pc->pads, 2 * (uint32_t)pc->nsp);
			ert_node_set_attr_ints(o.g, o.n, "dilations", pc->d, (uint32_t)pc->nsp);
			ert_node_set_attr_int(o.g, o.n, "ceil_mode", pc->ceil);
			if (kind)
				ert_node_set_attr_int(o.g, o.n, "count_include_pad", pc->include_pad);
			snprintf(what, sizeof(what), "%s %s", kind ? "AveragePool" : "MaxPool",
				 pc->name);
			compare_levels(ert_test_failed_, &o, what, 0);
			one_fini(&o);
		}
	}
}

ERT_TEST(global_average_pool_every_level)
{
	static const struct {
		int32_t rank;
		int64_t d[5];
	} cases[] = {
		{ 4, { 1, 2048, 7, 7 } }, { 4, { 2, 19, 5, 3 } }, { 3, { 3, 5, 1 } },
		{ 5, { 1, 17, 2, 3, 4 } }, { 4, { 1, 33, 64, 65 } },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct one o;

		one_init(&o, ERT_OP_GlobalAveragePool, 1, 1, 1);
		float *x = in_rand(&o, 0, cases[c].rank, cases[c].d, 3);

		in_specials(x, o.in[0].numel);
		compare_levels(ert_test_failed_, &o, "GlobalAveragePool", 0);
		one_fini(&o);
	}
}

/*
 * LRN's check: each value within @tol of the reference's, relative; where
 * the reference is 0, infinite or NaN, the same (the kernel takes the
 * reference's arithmetic for those lanes: cpu/vec/lrn-tmpl.h).
 */
static bool lrn_close(const struct ert_value *got, const struct ert_value *ref, double tol,
		      char *why, size_t why_len)
{
	const float *x = got->data, *r = ref->data;

	for (int64_t i = 0; i < ref->numel; i++) {
		bool exact = r[i] == 0 || !isfinite(r[i]);

		if (exact ? !(isnan(r[i]) ? isnan(x[i]) : !memcmp(&x[i], &r[i], sizeof(float)))
			  : !(fabs((double)x[i] - r[i]) <= tol * fabs(r[i]))) {
			snprintf(why, why_len, "value %lld: %.9g, reference %.9g", (long long)i,
				 (double)x[i], (double)r[i]);
			return false;
		}
	}
	return true;
}

ERT_TEST(lrn_every_level)
{
	static const struct {
		const char *name;
		int32_t rank;
		int64_t d[5];
		int64_t size;
		float alpha, beta, bias, scale;
		bool specials;
	} cases[] = {
		/* AlexNet's first LRN at a smaller size: 13 x 13 pixels, a vector tail */
		{ "alexnet-like", 4, { 1, 96, 13, 13 }, 5, 1e-4f, 0.75f, 1.0f, 40.0f, false },
		{ "even size, beta 0.5, batch 2", 4, { 2, 19, 7, 9 }, 4, 0.3f, 0.5f, 2.0f, 3.0f,
		  false },
		{ "size 1, 3 channels", 4, { 1, 3, 5, 40 }, 1, 2.0f, 1.3f, 0.5f, 1.0f, false },
		{ "window wider than C", 3, { 2, 10, 70 }, 101, 0.01f, 0.75f, 1.0f, 2.0f, false },
		{ "large d, beta 2", 5, { 1, 8, 3, 4, 5 }, 3, 0.01f, 2.0f, 1.0f, 300.0f, false },
		/* zero bias with zeros, infinities, NaN: the reference's arithmetic there */
		{ "zero bias, specials", 4, { 1, 7, 6, 11 }, 3, 1e-3f, 0.75f, 0.0f, 5.0f, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o;

		one_init(&o, ERT_OP_LRN, 13, 1, 1);
		float *x = in_rand(&o, 0, cases[i].rank, cases[i].d, cases[i].scale);

		if (cases[i].specials)
			in_specials(x, o.in[0].numel);
		ert_node_set_attr_int(o.g, o.n, "size", cases[i].size);
		ert_node_set_attr_float(o.g, o.n, "alpha", cases[i].alpha);
		ert_node_set_attr_float(o.g, o.n, "beta", cases[i].beta);
		ert_node_set_attr_float(o.g, o.n, "bias", cases[i].bias);
		CHECK(one_compare_levels_with(ert_test_failed_, &o, cases[i].name, lrn_close, 2e-6,
					      2e-6, ERT_ISA_AVX2, ONE_RUN_PACKED | ONE_RUN_POOL) >
		      0 || ert_cpu_isa_best() < ERT_ISA_AVX2);
		one_fini(&o);
	}
}

struct dw_case {
	const char *name;
	int32_t nsp;
	int64_t n, c, mult, in[3], k[3], s[3], d[3], pads[6];
	bool bias, residual;
	int act;
};

static const struct dw_case dw_cases[] = {
	{ "3x3 s1 p1, 112 wide", 2, 1, 4, 1, { 20, 112 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_CLIP },
	{ "3x3 s2, asymmetric pads", 2, 2, 5, 1, { 15, 33 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 0, 0, 1, 1 }, true, false, ERT_ACT_RELU },
	{ "3x3 s2 p1, 7x7 out", 2, 1, 6, 1, { 14, 14 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_HARD_SWISH },
	{ "5x5 p2, width 17", 2, 1, 3, 1, { 9, 17 }, { 5, 5 }, { 1, 1 }, { 1, 1 },
	  { 2, 2, 2, 2 }, false, false, 0 },
	{ "dilation 2", 2, 1, 3, 1, { 12, 40 }, { 3, 3 }, { 1, 1 }, { 2, 2 }, { 2, 2, 2, 2 }, true,
	  false, ERT_ACT_LEAKY_RELU },
	{ "stride 3 (gather)", 2, 1, 2, 1, { 16, 70 }, { 3, 3 }, { 3, 3 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_SIGMOID },
	{ "channel multiplier 2", 2, 2, 3, 2, { 10, 23 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_HARD_SIGMOID },
	{ "residual", 2, 2, 4, 1, { 9, 19 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, true,
	  true, ERT_ACT_RELU },
	{ "pads past the window", 2, 1, 2, 1, { 5, 9 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 4, 4, 4, 5 }, true, false, ERT_ACT_TANH },
	{ "1-D", 1, 2, 3, 1, { 50 }, { 5 }, { 2 }, { 1 }, { 2, 2 }, true, false, 0 },
	/* rows too wide for the padded strip: straight from the input, masked edges */
	{ "3000 wide, stride 2", 2, 1, 2, 1, { 5, 3000 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 1, 1, 0, 2 }, true, true, ERT_ACT_CLIP },
	{ "3000 wide, dilation 3", 2, 1, 2, 1, { 8, 3001 }, { 3, 3 }, { 1, 1 }, { 3, 3 },
	  { 3, 3, 3, 3 }, true, false, ERT_ACT_RELU },
	{ "3-D", 3, 1, 2, 1, { 4, 8, 21 }, { 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 },
	  { 1, 1, 1, 1, 1, 1 }, true, false, ERT_ACT_RELU },
	/* the 3x3 planes (several rows a pass, edge blocks masked): every row and lane tail */
	{ "3x3 s1, 1x1 input", 2, 2, 3, 1, { 1, 1 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 },
	  true, true, ERT_ACT_CLIP },
	{ "3x3 s1, 7x7, 5 channels", 2, 2, 5, 1, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, true, ERT_ACT_CLIP },
	{ "3x3 s1, 14 wide, 13 rows", 2, 1, 3, 1, { 13, 14 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, false, false, ERT_ACT_RELU },
	{ "3x3 s1, no padding, 18 wide", 2, 1, 3, 1, { 6, 18 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 0, 0, 0, 0 }, true, false, 0 },
	{ "3x3 s1, 41 wide, pads 2 0 / 0 3", 2, 2, 3, 1, { 11, 41 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 2, 0, 0, 3 }, true, true, ERT_ACT_RELU },
	{ "3x3 s1, 2 rows, 5 wide", 2, 1, 2, 1, { 2, 5 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_HARD_SWISH },
	/* same-size stride-1 planes of at most 256 outputs, rows narrower than a vector: flat */
	{ "3x3 s1, 9x11, pads 0 2 / 2 0, multiplier 2", 2, 2, 3, 2, { 9, 11 }, { 3, 3 },
	  { 1, 1 }, { 1, 1 }, { 0, 2, 2, 0 }, true, true, ERT_ACT_CLIP },
	{ "3x3 s1, 17x15 (255 outputs)", 2, 1, 3, 1, { 17, 15 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, false, true, ERT_ACT_RELU },
	{ "3x3 s1, 18x15 (270 outputs)", 2, 1, 2, 1, { 18, 15 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_CLIP },
	{ "3x3 s1, 56x56", 2, 1, 3, 1, { 56, 56 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 },
	  true, true, ERT_ACT_CLIP },
	{ "3x3 s2, 112 -> 56", 2, 1, 3, 1, { 112, 112 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_CLIP },
	{ "3x3 s2, 7 -> 4", 2, 2, 5, 1, { 7, 7 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 },
	  true, true, ERT_ACT_CLIP },
	{ "3x3 s2, 2x2 input", 2, 1, 3, 1, { 2, 2 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, false, ERT_ACT_RELU },
	{ "3x3 s2, 37x35, no padding", 2, 2, 3, 1, { 37, 35 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 0, 0, 0, 0 }, false, true, 0 },
	{ "3x3 s2, 50x67, pads 0 2 / 3 1", 2, 1, 3, 2, { 50, 67 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 0, 2, 3, 1 }, true, false, ERT_ACT_LEAKY_RELU },
	{ "3x3 s2, pads past the window", 2, 1, 2, 1, { 5, 9 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 3, 4, 4, 5 }, true, false, ERT_ACT_TANH },
	{ "3x3 s1, 4096 wide", 2, 1, 2, 1, { 3, 4096 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, true, ERT_ACT_RELU },
	/* one past the widest row the 3x3 planes take: the general kernel */
	{ "3x3 s1, 4097 wide", 2, 1, 2, 1, { 3, 4097 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, true, true, ERT_ACT_RELU },
};

/* The 3x3 stride-1/2 geometries of rows up to ERT_DW3_MAX_W run the 3x3 planes, the rest not. */
static void check_dw_kernel(int *ert_test_failed_, const struct one *o, const struct dw_case *dc)
{
	bool three = dc->nsp == 2 && dc->k[0] == 3 && dc->k[1] == 3 && dc->d[0] == 1 &&
		     dc->d[1] == 1 && dc->s[0] == dc->s[1] && dc->s[0] <= 2 && dc->in[1] <= 4096;
	struct ert_conv_geom g;
	struct ert_err err = { 0 };

	if (ert_geom_conv(o->n, dc->nsp, dc->in, dc->k, false, &g, &err) != ERT_OK) {
		fprintf(stderr, "%s: geometry: %s\n", dc->name, err.msg);
		*ert_test_failed_ = 1;
		return;
	}
	for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best() && isa <= ERT_ISA_AVX512;
	     isa++) {
		const char *k = ert_dwconv_kernel((enum ert_cpu_isa)isa, &g);

		if (!k || (strstr(k, "dwconv3x3") != NULL) != three) {
			fprintf(stderr, "%s at %s: kernel %s\n", dc->name,
				ert_cpu_isa_name((enum ert_cpu_isa)isa), k ? k : "none");
			*ert_test_failed_ = 1;
		}
	}
}

ERT_TEST(depthwise_every_level)
{
	for (size_t i = 0; i < sizeof(dw_cases) / sizeof(dw_cases[0]); i++) {
		const struct dw_case *dc = &dw_cases[i];
		int32_t r = dc->nsp + 2;
		int64_t m = dc->c * dc->mult, out[3];
		int64_t xd[5] = { dc->n, dc->c }, wd[5] = { m, 1 }, bd[1] = { m }, rd[5] = { dc->n, m };
		float clip[2] = { -0.5f, 0.7f }, leaky[2] = { 0.1f, 0 }, hsig[2] = { 0.2f, 0.5f };
		struct one o;

		for (int k = 0; k < dc->nsp; k++) {
			int64_t win = (dc->k[k] - 1) * dc->d[k] + 1;

			out[k] = (dc->in[k] + dc->pads[k] + dc->pads[k + dc->nsp] - win) / dc->s[k] + 1;
			xd[2 + k] = dc->in[k];
			wd[2 + k] = dc->k[k];
			rd[2 + k] = out[k];
		}
		one_init(&o, ERT_OP_Conv, 11, dc->residual ? 4 : 3, 1);
		in_rand(&o, 0, r, xd, 2);
		in_rand(&o, 1, r, wd, 1);
		if (dc->bias)
			in_rand(&o, 2, 1, bd, 1);
		else
			o.inp[2] = NULL;
		if (dc->residual) {
			in_rand(&o, 3, r, rd, 2);
			ert_node_set_attr_int(o.g, o.n, "ert.residual", 1);
		}
		ert_node_set_attr_int(o.g, o.n, "group", dc->c);
		ert_node_set_attr_ints(o.g, o.n, "kernel_shape", dc->k, (uint32_t)dc->nsp);
		ert_node_set_attr_ints(o.g, o.n, "strides", dc->s, (uint32_t)dc->nsp);
		ert_node_set_attr_ints(o.g, o.n, "dilations", dc->d, (uint32_t)dc->nsp);
		ert_node_set_attr_ints(o.g, o.n, "pads", dc->pads, 2 * (uint32_t)dc->nsp);
		if (dc->act) {
			ert_node_set_attr_int(o.g, o.n, "ert.act", dc->act);
			ert_opt_set_attr_floats(o.g, o.n, "ert.act_params",
						dc->act == ERT_ACT_CLIP ? clip
						: dc->act == ERT_ACT_HARD_SIGMOID ? hsig : leaky, 2);
		}
		compare_levels(ert_test_failed_, &o, dc->name, 1e-5);
		check_dw_kernel(ert_test_failed_, &o, dc);
		one_fini(&o);
	}
}

/*
 * The flat 3x3 planes (dwconv-tmpl.h: stride 1 same-size planes, and small
 * stride-2 planes split into even and odd floats) against the row passes
 * (ert_dwconv_band_run() over the whole plane) bit for bit, at each vector
 * level, on one thread and two (the pool's ranges each build the layout):
 * the same sums in the same order. Each case states at which levels the
 * flat path must be the one taken.
 */
ERT_TEST(depthwise_flat_same_bits_as_rows)
{
	static const struct {
		const char *name;
		int64_t c, h, w, s, pads[4]; /* top, left, bottom, right */
		int act;
		bool flat2, flat512;         /* flat at avx2, at avx512 */
	} cases[] = {
		{ "14x14 s2 (mobilenet_v2's 14 -> 7)", 7, 14, 14, 2, { 1, 1, 1, 1 }, ERT_ACT_CLIP,
		  true, true },
		{ "13x11 s2, pads 0 2 / 2 0", 5, 13, 11, 2, { 0, 2, 2, 0 }, ERT_ACT_RELU, true, true },
		{ "5x9 s2, pads past the window", 3, 5, 9, 2, { 3, 4, 4, 5 }, ERT_ACT_LEAKY_RELU,
		  false, true },
		{ "2x2 s2 -> 1x1", 3, 2, 2, 2, { 1, 1, 1, 1 }, ERT_ACT_NONE, true, true },
		{ "7x29 s2 (rows of 2 VW - 3 at avx512)", 4, 7, 29, 2, { 1, 1, 1, 1 },
		  ERT_ACT_HARD_SWISH, false, true },
		{ "12x8 s2, no padding", 6, 12, 8, 2, { 0, 0, 0, 0 }, ERT_ACT_CLIP, true, true },
		/* more than 64 outputs: by rows (dwconv-tmpl.h's DW3E_MAX) */
		{ "28x28 s2", 3, 28, 28, 2, { 1, 1, 1, 1 }, ERT_ACT_CLIP, false, false },
		{ "7x7 s1", 5, 7, 7, 1, { 1, 1, 1, 1 }, ERT_ACT_CLIP, true, true },
		{ "14x14 s1", 3, 14, 14, 1, { 1, 1, 1, 1 }, ERT_ACT_RELU, false, true },
		{ "9x11 s1, pads 0 2 / 2 0", 3, 9, 11, 1, { 0, 2, 2, 0 }, ERT_ACT_NONE, false, true },
	};
	struct ert_threadpool *pool = ert_threadpool_create(2);

	CHECK(pool != NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t c = cases[i].c, h = cases[i].h, w = cases[i].w, s = cases[i].s;
		const int64_t *pd = cases[i].pads;
		int64_t oh = (h + pd[0] + pd[2] - 3) / s + 1, ow = (w + pd[1] + pd[3] - 3) / s + 1;
		struct ert_conv_geom g = {
			.nsp = 2, .in = { 1, h, w }, .k = { 1, 3, 3 }, .stride = { 1, s, s },
			.dil = { 1, 1, 1 }, .pad_b = { 0, pd[0], pd[1] }, .pad_e = { 0, pd[2], pd[3] },
			.out = { 1, oh, ow }, .win = { 1, 3, 3 },
		};
		size_t ny = (size_t)(c * oh * ow);
		float *x = malloc((size_t)(c * h * w) * sizeof(float)), *k = malloc(9 * (size_t)c * 4);
		float *b = malloc((size_t)c * 4), *y = malloc(ny * 4), *yr = malloc(ny * 4);

		CHECK(x && k && b && y && yr);
		for (int64_t j = 0; j < c * h * w; j++)
			x[j] = frand_r(&seed) * 4.0f;
		for (int64_t j = 0; j < 9 * c; j++)
			k[j] = frand_r(&seed);
		for (int64_t j = 0; j < c; j++)
			b[j] = frand_r(&seed);
		for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best() && isa <= ERT_ISA_AVX512;
		     isa++) {
			bool want = isa >= ERT_ISA_AVX512 ? cases[i].flat512 : cases[i].flat2;
			struct ert_dwconv_args a = {
				.g = &g, .n_img = 1, .c_in = c, .m = c, .m_g = 1, .x = x, .w = k,
				.bias = b, .act = { (enum ert_act)cases[i].act, 0.0f, 6.0f },
			};
			struct ert_dwconv_band band = { 0, oh, 0, h, h * w, oh * ow };
			const char *lv = ert_cpu_isa_name((enum ert_cpu_isa)isa);

			if (a.act.type == ERT_ACT_LEAKY_RELU)
				a.act.p0 = 0.1f;
			if (ert_dwconv_flat((enum ert_cpu_isa)isa, &g) != want) {
				fprintf(stderr, "%s at %s: flat %d, want %d\n", cases[i].name, lv, !want,
					want);
				*ert_test_failed_ = 1;
			}
			for (int threads = 1; threads <= 2; threads++) {
				struct ert_cpu cpu = { .isa = (enum ert_cpu_isa)isa,
						       .precision = ERT_LEVEL_NORMAL,
						       .pool = threads > 1 ? pool : NULL };

				memset(y, 0xff, ny * 4);
				memset(yr, 0xfe, ny * 4);
				a.y = y;
				CHECK(ert_dwconv_run(&cpu, &a));
				a.y = yr;
				ert_dwconv_band_run(&cpu, &a, &band);
				if (memcmp(y, yr, ny * 4)) {
					for (size_t j = 0; j < ny; j++)
						if (memcmp(&y[j], &yr[j], 4)) {
							fprintf(stderr, "%s at %s, %d threads: output %zu %.9g, "
								"rows %.9g\n", cases[i].name, lv, threads, j,
								(double)y[j], (double)yr[j]);
							break;
						}
					*ert_test_failed_ = 1;
				}
			}
		}
		free(x);
		free(k);
		free(b);
		free(y);
		free(yr);
	}
	ert_threadpool_destroy(pool);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(vmath_bounds), ERT_TEST_ENTRY(gelu_dense_sweep),
	      ERT_TEST_ENTRY(act_pass_matches_reference),
	      ERT_TEST_ENTRY(unary_ops_every_level), ERT_TEST_ENTRY(unary_half_every_level),
	      ERT_TEST_ENTRY(binary_ops_every_level), ERT_TEST_ENTRY(softmax_every_level),
	      ERT_TEST_ENTRY(softmax_dense_sweep),
	      ERT_TEST_ENTRY(layer_norm_every_level),
	      ERT_TEST_ENTRY(layer_norm_stats_match_reference), ERT_TEST_ENTRY(reduce_every_level),
	      ERT_TEST_ENTRY(pool_every_level), ERT_TEST_ENTRY(global_average_pool_every_level),
	      ERT_TEST_ENTRY(lrn_every_level),
	      ERT_TEST_ENTRY(depthwise_every_level),
	      ERT_TEST_ENTRY(depthwise_flat_same_bits_as_rows))
