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
 *   its tensors: a pool's window is at most its input), and a deadline checked
 *   before each op skips the rest of a run that is merely slow; what is left
 *   for libFuzzer's -timeout to report is one op slow beyond its sizes.
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
	"ert.requant", "num_scan_inputs",
};

struct fz_deadline {
	struct timespec end;
};

static int fz_before_op(const ert_op_info *op, void *user)
{
	const struct fz_deadline *d = user;
	struct timespec now;

	/*
	 * A Loop runs for as long as its trip count and condition say, which a
	 * mutated model may make as long as it likes: the loader, shape
	 * inference and planning of Loops are fuzzed, their runs are not.
	 */
	if (strcmp(op->type, "Loop") == 0)
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

	clock_gettime(CLOCK_MONOTONIC, &dl.end);
	dl.end.tv_sec += 1;
	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.memory = ERT_LEVEL_LOW;
	/* 64 KiB: at most 16 Ki floats a tensor, so one op's work stays small */
	cfg.max_memory = (uint64_t)64 << 10;
	cfg.before_op = fz_before_op;
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
