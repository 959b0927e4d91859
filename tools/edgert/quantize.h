/* SPDX-License-Identifier: MIT */
/*
 * quantize.h — edgert quantize: post-training int8 quantisation of a float
 * model into QDQ form (docs/int8.md is the contract the output follows).
 *
 *   quantize.c         the command: options, the order of the work, the report
 *   quantize-range.c   the arithmetic: activation ranges (min/max, EMA, KL),
 *                      scales and zero points, per-channel weights, cosines
 *   quantize-calib.c   calibration samples (.npy directory or seeded random)
 *                      and the float runs that collect tensor statistics
 *   quantize-select.c  which nodes and activations are quantised
 *   quantize-graph.c   the QDQ rewrite of the graph
 *   quantize-verify.c  float against int8: per-layer and output cosines
 *
 * Activations are asymmetric per-tensor int8, weights symmetric per-channel
 * int8 in [-127, 127], biases int32 with scale x_scale * w_scale[c].
 */
#ifndef ERT_QUANTIZE_H
#define ERT_QUANTIZE_H

#include "cli.h"
#include "ert-op-impl.h"

/* ---- quantize.c ------------------------------------------------------- */

/*
 * The float model as the quantiser sees it: @path (.ert or .onnx) optimised
 * (activations fused, as the int8 ops will have them, then the ones an int8
 * op cannot clamp split off again), serialised into *@image (malloc'd, freed
 * by the caller after the model) and loaded from that image, so that the
 * sessions and the rewrite work on graphs with the same indices. Prints
 * "edgert @cmd: ..." and returns false on failure.
 */
bool q_load_float(const char *cmd, const char *path, void **image, size_t *size,
		  ert_model **model_out);

/* ---- quantize-range.c ------------------------------------------------- */

enum q_method {
	Q_METHOD_MINMAX, /* global min/max over every sample */
	Q_METHOD_KL,     /* entropy calibration on a histogram of |x| */
	Q_METHOD_EMA,    /* moving average of each sample's min/max */
};

/* Weight of the newest sample in the EMA: ema = (1 - f) * ema + f * sample. */
#define Q_EMA_FACTOR 0.1
/* Histogram bins of |x| for the KL method. */
#define Q_HIST_BINS 2048

/* Statistics of one float tensor over the calibration samples. */
struct q_stats {
	uint32_t samples;     /* samples seen (0: never computed by a step) */
	float min, max;       /* over all samples */
	double ema_min, ema_max;
	float hist_max;       /* KL: |x| range of the histogram (max(|min|, |max|)) */
	uint32_t *hist;       /* KL: Q_HIST_BINS counts of |x| over [0, hist_max] */
};

/* Fold @n values of @x into @s (min/max, EMA); the histogram when s->hist is set. */
void q_stats_update(struct q_stats *s, const float *x, size_t n);
void q_stats_hist_update(struct q_stats *s, const float *x, size_t n);

/* The int8 parameters of an activation. */
struct q_params {
	float scale;
	int8_t zp;
};

/*
 * Asymmetric int8 parameters for the range [lo, hi], widened to hold 0:
 * scale = (hi - lo) / 255, zp = round(-128 - lo / scale) clamped to int8.
 * An empty or non-finite range gets scale 1.
 */
struct q_params q_params_from_range(float lo, float hi);

/*
 * Entropy calibration: the threshold T in (0, hist_max] whose clipped and
 * @levels-level quantised histogram is closest (Kullback-Leibler) to the
 * histogram clipped at T.
 */
float q_kl_threshold(const uint32_t *hist, uint32_t nbins, float hist_max, uint32_t levels);

/* The range an activation gets for @method. */
void q_range_of(const struct q_stats *s, enum q_method method, float *lo, float *hi);

/*
 * Symmetric per-channel int8 weights of a float tensor seen as [outer, n, inner]
 * with channel axis of size @n: scale[c] = max|w_c| / 127 (1 for an all-zero
 * channel), raised to @min_scale[c] when given, q = round(w / scale[c]) in
 * [-127, 127]. @alpha multiplies every weight first (Gemm's alpha folded in).
 */
void q_weights_per_channel(const float *w, int64_t outer, int64_t n, int64_t inner, float alpha,
			   const float *min_scale, int8_t *q, float *scale);
/*
 * The smallest weight scale of a channel whose bias @b must fit int32 at
 * scale x_scale * w_scale: |b| / (x_scale * (2^31 - 1)), with some margin.
 */
float q_bias_min_weight_scale(float b, float x_scale);

/* round(x), saturated to int32; NaN gives 0. */
int32_t q_saturate_i32(double x);

/* Running cosine similarity of two vectors. */
struct q_cosine {
	double dot, aa, bb;
};
void q_cosine_add_f32(struct q_cosine *c, const float *a, const float *b, size_t n);
/* Against int8 values @q dequantised with @p. */
void q_cosine_add_q8(struct q_cosine *c, const float *a, const int8_t *q, struct q_params p,
		     size_t n);
/* Both empty or all zero: 1; one of them all zero: 0. */
double q_cosine_value(const struct q_cosine *c);

/* ---- quantize-calib.c ------------------------------------------------- */

/* Where calibration inputs come from. */
struct q_samples {
	const char *cmd;
	ert_model *model;     /* the float model (not owned) */
	const char *dir;      /* --calib DIR, or NULL for seeded random inputs */
	char **entries;       /* DIR's samples: .npy files (one input) or directories */
	uint32_t count;
	uint64_t seed;        /* random sample k uses seed + k */
};

/*
 * List the samples of @dir for @model (an .npy file per sample for one input,
 * DIR/<sample>/<input>.npy for several), or @count random ones. Prints an
 * error and returns false.
 */
bool q_samples_open(struct q_samples *s, const char *cmd, const char *dir, uint32_t count,
		    uint64_t seed, ert_model *model);
void q_samples_close(struct q_samples *s);
/* Feed sample @k into @sess: dtype and shape checked against the model. */
bool q_samples_feed(const struct q_samples *s, uint32_t k, ert_session *sess);

/* Per-step output values of a session's current plan (step index = op index). */
struct q_step_map {
	const struct ert_node **node;
	const struct ert_value *const **out;
	uint32_t *n_out;
	uint32_t n_steps, cap;
	bool failed;
};
/* Refresh @m for @sess's current plan (planning first if needed). */
bool q_step_map_update(struct q_step_map *m, ert_session *sess, const char *cmd);
void q_step_map_free(struct q_step_map *m);

/*
 * Run the float model on every sample and fill @stats (one per tensor of the
 * model's graph): min/max and EMA; with @method KL a second pass fills the
 * histograms. @cfg is the session configuration (threads); its callbacks are
 * replaced.
 */
bool q_calibrate(ert_model *model, const ert_config *cfg, const struct q_samples *s,
		 enum q_method method, struct q_stats *stats);
void q_stats_free(struct q_stats *stats, uint32_t n);

/* Progress bar on stderr (terminal only, not with ERT_NO_PROGRESS). */
void q_progress(const char *what, uint32_t done, uint32_t total);

/* ---- quantize-graph.c ------------------------------------------------- */

/* An activation tensor the rewrite quantised (a row of the cosine table). */
struct q_act {
	int32_t tensor;         /* in the float graph */
	const char *node;       /* producing node ("" for a graph input) */
	const char *op;         /* its op, or "input" */
	char *qname;            /* the int8 tensor (QuantizeLinear's output) */
	struct q_params p;
};

struct q_choice {
	const char *const *keep_float; /* node names kept in float */
	uint32_t n_keep_float;
	bool keep_first, keep_last;
	enum q_method method;
};

struct q_result {
	struct ert_graph *graph;        /* the QDQ graph (optimised by q_quantize_graph) */
	void *image;                    /* the .ert image the graph's float constants point into */
	size_t image_size;
	enum q_method method;
	struct q_act *acts;             /* in graph order */
	uint32_t n_acts;
	uint32_t n_quantized;           /* nodes quantised */
	uint32_t n_float;               /* quantisable nodes kept in float */
};

/*
 * Check that every --keep-float name is a node of @g. Prints the error and
 * returns false.
 */
bool q_check_keep_float(const struct ert_graph *g, const struct q_choice *c);

/*
 * Build the QDQ graph of @g (the float model's graph) from @stats, sorted but
 * not optimised. @g is only read. On failure prints an error.
 */
bool q_rewrite_graph(const struct ert_graph *g, const struct q_stats *stats,
		     const struct q_choice *c, struct q_result *out);
/*
 * The same, then the graph optimiser, whose QDQ fusion turns the QDQ
 * patterns into int8 ops.
 */
bool q_quantize_graph(const struct ert_graph *g, const struct q_stats *stats,
		      const struct q_choice *c, struct q_result *out);
void q_result_free(struct q_result *r);

/* ---- quantize-select.c ------------------------------------------------ */

enum q_kind {
	QK_NONE,
	QK_WEIGHTED,  /* Conv, Gemm, MatMul: constant weight (and bias) */
	QK_BINARY,    /* Add, Mul */
	QK_POOL,      /* AveragePool, GlobalAveragePool, MaxPool: output shares input's params */
	QK_SHAPE,     /* Reshape, Flatten: quantised only when their input is */
	QK_UNARY,     /* Sigmoid, Tanh, HardSwish, ...: a 256-entry lookup in int8 */
};

/* The rewrite's state, shared by quantize-select.c and quantize-graph.c. */
struct qg {
	struct ert_graph *g;        /* the working copy of the float graph */
	const struct q_stats *stats; /* per tensor of the float graph */
	const int32_t *fidx;        /* working tensor -> float graph tensor, or -1 */
	uint32_t n_tensors, n_nodes; /* before the rewrite added any */
	uint8_t *node_q;            /* node is quantised */
	uint8_t *in_qt;             /* tensor gets a QuantizeLinear/DequantizeLinear pair */
	int32_t *parent;            /* union-find: tensors sharing scale and zero point */
	struct q_params *params;    /* per tensor in in_qt */
};

enum q_kind q_kind_of(enum ert_op op);

static inline int32_t q_in_at(const struct ert_node *n, uint32_t k)
{
	return k < n->n_inputs ? n->inputs[k] : -1;
}

/* A constant float32 tensor with data. */
bool q_const_f32(const struct ert_graph *g, int32_t t);
/* Output features of a Conv (axis 0), Gemm or MatMul weight. */
int64_t q_weight_channels(const struct ert_node *n, const struct ert_tensor *w);
/* Union-find root: the tensor whose statistics the group's parameters come from. */
int32_t q_find(int32_t *parent, int32_t t);
/*
 * Mark the nodes to quantise (q->node_q) and the activations that get a
 * QuantizeLinear/DequantizeLinear pair (q->in_qt, grouped in q->parent);
 * counts into r->n_quantized and r->n_float.
 */
void q_choose(struct qg *q, const struct q_choice *c, struct q_result *r);

/* ---- quantize-verify.c ------------------------------------------------ */

struct q_layer_cos {
	double *act_sum;        /* per q_result act: sum over inputs of each input's cosine */
	uint32_t *act_n;        /* inputs in which the act could be compared */
	double *out_sum;        /* per model output: sum over inputs */
	double *out_min;        /* per model output: lowest over inputs */
	uint32_t n_outputs;
	double worst;           /* lowest output cosine over inputs and outputs */
	uint32_t worst_input;
	uint32_t inputs;
};

/*
 * Run float and int8 models on @n inputs (samples of @s, or when @s is NULL
 * random inputs, input i with seed @seed + i) and compare every quantised
 * activation and every output. @what names the work on the progress bar.
 * Prints an error and returns false on failure.
 */
bool q_compare(ert_model *fmodel, ert_model *qmodel, const ert_config *cfg,
	       const struct q_result *r, const struct q_samples *s, uint32_t n, uint64_t seed,
	       const char *what, struct q_layer_cos *out);
void q_layer_cos_free(struct q_layer_cos *lc);

#endif /* ERT_QUANTIZE_H */
