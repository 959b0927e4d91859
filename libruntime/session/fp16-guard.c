/* SPDX-License-Identifier: MIT */
/*
 * Precision LOW on GPU backends that store float16, and the fp16 overflow
 * guard, written once for every such backend (OpenCL and Vulkan).
 *
 * A step runs in float16 when its backend's memory is device memory, the
 * backend says fp16_storage(), and the guard does not keep it in float32.
 * The guard runs the whole graph once on the CPU backend (precision HIGH,
 * on the inputs enum ert_fp16_guard names) while the plan is made, and records each
 * tensor's max |x|, constants included; a step any of whose float32 inputs
 * or outputs reach the bound, or hold inf or NaN, is kept in float32. A
 * tensor is stored as its writer runs; where a reader runs otherwise, the
 * copies convert (session/copies.c).
 *
 * The bound (2^14 by default) leaves a factor of 4 below float16's largest
 * value for what an op computes between its inputs and its outputs; the
 * backends accumulate products and sums in float32, so an op whose inputs
 * and outputs are below it stays finite.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session/session-impl.h"

#define DEFAULT_BOUND 16384.0f
#define CALIB_SEED 0x2545F491u

struct calib {
	ert_session *cs;
	float *max;          /* per graph tensor; NAN when never seen */
	ert_status st;
	char msg[256];
};

static float max_abs(const struct ert_value *v, const void *data)
{
	const float *f = data;
	float m = 0.0f;

	if (v->dtype != ERT_DTYPE_FLOAT32 || !f)
		return 0.0f;
	for (size_t i = 0; i < (size_t)v->numel; i++) {
		float a = fabsf(f[i]);

		if (!(a <= m))
			m = isnan(a) ? INFINITY : a; /* NaN counts as unbounded */
	}
	return m;
}

/* after_op of the calibration session: every output's max |x|. */
static int record(const ert_op_info *op, void *user)
{
	struct calib *c = user;
	const struct ert_node *n = ert_session_op_node(c->cs);

	(void)op;
	if (!n)
		return 0;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		const struct ert_value *v;

		if (n->outputs[k] < 0)
			continue;
		if (ert_session_op_output(c->cs, k, &v, NULL, 0) != ERT_OK || !v)
			continue;
		c->max[n->outputs[k]] = max_abs(v, v->data);
	}
	return 0;
}

static uint32_t xorshift32(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static ert_status fill_inputs(struct ert_session *s, struct calib *c, struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	uint32_t rng = CALIB_SEED;

	for (uint32_t k = 0; k < g->n_inputs; k++) {
		const struct ert_value *v = &s->in_vals[k];
		ert_tensor *t;
		void *data;
		ert_status st = ert_session_resize_input(c->cs, k, (uint32_t)v->rank, v->dims);

		if (st != ERT_OK) {
			ert_err_set(err, "%s", ert_session_error(c->cs));
			return st;
		}
		t = ert_session_get_input(c->cs, k);
		data = t ? ert_tensor_data(t) : NULL;
		if (!data || !v->nbytes)
			continue;
		if (v->dtype == ERT_DTYPE_FLOAT32) {
			float *f = data;

			for (size_t i = 0; i < (size_t)v->numel; i++)
				f[i] = (float)(xorshift32(&rng) >> 8) * (2.0f / 16777216.0f) - 1.0f;
		} else {
			memset(data, 0, v->nbytes);
		}
		c->max[g->inputs[k]] = max_abs(v, data);
	}
	return ERT_OK;
}

/* Max |x| of every tensor of the graph on the CPU reference; NAN where unknown. */
static ert_status calibrate(struct ert_session *s, struct ert_plan *p, float *max,
			    struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	struct calib c = { .max = max };
	ert_config cfg;
	ert_status st;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ert_plan_tensor *pt = &p->t[t];

		max[t] = NAN;
		if ((pt->kind == ERT_PT_CONST || pt->kind == ERT_PT_FOLDED) && pt->v.data)
			max[t] = max_abs(&pt->v, pt->v.data);
	}
	ert_config_init(&cfg);
	cfg.precision = ERT_LEVEL_HIGH;
	cfg.num_threads = s->cfg.num_threads;
	cfg.max_memory = s->cfg.max_memory;
	/* the same fold budget: the same nodes run as steps, so every step's tensors are seen */
	cfg.memory = s->cfg.memory;
	cfg.after_op = record;
	cfg.callback_user = &c;
	st = ert_session_create(s->model, &cfg, &c.cs);
	if (st != ERT_OK) {
		ert_err_set(err, "%s", ert_last_error());
		return st;
	}
	st = fill_inputs(s, &c, err);
	if (st == ERT_OK) {
		st = ert_session_run(c.cs);
		if (st != ERT_OK)
			ert_err_set(err, "%s", ert_session_error(c.cs));
	}
	ert_session_destroy(c.cs);
	return st;
}

/* The float tensor of step @i the guard keeps it in float32 for (the largest), or -1. */
static int32_t over_bound(const struct ert_plan *p, uint32_t i, const float *max, float bound)
{
	const struct ert_node *n = p->steps[i].x.node;
	int32_t worst = -1;

	for (uint32_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
		int32_t t = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];

		if (t < 0 || p->t[t].v.dtype != ERT_DTYPE_FLOAT32)
			continue;
		/* NAN: never recorded (an op the calibration run did not reach) */
		if (isnan(max[t]) || max[t] >= bound) {
			if (worst < 0 || !(max[t] <= max[worst]))
				worst = t;
		}
	}
	return worst;
}

ert_status ert_fp16_plan(struct ert_session *s, struct ert_plan *p, struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	bool guard = s->cfg.fp16_guard != ERT_FP16_GUARD_OFF, any = false;
	float *max = NULL;
	ert_status st;

	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_step *stp = &p->steps[i];

		stp->kept_tensor = -1;
		stp->low = s->cfg.precision == ERT_LEVEL_LOW && !p->arenas[stp->arena].visible &&
			   ert_backend_fp16_storage(s->backends[stp->backend]);
		stp->x.fp16 = stp->low;
		any = any || stp->low;
	}
	if (!any)
		return ERT_OK;
	p->fp16_bound = 0.0f;
	if (guard) {
		p->fp16_bound = s->cfg.fp16_bound > 0.0f ? s->cfg.fp16_bound : DEFAULT_BOUND;
		max = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof(*max));
		if (!max) {
			ert_err_set(err, "out of memory for the fp16 guard's calibration");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		st = calibrate(s, p, max, err);
		if (st != ERT_OK) {
			char why[sizeof(err->msg)];

			memcpy(why, err->msg, sizeof(why));
			ert_err_set(err, "fp16 guard: the calibration run on the CPU failed (%s); fp16_guard OFF plans without it",
				    why);
			free(max);
			return st;
		}
		for (uint32_t i = 0; i < p->n_steps; i++) {
			struct ert_step *stp = &p->steps[i];
			int32_t t = stp->low ? over_bound(p, i, max, p->fp16_bound) : -1;

			if (t < 0)
				continue;
			stp->x.fp16 = false;
			stp->kept_tensor = t;
			stp->kept_max = max[t];
		}
		free(max);
	}
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		struct ert_plan_tensor *pt = &p->t[t];

		pt->fp16 = pt->kind == ERT_PT_ARENA && pt->v.dtype == ERT_DTYPE_FLOAT32 &&
			   pt->first >= 0 && (uint32_t)pt->first < p->n_steps &&
			   p->steps[pt->first].x.fp16;
	}
	return ERT_OK;
}

bool ert_session_fp16_note(ert_session *s, const struct ert_node *node, bool *fp16_out,
			   const char **tensor_out, float *max_out, float *bound_out)
{
	for (const struct ert_plan *p = s->leaf ? s->leaf : s->plan; p; p = p->parent) {
		for (uint32_t i = 0; i < p->n_steps; i++) {
			const struct ert_step *stp = &p->steps[i];

			if (stp->x.node != node)
				continue;
			if (!stp->low)
				return false;
			*fp16_out = stp->x.fp16;
			*tensor_out = stp->kept_tensor >= 0 ?
				s->model->graph->tensors[stp->kept_tensor].name : NULL;
			*max_out = stp->kept_max;
			*bound_out = p->fp16_bound;
			return true;
		}
	}
	return false;
}
