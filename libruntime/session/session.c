/* SPDX-License-Identifier: MIT */
/* Sessions: inputs, the plan cache, running, tensor accessors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ert-probes.h"
#include "ert-strings.h"
#include "session/session-impl.h"

ert_status ert_session_fail(struct ert_session *s, ert_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	s->op_error = 0;
	ert_set_last_error(st, "%s", s->error);
	return st;
}

/*
 * Make input @k's buffer hold @need bytes. Keeps the old buffer when it is
 * big enough; otherwise allocates the new one first and frees the old one
 * only on success, so a failure leaves the input as it was.
 */
static ert_status input_realloc(struct ert_session *s, uint32_t k, size_t need)
{
	size_t rounded = ert_input_alloc_size(need);
	void *p;

	if (!rounded)
		return ERT_STATUS_OUT_OF_MEMORY;
	if (rounded <= s->in_caps[k] && s->in_bufs[k]) {
		if (ert_input_shrink(s->in_bufs[k], s->in_caps[k], rounded))
			s->in_gens[k]++;
		return ERT_OK;
	}
	p = ert_input_alloc(rounded);
	if (!p)
		return ERT_STATUS_OUT_OF_MEMORY;
	ert_input_free(s->in_bufs[k], s->in_caps[k]);
	s->in_bufs[k] = p;
	s->in_caps[k] = rounded;
	s->in_gens[k]++;
	return ERT_OK;
}

static bool mark_value_inputs(struct ert_session *s)
{
	const struct ert_graph *g = s->model->graph;
	uint8_t *need = ert_graph_mark_value_needed(g);

	if (!need)
		return false;
	for (uint32_t k = 0; k < g->n_inputs; k++)
		s->in_value_needed[k] = need[g->inputs[k]];
	free(need);
	return true;
}

static bool have_backend(const struct ert_session *s, ert_backend_type type)
{
	for (uint32_t b = 0; b < s->n_backends; b++)
		if (s->backends[b]->type == type)
			return true;
	return false;
}

static ert_status create_backends(struct ert_session *s, struct ert_err *err)
{
	const ert_config *cfg = &s->cfg;
	bool have_cpu = false;

	for (uint32_t i = 0; i < cfg->num_backends && i < ERT_MAX_BACKENDS; i++) {
		ert_backend_type type = cfg->backends[i];
		struct ert_backend *be = NULL;
		ert_status st;

		if (type == ERT_BACKEND_AUTO) {
			/*
			 * The best available: the NPU when its device exists, then a
			 * GPU through OpenCL, else through Vulkan (one GPU backend:
			 * copies between two of them are not supported).
			 */
			static const ert_backend_type best[] = { ERT_BACKEND_NPU, ERT_BACKEND_OPENCL,
								 ERT_BACKEND_VULKAN };

			for (size_t j = 0; j < sizeof(best) / sizeof(best[0]); j++) {
				if (have_backend(s, best[j]) ||
				    (best[j] == ERT_BACKEND_VULKAN && have_backend(s, ERT_BACKEND_OPENCL)))
					continue;
				st = ert_backend_probe(best[j], cfg, &be, err);
				if (st != ERT_OK) {
					err->msg[0] = '\0';
					continue;
				}
				s->auto_mask |= 1u << s->n_backends;
				s->backends[s->n_backends++] = be;
			}
			continue;
		}
		if (have_backend(s, type))
			continue;
		st = ert_backend_create(type, cfg, &be, err);
		if (st == ERT_STATUS_UNSUPPORTED) {
			/* not on this system or in this build: the list is a preference */
			err->msg[0] = '\0';
			continue;
		}
		if (st != ERT_OK)
			return st;
		have_cpu |= type == ERT_BACKEND_CPU;
		s->backends[s->n_backends++] = be;
	}
	if (!have_cpu) {
		struct ert_backend *be = NULL;
		ert_status st = ert_backend_create(ERT_BACKEND_CPU, cfg, &be, err);

		if (st != ERT_OK)
			return st;
		s->backends[s->n_backends++] = be;
	}
	return ERT_OK;
}

/*
 * A session whose backends `auto` chose could not be planned on them (a
 * kernel that does not build for the device, memory the device refuses, an
 * op it turned out not to take): warn, drop those backends and let the
 * caller plan again on the rest (the CPU at least). False when there is
 * nothing to drop or the failure is not the device's (a bad model or input
 * fails the same everywhere).
 */
static bool drop_auto_backends(struct ert_session *s, ert_status st)
{
	char names[64] = "";
	uint32_t keep = 0;
	size_t len = 0;

	if (!s->auto_mask || s->plan ||
	    (st != ERT_STATUS_BACKEND && st != ERT_STATUS_OUT_OF_MEMORY &&
	     st != ERT_STATUS_UNSUPPORTED))
		return false;
	for (uint32_t b = 0; b < s->n_backends; b++) {
		if (!(s->auto_mask & (1u << b))) {
			s->backends[keep++] = s->backends[b];
			continue;
		}
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						len ? ", " : "", s->backends[b]->ops->name);
		ert_backend_destroy(s->backends[b]);
	}
	s->n_backends = keep;
	s->auto_mask = 0;
	s->dirty = true;
	fprintf(stderr, "edgert: %s; planning again without %s (chosen by auto)\n", s->error,
		names);
	s->error[0] = '\0';
	return true;
}

/*
 * The struct_size of every ert_config layout a released header (or main
 * between releases) had, oldest first: fields are only ever appended, so a
 * program built against an older header passes a prefix, and the fields it
 * lacks take their defaults.
 */
static const size_t config_sizes[] = {
	offsetof(ert_config, cpu_level),    /* 0.1 */
	offsetof(ert_config, max_memory),   /* 0.1 + cpu_level */
	offsetof(ert_config, tune),         /* + max_memory */
	offsetof(ert_config, fp16_guard),   /* + tune */
	offsetof(ert_config, device_times), /* + fp16_guard, fp16_bound */
	sizeof(ert_config),
};
/*
 * A compiler pads a layout to ert_config's alignment (8): the one of
 * fp16_bound ends at 108 and such programs pass 112, sizeof(ert_config) since
 * device_times took those padding bytes. ert_config_init() zeroed them, so
 * device_times reads 0 (its default) there.
 */

/* @in as the current layout in @out (defaults for fields @in predates). */
static ert_status read_config(const ert_config *in, ert_config *out, struct ert_err *err)
{
	size_t n = sizeof(config_sizes) / sizeof(config_sizes[0]);

	for (size_t i = 0; i < n; i++) {
		if (in->struct_size == config_sizes[i]) {
			ert_config_init(out);
			memcpy(out, in, config_sizes[i]);
			out->struct_size = sizeof(*out);
			return ERT_OK;
		}
	}
	ert_err_set(err, "config struct_size %u is not one this library knows (%zu..%zu): "
		    "call ert_config_init()", in->struct_size, config_sizes[0], sizeof(*in));
	return ERT_STATUS_INVALID_ARGUMENT;
}

static ert_status check_config(const ert_config *cfg, struct ert_err *err)
{
	if (cfg->num_threads > ERT_MAX_THREADS) {
		ert_err_set(err, "num_threads %u is out of range 0..%d", cfg->num_threads,
			    ERT_MAX_THREADS);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (cfg->num_backends > ERT_MAX_BACKENDS) {
		ert_err_set(err, "num_backends %u is out of range 0..%d", cfg->num_backends,
			    ERT_MAX_BACKENDS);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < cfg->num_backends; i++) {
		if ((unsigned)cfg->backends[i] > ERT_BACKEND_AUTO) {
			ert_err_set(err, "backend %u has unknown type %d", i, cfg->backends[i]);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
	}
	if (cfg->precision > ERT_LEVEL_LOW || cfg->memory > ERT_LEVEL_LOW ||
	    cfg->power > ERT_LEVEL_LOW) {
		ert_err_set(err, "precision, memory and power must be NORMAL, HIGH or LOW");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if ((unsigned)cfg->cpu_level > ERT_CPU_LEVEL_AMX) {
		ert_err_set(err, "cpu_level %d is not an ert_cpu_level", cfg->cpu_level);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if ((unsigned)cfg->tune > ERT_TUNE_WIDE) {
		ert_err_set(err, "tune %d is not an ert_tune (fast, none, normal, wide)", cfg->tune);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if ((unsigned)cfg->fp16_guard > ERT_FP16_GUARD_OFF) {
		ert_err_set(err, "fp16_guard %d is not an ert_fp16_guard", cfg->fp16_guard);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (!(cfg->fp16_bound >= 0.0f && cfg->fp16_bound <= 65504.0f)) {
		ert_err_set(err, "fp16_bound %g is outside [0, 65504]", (double)cfg->fp16_bound);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	return ERT_OK;
}

/* Make the plan for the current inputs current: from the cache or new. */
static ert_status activate_plan(struct ert_session *s)
{
	struct ert_plan **pp, *p;
	struct ert_err err = { "" };
	uint32_t count = 0;
	ert_status st;

	for (pp = &s->plan; (p = *pp); pp = &p->next) {
		if (ert_plan_matches(s, p)) {
			*pp = p->next;
			goto found;
		}
	}
	ert_probe_plan_start(s);
	st = ert_plan_create(s, &p, &err);
	ert_probe_plan_end(s, st);
	if (st != ERT_OK)
		return ert_session_fail(s, st, "failed to plan: %s", err.msg);
found:
	p->next = s->plan;
	s->plan = p;
	/* input buffers may have moved since this plan was made */
	for (uint32_t k = 0; k < s->model->graph->n_inputs; k++) {
		p->t[s->model->graph->inputs[k]].v.data = s->in_bufs[k];
		p->t[s->model->graph->inputs[k]].v.storage_gen = s->in_gens[k];
	}
	for (pp = &s->plan; (p = *pp); pp = &p->next) {
		if (++count > ERT_PLAN_CACHE_MAX) {
			*pp = NULL;
			while (p) {
				struct ert_plan *next = p->next;

				ert_plan_destroy(s, p);
				p = next;
			}
			break;
		}
	}
	s->dirty = false;
	return ERT_OK;
}

static bool has_value_inputs(const struct ert_session *s)
{
	for (uint32_t k = 0; k < s->model->graph->n_inputs; k++)
		if (s->in_value_needed[k])
			return true;
	return false;
}

static bool has_symbolic_dims(const struct ert_graph *g)
{
	for (uint32_t k = 0; k < g->n_inputs; k++) {
		const struct ert_tensor *t = &g->tensors[g->inputs[k]];

		for (int32_t d = 0; d < t->rank; d++)
			if (t->dims[d] < 0)
				return true;
	}
	return false;
}

ERT_API ert_status ert_session_create(ert_model *model, const ert_config *cfg,
				      ert_session **sess_out)
{
	struct ert_err err = { "" };
	struct ert_session *s;
	ert_config defaults, given;
	ert_status st;
	uint64_t t_start = ert_clock_ns();

	if (!model || !sess_out)
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT,
					  "failed to create session: NULL argument");
	if (!cfg) {
		ert_config_init(&defaults);
		cfg = &defaults;
	}
	st = read_config(cfg, &given, &err);
	if (st != ERT_OK)
		return ert_set_last_error(st, "failed to create session: %s", err.msg);
	cfg = &given;
	st = check_config(cfg, &err);
	if (st != ERT_OK)
		return ert_set_last_error(st, "failed to create session: %s", err.msg);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ert_set_last_error(ERT_STATUS_OUT_OF_MEMORY,
					  "failed to create session: out of memory");
	s->model = ert_model_ref(model);
	s->cfg = *cfg;
	s->budget = cfg->max_memory ? cfg->max_memory : ert_budget_default();
	ert_budget_seqs_init(s);
	if (cfg->cache_path) {
		s->cache_path = strdup(cfg->cache_path);
		if (!s->cache_path)
			goto oom;
	}
	s->cfg.cache_path = s->cache_path;

	uint64_t t0 = ert_clock_ns();

	st = create_backends(s, &err);
	s->created.backends_ns = ert_clock_ns() - t0;
	if (st != ERT_OK) {
		ert_session_destroy(s);
		return ert_set_last_error(st, "failed to create session: %s", err.msg);
	}
	/*
	 * A GPU backend: blocks only the CPU runs become their Convs again
	 * (ert_model_unfused_irblock()); where that fails, the fused model runs
	 * them on the CPU, as before. The NPU takes no float32 Conv (an int8
	 * model has no blocks: the quantizer unfuses them), so its sessions
	 * keep the CPU's fused blocks.
	 */
	for (uint32_t b = 0; b < s->n_backends; b++) {
		ert_model *u;

		if (s->backends[b]->type != ERT_BACKEND_OPENCL &&
		    s->backends[b]->type != ERT_BACKEND_VULKAN)
			continue;
		u = ert_model_unfused_irblock(s->model, &err);
		err.msg[0] = '\0';
		if (u) {
			ert_model_unref(s->model);
			s->model = u;
		}
		break;
	}

	const struct ert_graph *g = s->model->graph;
	uint32_t ni = g->n_inputs ? g->n_inputs : 1, no = g->n_outputs ? g->n_outputs : 1;
	uint64_t held = 0;

	s->in_vals = calloc(ni, sizeof(*s->in_vals));
	s->in_bufs = calloc(ni, sizeof(*s->in_bufs));
	s->in_caps = calloc(ni, sizeof(*s->in_caps));
	s->in_gens = calloc(ni, sizeof(*s->in_gens));
	s->in_value_needed = calloc(ni, sizeof(*s->in_value_needed));
	s->in_handles = calloc(ni, sizeof(*s->in_handles));
	s->out_handles = calloc(no, sizeof(*s->out_handles));
	s->in_strs = calloc(ni, sizeof(*s->in_strs));
	s->strings = ert_str_heap_create();
	if (!s->in_vals || !s->in_bufs || !s->in_caps || !s->in_gens || !s->in_value_needed ||
	    !s->in_handles || !s->out_handles || !s->in_strs || !s->strings)
		goto oom;
	for (uint32_t k = 0; k < g->n_inputs; k++) {
		const struct ert_tensor *t = &g->tensors[g->inputs[k]];
		struct ert_value *v = &s->in_vals[k];

		if (t->rank < 0) {
			ert_session_destroy(s);
			return ert_set_last_error(ERT_STATUS_INVALID_MODEL,
						  "failed to create session: input '%s' has no shape",
						  t->name);
		}
		ert_value_set_shape(v, t->dtype, t->rank, t->dims);
		v->kind = t->kind;
		v->elem = t->elem;
		for (int32_t d = 0; d < t->rank; d++)
			if (v->dims[d] < 0)
				v->dims[d] = 1; /* symbolic: 1 until resized */
		/* every input within the budget before any is allocated */
		st = ert_budget_check_input(s, k, v, held, &err);
		if (st == ERT_OK && !ert_value_finish(v)) {
			st = ERT_STATUS_SHAPE;
			ert_err_set(&err, "input '%s' has an invalid or huge shape", t->name);
		}
		if (st != ERT_OK) {
			ert_session_destroy(s);
			return ert_set_last_error(st, "failed to create session: %s", err.msg);
		}
		held += ert_input_alloc_size(v->nbytes);
		s->in_handles[k] = (struct ert_session_tensor){ s, g->inputs[k], true, k };
	}
	for (uint32_t k = 0; k < g->n_inputs; k++)
		if (input_realloc(s, k, s->in_vals[k].nbytes) != ERT_OK)
			goto oom;
	if (ert_session_seq_inputs_init(s) != ERT_OK)
		goto oom;
	for (uint32_t k = 0; k < g->n_outputs; k++)
		s->out_handles[k] = (struct ert_session_tensor){ s, g->outputs[k], false, k };
	if (!mark_value_inputs(s))
		goto oom;

	s->dirty = true;
	/*
	 * Plan now when the shapes are known. Symbolic dimensions wait for resize,
	 * and inputs read for their value are only known at run time: plan then.
	 */
	if (!has_value_inputs(s) && !has_symbolic_dims(g)) {
		t0 = ert_clock_ns();
		st = activate_plan(s);
		if (st != ERT_OK && drop_auto_backends(s, st))
			st = activate_plan(s);
		if (st != ERT_OK) {
			char msg[sizeof(s->error)];

			snprintf(msg, sizeof(msg), "%s", s->error);
			ert_session_destroy(s);
			return ert_set_last_error(st, "failed to create session: %s", msg);
		}
		s->created.plan_ns = ert_clock_ns() - t0;
		s->created.calib_ns = s->planned.calib_ns;
		s->created.memory_ns = s->planned.memory_ns;
		s->created.prepare_ns = s->planned.prepare_ns;
		s->created.prepared_ns = s->planned.prepared_ns;
	}
	for (uint32_t b = 0; b < s->n_backends; b++) {
		struct ert_backend_times bt;
		struct ert_backend_times *sum = &s->created.be;

		ert_backend_prep_times(s->backends[b], &bt);
		sum->device_ns += bt.device_ns;
		sum->cache_ns += bt.cache_ns;
		sum->programs_ns += bt.programs_ns;
		sum->kernels_ns += bt.kernels_ns;
		sum->tune_ns += bt.tune_ns;
		sum->upload_ns += bt.upload_ns;
		sum->programs_loaded += bt.programs_loaded;
		sum->programs_built += bt.programs_built;
		sum->programs_shared += bt.programs_shared;
		sum->launches_timed += bt.launches_timed;
		sum->launches_reused += bt.launches_reused;
		sum->upload_bytes += bt.upload_bytes;
		sum->upload_shared_bytes += bt.upload_shared_bytes;
		sum->device_shared |= bt.device_shared;
	}
	s->created.total_ns = ert_clock_ns() - t_start;
	*sess_out = s;
	return ERT_OK;
oom:
	ert_session_destroy(s);
	return ert_set_last_error(ERT_STATUS_OUT_OF_MEMORY, "failed to create session: out of memory");
}

ERT_API void ert_session_destroy(ert_session *s)
{
	if (!s)
		return;
	if (s->running) {
		/* from a callback: the run in progress still uses everything */
		ert_set_last_error(ERT_STATUS_BUSY,
				   "failed to destroy session: it is running (called from a callback)");
		return;
	}
	while (s->plan) {
		struct ert_plan *next = s->plan->next;

		ert_plan_destroy(s, s->plan);
		s->plan = next;
	}
	for (uint32_t b = 0; b < s->n_backends; b++)
		ert_backend_destroy(s->backends[b]);
	if (s->in_bufs)
		for (uint32_t k = 0; k < s->model->graph->n_inputs; k++)
			ert_input_free(s->in_bufs[k], s->in_caps[k]);
	ert_session_seq_inputs_free(s);
	free(s->in_bufs);
	if (s->in_strs)
		for (uint32_t k = 0; k < s->model->graph->n_inputs; k++)
			free(s->in_strs[k]);
	free(s->in_strs);
	ert_str_heap_destroy(s->strings);
	free(s->in_vals);
	free(s->in_caps);
	free(s->in_gens);
	free(s->in_value_needed);
	free(s->in_handles);
	free(s->out_handles);
	free(s->cache_path);
	ert_model_unref(s->model);
	free(s);
}

ERT_API const char *ert_session_error(const ert_session *s)
{
	return s ? s->error : "";
}

const char *ert_session_failed_op(const ert_session *s)
{
	return s->failed_op;
}

const char *ert_session_op_error(const ert_session *s)
{
	return s->op_error ? s->error + s->op_error : NULL;
}

ERT_API uint32_t ert_session_input_count(const ert_session *s)
{
	return s ? s->model->graph->n_inputs : 0;
}

ERT_API uint32_t ert_session_output_count(const ert_session *s)
{
	return s ? s->model->graph->n_outputs : 0;
}

ERT_API ert_tensor *ert_session_get_input(ert_session *s, uint32_t i)
{
	return s && i < s->model->graph->n_inputs ? &s->in_handles[i] : NULL;
}

ERT_API ert_tensor *ert_session_get_input_by_name(ert_session *s, const char *name)
{
	const struct ert_graph *g;

	if (!s || !name)
		return NULL;
	g = s->model->graph;
	for (uint32_t k = 0; k < g->n_inputs; k++)
		if (strcmp(g->tensors[g->inputs[k]].name, name) == 0)
			return &s->in_handles[k];
	return NULL;
}

ERT_API const ert_tensor *ert_session_get_output(ert_session *s, uint32_t i)
{
	return s && i < s->model->graph->n_outputs ? &s->out_handles[i] : NULL;
}

ERT_API const ert_tensor *ert_session_get_output_by_name(ert_session *s, const char *name)
{
	const struct ert_graph *g;

	if (!s || !name)
		return NULL;
	g = s->model->graph;
	for (uint32_t k = 0; k < g->n_outputs; k++)
		if (strcmp(g->tensors[g->outputs[k]].name, name) == 0)
			return &s->out_handles[k];
	return NULL;
}

ERT_API ert_status ert_session_resize_input(ert_session *s, uint32_t index, uint32_t rank,
					    const int64_t *dims)
{
	struct ert_err err = { "" };
	const struct ert_tensor *t;
	struct ert_value v;
	ert_status st;

	if (!s)
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT, "resize: NULL session");
	if (s->running)
		return ert_session_fail(s, ERT_STATUS_BUSY,
					"resize: the session is running (called from a callback)");
	if (index >= s->model->graph->n_inputs)
		return ert_session_fail(s, ERT_STATUS_NOT_FOUND, "resize: no input %u (model has %u)",
					index, s->model->graph->n_inputs);
	t = &s->model->graph->tensors[s->model->graph->inputs[index]];
	if (rank > ERT_MAX_RANK || (rank && !dims))
		return ert_session_fail(s, ERT_STATUS_INVALID_ARGUMENT,
					"resize '%s': bad rank %u", t->name, rank);
	if ((int32_t)rank != t->rank)
		return ert_session_fail(s, ERT_STATUS_SHAPE,
					"resize '%s': rank %u, the model's input has rank %d",
					t->name, rank, t->rank);
	for (uint32_t d = 0; d < rank; d++) {
		if (dims[d] < 0)
			return ert_session_fail(s, ERT_STATUS_SHAPE, "resize '%s': dim %u is %lld",
						t->name, d, (long long)dims[d]);
		if (t->dims[d] >= 0 && t->dims[d] != dims[d])
			return ert_session_fail(s, ERT_STATUS_SHAPE,
						"resize '%s': dim %u must be %lld, got %lld",
						t->name, d, (long long)t->dims[d],
						(long long)dims[d]);
	}
	v = s->in_vals[index];
	ert_value_set_shape(&v, v.dtype, (int32_t)rank, dims);
	st = ert_budget_check_input(s, index, &v, ert_budget_inputs(s, index), &err);
	if (st != ERT_OK)
		return ert_session_fail(s, st, "resize: %s; the input keeps its shape", err.msg);
	if (!ert_value_finish(&v))
		return ert_session_fail(s, ERT_STATUS_SHAPE, "resize '%s': shape too large", t->name);
	if (memcmp(v.dims, s->in_vals[index].dims, sizeof(v.dims)) == 0)
		return ERT_OK;
	if (!s->cfg.shape_mutable && s->plan)
		return ert_session_fail(s, ERT_STATUS_SHAPE,
					"resize '%s': the session was created without shape_mutable",
					t->name);
	/* the plans cached for other shapes make room for the inputs */
	ert_budget_evict(s, ert_budget_inputs(s, index) + ert_input_alloc_size(v.nbytes));
	/* the buffer first: a failed resize keeps the old shape and buffer */
	if (input_realloc(s, index, v.nbytes) != ERT_OK)
		return ert_session_fail(s, ERT_STATUS_OUT_OF_MEMORY,
					"resize '%s': out of memory for %zu bytes; the input keeps its shape",
					t->name, v.nbytes);
	s->in_vals[index] = v;
	s->dirty = true;
	return ERT_OK;
}

/* The strings of input @index: copied into one block the session keeps until the next. */
static ert_status set_input_strings(struct ert_session *s, uint32_t index, const void *data,
				    size_t size)
{
	const ert_string *src = data;
	size_t n = size / sizeof(*src);
	ert_string *block;

	for (size_t i = 0; i < n; i++)
		if (!src[i].data && src[i].len)
			return ert_session_fail(s, ERT_STATUS_INVALID_ARGUMENT,
						"input '%s': string %zu has no data but length %llu",
						s->model->graph->tensors[s->model->graph->inputs[index]].name,
						i, (unsigned long long)src[i].len);
	block = ert_strings_pack(src, n, NULL);
	if (!block)
		return ert_session_fail(s, ERT_STATUS_OUT_OF_MEMORY,
					"set_input: out of memory for %zu strings", n);
	free(s->in_strs[index]);
	s->in_strs[index] = block;
	if (size)
		memcpy(s->in_bufs[index], block, size);
	return ERT_OK;
}

ERT_API ert_status ert_session_set_input(ert_session *s, uint32_t index, ert_dtype dtype,
					 const void *data, size_t size)
{
	if (!s || (!data && size))
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT, "set_input: NULL argument");
	if (s->running)
		return ert_session_fail(s, ERT_STATUS_BUSY,
					"set_input: the session is running (called from a callback)");
	if (index >= s->model->graph->n_inputs)
		return ert_session_fail(s, ERT_STATUS_NOT_FOUND,
					"set_input: no input %u (model has %u)", index,
					s->model->graph->n_inputs);
	const struct ert_value *v = &s->in_vals[index];
	const char *name = s->model->graph->tensors[s->model->graph->inputs[index]].name;

	if (v->kind != ERT_VALUE_TENSOR)
		return ert_session_fail(s, ERT_STATUS_DTYPE, "input '%s' is a %s: set it with "
					"ert_session_set_input_items()", name,
					ert_value_kind_name(v->kind));
	if (dtype != v->dtype)
		return ert_session_fail(s, ERT_STATUS_DTYPE, "input '%s' is %s, got %s", name,
					ert_dtype_name(v->dtype), ert_dtype_name(dtype));
	if (size != v->nbytes)
		return ert_session_fail(s, ERT_STATUS_SHAPE,
					"input '%s' takes %zu bytes for its shape, got %zu", name,
					v->nbytes, size);
	if (dtype == ERT_DTYPE_STRING)
		return set_input_strings(s, index, data, size);
	if (size)
		memcpy(s->in_bufs[index], data, size);
	return ERT_OK;
}

static uint64_t copied_bytes(const struct ert_session *s)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < s->n_backends; b++)
		n += ert_backend_copied_bytes(s->backends[b]);
	return n;
}

/*
 * A run failed part-way: let every backend finish or drop what it queued, so
 * that the next run starts clean (the error reported is the first one).
 */
static void finish_failed_run(struct ert_session *s)
{
	struct ert_err ignored;

	for (uint32_t b = 0; b < s->n_backends; b++)
		ert_backend_synchronize(s->backends[b], &ignored);
}

/*
 * Run the steps of @p, the step indices the callbacks see starting at @base;
 * @prev is the backend of the last step run before (-1: none).
 */
static ert_status run_steps(struct ert_session *s, struct ert_plan *p, uint32_t base,
			    int32_t *prev)
{
	const ert_config *cfg = &s->cfg;
	struct ert_err err = { "" };
	uint32_t cursor = 0;
	ert_status st;

	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_step *stp = &p->steps[i];
		struct ert_backend *be = s->backends[stp->backend];
		ert_op_info info = {
			.name = stp->x.node->name,
			.type = ert_op_name(stp->x.node->op),
			.backend = be->ops->name,
			.index = base + i,
			.kernel = stp->x.kernel,
		};

		/*
		 * A split ends: what the previous backend queued must be done,
		 * before the copies below read it (an NPU's jobs are submitted
		 * only by its synchronize()).
		 */
		if (*prev >= 0 && (uint32_t)*prev != stp->backend) {
			ert_probe_split(info.index, s->backends[*prev]->ops->name, info.backend);
			st = ert_backend_synchronize(s->backends[*prev], &err);
			if (st != ERT_OK) {
				finish_failed_run(s);
				return ert_session_fail(s, st, "failed to run the ops before %s '%s' on %s: %s",
							info.type, info.name,
							s->backends[*prev]->ops->name,
							ert_msg_past_backend(err.msg,
									     s->backends[*prev]->ops->name));
			}
		}
		/* tensors crossing into or out of device memory here (copies.c) */
		st = ert_copies_run(s, p, i, &cursor, &err);
		if (st != ERT_OK) {
			finish_failed_run(s);
			return ert_session_fail(s, st, "failed to copy the inputs of %s '%s' to %s: %s",
						info.type, info.name, be->ops->name,
						ert_msg_past_backend(err.msg, be->ops->name));
		}
		if ((int32_t)i == p->dyn_step)
			for (uint32_t k = 0; k < p->n_dyn; k++)
				p->dyn[k].given = false;
		if (cfg->before_op && cfg->before_op(&info, cfg->callback_user))
			continue;
		*prev = (int32_t)stp->backend;
		ert_probe_op_start(info.index, info.type, info.backend, info.name);
		st = ert_backend_compute(be, &stp->x, &err);
		/* after_op reads the op's outputs: its backend must have finished it */
		if (st == ERT_OK && cfg->after_op)
			st = ert_backend_synchronize(be, &err);
		ert_probe_op_end(info.index, st);
		if (st != ERT_OK) {
			finish_failed_run(s);
			snprintf(s->failed_op, sizeof(s->failed_op), "%s", info.type);
			/* "Type 'name': [backend: ]why", each named once (status.c) */
			ert_op_error_set(&err, stp->x.node, be, st, err.msg);
			ert_session_fail(s, st, "failed to run %s", err.msg);
			s->op_error = (uint32_t)strlen("failed to run ");
			return st;
		}
		if (cfg->after_op) {
			int stop;

			if (cfg->device_times &&
			    ert_backend_device_time(be, &stp->x, &info.device_ns))
				info.device_timed = 1;

			s->cb_step = stp;
			stop = cfg->after_op(&info, cfg->callback_user);
			s->cb_step = NULL;
			if (stop)
				return ert_session_fail(s, ERT_STATUS_STOPPED,
							"run stopped after %s '%s'", info.type,
							info.name);
		}
	}
	/* graph outputs in device memory, back to host memory */
	st = ert_copies_run(s, p, p->n_steps, &cursor, &err);
	if (st != ERT_OK) {
		finish_failed_run(s);
		return ert_session_fail(s, st, "failed to read the outputs back: %s", err.msg);
	}
	return ERT_OK;
}

static ert_status run_plan(struct ert_session *s)
{
	struct ert_err err = { "" };
	ert_status st;

	if (s->dirty || !s->plan || (has_value_inputs(s) && !ert_plan_matches(s, s->plan))) {
		st = activate_plan(s);
		if (st != ERT_OK)
			return st;
	}
	struct ert_plan *p = s->plan;
	uint64_t copied = copied_bytes(s);
	uint32_t base = 0;
	int32_t prev = -1;

	s->leaf = NULL;
	for (;;) {
		st = run_steps(s, p, base, &prev);
		if (st != ERT_OK)
			return st;
		if (p->cut < 0)
			break;
		/* the nodes after a data-dependent step, for the shapes it gave */
		base += p->n_steps;
		st = ert_dyn_next(s, p, &p, &err);
		if (st != ERT_OK) {
			const struct ert_node *n = &s->model->graph->nodes[p->cut];

			finish_failed_run(s);
			return ert_session_fail(s, st, "failed to plan the nodes after %s '%s': %s",
						ert_op_name(n->op), n->name, err.msg);
		}
	}
	for (uint32_t b = 0; b < s->n_backends; b++) {
		st = ert_backend_synchronize(s->backends[b], &err);
		if (st != ERT_OK) {
			finish_failed_run(s);
			return ert_session_fail(s, st, "failed to finish run: %s", err.msg);
		}
	}
	s->leaf = p;
	s->copied_bytes = copied_bytes(s) - copied;
	s->error[0] = '\0';
	return ERT_OK;
}

ERT_API ert_status ert_session_run(ert_session *s)
{
	ert_status st;

	if (!s)
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT, "run: NULL session");
	if (s->running)
		return ert_session_fail(s, ERT_STATUS_BUSY,
					"run: the session is already running (called from a callback)");
	s->running = true;
	/* the strings of the last run's outputs go now (edgert.h, ert_string) */
	ert_str_heap_reset(s->strings);
	s->failed_op[0] = '\0';
	ert_probe_run_start(s);
	st = run_plan(s);
	/* a sequence output's handle is only as good as the run that wrote it */
	if (st != ERT_OK)
		ert_session_seq_outputs_clear(s);
	ert_probe_run_end(s, st);
	s->running = false;
	return st;
}

ERT_API uint64_t ert_session_copied_bytes(const ert_session *s)
{
	return s ? s->copied_bytes : 0;
}

/*
 * The last plan of the chain the last run went through (a continuation when
 * the graph has data-dependent shapes), else the current plan.
 */
static const struct ert_plan *current_leaf(const struct ert_session *s)
{
	if (s->leaf && s->plan && s->leaf->root == s->plan)
		return s->leaf;
	return s->plan;
}

ERT_API size_t ert_session_peak_bytes(const ert_session *s)
{
	size_t in = 0;

	if (!s)
		return 0;
	for (uint32_t k = 0; k < s->model->graph->n_inputs; k++)
		in += s->in_caps[k];
	for (uint32_t b = 0; b < s->n_backends; b++)
		in += ert_backend_resident_bytes(s->backends[b]);
	/* the plans the last run went through, data-dependent outputs included */
	for (const struct ert_plan *p = current_leaf(s); p; p = p->parent)
		in += p->peak_bytes + p->dyn_bytes;
	/* what sequences and optionals hold (the inputs' and the steps') */
	return in + (size_t)s->seqs.bytes;
}

ert_status ert_session_visit_steps(ert_session *s, ert_step_visit_fn fn, void *user)
{
	if (s->running)
		return ert_session_fail(s, ERT_STATUS_BUSY, "the session is running");
	if (s->dirty || !s->plan) {
		ert_status st = activate_plan(s);

		if (st != ERT_OK)
			return st;
	}
	/* the plan, then the continuations of data-dependent shapes the last run used */
	for (const struct ert_plan *p = s->plan; p; p = p->cut >= 0 ? p->conts : NULL) {
		for (uint32_t i = 0; i < p->n_steps; i++) {
			const struct ert_step *stp = &p->steps[i];

			fn(stp->x.node, (const struct ert_value *const *)stp->x.in, stp->x.n_in,
			   (const struct ert_value *const *)stp->x.out, stp->x.n_out,
			   s->backends[stp->backend]->ops->name, user);
		}
	}
	return ERT_OK;
}

const struct ert_node *ert_session_op_node(const ert_session *s)
{
	return s && s->cb_step ? s->cb_step->x.node : NULL;
}

ert_status ert_session_op_output(ert_session *s, uint32_t k, const struct ert_value **v_out,
				 void *dst, size_t size)
{
	const struct ert_step *stp = s ? s->cb_step : NULL;
	struct ert_err err = { "" };
	const struct ert_value *v;
	ert_status st;

	if (!stp)
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT,
					  "op_output: called outside an after_op callback");
	if (k >= stp->x.n_out)
		return ert_session_fail(s, ERT_STATUS_NOT_FOUND, "op_output: %s '%s' has %u outputs",
					ert_op_name(stp->x.node->op), stp->x.node->name,
					stp->x.n_out);
	v = stp->x.out[k];
	*v_out = v;
	if (!dst || !v || !v->nbytes)
		return ERT_OK;
	if (size != v->nbytes)
		return ert_session_fail(s, ERT_STATUS_SHAPE,
					"op_output: output %u of '%s' has %zu bytes, not %zu", k,
					stp->x.node->name, v->nbytes, size);
	if (v->data) {
		memcpy(dst, v->data, size);
		return ERT_OK;
	}
	/* device memory: the step's outputs lie in its backend's arena */
	if (!stp->x.out_loc || !stp->x.out_loc[k].buf)
		return ert_session_fail(s, ERT_STATUS_INTERNAL, "op_output: output %u of '%s' has no place",
					k, stp->x.node->name);
	/* stored as float16 (precision LOW): read the halves, widen from the end */
	bool half = stp->x.out_loc[k].storage == ERT_DTYPE_FLOAT16;

	st = ert_backend_buffer_read(s->backends[stp->backend], stp->x.out_loc[k].buf,
				     stp->x.out_loc[k].offset, dst, half ? (size_t)v->numel * 2 : size, &err);
	if (st != ERT_OK)
		return ert_session_fail(s, st, "op_output: reading output %u of '%s': %s", k,
					stp->x.node->name, err.msg);
	for (size_t i = half ? (size_t)v->numel : 0; i-- > 0;)
		((float *)dst)[i] = ert_fp16_to_fp32(((const uint16_t *)dst)[i]);
	return ERT_OK;
}

/* ---- tensor handles ---- */

static const struct ert_value *handle_value(const ert_tensor *t)
{
	struct ert_session *s = t->sess;

	if (t->is_input)
		return &s->in_vals[t->index];
	if (s->plan && !s->dirty) {
		const struct ert_plan *p = current_leaf(s);
		const struct ert_plan_tensor *pt = &p->t[t->tensor];

		/* after a data-dependent step, before a run planned the rest */
		if (pt->kind == ERT_PT_UNUSED)
			return NULL;
		/* in device memory: its copy in host memory, filled by every run */
		return pt->host_mirror >= 0 ? &p->mirrors[pt->host_mirror].v : &pt->v;
	}
	return NULL;
}

ERT_API const char *ert_tensor_name(const ert_tensor *t)
{
	return t ? t->sess->model->graph->tensors[t->tensor].name : NULL;
}

ERT_API ert_dtype ert_tensor_dtype(const ert_tensor *t)
{
	const struct ert_value *v;

	if (!t)
		return ERT_DTYPE_UNDEFINED;
	v = handle_value(t);
	return v ? v->dtype : t->sess->model->graph->tensors[t->tensor].dtype;
}

ERT_API uint32_t ert_tensor_rank(const ert_tensor *t)
{
	const struct ert_value *v;

	if (!t)
		return 0;
	v = handle_value(t);
	if (v)
		return (uint32_t)v->rank;
	int32_t r = t->sess->model->graph->tensors[t->tensor].rank;

	return r < 0 ? 0 : (uint32_t)r;
}

ERT_API int64_t ert_tensor_dim(const ert_tensor *t, uint32_t axis)
{
	const struct ert_value *v;

	if (!t || axis >= ert_tensor_rank(t))
		return -1;
	v = handle_value(t);
	return v ? v->dims[axis] : t->sess->model->graph->tensors[t->tensor].dims[axis];
}

ERT_API ert_layout ert_tensor_layout(const ert_tensor *t)
{
	return t && ert_tensor_rank(t) == 4 ? ERT_LAYOUT_NCHW : ERT_LAYOUT_ANY;
}

ERT_API size_t ert_tensor_element_count(const ert_tensor *t)
{
	const struct ert_value *v = t ? handle_value(t) : NULL;

	return v ? (size_t)v->numel : 0;
}

ERT_API size_t ert_tensor_byte_size(const ert_tensor *t)
{
	const struct ert_value *v = t ? handle_value(t) : NULL;

	return v ? v->nbytes : 0;
}

ERT_API void *ert_tensor_data(const ert_tensor *t)
{
	if (!t)
		return NULL;
	const struct ert_value *v = handle_value(t);

	/* a sequence's or optional's handle is the runtime's: ert_tensor_get_item() */
	if (v && v->kind != ERT_VALUE_TENSOR)
		return NULL;
	if (t->is_input)
		return t->sess->in_bufs[t->index];
	return v ? v->data : NULL;
}

const struct ert_value *ert_session_handle_value(const ert_tensor *t)
{
	return handle_value(t);
}

const struct ert_value *ert_session_output_value(ert_session *s, uint32_t k)
{
	return k < s->model->graph->n_outputs ? handle_value(&s->out_handles[k]) : NULL;
}
