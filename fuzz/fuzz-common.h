/* SPDX-License-Identifier: MIT */
/*
 * fuzz-common.h — what the model fuzz targets share (issue 14):
 *
 * - the extreme integers their structure-aware mutators plant into attributes,
 *   dims and integer constants (fuzz/onnx.dict and fuzz/ert.dict hold the same values encoded for
 *   libFuzzer's byte-level mutations);
 * - fz_plan_run(): a model that loads is also planned and run through the
 *   public API, as `edgert run` would (and once more on the NPU simulator
 *   when it has int8 ops with the fixed-point rule), so UB in shape inference, the planner
 *   and the kernels is a finding, not only UB in the parsers. A small memory
 *   budget bounds every tensor (and so the work of an op whose cost follows
 *   its tensors: a pool's window is at most its input, a subgraph's session has
 *   the same budget), and after_op, which sees the ops of If/Loop/Scan bodies
 *   too, stops a run that is merely slow at a deadline (or after FZ_MAX_OPS
 *   ops, which bounds what a Loop stacks); what is left for libFuzzer's
 *   -timeout to report is one op slow beyond its sizes.
 */
#ifndef ERT_FUZZ_COMMON_H
#define ERT_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-op-impl.h"
#include "session/session-impl.h"

/* 0, +-1, +-2, the int8/16/32/64 edges, 2^31, 2^32, 2^48 (ERT_DIM_MAX), 2^62 */
static const int64_t fz_extremes[] = {
	0, 1, -1, 2, -2, 3, 127, 128, 255, 256, 32767, 65535, 65536,
	INT32_MAX, INT32_MIN, (int64_t)1 << 31, -((int64_t)1 << 31) - 1,
	(int64_t)1 << 32, -((int64_t)1 << 32), ((int64_t)1 << 32) + 1,
	(int64_t)1 << 48, ((int64_t)1 << 48) + 1, (int64_t)1 << 62, -((int64_t)1 << 62),
	INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1,
};

/* splitmix64 */
static inline uint64_t fz_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* An extreme, an extreme nudged by one, or a small value. */
static inline int64_t fz_pick(uint64_t *s)
{
	uint64_t r = fz_rand(s);
	int64_t v = fz_extremes[r % (sizeof(fz_extremes) / sizeof(fz_extremes[0]))];

	switch ((r >> 32) % 8) {
	case 0:
		return (int64_t)((uint64_t)v + 1); /* wraps at INT64_MAX on purpose */
	case 1:
		return (int64_t)((uint64_t)v - 1);
	case 2:
		return (int64_t)((r >> 40) % 17) - 8;
	default:
		return v;
	}
}

/* Integer attribute names of the ops (their ert_attr_rule lists and more). */
static const char *const fz_attr_names[] = {
	"axis", "axes", "k", "size", "depth", "group", "kernel_shape", "strides", "dilations",
	"pads", "output_padding", "output_shape", "blocksize", "num_groups", "batch_dims",
	"split", "num_outputs", "starts", "ends", "start", "end", "perm", "p", "keepdims",
	"transA", "transB", "ceil_mode", "storage_order", "count_include_pad", "to", "dtype",
	"output_dtype", "block_size", "output_height", "output_width", "sampling_ratio",
	"upper", "largest", "sorted", "exclusive", "reverse", "seed", "ignore_index",
	"stash_type", "channels_last", "allowzero", "select_last_index", "ert.act",
	"ert.requant", "num_scan_inputs", "ert.bias", "ert.residual", "ert.perm_a", "ert.perm_b",
	"ert.perm_y", "perm_q", "perm_kt", "perm_v",
	/* strings, sequences and the other ops read since (their ert_attr_int names) */
	"maxsplit", "is_case_sensitive", "new_axis", "saturate", "min_gram_length",
	"max_gram_length", "max_skip_count", "aggregate_function", "post_transform",
	"n_targets", "hidden_size", "layout", "linear_before_reset", "input_forget",
	"batch_axis", "time_axis", "onesided", "inverse", "periodic", "fmod", "broadcast",
	"align_corners", "antialias", "exclude_outside", "noop_with_empty_axes",
	"center_point_box", "detect_negative", "detect_positive", "offset_group",
	"sample_size", "spatial", "training_mode",
};

/* ops a run may call after_op for, subgraphs' included: bounds what a Loop stacks */
#define FZ_MAX_OPS 4096

struct fz_deadline {
	struct timespec end;
	uint32_t ops;
	bool skip_loops;
};

/*
 * Does every Loop in @g (at any depth) run an op each iteration, so that
 * after_op sees it? Its body's condition output must come from a node
 * reading one of the body's inputs (never computed while planning).
 */
static bool fz_loops_visible(const struct ert_graph *g)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		for (uint32_t a = 0; a < n->n_attrs; a++) {
			const struct ert_graph *b = n->attrs[a].type == ERT_ATTR_GRAPH ?
						    n->attrs[a].graph : NULL;
			bool seen = false;

			if (!b)
				continue;
			if (!fz_loops_visible(b))
				return false;
			if (n->op != ERT_OP_Loop)
				continue;
			for (uint32_t j = 0; b->n_outputs && j < b->n_nodes && !seen; j++) {
				const struct ert_node *bn = &b->nodes[j];
				bool writes = false;

				for (uint32_t k = 0; k < bn->n_outputs; k++)
					writes |= bn->outputs[k] == b->outputs[0];
				for (uint32_t k = 0; writes && k < bn->n_inputs && !seen; k++)
					for (uint32_t q = 0; q < b->n_inputs && !seen; q++)
						seen = bn->inputs[k] >= 0 && bn->inputs[k] == b->inputs[q];
			}
			if (!seen)
				return false;
		}
	}
	return true;
}

/*
 * A Loop runs for as long as its trip count and condition say, which a
 * mutated model may make as long as it likes: its body's ops are seen by
 * after_op (fz_after_op), which stops the run at the deadline. A Loop whose
 * iterations might run no op is not run (its loading and planning are
 * still fuzzed).
 */
static int fz_before_op(const ert_op_info *op, void *user)
{
	const struct fz_deadline *d = user;

	return d->skip_loops && strcmp(op->type, "Loop") == 0;
}

/* Stop at the deadline or after FZ_MAX_OPS ops: the rest of the run is merely slow. */
static int fz_after_op(const ert_op_info *op, void *user)
{
	struct fz_deadline *d = user;
	struct timespec now;

	(void)op;
	if (++d->ops > FZ_MAX_OPS)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > d->end.tv_sec ||
	       (now.tv_sec == d->end.tv_sec && now.tv_nsec > d->end.tv_nsec);
}

/* Nothing to look at per step: visiting them is what plans the session. */
static void fz_step_none(const struct ert_node *node, const struct ert_value *const *in,
			 uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
			 const char *backend, void *user)
{
	(void)node;
	(void)in;
	(void)n_in;
	(void)out;
	(void)n_out;
	(void)backend;
	(void)user;
}

static inline void fz_require_message(const char *what, ert_status st, const char *msg)
{
	if (st != ERT_OK && (!msg || !msg[0])) {
		fprintf(stderr, "%s failed with status %d and no message\n", what, (int)st);
		abort();
	}
}

/* Does @g hold an int8 op with the fixed-point rule (one the NPU may take)? */
static inline bool fz_wants_npu(const struct ert_graph *g)
{
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ert_node_attr(&g->nodes[i], "ert.requant"))
			return true;
	return false;
}

static inline void fz_session_run(ert_model *m, bool npu)
{
	ert_session *s = NULL;
	struct fz_deadline dl;
	ert_config cfg;
	ert_status st;

	memset(&dl, 0, sizeof(dl));
	clock_gettime(CLOCK_MONOTONIC, &dl.end);
	dl.end.tv_sec += 1;
	dl.skip_loops = !fz_loops_visible(m->graph);
	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.memory = ERT_LEVEL_LOW;
	/* 64 KiB: at most 16 Ki floats a tensor, so one op's work stays small */
	cfg.max_memory = (uint64_t)64 << 10;
	cfg.before_op = fz_before_op;
	cfg.after_op = fz_after_op;
	cfg.callback_user = &dl;
	if (npu) {
		/* the simulator runs the driver's own command stream code */
		setenv("ERT_NPU_DEVICE", "sim", 1);
		setenv("ERT_QUIET", "1", 1);
		cfg.backends[0] = ERT_BACKEND_NPU;
		cfg.backends[1] = ERT_BACKEND_CPU;
		cfg.num_backends = 2;
	}
	st = ert_session_create(m, &cfg, &s);
	fz_require_message("ert_session_create", st, ert_last_error());
	if (st != ERT_OK)
		return;
	for (uint32_t k = 0; k < ert_session_input_count(s); k++) {
		ert_tensor *t = ert_session_get_input(s, k);
		uint8_t *p = ert_tensor_data(t);
		size_t n = ert_tensor_byte_size(t);

		/* small integers in every integer type, finite floats */
		for (size_t i = 0; p && i < n; i++)
			p[i] = (uint8_t)(i % 3 == 0 ? 1 : 0);
	}
	/* plans (at the first run for value-dependent shapes) and looks at the steps */
	st = ert_session_visit_steps(s, fz_step_none, NULL);
	fz_require_message("planning", st, ert_session_error(s));
	if (st != ERT_OK) {
		ert_session_destroy(s);
		return;
	}
	st = ert_session_run(s);
	if (st != ERT_STATUS_STOPPED)
		fz_require_message("ert_session_run", st, ert_session_error(s));
	ert_session_destroy(s);
}

/*
 * Load the .ert image @img, plan it for its declared shapes and run it once
 * with inputs of a fixed pattern, on the CPU and, when @npu, again on the NPU
 * simulator with the CPU: every failure must come with a message.
 */
static inline void fz_plan_run(const void *img, size_t size, bool npu)
{
	char msg[512] = "";
	ert_model *m = NULL;
	ert_status st;

	st = ert_model_load_memory(img, size, 1, &m, msg, sizeof(msg));
	fz_require_message("ert_model_load_memory", st, msg);
	if (st != ERT_OK)
		return;
	fz_session_run(m, false);
	if (npu)
		fz_session_run(m, true);
	ert_model_unref(m);
}

#endif /* ERT_FUZZ_COMMON_H */
