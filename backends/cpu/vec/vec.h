/* SPDX-License-Identifier: MIT */
/*
 * vec.h — the CPU backend's fp32 vector kernels outside GEMM and convolution:
 * elementwise unary and binary ops, fused activations, Softmax, LayerNorm,
 * sums for ReduceMean/ReduceSum, and Max/AveragePool windows.
 *
 * One table per kernel level (vec-avx2.c, vec-avx512.c, built from the
 * templates in this directory); the scalar level has none: its kernels are
 * the portable reference loops in backends/cpu/ops/, which stay the oracle.
 * Callers ask ert_vec_kernels_for() and keep their reference path for NULL
 * and for the cases a table entry does not take.
 *
 * Agreement with the reference (held by tests/unit/test-vec-levels.c):
 * - bit for bit where the arithmetic is the same: Add Sub Mul Div Min Max,
 *   Relu, Clip, LeakyRelu, HardSigmoid, HardSwish, the activations ReLU, Clip,
 *   LeakyRelu, HardSwish, HardSigmoid, MaxPool (NaN and signed zeros
 *   included) and AveragePool (sums in double in the reference's tap order);
 * - within the bounds stated in vmath.h for exp, sigmoid, tanh, erf, GELU
 *   (Softmax: 5 ulp of each output);
 * - LayerNorm and the float sums add in double in another order: within a
 *   few units of the last place of the float result (LayerNorm's mean and
 *   1/sqrt(var + eps) in one pass: the mean as the reference's, 1/sqrt one
 *   float apart in a few % of rows; cpu/vec/rows-tmpl.h).
 */
#ifndef ERT_CPU_VEC_H
#define ERT_CPU_VEC_H

#include "cpu/cpu-impl.h"
#include "ops/linalg-geom.h"

enum ert_vec_unary {
	ERT_VEC_RELU,          /* v < 0 ? 0 : v */
	ERT_VEC_CLIP,          /* ONNX Clip: max(v, lo) then min(., hi) */
	ERT_VEC_LEAKY_RELU,
	ERT_VEC_HARD_SIGMOID,
	ERT_VEC_HARD_SWISH,
	ERT_VEC_SIGMOID,
	ERT_VEC_TANH,
	ERT_VEC_ERF,
	ERT_VEC_GELU,
	ERT_VEC_GELU_TANH,
	ERT_VEC_EXP,
	ERT_VEC_UNARY_COUNT
};

/* Parameters of the unary ops, as float (the reference rounds them so too). */
struct ert_vec_uparams {
	float lo, hi;          /* Clip */
	float alpha, beta;     /* LeakyRelu alpha; HardSigmoid alpha, beta */
};

typedef void (*ert_vec_unary_fn)(const float *x, float *y, int64_t n,
				 const struct ert_vec_uparams *p);

enum ert_vec_binary {
	ERT_VEC_ADD, ERT_VEC_SUB, ERT_VEC_MUL, ERT_VEC_DIV, ERT_VEC_MIN, ERT_VEC_MAX,
	ERT_VEC_BINARY_COUNT
};

/*
 * One run of the broadcast walker (cpu/ops/elementwise.h): y[i] = a op b for
 * i < n, a advancing when sa != 0 (else a[0] for all), b likewise. y may be
 * a or b itself. The same signature as binary-arith.c's kernels.
 */
typedef void (*ert_vec_binary_fn)(const void *a, int64_t sa, const void *b, int64_t sb,
				  void *y, int64_t n);

/* Widest window a pool or depthwise kernel takes (taps along W; rows D x H). */
#define ERT_VEC_WIN_MAX 64

/*
 * A 1-, 2- or 3-D window over one NCHW plane (geometry as linalg-geom.h
 * keeps it), with what the kernels need per tap along W computed once.
 */
struct ert_vec_win {
	const struct ert_conv_geom *g;
	int64_t off[ERT_VEC_WIN_MAX];   /* input column of tap kw for output column 0 */
	int64_t lo[ERT_VEC_WIN_MAX];    /* output columns [lo, hi] where tap kw is inside */
	int64_t hi[ERT_VEC_WIN_MAX];
	int64_t in_lo, in_hi;           /* columns where every tap is inside */
	/* pooling */
	bool max, include_pad;
	/* depthwise: the activation after the bias (and residual) */
	struct ert_act_desc act;
};

/*
 * Fill @w for @g; false when the vector kernels do not take this geometry
 * (more than ERT_VEC_WIN_MAX taps along W or rows per window, or strides
 * too wide for 32-bit lane offsets). @w keeps a pointer to @g.
 */
bool ert_vec_win_init(struct ert_vec_win *w, const struct ert_conv_geom *g);

/* LRN over one image's channels (ops/norm.c): its attributes and sizes */
struct ert_lrn_desc {
	int64_t c, sp;               /* channels, pixels a channel */
	int64_t size;                /* the attribute */
	int64_t lo_off, hi_off;      /* channels before and after c in the window, clamped to C */
	double alpha, beta, bias;
};

struct ert_vec_kernels {
	const char *level;                      /* "avx2", "avx512" */
	/* what `edgert profile` shows for the ops using this table */
	const char *name_eltwise, *name_softmax, *name_norm, *name_reduce, *name_pool, *name_lrn;
	ert_vec_unary_fn unary[ERT_VEC_UNARY_COUNT];
	ert_vec_binary_fn binary[ERT_VEC_BINARY_COUNT];
	/* ert_act_apply() in place */
	void (*act)(const struct ert_act_desc *act, float *x, int64_t n);
	/* y = softmax(x) over one contiguous row; y may be x */
	void (*softmax)(const float *x, float *y, int64_t n);
	/*
	 * LayerNormalization of one row with full-size scale and bias (NULL: 0),
	 * as norm-stats.c: mean and 1/sqrt(var + eps) rounded to float, returned.
	 */
	void (*layer_norm)(const float *x, const float *scale, const float *bias, float *y,
			   int64_t n, double eps, float *mean_out, float *inv_out);
	/* Sum of x[i] (or of x[i]^2) in double */
	double (*sum)(const float *x, int64_t n, bool squares);
	/* Max or average pooling of one plane: x is in[0]*in[1]*in[2] floats */
	void (*pool)(const struct ert_vec_win *w, const float *x, float *y);
	/* GlobalAveragePool of @planes planes of @sp floats, 0 < sp < 2^26 */
	void (*gap)(const float *x, float *y, int64_t planes, int64_t sp);
	/* LRN of pixels [s0, s1) of one image x [c, sp] into y (cpu/vec/lrn-tmpl.h) */
	void (*lrn)(const struct ert_lrn_desc *p, const float *x, float *y, int64_t s0, int64_t s1);
};

/* The table of level @isa, or NULL at the scalar level. */
const struct ert_vec_kernels *ert_vec_kernels_for(enum ert_cpu_isa isa);

/* ert_act_apply() through @cpu's level: the vector kernel when there is one. */
void ert_cpu_act_apply(const struct ert_cpu *cpu, const struct ert_act_desc *act, float *x,
		       int64_t n);

extern const struct ert_vec_kernels ert_vec_kernels_avx2;
extern const struct ert_vec_kernels ert_vec_kernels_avx512;

#endif /* ERT_CPU_VEC_H */
