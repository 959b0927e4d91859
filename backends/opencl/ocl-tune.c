/* SPDX-License-Identifier: MIT */
/*
 * Autotuning of a step's launches (ert_config.tune): the candidates and the
 * table come from gpu-common/gpu-tune.c; this file times them on the device
 * with profiling events and applies the choice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl/ocl-impl.h"

static ert_status tune_queue(struct ert_ocl *cl, const struct ert_node *n, struct ert_err *err)
{
	cl_int rc;

	if (cl->tune_queue)
		return ERT_OK;
	cl->tune_queue = clCreateCommandQueue(cl->ctx, cl->device, CL_QUEUE_PROFILING_ENABLE, &rc);
	if (!cl->tune_queue)
		return ert_ocl_fail(err, rc, "clCreateCommandQueue (profiling, for tuning)", n);
	/* what the session queued before (uploads) is done before the tuner runs kernels */
	rc = clFinish(cl->queue);
	if (rc != CL_SUCCESS)
		return ert_ocl_fail(err, rc, "waiting for the device (clFinish)", n);
	return ERT_OK;
}

static cl_int enqueue(struct ert_ocl *cl, const struct ert_ocl_launch *l,
		      const struct ert_tune_cand *c, cl_event *ev)
{
	size_t gws[3], lws[3] = { c->lws[0], c->lws[1], c->lws[2] };

	ert_tune_global(l->space, c, gws);
	return clEnqueueNDRangeKernel(cl->tune_queue, l->var[c->variant], l->dims, NULL, gws,
				      c->lws[0] ? lws : NULL, 0, NULL, ev);
}

/*
 * The least device time of @reps runs of @c (after @warm untimed ones), or
 * false when the device refuses it (a size the kernel cannot take).
 */
static bool time_one(struct ert_ocl *cl, const struct ert_ocl_launch *l,
		     const struct ert_tune_cand *c, uint32_t warm, uint32_t reps, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (uint32_t i = 0; i < warm; i++)
		if (enqueue(cl, l, c, NULL) != CL_SUCCESS)
			return false;
	for (uint32_t i = 0; i < reps; i++) {
		cl_ulong t0 = 0, t1 = 0;
		cl_event ev = NULL;
		cl_int rc = enqueue(cl, l, c, &ev);

		if (rc == CL_SUCCESS)
			rc = clWaitForEvents(1, &ev);
		if (rc == CL_SUCCESS)
			rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0,
						     NULL);
		if (rc == CL_SUCCESS)
			rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1,
						     NULL);
		if (ev)
			clReleaseEvent(ev);
		if (rc != CL_SUCCESS || t1 < t0)
			return false;
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	*ns = best;
	return true;
}

/* The fastest of @n candidates (@c[0] when none could be timed); false when none was. */
static bool time_all(struct ert_ocl *cl, const struct ert_ocl_launch *l,
		     const struct ert_tune_cand *c, uint32_t n, struct ert_tune_cand *best,
		     uint64_t *best_ns)
{
	uint32_t reps = ert_tune_repeats(cl->tune);
	bool any = false;

	*best = c[0];
	*best_ns = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ns;

		/* FAST warms up the first only; the others find the caches as it left them */
		if (!time_one(cl, l, &c[i], i == 0 || cl->tune != ERT_TUNE_FAST, reps, &ns))
			continue;
		if (ns < *best_ns) {
			*best = c[i];
			*best_ns = ns;
		}
		any = true;
	}
	/* the runs finish before the arguments or buffers can change */
	clFinish(cl->tune_queue);
	return any;
}

static void apply(struct ert_ocl_step *st, struct ert_ocl_launch *l, const struct ert_tune_cand *c)
{
	ert_tune_global(l->space, c, l->gws);
	l->dims = l->space->v[c->variant].dims;
	l->has_lws = c->lws[0] != 0;
	for (int d = 0; d < 3; d++)
		l->lws[d] = c->lws[0] ? c->lws[d] : 1;
	l->kernel = l->var[c->variant];
	if (l->var_label[c->variant])
		st->kernel_name = l->var_label[c->variant];
	for (uint32_t v = 0; v < l->n_var; v++)
		if (v != c->variant)
			clReleaseKernel(l->var[v]);
	l->n_var = 0;
}

static ert_status tune_launch(struct ert_ocl *cl, struct ert_ocl_step *st,
			      struct ert_ocl_launch *l, struct ert_err *err)
{
	struct ert_tune_cand cands[ERT_TUNE_MAX_CANDIDATES], best;
	uint32_t n = ert_tune_candidates(cl->tune, l->space, cands, ERT_TUNE_MAX_CANDIDATES);
	struct ert_tune_key key;
	const struct ert_tune_entry *e;
	bool refused;
	uint64_t ns;
	ert_status s;

	best = cands[0];
	if (n > 1) {
		memset(&key, 0, sizeof(key));
		snprintf(key.kernel, sizeof(key.kernel), "%s", l->name);
		key.source = l->program >= 0 ? cl->program_hash[l->program] : 0;
		key.shape = l->shape;
		e = ert_tune_lookup(&cl->cache.tuned, &key, l->space, cl->tune, &refused);
		/* not a choice this build offers: a damaged or foreign entry, tuned again */
		cl->cache.tune_refused += refused;
		if (e) {
			best = e->best;
			cl->cache.tune_reused++;
		} else if (ert_tune_times(cl->tune, cl->device_type & CL_DEVICE_TYPE_CPU)) {
			s = tune_queue(cl, st->node, err);
			if (s != ERT_OK)
				return s;
			if (time_all(cl, l, cands, n, &best, &ns)) {
				cl->cache.tune_timed++;
				/* out of memory for the table: the choice still holds for this step */
				ert_tune_put(&cl->cache.tuned, &key, &best, cl->tune,
					     ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns);
			}
		}
	}
	apply(st, l, &best);
	return ERT_OK;
}

ert_status ert_ocl_step_tune(struct ert_ocl *cl, struct ert_ocl_step *st, struct ert_err *err)
{
	for (uint32_t i = 0; i < st->n_launch; i++) {
		struct ert_ocl_launch *l = &st->launch[i];
		ert_status s;

		if (!l->space)
			continue;
		s = tune_launch(cl, st, l, err);
		if (s != ERT_OK)
			return s;
		free(l->space);
		l->space = NULL;
	}
	return ERT_OK;
}
