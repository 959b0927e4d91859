/* SPDX-License-Identifier: MIT */
/*
 * qlinear-kernels.h — private to the CPU int8 kernels (qlinalg.c,
 * qlinear-ew.c, qlinear-pool.c): loading and storing 8-bit values and the
 * output stage of both requantisation rules (docs/int8.md).
 */
#ifndef ERT_CPU_QLINEAR_KERNELS_H
#define ERT_CPU_QLINEAR_KERNELS_H

#include <math.h>

#include "cpu/cpu-impl.h"
#include "ops/qlinear.h"

/* How an int8 op finishes: output type, zero point, clamp, rule. */
struct ert_qout {
	ert_dtype dtype;
	int32_t zp;
	int32_t lo, hi;
	bool fixed;
};

static inline int32_t ert_q8_load(const void *p, ert_dtype dt, int64_t i)
{
	return dt == ERT_DTYPE_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* @q is already inside the output type's range (the clamp saw to it). */
static inline void ert_q8_store(void *p, ert_dtype dt, int64_t i, int32_t q)
{
	if (dt == ERT_DTYPE_UINT8)
		((uint8_t *)p)[i] = (uint8_t)q;
	else
		((int8_t *)p)[i] = (int8_t)q;
}

/* Float rule: rint(@r) + zero point, clamped; NaN gives lo. */
static inline int32_t ert_qout_float(const struct ert_qout *o, double r)
{
	double q = rint(r) + o->zp;

	if (!(q >= o->lo))
		return o->lo;
	if (q > o->hi)
		return o->hi;
	return (int32_t)q;
}

/* Fixed rule: requant(@acc, @m, @s) + zero point, clamped. */
static inline int32_t ert_qout_fixed(const struct ert_qout *o, int32_t acc, int32_t m, int32_t s)
{
	int64_t q = (int64_t)ert_requant_fixed(acc, m, s) + o->zp;

	return (int32_t)(q < o->lo ? o->lo : q > o->hi ? o->hi : q);
}

/* The output stage of node @x writing int8/uint8 output @y with zero point @yzp (may be NULL). */
static inline ert_status ert_qout_init(struct ert_qout *o, const struct ert_exec *x,
				       const struct ert_value *y, const struct ert_value *yzp,
				       struct ert_err *err)
{
	struct ert_qrule r;
	const char *why = ert_qrule_read(x->node, y->dtype, &r);

	if (why)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL, "%s", why);
	o->dtype = y->dtype;
	o->zp = ert_qparam_int(yzp, 0);
	o->lo = r.lo;
	o->hi = r.hi;
	o->fixed = r.fixed;
	return ERT_OK;
}

/*
 * QLinearAdd and QLinearMul over one run of elements, at the SIMD levels
 * (qlinear-ew-<level>.c), bit-identical to the scalar loop of qlinear-ew.c.
 * a, b and y share one type (uint8 when @u8); a step of 0 repeats a[0].
 */
struct ert_q8_bin {
	bool mul, fixed, u8;
	int32_t azp, bzp;
	int32_t am, as, bm, bs;   /* Add, fixed rule: requant((v - zp) << 20, m, s) per input */
	int32_t m, s;             /* fixed rule: the sum's (Add) or the product's (Mul) multiplier */
	double ra, rb;            /* Add, float rule: (double)(v - zp) * r per input, summed */
	double f;                 /* Mul, float rule: (double)product * f */
	int32_t zp, lo, hi;       /* output zero point and clamp */
};

typedef void (*ert_q8_bin_fn)(const struct ert_q8_bin *p, const uint8_t *a, int64_t sa,
			      const uint8_t *b, int64_t sb, uint8_t *y, int64_t n);

void ert_q8_bin_avx2(const struct ert_q8_bin *p, const uint8_t *a, int64_t sa, const uint8_t *b,
		     int64_t sb, uint8_t *y, int64_t n);
void ert_q8_bin_avx512(const struct ert_q8_bin *p, const uint8_t *a, int64_t sa, const uint8_t *b,
		       int64_t sb, uint8_t *y, int64_t n);

/*
 * The fixed-rule Add's lanes in the exact 32-bit form (docs/int8.md, "The
 * fixed-rule Add in 32-bit lanes"). Of the two inputs, s is scaled by a
 * power of two (the larger scale's multiplier is always 2^30: w << ks) and
 * g is computed as w * A + ((w * f + c) >> K), c = cneg where w < zg else
 * cpos; w is the input's value (int8: sign-extended). The lanes' sum plus
 * bias is >= 0 and below 2^30; the sum is requantised as
 * ((sum * m + q) >> (31 + n)) with the constant part of both inputs folded
 * into q, less 1 before the shift by n where adj and the sum is below negc.
 * Then the clamp (lo, hi: relative to zp) and zp, in 16-bit lanes.
 * @s NULL: the kernel runs g alone (s's value folded into q and negc).
 */
struct ert_q8_addf {
	int32_t ks;
	int32_t A, f, cpos, cneg, K, zg;
	int32_t bias, negc;
	int32_t m, n;
	int64_t q;
	int16_t lo, hi, zp;
	bool adj, s8;
};

/*
 * @p for a fused residual whose conv side enters as v + zp (v its value
 * before the zero point, @conv_s: as the power-of-two input, else as g):
 * the zero point's part folded into bias (added always by the caller, its
 * s8 part only where @s8), cpos, cneg and zg. As s, w << ks = (v << ks) +
 * (zp << ks); as g, w A + ((w f + c) >> K) = v A + zp A + ((v f + zp f + c)
 * >> K), c picked by w < zg, that is v < zg - zp. Exact in wrapping int32:
 * each sum is the Add's own up to a multiple of 2^32, and the Add's own fits.
 */
static inline struct ert_q8_addf ert_q8_addf_fold_zp(struct ert_q8_addf p, int32_t zp, bool conv_s,
						     bool s8)
{
	uint32_t bias = s8 ? (uint32_t)p.bias : 0u;

	if (conv_s) {
		p.bias = (int32_t)(bias + (p.ks < 32 ? (uint32_t)zp << p.ks : 0u));
		return p;
	}
	p.bias = (int32_t)(bias + (uint32_t)zp * (uint32_t)p.A);
	p.cpos = (int32_t)((uint32_t)p.cpos + (uint32_t)zp * (uint32_t)p.f);
	p.cneg = (int32_t)((uint32_t)p.cneg + (uint32_t)zp * (uint32_t)p.f);
	p.zg -= zp;
	return p;
}

typedef void (*ert_q8_addf_fn)(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g,
			       uint8_t *y, int64_t n);

void ert_q8_addf_avx2(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g, uint8_t *y,
		      int64_t n);
void ert_q8_addf_avx512(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g,
			uint8_t *y, int64_t n);

/* One input of the 32-bit form: its lanes' value is its table's plus off. */
struct ert_q8_addf_in {
	int32_t A, f, cpos, cneg, K, zp, off;
};

/*
 * The fixed-rule QLinearAdd (TFLite's ADD, docs/int8.md) of runs of
 * elements at one level: the scalar loop over 256-entry tables of each
 * input's scaled value, or the level's lanes. QLinearAdd runs through it,
 * and so does the residual stage of a QLinearConv with "ert.residual"
 * (qlinalg.c), which adds its requantised rows to the residual while they
 * are in cache: the same code, so the same bytes as the two ops apart.
 */
struct ert_q8_add {
	struct ert_qout qo;       /* output type, zero point, clamp */
	int32_t out_m, out_s;     /* the sum's multiplier */
	int32_t ta[256], tb[256]; /* requant((v - zp) << 20, m, s) of each input byte */
	ert_q8_bin_fn vec;        /* the level's lanes, or NULL */
	struct ert_q8_bin vp;     /* their parameters */
	/*
	 * The level's lanes in the 32-bit form (NULL where the multipliers
	 * fall outside it: vec runs): in[0] is a, in[1] b; in[shift] is the
	 * power-of-two input.
	 */
	ert_q8_addf_fn fast;
	struct ert_q8_addf fp;    /* its parameters for both inputs contiguous */
	struct ert_q8_addf_in in[2];
	int shift;
};

/*
 * Set up @p for inputs of @qo->dtype with scales @as, @bs and zero points
 * @azp, @bzp, output scale @cs, at level @isa. False when a multiplier
 * cannot be represented (shape inference refuses those).
 */
bool ert_q8_add_init(struct ert_q8_add *p, enum ert_cpu_isa isa, const struct ert_qout *qo,
		     double as, int32_t azp, double bs, int32_t bzp, double cs);

/* y[k] = add(a[k * sa], b[k * sb]) for k < @n; y may be a (same step). */
void ert_q8_add_run(const struct ert_q8_add *p, const uint8_t *a, int64_t sa, const uint8_t *b,
		    int64_t sb, uint8_t *y, int64_t n);

/*
 * QuantizeLinear of float32 to int8/uint8, one scale and zero point
 * (quant.c's quantize_bytes()): q = x / s in float32, NaN to 0, clamped to
 * [lo, hi] = the type's range less zp, rounded half to even, plus zp. The
 * level kernels (quant-<level>.c) do whole groups of their width and return
 * how many elements they did.
 */
struct ert_q8_quant {
	float s, lo, hi;
	int32_t zp;
	bool u8;
};

typedef int64_t (*ert_q8_quant_fn)(const struct ert_q8_quant *p, const float *x, void *y,
				   int64_t n);

int64_t ert_q8_quantize_avx2(const struct ert_q8_quant *p, const float *x, void *y, int64_t n);
int64_t ert_q8_quantize_avx512(const struct ert_q8_quant *p, const float *x, void *y, int64_t n);

/*
 * DequantizeLinear of int8/uint8 to float32, one float32 scale and zero
 * point (quant.c's dequantize_range()): y = ((float)x - (float)zp) * s in
 * float32, each step rounded as there (the subtraction of two small
 * integers is exact, the product is one float32 rounding). The level
 * kernels (quant-<level>.c) do whole groups of their width and return how
 * many elements they did.
 */
struct ert_q8_dequant {
	float s, zp;
	bool u8;
};

typedef int64_t (*ert_q8_dequant_fn)(const struct ert_q8_dequant *p, const void *x, float *y,
				     int64_t n);

int64_t ert_q8_dequantize_avx2(const struct ert_q8_dequant *p, const void *x, float *y,
			       int64_t n);
int64_t ert_q8_dequantize_avx512(const struct ert_q8_dequant *p, const void *x, float *y,
				 int64_t n);

/*
 * The byte pools' inner loops at a SIMD level (qpool-<level>.c): MaxPool
 * of int8/uint8 (pool.c's max_rows_vec()) and QLinearGlobalAveragePool's
 * plane sums (qlinear-pool.c). Bytes are int8 when @s8, else uint8. Integer
 * max and integer sums are exact, so the callers' outputs are the scalar
 * kernels' bytes.
 */
struct ert_q8_pool_kernels {
	const char *name;    /* what `edgert profile` shows: "q8-pool-<level>" */
	/*
	 * y[i] = max over r < nr, c < k of rows[r][i * s + c * d] for i < n, s 1
	 * or 2; no byte outside those taps' span of each row is read.
	 */
	void (*max_rows)(const uint8_t *const *rows, int nr, uint8_t *y, int64_t n, int64_t k,
			 int64_t s, int64_t d, bool s8);
	/* sums[p] = the sum of the @sp values at x + p * sp, for p < @planes */
	void (*plane_sums)(const uint8_t *x, int64_t planes, int64_t sp, bool s8, int64_t *sums);
};

extern const struct ert_q8_pool_kernels ert_q8_pool_avx2;
extern const struct ert_q8_pool_kernels ert_q8_pool_avx512;

/* The table of level @isa, or NULL at the scalar level (qlinear-pool.c). */
const struct ert_q8_pool_kernels *ert_q8_pool_kernels_for(enum ert_cpu_isa isa);

#endif /* ERT_CPU_QLINEAR_KERNELS_H */
