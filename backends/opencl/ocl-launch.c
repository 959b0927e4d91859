/* SPDX-License-Identifier: MIT */
/*
 * A step's launches: kernels created and their arguments set once, at plan
 * time (prepare), then only enqueued at every run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ert-probes.h"
#include "opencl/ocl-impl.h"

/* Tensors are addressed in elements: offsets from the planner are multiples of 64 bytes. */
static bool to_ref(const struct ert_tensor_loc *loc, const struct ert_value *v,
		   struct ert_ocl_ref *out)
{
	size_t es = loc->storage ? ert_dtype_size(loc->storage) : ert_dtype_size(v->dtype);

	if (!loc->buf || !es || loc->offset % es || loc->offset / es > INT32_MAX)
		return false;
	out->mem = (cl_mem)loc->buf->handle;
	out->off = (cl_int)(loc->offset / es);
	out->es = (cl_int)es;
	return true;
}

ert_status ert_ocl_in(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
		      uint32_t k, struct ert_ocl_ref *out, struct ert_err *err)
{
	const struct ert_value *v = k < x->n_in ? x->in[k] : NULL;
	ert_status s;

	if (!v) {
		ert_err_set(err, "opencl: %s '%s': no input %u", ert_op_name(x->node->op),
			    x->node->name, k);
		return ERT_STATUS_BACKEND;
	}
	if (x->in_loc && to_ref(&x->in_loc[k], v, out))
		return ERT_OK;
	if (x->in_const[k] && v->data) {
		if (st->n_consts == ERT_OCL_MAX_CONSTS) {
			ert_err_set(err, "opencl: %s '%s': more than %d constant inputs",
				    ert_op_name(x->node->op), x->node->name, ERT_OCL_MAX_CONSTS);
			return ERT_STATUS_BACKEND;
		}
		bool f16 = st->f16 && v->dtype == ERT_DTYPE_FLOAT32;

		s = ert_ocl_const_get(cl, v->data, v->nbytes, f16, &st->consts[st->n_consts],
				      x->node, err);
		if (s != ERT_OK)
			return s;
		out->mem = ert_ocl_const_mem(st->consts[st->n_consts++]);
		out->off = 0;
		out->es = f16 ? 2 : (cl_int)ert_dtype_size(v->dtype);
		return ERT_OK;
	}
	ert_err_set(err, "opencl: %s '%s': input %u is not in device memory",
		    ert_op_name(x->node->op),
		    x->node->name, k);
	return ERT_STATUS_BACKEND;
}

ert_status ert_ocl_out(const struct ert_exec *x, uint32_t k, struct ert_ocl_ref *out,
		       struct ert_err *err)
{
	if (k < x->n_out && x->out[k] && x->out_loc && to_ref(&x->out_loc[k], x->out[k], out))
		return ERT_OK;
	ert_err_set(err, "opencl: %s '%s': output %u is not in device memory",
		    ert_op_name(x->node->op), x->node->name, k);
	return ERT_STATUS_BACKEND;
}

ert_status ert_ocl_ws(const struct ert_exec *x, struct ert_ocl_ref *out, struct ert_err *err)
{
	struct ert_value f32 = { .dtype = ERT_DTYPE_FLOAT32 };

	if (to_ref(&x->ws_loc, &f32, out))
		return ERT_OK;
	ert_err_set(err, "opencl: %s '%s': no workspace in device memory", ert_op_name(x->node->op),
		    x->node->name);
	return ERT_STATUS_BACKEND;
}

/* The launch of variant 0's sizes; every variant's kernel created. */
static ert_status launch_new(struct ert_ocl *cl, struct ert_ocl_step *st, const char *program,
			     const struct ert_ocl_variant *v, uint32_t n, bool has_lws,
			     struct ert_err *err)
{
	struct ert_ocl_launch *l;
	ert_status s;

	if (st->n_launch == ERT_OCL_MAX_LAUNCHES) {
		ert_err_set(err, "opencl: %s '%s': more than %d launches needed",
			    ert_op_name(st->node->op), st->node->name, ERT_OCL_MAX_LAUNCHES);
		return ERT_STATUS_BACKEND;
	}
	l = &st->launch[st->n_launch];
	memset(l, 0, sizeof(*l));
	for (uint32_t i = 0; i < n; i++) {
		s = ert_ocl_kernel_create(cl, program, st->f16, v[i].kernel, &l->var[i], st->node,
					  err);
		if (s != ERT_OK) {
			for (uint32_t j = 0; j < i; j++)
				clReleaseKernel(l->var[j]);
			return s;
		}
	}
	st->n_launch++;
	for (uint32_t i = 0; i < n; i++)
		l->var_label[i] = v[i].label;
	l->n_var = n;
	l->kernel = l->var[0];
	l->program = ert_ocl_program_index(program);
	/* the float16 variant's hash follows the float32 ones (ert_ocl.program_hash) */
	if (l->program >= 0 && st->f16)
		l->program += ERT_OCL_MAX_PROGRAMS;
	l->name = v[0].kernel;
	l->dims = v[0].dims;
	l->has_lws = has_lws;
	for (cl_uint d = 0; d < l->dims; d++) {
		l->lws[d] = has_lws ? v[0].lws[d] : 1;
		/* an empty range would be an error: such a launch writes nothing */
		l->gws[d] = ert_ocl_round_up(v[0].gws[d] ? v[0].gws[d] : 1, l->lws[d]);
	}
	l->shape = ert_ocl_hash(ERT_OCL_HASH_INIT, &n, sizeof(n));
	for (uint32_t i = 0; i < n; i++) {
		l->shape = ert_ocl_hash(l->shape, &v[i].dims, sizeof(v[i].dims));
		l->shape = ert_ocl_hash(l->shape, v[i].gws, sizeof(v[i].gws[0]) * v[i].dims);
	}
	return ERT_OK;
}

/* What the tuner may choose from for the launch just added; nothing when there is no choice. */
static ert_status launch_space(struct ert_ocl *cl, struct ert_ocl_step *st,
			       const struct ert_ocl_variant *v, uint32_t n, struct ert_err *err)
{
	struct ert_ocl_launch *l = &st->launch[st->n_launch - 1];
	struct ert_tune_space *sp;

	if (n == 1 && !v[0].free_lws)
		return ERT_OK;
	sp = calloc(1, sizeof(*sp));
	if (!sp) {
		ert_err_set(err, "opencl: %s '%s': out of memory while preparing",
			    ert_op_name(st->node->op), st->node->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	sp->n = n;
	for (uint32_t i = 0; i < n; i++) {
		struct ert_tune_variant *t = &sp->v[i];
		size_t kwg = 0;

		t->dims = v[i].dims;
		t->free_lws = v[i].free_lws;
		for (cl_uint d = 0; d < v[i].dims && d < 3; d++) {
			t->gws[d] = v[i].gws[d] ? v[i].gws[d] : 1;
			t->lws[d] = v[i].lws[d];
		}
		/* the kernel may allow fewer items per group than the device */
		t->max_wg = cl->max_wg;
		if (clGetKernelWorkGroupInfo(l->var[i], cl->device, CL_KERNEL_WORK_GROUP_SIZE,
					     sizeof(kwg), &kwg, NULL) == CL_SUCCESS && kwg &&
		    kwg < t->max_wg)
			t->max_wg = kwg;
	}
	l->space = sp;
	return ERT_OK;
}

ert_status ert_ocl_launch_add(struct ert_ocl *cl, struct ert_ocl_step *st, const char *program,
			      const char *kernel, cl_uint dims, const size_t *gws,
			      const size_t *lws, struct ert_err *err)
{
	struct ert_ocl_variant v = { .kernel = kernel, .dims = dims };

	for (cl_uint d = 0; d < dims && d < 3; d++) {
		v.gws[d] = gws[d];
		v.lws[d] = lws ? lws[d] : 1;
	}
	return launch_new(cl, st, program, &v, 1, lws != NULL, err);
}

ert_status ert_ocl_launch_tunable(struct ert_ocl *cl, struct ert_ocl_step *st,
				  const char *program, const char *kernel, cl_uint dims,
				  const size_t *gws, const size_t *lws, struct ert_err *err)
{
	struct ert_ocl_variant v = { .kernel = kernel, .dims = dims, .free_lws = true };
	ert_status s;

	for (cl_uint d = 0; d < dims && d < 3; d++) {
		v.gws[d] = gws[d];
		v.lws[d] = lws[d];
	}
	s = launch_new(cl, st, program, &v, 1, true, err);
	return s == ERT_OK ? launch_space(cl, st, &v, 1, err) : s;
}

ert_status ert_ocl_launch_variants(struct ert_ocl *cl, struct ert_ocl_step *st,
				   const char *program, const struct ert_ocl_variant *v,
				   uint32_t n, struct ert_err *err)
{
	ert_status s;

	if (!n || n > ERT_TUNE_MAX_VARIANTS) {
		ert_err_set(err, "opencl: %s '%s': %u kernel variants (1..%d)",
			    ert_op_name(st->node->op), st->node->name, n, ERT_TUNE_MAX_VARIANTS);
		return ERT_STATUS_INTERNAL;
	}
	s = launch_new(cl, st, program, v, n, true, err);
	return s == ERT_OK ? launch_space(cl, st, v, n, err) : s;
}

/* @shape: the value is part of the launch's shape (sizes, flags), not a buffer or its offset. */
static void set_arg(struct ert_ocl_step *st, size_t size, const void *value, bool shape)
{
	struct ert_ocl_launch *l = &st->launch[st->n_launch - 1];

	for (uint32_t i = 0; i < l->n_var; i++) {
		cl_int rc = clSetKernelArg(l->var[i], l->next_arg, size, value);

		if (rc != CL_SUCCESS && st->arg_rc == CL_SUCCESS) {
			st->arg_rc = rc;
			st->arg_index = l->next_arg;
		}
	}
	if (shape) {
		l->shape = ert_ocl_hash(l->shape, &size, sizeof(size));
		if (value)
			l->shape = ert_ocl_hash(l->shape, value, size);
	}
	l->next_arg++;
}

void ert_ocl_arg_ref(struct ert_ocl_step *st, const struct ert_ocl_ref *r)
{
	set_arg(st, sizeof(r->mem), &r->mem, false);
	set_arg(st, sizeof(r->off), &r->off, false);
}

void ert_ocl_arg_mem(struct ert_ocl_step *st, cl_mem m)
{
	set_arg(st, sizeof(m), &m, false);
}

void ert_ocl_arg_int(struct ert_ocl_step *st, cl_int v)
{
	set_arg(st, sizeof(v), &v, true);
}

void ert_ocl_arg_float(struct ert_ocl_step *st, cl_float v)
{
	set_arg(st, sizeof(v), &v, true);
}

void ert_ocl_arg_int8(struct ert_ocl_step *st, const cl_int *v8)
{
	cl_int8 v;

	memcpy(v.s, v8, sizeof(v.s));
	set_arg(st, sizeof(v), &v, true);
}

void ert_ocl_arg_local(struct ert_ocl_step *st, size_t bytes)
{
	set_arg(st, bytes, NULL, true);
}

ert_status ert_ocl_step_check(struct ert_ocl_step *st, struct ert_err *err)
{
	char what[48];

	if (st->arg_rc == CL_SUCCESS)
		return ERT_OK;
	snprintf(what, sizeof(what), "clSetKernelArg %u", st->arg_index);
	return ert_ocl_fail(err, st->arg_rc, what, st->node);
}

ert_status ert_ocl_copy_add(struct ert_ocl_step *st, const struct ert_ocl_ref *src,
			    const struct ert_ocl_ref *dst, size_t elsize, size_t bytes,
			    struct ert_err *err)
{
	if (st->n_copy == ERT_OCL_MAX_LAUNCHES) {
		ert_err_set(err, "opencl: %s '%s': more than %d copies needed",
			    ert_op_name(st->node->op), st->node->name, ERT_OCL_MAX_LAUNCHES);
		return ERT_STATUS_BACKEND;
	}
	st->copy[st->n_copy].src = src->mem;
	st->copy[st->n_copy].dst = dst->mem;
	st->copy[st->n_copy].src_off = (size_t)src->off * elsize;
	st->copy[st->n_copy].dst_off = (size_t)dst->off * elsize;
	st->copy[st->n_copy].size = bytes;
	st->n_copy++;
	return ERT_OK;
}

ert_status ert_ocl_table(struct ert_ocl *cl, struct ert_ocl_step *st, const cl_int *data,
			 size_t count, cl_mem *out, struct ert_err *err)
{
	size_t bytes = count * sizeof(*data);
	cl_int rc;

	if (st->n_tables == sizeof(st->tables) / sizeof(st->tables[0])) {
		ert_err_set(err, "opencl: %s '%s': more than %zu tables needed",
			    ert_op_name(st->node->op), st->node->name,
			    sizeof(st->tables) / sizeof(st->tables[0]));
		return ERT_STATUS_BACKEND;
	}
	if (bytes > cl->max_alloc) {
		ert_err_set(err, "opencl: %s '%s': a table of %zu bytes is over the device's largest buffer",
			    ert_op_name(st->node->op), st->node->name, bytes);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	*out = clCreateBuffer(cl->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
			      (void *)data, &rc);
	if (!*out)
		return ert_ocl_fail(err, rc, "clCreateBuffer (a table)", st->node);
	st->tables[st->n_tables] = *out;
	st->table_bytes[st->n_tables++] = bytes;
	cl->const_bytes += bytes;
	return ERT_OK;
}

/* The last run's events go: a step keeps those of one run only. */
static void release_events(struct ert_ocl_step *st)
{
	for (uint32_t i = 0; i < st->n_events; i++)
		clReleaseEvent(st->events[i]);
	st->n_events = 0;
}

/* Where the next command's event goes: NULL (none asked) without device_times. */
static cl_event *next_event(const struct ert_ocl *cl, struct ert_ocl_step *st)
{
	return cl->device_times && st->n_events < 2 * ERT_OCL_MAX_LAUNCHES
		       ? &st->events[st->n_events] : NULL;
}

ert_status ert_ocl_step_run(struct ert_ocl *cl, struct ert_ocl_step *st, struct ert_err *err)
{
	release_events(st);
	for (uint32_t i = 0; i < st->n_copy; i++) {
		cl_int rc;

		/* the same bytes (a view planned in place): nothing to move */
		if (st->copy[i].src == st->copy[i].dst && st->copy[i].src_off == st->copy[i].dst_off)
			continue;
		if (!st->copy[i].size)
			continue;
		rc = clEnqueueCopyBuffer(cl->queue, st->copy[i].src, st->copy[i].dst,
					 st->copy[i].src_off, st->copy[i].dst_off, st->copy[i].size,
					 0, NULL, next_event(cl, st));
		if (rc != CL_SUCCESS)
			return ert_ocl_fail(err, rc, "clEnqueueCopyBuffer", st->node);
		st->n_events += next_event(cl, st) != NULL;
	}
	for (uint32_t i = 0; i < st->n_launch; i++) {
		const struct ert_ocl_launch *l = &st->launch[i];
		cl_int rc = clEnqueueNDRangeKernel(cl->queue, l->kernel, l->dims, NULL, l->gws,
						   l->has_lws ? l->lws : NULL, 0, NULL,
						   next_event(cl, st));

		if (rc != CL_SUCCESS)
			return ert_ocl_fail(err, rc, "clEnqueueNDRangeKernel", st->node);
		st->n_events += next_event(cl, st) != NULL;
	}
	ert_probe_gpu_submit(st->n_launch, st->n_copy);
	return ERT_OK;
}

bool ert_ocl_step_device_ns(const struct ert_ocl_step *st, uint64_t *ns_out)
{
	uint64_t sum = 0;

	if (!st->n_events)
		return false;
	for (uint32_t i = 0; i < st->n_events; i++) {
		cl_ulong t0 = 0, t1 = 0;

		if (clGetEventProfilingInfo(st->events[i], CL_PROFILING_COMMAND_START, sizeof(t0),
					    &t0, NULL) != CL_SUCCESS ||
		    clGetEventProfilingInfo(st->events[i], CL_PROFILING_COMMAND_END, sizeof(t1), &t1,
					    NULL) != CL_SUCCESS || t1 < t0)
			return false;
		sum += t1 - t0;
	}
	*ns_out = sum;
	return true;
}

void ert_ocl_step_free(struct ert_ocl *cl, struct ert_ocl_step *st)
{
	if (!st)
		return;
	release_events(st);
	for (uint32_t i = 0; i < st->n_launch; i++) {
		struct ert_ocl_launch *l = &st->launch[i];

		/* untuned (a failed prepare): every variant; tuned: the one kept */
		if (l->n_var) {
			for (uint32_t v = 0; v < l->n_var; v++)
				clReleaseKernel(l->var[v]);
		} else {
			clReleaseKernel(l->kernel);
		}
		free(l->space);
	}
	for (uint32_t i = 0; i < st->n_consts; i++)
		ert_ocl_const_put(cl, st->consts[i]);
	for (uint32_t i = 0; i < st->n_tables; i++) {
		clReleaseMemObject(st->tables[i]);
		cl->const_bytes -= st->table_bytes[i];
	}
}
