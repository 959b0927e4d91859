/* SPDX-License-Identifier: MIT */
/*
 * The Vulkan backend: the ops table the planner sees. Its buffer type,
 * "vulkan", is device memory the host does not address: the session copies
 * the tensors that cross at its splits with buffer_write/buffer_read.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu-common/gpu-backend.h"
#include "vulkan/vk-impl.h"

static struct ert_vk *vk_of(struct ert_backend *be)
{
	return be->ctx;
}

/* What a constant's upload needs (make_const's argument). */
struct const_make {
	struct ert_vk *vk;
	const void *data;
	size_t size;
	bool f16;
	const struct ert_node *n;
};

/* The device copy of a constant (the entry's object in the device's table). */
static ert_status make_const(void *arg, void *obj, size_t *bytes, struct ert_err *err)
{
	const struct const_make *a = arg;
	struct ert_vk_const_obj *c = obj;
	void *half;
	size_t stored;
	const void *src = ert_gpu_const_stored(a->data, a->size, a->f16, &half, &stored);
	ert_status st;

	if (!src) {
		ert_err_set(err, "vulkan: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = ert_vk_buffer_upload(a->vk, src, stored, &c->buf, &c->mem, a->n, err);
	free(half);
	*bytes = stored;
	return st;
}

void ert_vk_const_free(void *dev, void *obj)
{
	const struct ert_vk_const_obj *c = obj;

	vkDestroyBuffer(*(VkDevice *)dev, c->buf, NULL);
	vkFreeMemory(*(VkDevice *)dev, c->mem, NULL);
}

/*
 * Shared by every step of the session asking for the same bytes, and by
 * every session of the process on the device (gpu-common/gpu-share.h: the
 * key, and why it is safe).
 */
ert_status ert_vk_const_get(struct ert_vk *vk, const void *data, size_t size, bool f16,
			    struct ert_gpu_hold **out, const struct ert_node *n,
			    struct ert_err *err)
{
	struct ert_gpu_const_key key = ert_gpu_const_key(data, size, f16);
	struct const_make arg = { vk, data, size, f16, n };
	enum ert_gpu_found found;
	ert_status st;
	uint64_t t0;

	if (size > vk->props.limits.maxStorageBufferRange) {
		ert_err_set(err, "vulkan: %s '%s': a constant of %zu bytes is over the device's largest storage buffer (%u bytes)",
			    ert_op_name(n->op), n->name, size, vk->props.limits.maxStorageBufferRange);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	t0 = ert_clock_ns();
	st = ert_gpu_hold_get(&vk->consts, vk->shared_consts, &key, sizeof(key), make_const, &arg,
			      out, &found, err);
	if (st != ERT_OK || found == ERT_GPU_HELD)
		return st;
	vk->times.upload_ns += ert_clock_ns() - t0;
	if (found == ERT_GPU_SHARED)
		vk->times.upload_shared_bytes += (*out)->e->bytes;
	else
		vk->times.upload_bytes += (*out)->e->bytes;
	return ERT_OK;
}

void ert_vk_const_put(struct ert_vk *vk, struct ert_gpu_hold *c)
{
	ert_gpu_hold_put(&vk->consts, vk->shared_consts, c);
}

VkBuffer ert_vk_const_buffer(const struct ert_gpu_hold *c)
{
	return ((const struct ert_vk_const_obj *)ert_gpu_hold_obj(c))->buf;
}

/* gpu-common's answer (the op's limits on any GPU API), then this device's own. */
static bool vk_supports_op(struct ert_backend *be, const struct ert_exec *x)
{
	const struct ert_vk_op *op = ert_vk_op_find(x->node->op);

	return op && ert_gpu_supports(x) && (!op->supports || op->supports(vk_of(be), x));
}

static const char *vk_buffer_type(struct ert_backend *be)
{
	return "vulkan";
}

static bool vk_buffer_host_visible(struct ert_backend *be)
{
	return false;
}

/* An arena: one buffer, all of it bound to every shader that reads or writes it. */
static ert_status vk_buffer_alloc(struct ert_backend *be, size_t size, struct ert_buffer *out,
				  struct ert_err *err)
{
	struct ert_vk *vk = vk_of(be);
	struct ert_vk_arena *a;
	ert_status st;

	if (size > vk->props.limits.maxStorageBufferRange) {
		ert_err_set(err, "vulkan: an arena of %zu bytes is over the largest storage buffer %s allows (%u bytes)",
			    size, vk->props.deviceName, vk->props.limits.maxStorageBufferRange);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		ert_err_set(err, "vulkan: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = ert_vk_buffer_new(vk, size ? size : 64, false, &a->buf, &a->mem, NULL, NULL, err);
	if (st == ERT_OK && vk->f16_storage)
		st = ert_vk_convert_set(vk, a, err);
	if (st != ERT_OK) {
		ert_vk_buffer_del(vk, a->buf, a->mem);
		free(a);
		return st;
	}
	out->host = NULL;
	out->size = size;
	out->handle = a;
	return ERT_OK;
}

/* Another backend's buffer, exported as a dma-buf: steps bind it like an arena. */
static ert_status vk_buffer_import_fd(struct ert_backend *be, int fd, size_t size,
				      struct ert_buffer *out, struct ert_err *err)
{
	struct ert_vk_arena *a = calloc(1, sizeof(*a));
	ert_status st;

	if (!a) {
		ert_err_set(err, "vulkan: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = ert_vk_import_fd(vk_of(be), fd, size, a, err);
	if (st != ERT_OK) {
		free(a);
		return st;
	}
	out->host = NULL;
	out->size = size;
	out->handle = a;
	return ERT_OK;
}

static void vk_buffer_free(struct ert_backend *be, struct ert_buffer *buf)
{
	struct ert_vk *vk = vk_of(be);
	struct ert_vk_arena *a = buf->handle;

	if (!a)
		return;
	/* nothing queued may still use it (a run that failed half-way) */
	if (vk->n_pending)
		ert_vk_queue_idle(vk);
	vk->n_pending = 0;
	vk->used_copy_cmds = 0;
	vk->copy_open = false;
	ert_vk_convert_set_del(vk, a);
	ert_vk_buffer_del(vk, a->buf, a->mem);
	free(a);
	buf->handle = NULL;
}

static ert_status vk_buffer_write(struct ert_backend *be, const struct ert_buffer *buf,
				  size_t offset, const void *src, size_t size, struct ert_err *err)
{
	struct ert_vk *vk = vk_of(be);
	ert_status st = ert_gpu_check_range(buf, offset, size, "write", "vulkan", err);

	if (st == ERT_OK)
		st = ert_vk_write(vk, ((struct ert_vk_arena *)buf->handle)->buf, offset, src, size, err);
	if (st == ERT_OK)
		vk->copied += size;
	return st;
}

static ert_status vk_buffer_read(struct ert_backend *be, const struct ert_buffer *buf,
				 size_t offset, void *dst, size_t size, struct ert_err *err)
{
	struct ert_vk *vk = vk_of(be);
	ert_status st = ert_gpu_check_range(buf, offset, size, "read", "vulkan", err);

	if (st == ERT_OK)
		st = ert_vk_read(vk, ((struct ert_vk_arena *)buf->handle)->buf, offset, dst, size, err);
	if (st == ERT_OK)
		vk->copied += size;
	return st;
}

static void vk_release(struct ert_backend *be, struct ert_exec *x)
{
	struct ert_vk_step *st = x->state;

	if (st) {
		ert_vk_step_free(vk_of(be), st);
		free(st);
	}
	x->state = NULL;
}

static ert_status vk_prepare(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_vk_op *op = ert_vk_op_find(x->node->op);
	struct ert_vk *vk = vk_of(be);
	struct ert_vk_step *st;
	ert_status s;

	if (!op) {
		ert_err_set(err, "vulkan: %s '%s': no shader for this op", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		ert_err_set(err, "vulkan: %s '%s': out of memory while preparing",
			    ert_op_name(x->node->op), x->node->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st->node = x->node;
	st->f16 = x->fp16;
	x->state = st;
	x->kernel = op->kernel_name;
	if (ert_gpu_outputs_empty(x))
		goto named;
	s = op->prepare(vk, x, st, err);
	if (s == ERT_OK)
		s = ert_vk_step_record(vk, st, err);
	if (s == ERT_OK)
		s = ert_vk_validation_check(vk, err);
	if (s != ERT_OK) {
		vk_release(be, x);
		return s;
	}
named:
	/* the variant of the shaders the step's launches use (float32, .f16 or .f16a) */
	x->kernel = ert_gpu_kernel_name(x->kernel, !st->f16 ? ERT_GPU_VARIANT_F32 :
						   st->f16a ? ERT_GPU_VARIANT_F16A :
						   ERT_GPU_VARIANT_F16);
	return ERT_OK;
}

static ert_status vk_compute(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	struct ert_vk_step *st = x->state;
	ert_status s;

	if (!st) {
		ert_err_set(err, "vulkan: %s '%s': not prepared", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_INTERNAL;
	}
	s = ert_vk_step_queue(vk_of(be), st, err);
	if (s == ERT_OK)
		st->queued = true;
	return s;
}

static bool vk_device_time(struct ert_backend *be, const struct ert_exec *x, uint64_t *ns_out)
{
	return x->state && ert_vk_step_device_ns(vk_of(be), x->state, ns_out);
}

static ert_status vk_synchronize(struct ert_backend *be, struct ert_err *err)
{
	return ert_vk_flush(vk_of(be), err);
}

static bool vk_fp16_storage(struct ert_backend *be)
{
	return vk_of(be)->f16_storage;
}

static ert_status vk_buffer_convert(struct ert_backend *be, const struct ert_buffer *buf,
				    size_t src_offset, ert_dtype from, size_t dst_offset,
				    ert_dtype to, size_t count, struct ert_err *err)
{
	struct ert_vk *vk = vk_of(be);
	bool widen = from == ERT_DTYPE_FLOAT16;
	ert_status st;

	if (!vk->convert || from == to ||
	    (from != ERT_DTYPE_FLOAT16 && from != ERT_DTYPE_FLOAT32) ||
	    (to != ERT_DTYPE_FLOAT16 && to != ERT_DTYPE_FLOAT32)) {
		ert_err_set(err, "vulkan: no conversion from %s to %s storage", ert_dtype_name(from),
			    ert_dtype_name(to));
		return ERT_STATUS_INTERNAL;
	}
	st = ert_gpu_check_range(buf, src_offset, count * ert_dtype_size(from), "conversion",
				 "vulkan", err);
	if (st == ERT_OK)
		st = ert_gpu_check_range(buf, dst_offset, count * ert_dtype_size(to), "conversion",
					 "vulkan", err);
	if (st != ERT_OK)
		return st;
	return ert_vk_convert(vk, buf->handle, src_offset / ert_dtype_size(from),
			      dst_offset / ert_dtype_size(to), count, widen, err);
}

static size_t vk_resident_bytes(struct ert_backend *be)
{
	const struct ert_vk *vk = vk_of(be);

	return vk->const_bytes + vk->consts.bytes;
}

static uint64_t vk_copied_bytes(struct ert_backend *be)
{
	return vk_of(be)->copied;
}

static void vk_plan_prepared(struct ert_backend *be)
{
	struct ert_vk *vk = vk_of(be);
	uint64_t t0 = ert_clock_ns();

	ert_vk_cache_flush(vk);
	vk->times.cache_ns += ert_clock_ns() - t0;
}

/* Pipelines are the programs of this backend: built through the pipeline cache, never loaded. */
static void vk_prep_times(struct ert_backend *be, struct ert_backend_times *out)
{
	const struct ert_vk *vk = vk_of(be);

	*out = vk->times;
	out->launches_timed = vk->tune_timed;
	out->launches_reused = vk->tune_reused;
}

static void vk_destroy(struct ert_backend *be)
{
	struct ert_vk *vk;

	if (!be)
		return;
	vk = vk_of(be);
	if (vk) {
		if (vk->dev) {
			/* the device stops using everything before anything is freed */
			ert_vk_queue_idle(vk);
			/* sessions release their plans first: this finds nothing unless a step leaked */
			ert_gpu_holds_drop(&vk->consts, vk->shared_consts);
			ert_vk_pipelines_release(vk);
			ert_vk_memory_close(vk);
			/* what a plan that failed half-way built is kept too */
			ert_vk_cache_flush(vk);
		}
		ert_vk_tune_close(vk);
		ert_vk_device_close(vk);
		ert_vk_cache_close(vk);
		free(vk);
	}
	free(be);
}

static const struct ert_backend_ops vk_ops = {
	.abi_version = ERT_BACKEND_ABI_VERSION,
	.name = "vulkan",
	.supports_op = vk_supports_op,
	.buffer_type = vk_buffer_type,
	.buffer_alloc = vk_buffer_alloc,
	.buffer_free = vk_buffer_free,
	.buffer_import_fd = vk_buffer_import_fd,
	.buffer_host_visible = vk_buffer_host_visible,
	.buffer_write = vk_buffer_write,
	.buffer_read = vk_buffer_read,
	.prepare = vk_prepare,
	.compute = vk_compute,
	.release = vk_release,
	.synchronize = vk_synchronize,
	.destroy = vk_destroy,
	.resident_bytes = vk_resident_bytes,
	.copied_bytes = vk_copied_bytes,
	.plan_prepared = vk_plan_prepared,
	.prep_times = vk_prep_times,
	.device_time = vk_device_time,
	.fp16_storage = vk_fp16_storage,
	.buffer_convert = vk_buffer_convert,
};

static ert_status create(const ert_config *cfg, bool gpu_only, struct ert_backend **out,
			 struct ert_err *err)
{
	struct ert_backend *be = calloc(1, sizeof(*be));
	struct ert_vk *vk = calloc(1, sizeof(*vk));
	uint64_t t0;
	ert_status st;

	if (!be || !vk) {
		free(be);
		free(vk);
		ert_err_set(err, "failed to create vulkan backend: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	be->ops = &vk_ops;
	be->type = ERT_BACKEND_VULKAN;
	be->ctx = vk;
	vk->precision = cfg ? cfg->precision : ERT_LEVEL_NORMAL;
	vk->tune = cfg ? cfg->tune : ERT_TUNE_FAST;
	t0 = ert_clock_ns();
	vk->device_times = cfg && cfg->device_times;
	st = ert_vk_device_open(vk, gpu_only, err);
	vk->times.device_ns = ert_clock_ns() - t0;
	t0 = ert_clock_ns();
	if (st == ERT_OK)
		st = ert_vk_cache_open(vk, cfg ? cfg->cache_path : NULL, err);
	vk->times.cache_ns += ert_clock_ns() - t0;
	if (st == ERT_OK && vk->f16_storage) {
		/* buffer_convert()'s pipeline, made now, while the session is being created */
		uint32_t spec[1] = { ERT_GPU_WG_1D };

		st = ert_vk_pipeline_get(vk, "convert", spec, 1, &vk->convert, NULL, err);
	}
	if (st != ERT_OK) {
		vk_destroy(be);
		return st;
	}
	*out = be;
	return ERT_OK;
}

ert_status ert_vulkan_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err)
{
	return create(cfg, false, out, err);
}

/* For AUTO: only a GPU counts (a CPU implementation such as lavapipe is no better than the CPU backend). */
ert_status ert_vulkan_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err)
{
	return create(cfg, true, out, err);
}

const char *ert_vulkan_backend_device(const struct ert_backend *be)
{
	return be && be->ops == &vk_ops ? ((const struct ert_vk *)be->ctx)->props.deviceName : NULL;
}

const char *ert_vulkan_backend_paths(const struct ert_backend *be)
{
	return be && be->ops == &vk_ops ? ((const struct ert_vk *)be->ctx)->paths : NULL;
}
