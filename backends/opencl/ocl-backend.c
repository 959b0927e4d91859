/* SPDX-License-Identifier: MIT */
/*
 * The OpenCL backend: the ops table the planner sees. Its buffer type,
 * "opencl", is device memory the host does not address: the session copies
 * the tensors that cross at its splits with buffer_write/buffer_read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ert-probes.h"
#include "gpu-common/gpu-backend.h"
#include "opencl/ocl-impl.h"

static struct ert_ocl *ocl_of(struct ert_backend *be)
{
	return be->ctx;
}

/* What a constant's upload needs (make_const's argument). */
struct const_make {
	struct ert_ocl *cl;
	const void *data;
	size_t size;
	bool f16;
	const struct ert_node *n;
};

/* The device copy of a constant (the entry's object in the device's table). */
static ert_status make_const(void *arg, void *obj, size_t *bytes, struct ert_err *err)
{
	const struct const_make *a = arg;
	cl_mem *mem = obj;
	void *half;
	size_t stored;
	const void *src = ert_gpu_const_stored(a->data, a->size, a->f16, &half, &stored);
	cl_int rc = CL_SUCCESS;

	if (!src) {
		ert_err_set(err, "opencl: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	/* COPY_HOST_PTR: the bytes are read now, the host copy is not kept */
	*mem = clCreateBuffer(a->cl->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
			      stored ? stored : 4, stored ? (void *)src : (void *)&a->size, &rc);
	free(half);
	if (!*mem)
		return ert_ocl_fail(err, rc, "uploading a constant (clCreateBuffer)", a->n);
	*bytes = stored;
	return ERT_OK;
}

void ert_ocl_const_free(void *dev, void *obj)
{
	(void)dev;
	clReleaseMemObject(*(cl_mem *)obj);
}

/*
 * Shared by every step of the session asking for the same bytes, and by
 * every session of the process on the device (gpu-common/gpu-share.h: the
 * key, and why it is safe).
 */
ert_status ert_ocl_const_get(struct ert_ocl *cl, const void *data, size_t size, bool f16,
			     struct ert_gpu_hold **out, const struct ert_node *n,
			     struct ert_err *err)
{
	struct ert_gpu_const_key key = ert_gpu_const_key(data, size, f16);
	struct const_make arg = { cl, data, size, f16, n };
	enum ert_gpu_found found;
	uint64_t t0;
	ert_status st;

	if (size > cl->max_alloc) {
		ert_err_set(err, "opencl: %s '%s': a constant of %zu bytes is over the device's largest buffer (%llu bytes)",
			    ert_op_name(n->op), n->name, size, (unsigned long long)cl->max_alloc);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	t0 = ert_clock_ns();
	st = ert_gpu_hold_get(&cl->consts, &cl->dev->consts, &key, sizeof(key), make_const, &arg,
			      out, &found, err);
	if (st != ERT_OK || found == ERT_GPU_HELD)
		return st;
	cl->times.upload_ns += ert_clock_ns() - t0;
	if (found == ERT_GPU_SHARED)
		cl->times.upload_shared_bytes += (*out)->e->bytes;
	else
		cl->times.upload_bytes += (*out)->e->bytes;
	return ERT_OK;
}

void ert_ocl_const_put(struct ert_ocl *cl, struct ert_gpu_hold *c)
{
	ert_gpu_hold_put(&cl->consts, &cl->dev->consts, c);
}

cl_mem ert_ocl_const_mem(const struct ert_gpu_hold *c)
{
	return *(const cl_mem *)ert_gpu_hold_obj(c);
}

/* gpu-common's answer (the op's limits on any GPU API), then this device's own. */
static bool ocl_supports_op(struct ert_backend *be, const struct ert_exec *x)
{
	const struct ert_ocl_op *op = ert_ocl_op_find(x->node->op);

	return op && ert_gpu_supports(x) && (!op->supports || op->supports(ocl_of(be), x));
}

static const char *ocl_buffer_type(struct ert_backend *be)
{
	return "opencl";
}

static bool ocl_buffer_host_visible(struct ert_backend *be)
{
	return false;
}

static ert_status ocl_buffer_alloc(struct ert_backend *be, size_t size, struct ert_buffer *out,
				   struct ert_err *err)
{
	struct ert_ocl *cl = ocl_of(be);
	cl_mem mem;
	cl_int rc;

	if (size > cl->max_alloc) {
		ert_err_set(err, "opencl: an arena of %zu bytes is over the largest buffer %s allows (%llu bytes)",
			    size, cl->device_name, (unsigned long long)cl->max_alloc);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	mem = clCreateBuffer(cl->ctx, CL_MEM_READ_WRITE, size ? size : 64, NULL, &rc);
	if (!mem)
		return ert_ocl_fail(err, rc, "allocating an arena (clCreateBuffer)", NULL);
	out->host = NULL;
	out->size = size;
	out->handle = mem;
	return ERT_OK;
}

static void ocl_buffer_free(struct ert_backend *be, struct ert_buffer *buf)
{
	if (buf->handle)
		clReleaseMemObject((cl_mem)buf->handle);
	buf->handle = NULL;
}

/*
 * Blocking transfers: the host side may be reused (or read) on return, and an
 * in-order queue runs them after what was queued before. Mapped and pinned
 * host buffers, which would save a copy on devices sharing host memory, are
 * left for later.
 */
static ert_status ocl_buffer_write(struct ert_backend *be, const struct ert_buffer *buf,
				   size_t offset, const void *src, size_t size, struct ert_err *err)
{
	struct ert_ocl *cl = ocl_of(be);
	ert_status st = ert_gpu_check_range(buf, offset, size, "write", "opencl", err);
	cl_int rc;

	if (st != ERT_OK)
		return st;
	rc = clEnqueueWriteBuffer(cl->queue, (cl_mem)buf->handle, CL_TRUE, offset, size, src, 0,
				  NULL, NULL);
	if (rc != CL_SUCCESS)
		return ert_ocl_fail(err, rc, "copying to the device (clEnqueueWriteBuffer)", NULL);
	cl->copied += size;
	return ERT_OK;
}

static ert_status ocl_buffer_read(struct ert_backend *be, const struct ert_buffer *buf,
				  size_t offset, void *dst, size_t size, struct ert_err *err)
{
	struct ert_ocl *cl = ocl_of(be);
	ert_status st = ert_gpu_check_range(buf, offset, size, "read", "opencl", err);
	cl_int rc;

	if (st != ERT_OK)
		return st;
	rc = clEnqueueReadBuffer(cl->queue, (cl_mem)buf->handle, CL_TRUE, offset, size, dst, 0,
				 NULL, NULL);
	if (rc != CL_SUCCESS)
		return ert_ocl_fail(err, rc, "copying from the device (clEnqueueReadBuffer)", NULL);
	cl->copied += size;
	return ERT_OK;
}

static size_t ocl_workspace_size(struct ert_backend *be, const struct ert_exec *x)
{
	const struct ert_ocl_op *op = ert_ocl_op_find(x->node->op);

	return op && op->workspace ? op->workspace(x) : 0;
}

static void ocl_release(struct ert_backend *be, struct ert_exec *x)
{
	struct ert_ocl_step *st = x->state;

	if (st) {
		ert_ocl_step_free(ocl_of(be), st);
		free(st);
	}
	x->state = NULL;
}

/*
 * The variant the step's kernels were created in: ert_ocl_kernel_create's f16,
 * whose program computes the elementwise ops in half where the device has
 * cl_khr_fp16 (-DERT_F16_ARITH: eltwise.cl).
 */
static enum ert_gpu_variant ocl_variant(const struct ert_ocl *cl, const struct ert_ocl_op *op,
					const struct ert_ocl_step *st)
{
	if (!st->f16)
		return ERT_GPU_VARIANT_F32;
	if (cl->has_fp16 && (op->kind == ERT_GPU_UNARY || op->kind == ERT_GPU_BINARY))
		return ERT_GPU_VARIANT_F16A;
	return ERT_GPU_VARIANT_F16;
}

static ert_status ocl_prepare(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_ocl_op *op = ert_ocl_op_find(x->node->op);
	struct ert_ocl *cl = ocl_of(be);
	struct ert_ocl_step *st;
	ert_status s;

	if (!op) {
		ert_err_set(err, "opencl: %s '%s': no kernel for this op", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		ert_err_set(err, "opencl: %s '%s': out of memory while preparing",
			    ert_op_name(x->node->op), x->node->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st->node = x->node;
	st->f16 = x->fp16;
	x->state = st;
	x->kernel = ert_gpu_kernel_name(op->kernel_name, ocl_variant(cl, op, st));
	if (ert_gpu_outputs_empty(x))
		return ERT_OK;
	s = op->prepare(cl, x, st, err);
	if (s == ERT_OK)
		s = ert_ocl_step_check(st, err);
	if (s == ERT_OK) {
		uint64_t t0 = ert_clock_ns();

		s = ert_ocl_step_tune(cl, st, err);
		cl->times.tune_ns += ert_clock_ns() - t0;
	}
	if (s == ERT_OK)
		x->kernel = ert_gpu_kernel_name(st->kernel_name ? st->kernel_name : x->kernel,
						ocl_variant(cl, op, st));
	if (s != ERT_OK)
		ocl_release(be, x);
	return s;
}

static ert_status ocl_compute(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	if (!x->state) {
		ert_err_set(err, "opencl: %s '%s': not prepared", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_INTERNAL;
	}
	return ert_ocl_step_run(ocl_of(be), x->state, err);
}

static bool ocl_device_time(struct ert_backend *be, const struct ert_exec *x, uint64_t *ns_out)
{
	return x->state && ert_ocl_step_device_ns(x->state, ns_out);
}

static ert_status ocl_synchronize(struct ert_backend *be, struct ert_err *err)
{
	cl_int rc;

	ert_probe_gpu_wait_start();
	rc = clFinish(ocl_of(be)->queue);
	ert_probe_gpu_wait_end(rc);
	/* a device that is lost or reset fails here, after the ops were queued */
	if (rc != CL_SUCCESS)
		return ert_ocl_fail(err, rc, "waiting for the device (clFinish)", NULL);
	return ERT_OK;
}

static bool ocl_fp16_storage(struct ert_backend *be)
{
	return ocl_of(be)->f16_storage;
}

static ert_status ocl_buffer_convert(struct ert_backend *be, const struct ert_buffer *buf,
				     size_t src_offset, ert_dtype from, size_t dst_offset,
				     ert_dtype to, size_t count, struct ert_err *err)
{
	struct ert_ocl *cl = ocl_of(be);
	bool widen = from == ERT_DTYPE_FLOAT16;
	cl_kernel k = cl->convert[widen];
	cl_mem mem = (cl_mem)buf->handle;
	cl_int so = (cl_int)(src_offset / ert_dtype_size(from));
	cl_int dof = (cl_int)(dst_offset / ert_dtype_size(to)), n = (cl_int)count;
	size_t lws = 64, gws = ert_ocl_round_up(count ? count : 1, lws);
	cl_int rc = CL_SUCCESS;

	if (!k || from == to || (from != ERT_DTYPE_FLOAT16 && from != ERT_DTYPE_FLOAT32) ||
	    (to != ERT_DTYPE_FLOAT16 && to != ERT_DTYPE_FLOAT32)) {
		ert_err_set(err, "opencl: no conversion from %s to %s storage", ert_dtype_name(from),
			    ert_dtype_name(to));
		return ERT_STATUS_INTERNAL;
	}
	/* one queue, one thread per session: setting the shared kernel's arguments is safe */
	cl_int args[] = {
		clSetKernelArg(k, 0, sizeof(mem), &mem), clSetKernelArg(k, 1, sizeof(so), &so),
		clSetKernelArg(k, 2, sizeof(mem), &mem), clSetKernelArg(k, 3, sizeof(dof), &dof),
		clSetKernelArg(k, 4, sizeof(n), &n),
	};
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		if (args[i] != CL_SUCCESS && rc == CL_SUCCESS)
			rc = args[i];
	if (rc == CL_SUCCESS)
		rc = clEnqueueNDRangeKernel(cl->queue, k, 1, NULL, &gws, &lws, 0, NULL, NULL);
	if (rc != CL_SUCCESS)
		return ert_ocl_fail(err, rc, widen ? "converting float16 to float32 (f16_to_f32)" :
				    "converting float32 to float16 (f32_to_f16)", NULL);
	return ERT_OK;
}

static size_t ocl_resident_bytes(struct ert_backend *be)
{
	const struct ert_ocl *cl = ocl_of(be);

	return cl->const_bytes + cl->consts.bytes;
}

static uint64_t ocl_copied_bytes(struct ert_backend *be)
{
	return ocl_of(be)->copied;
}

static void ocl_plan_prepared(struct ert_backend *be)
{
	struct ert_ocl *cl = ocl_of(be);
	uint64_t t0 = ert_clock_ns();

	ert_ocl_cache_flush(cl);
	cl->times.cache_ns += ert_clock_ns() - t0;
}

static void ocl_prep_times(struct ert_backend *be, struct ert_backend_times *out)
{
	const struct ert_ocl *cl = ocl_of(be);

	*out = cl->times;
	out->programs_loaded = cl->cache.loaded;
	out->programs_built = cl->cache.built;
	out->launches_timed = cl->cache.tune_timed;
	out->launches_reused = cl->cache.tune_reused;
}

static void ocl_destroy(struct ert_backend *be)
{
	struct ert_ocl *cl;

	if (!be)
		return;
	cl = ocl_of(be);
	if (cl) {
		/* the device stops using everything before anything is freed */
		if (cl->queue)
			clFinish(cl->queue);
		/* sessions release their plans first: this finds nothing unless a step leaked */
		if (cl->dev)
			ert_gpu_holds_drop(&cl->consts, &cl->dev->consts);
		for (int i = 0; i < 2; i++)
			if (cl->convert[i])
				clReleaseKernel(cl->convert[i]);
		ert_ocl_programs_release(cl);
		/* what a plan that failed half-way built or tuned is kept too */
		ert_ocl_cache_flush(cl);
		ert_ocl_cache_close(cl);
		if (cl->tune_queue)
			clReleaseCommandQueue(cl->tune_queue);
		ert_ocl_device_close(cl);
		free(cl);
	}
	free(be);
}

static const struct ert_backend_ops ocl_ops = {
	.abi_version = ERT_BACKEND_ABI_VERSION,
	.name = "opencl",
	.supports_op = ocl_supports_op,
	.buffer_type = ocl_buffer_type,
	.buffer_alloc = ocl_buffer_alloc,
	.buffer_free = ocl_buffer_free,
	.buffer_host_visible = ocl_buffer_host_visible,
	.buffer_write = ocl_buffer_write,
	.buffer_read = ocl_buffer_read,
	.workspace_size = ocl_workspace_size,
	.prepare = ocl_prepare,
	.compute = ocl_compute,
	.release = ocl_release,
	.synchronize = ocl_synchronize,
	.device_time = ocl_device_time,
	.destroy = ocl_destroy,
	.resident_bytes = ocl_resident_bytes,
	.copied_bytes = ocl_copied_bytes,
	.plan_prepared = ocl_plan_prepared,
	.fp16_storage = ocl_fp16_storage,
	.buffer_convert = ocl_buffer_convert,
	.prep_times = ocl_prep_times,
};

/*
 * Precision LOW: float16 storage on a device with cl_khr_fp16 (then the
 * elementwise ops compute in half too). A device without the extension
 * keeps float32: on NVIDIA's OpenCL, which lists none, float16 storage
 * through vload_half/vstore_half with float arithmetic measured 1.1-5x
 * slower than float32 on the zoo (docs/opencl.md), and PoCL is as fast in
 * float32. $ERT_OPENCL_F16=storage asks for float16 storage with float
 * arithmetic on any device (half the memory; a test hook on PoCL);
 * $ERT_OPENCL_F16=off keeps LOW in float32. The conversion kernels are
 * built now, while the session is being created.
 */
static ert_status setup_fp16(struct ert_ocl *cl, struct ert_err *err)
{
	const char *env = getenv("ERT_OPENCL_F16");
	bool forced = env && !strcmp(env, "storage");
	size_t len = 0;
	char *ext;

	if (env && *env && !forced && strcmp(env, "off")) {
		ert_err_set(err, "opencl: ERT_OPENCL_F16='%s': expected 'storage' or 'off'", env);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (clGetDeviceInfo(cl->device, CL_DEVICE_EXTENSIONS, 0, NULL, &len) == CL_SUCCESS &&
	    len && (ext = calloc(1, len + 1))) {
		if (clGetDeviceInfo(cl->device, CL_DEVICE_EXTENSIONS, len, ext, NULL) == CL_SUCCESS)
			cl->has_fp16 = strstr(ext, "cl_khr_fp16") != NULL;
		free(ext);
	}
	if (forced)
		cl->has_fp16 = false;
	if (cl->precision != ERT_LEVEL_LOW || (env && !strcmp(env, "off")) ||
	    !(cl->has_fp16 || forced))
		return ERT_OK;
	cl->f16_storage = true;
	ert_status st = ert_ocl_kernel_create(cl, "convert", false, "f32_to_f16", &cl->convert[0],
					      NULL, err);

	if (st == ERT_OK)
		st = ert_ocl_kernel_create(cl, "convert", false, "f16_to_f32", &cl->convert[1],
					   NULL, err);
	return st;
}

static ert_status create(const ert_config *cfg, bool gpu_only, struct ert_backend **out,
			 struct ert_err *err)
{
	struct ert_backend *be = calloc(1, sizeof(*be));
	struct ert_ocl *cl = calloc(1, sizeof(*cl));
	uint64_t t0;
	ert_status st;

	if (!be || !cl) {
		free(be);
		free(cl);
		ert_err_set(err, "failed to create opencl backend: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	be->ops = &ocl_ops;
	be->type = ERT_BACKEND_OPENCL;
	be->ctx = cl;
	cl->precision = cfg ? cfg->precision : ERT_LEVEL_NORMAL;
	cl->tune = cfg ? cfg->tune : ERT_TUNE_FAST;
	cl->device_times = cfg && cfg->device_times;
	st = ert_ocl_device_open(cl, gpu_only, err);
	if (st != ERT_OK) {
		ocl_destroy(be);
		return st;
	}
	t0 = ert_clock_ns();
	ert_ocl_cache_open(cl, cfg ? cfg->cache_path : NULL);
	cl->times.cache_ns += ert_clock_ns() - t0;
	st = setup_fp16(cl, err);
	if (st != ERT_OK) {
		ocl_destroy(be);
		return st;
	}
	*out = be;
	return ERT_OK;
}

ert_status ert_opencl_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err)
{
	return create(cfg, false, out, err);
}

/* For AUTO: only a GPU counts (a CPU device such as PoCL's is no better than the CPU backend). */
ert_status ert_opencl_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err)
{
	return create(cfg, true, out, err);
}

const char *ert_opencl_backend_device(const struct ert_backend *be)
{
	return be && be->ops == &ocl_ops ? ((const struct ert_ocl *)be->ctx)->device_name : NULL;
}

const struct ert_ocl_cache *ert_opencl_backend_cache(const struct ert_backend *be)
{
	return be && be->ops == &ocl_ops ? &((const struct ert_ocl *)be->ctx)->cache : NULL;
}
