/* SPDX-License-Identifier: MIT */
/*
 * A step's launches: pipelines made, descriptor sets written and the command
 * buffer recorded once, at plan time (prepare); a run only queues it.
 */
#include <stdlib.h>
#include <string.h>

#include "vulkan/vk-impl.h"

/*
 * Tensors are addressed in elements as stored (float16 for a float32 tensor
 * in float16 storage): offsets from the planner are multiples of 64 bytes.
 */
static bool to_ref(const struct ert_tensor_loc *loc, const struct ert_value *v,
		   struct ert_vk_ref *out)
{
	size_t es = loc->storage ? ert_dtype_size(loc->storage) : ert_dtype_size(v->dtype);

	if (!loc->buf || !es || loc->offset % es || loc->offset / es > INT32_MAX)
		return false;
	out->buf = ((const struct ert_vk_arena *)loc->buf->handle)->buf;
	out->off = (int32_t)(loc->offset / es);
	out->es = (uint32_t)es;
	return true;
}

ert_status ert_vk_in(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st, uint32_t k,
		     struct ert_vk_ref *out, struct ert_err *err)
{
	const struct ert_value *v = k < x->n_in ? x->in[k] : NULL;
	ert_status s;

	if (!v) {
		ert_err_set(err, "vulkan: %s '%s': no input %u", ert_op_name(x->node->op),
			    x->node->name, k);
		return ERT_STATUS_BACKEND;
	}
	if (x->in_loc && to_ref(&x->in_loc[k], v, out))
		return ERT_OK;
	if (x->in_const[k] && v->data) {
		if (st->n_consts == ERT_VK_MAX_CONSTS) {
			ert_err_set(err, "vulkan: %s '%s': more than %d constant inputs",
				    ert_op_name(x->node->op), x->node->name, ERT_VK_MAX_CONSTS);
			return ERT_STATUS_BACKEND;
		}
		bool f16 = st->f16 && v->dtype == ERT_DTYPE_FLOAT32;

		s = ert_vk_const_get(vk, v->data, v->nbytes, f16, &st->consts[st->n_consts], x->node,
				     err);
		if (s != ERT_OK)
			return s;
		out->buf = ert_vk_const_buffer(st->consts[st->n_consts++]);
		out->off = 0;
		out->es = f16 ? 2 : (uint32_t)ert_dtype_size(v->dtype);
		return ERT_OK;
	}
	ert_err_set(err, "vulkan: %s '%s': input %u is not in device memory",
		    ert_op_name(x->node->op),
		    x->node->name, k);
	return ERT_STATUS_BACKEND;
}

ert_status ert_vk_out(const struct ert_exec *x, uint32_t k, struct ert_vk_ref *out,
		      struct ert_err *err)
{
	if (k < x->n_out && x->out[k] && x->out_loc && to_ref(&x->out_loc[k], x->out[k], out))
		return ERT_OK;
	ert_err_set(err, "vulkan: %s '%s': output %u is not in device memory",
		    ert_op_name(x->node->op), x->node->name, k);
	return ERT_STATUS_BACKEND;
}

static struct ert_vk_launch *launch_new(struct ert_vk_step *st, struct ert_err *err)
{
	struct ert_vk_launch *l;

	if (st->n_launch == ERT_VK_MAX_LAUNCHES) {
		ert_err_set(err, "vulkan: %s '%s': more than %d launches needed",
			    ert_op_name(st->node->op), st->node->name, ERT_VK_MAX_LAUNCHES);
		return NULL;
	}
	l = &st->launch[st->n_launch++];
	memset(l, 0, sizeof(*l));
	return l;
}

int ert_vk_groups_over(const struct ert_vk *vk, const uint32_t groups[3])
{
	for (int d = 0; d < 3; d++)
		if (groups[d] > vk->props.limits.maxComputeWorkGroupCount[d])
			return d;
	return -1;
}

ert_status ert_vk_launch_add(struct ert_vk *vk, struct ert_vk_step *st, const char *shader,
			     const uint32_t *spec, uint32_t n_spec, const uint32_t groups[3],
			     struct ert_err *err)
{
	struct ert_vk_launch *l;
	VkPipeline pipe = VK_NULL_HANDLE;
	int over = ert_vk_groups_over(vk, groups);
	ert_status s;

	/* supports_op refused what it could foresee (ert_vk_tunable_fits) */
	if (over >= 0) {
		ert_err_set(err, "vulkan: %s '%s': %u work-groups along %c is over the device's %u",
			    ert_op_name(st->node->op), st->node->name, groups[over], "xyz"[over],
			    vk->props.limits.maxComputeWorkGroupCount[over]);
		return ERT_STATUS_UNSUPPORTED;
	}
	s = shader ? ert_vk_pipeline_get(vk, shader, spec, n_spec, &pipe, st->node, err) : ERT_OK;
	if (s != ERT_OK)
		return s;
	if (shader && strstr(shader, ".f16a"))
		st->f16a = true;
	l = launch_new(st, err);
	if (!l)
		return ERT_STATUS_BACKEND;
	l->pipe = pipe;
	for (int d = 0; d < 3; d++)
		l->groups[d] = groups[d] ? groups[d] : 1;
	return ERT_OK;
}

static struct ert_vk_launch *last(struct ert_vk_step *st)
{
	return st->n_launch ? &st->launch[st->n_launch - 1] : NULL;
}

void ert_vk_arg_buf(struct ert_vk_step *st, VkBuffer b)
{
	struct ert_vk_launch *l = last(st);

	if (!l || l->n_bind == ERT_VK_MAX_BINDINGS) {
		st->overflow = true;
		return;
	}
	l->bind[l->n_bind++] = b;
}

void ert_vk_arg_int(struct ert_vk_step *st, int32_t v)
{
	struct ert_vk_launch *l = last(st);

	if (!l || l->n_push == ERT_VK_PUSH_WORDS) {
		st->overflow = true;
		return;
	}
	memcpy(&l->push[l->n_push++], &v, 4);
}

void ert_vk_arg_float(struct ert_vk_step *st, float v)
{
	int32_t w;

	memcpy(&w, &v, 4);
	ert_vk_arg_int(st, w);
}

void ert_vk_arg_ref(struct ert_vk_step *st, const struct ert_vk_ref *r)
{
	struct ert_vk_launch *l = last(st);

	ert_vk_arg_buf(st, r->buf);
	if (l && l->n_push < ERT_VK_PUSH_WORDS)
		l->off_mask |= 1u << l->n_push;
	ert_vk_arg_int(st, r->off);
}

ert_status ert_vk_copy_add(struct ert_vk_step *st, const struct ert_vk_ref *src,
			   const struct ert_vk_ref *dst, size_t elsize, size_t bytes,
			   struct ert_err *err)
{
	struct ert_vk_launch *l;

	/* planned in place: nothing to do */
	if (!bytes || (src->buf == dst->buf && src->off == dst->off))
		return ERT_OK;
	l = launch_new(st, err);
	if (!l)
		return ERT_STATUS_BACKEND;
	l->is_copy = true;
	l->bind[0] = src->buf;
	l->bind[1] = dst->buf;
	l->region.srcOffset = (VkDeviceSize)src->off * elsize;
	l->region.dstOffset = (VkDeviceSize)dst->off * elsize;
	l->region.size = bytes;
	return ERT_OK;
}

ert_status ert_vk_table(struct ert_vk *vk, struct ert_vk_step *st, const int32_t *data,
			size_t count, VkBuffer *out, struct ert_err *err)
{
	uint32_t t = st->n_tables;
	uint64_t t0;
	ert_status s;

	if (t == sizeof(st->tables) / sizeof(st->tables[0])) {
		ert_err_set(err, "vulkan: %s '%s': more than 2 tables needed",
			    ert_op_name(st->node->op), st->node->name);
		return ERT_STATUS_INTERNAL;
	}
	t0 = ert_clock_ns();
	s = ert_vk_buffer_upload(vk, data, count * sizeof(*data), &st->tables[t],
				 &st->table_mem[t], st->node, err);
	vk->times.upload_ns += ert_clock_ns() - t0;
	if (s != ERT_OK)
		return s;
	st->table_bytes[t] = count * sizeof(*data);
	st->n_tables++;
	vk->const_bytes += st->table_bytes[t];
	vk->times.upload_bytes += st->table_bytes[t];
	*out = st->tables[t];
	return ERT_OK;
}

static ert_status write_sets(struct ert_vk *vk, struct ert_vk_step *st, VkDescriptorSet *sets,
			     uint32_t n_sets, struct ert_err *err)
{
	VkDescriptorPoolSize size = {
		.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.descriptorCount = n_sets * ERT_VK_MAX_BINDINGS,
	};
	VkDescriptorPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = n_sets,
		.poolSizeCount = 1,
		.pPoolSizes = &size,
	};
	VkDescriptorSetLayout layouts[ERT_VK_MAX_LAUNCHES];
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorSetCount = n_sets,
		.pSetLayouts = layouts,
	};
	VkResult rc = vkCreateDescriptorPool(vk->dev, &pi, NULL, &st->desc_pool);
	uint32_t s = 0;

	if (rc != VK_SUCCESS) {
		st->desc_pool = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateDescriptorPool", st->node);
	}
	for (uint32_t i = 0; i < n_sets; i++)
		layouts[i] = vk->set_layout;
	ai.descriptorPool = st->desc_pool;
	rc = vkAllocateDescriptorSets(vk->dev, &ai, sets);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkAllocateDescriptorSets", st->node);
	for (uint32_t i = 0; i < st->n_launch; i++) {
		const struct ert_vk_launch *l = &st->launch[i];
		VkDescriptorBufferInfo bi[ERT_VK_MAX_BINDINGS];
		VkWriteDescriptorSet w[ERT_VK_MAX_BINDINGS];

		if (l->is_copy)
			continue;
		/* every binding written: those the shader does not declare get its first buffer */
		for (uint32_t b = 0; b < ERT_VK_MAX_BINDINGS; b++) {
			bi[b] = (VkDescriptorBufferInfo){
				.buffer = b < l->n_bind ? l->bind[b] : l->bind[0],
				.range = VK_WHOLE_SIZE,
			};
			w[b] = (VkWriteDescriptorSet){
				.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				.dstSet = sets[s],
				.dstBinding = b,
				.descriptorCount = 1,
				.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
				.pBufferInfo = &bi[b],
			};
		}
		vkUpdateDescriptorSets(vk->dev, ERT_VK_MAX_BINDINGS, w, 0, NULL);
		s++;
	}
	return ERT_OK;
}

void ert_vk_cmd_barrier(VkCommandBuffer cmd)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
				 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
	};
	const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
					    VK_PIPELINE_STAGE_TRANSFER_BIT;

	vkCmdPipelineBarrier(cmd, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

void ert_vk_cmd_launch(struct ert_vk *vk, VkCommandBuffer cmd, const struct ert_vk_launch *l,
		       VkDescriptorSet set)
{
	if (l->is_copy) {
		vkCmdCopyBuffer(cmd, l->bind[0], l->bind[1], 1, &l->region);
		return;
	}
	vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, l->pipe);
	vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, vk->pipe_layout, 0, 1, &set, 0,
				NULL);
	if (l->n_push)
		vkCmdPushConstants(cmd, vk->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, l->n_push * 4,
				   l->push);
	vkCmdDispatch(cmd, l->groups[0], l->groups[1], l->groups[2]);
}

ert_status ert_vk_step_record(struct ert_vk *vk, struct ert_vk_step *st, struct ert_err *err)
{
	VkDescriptorSet sets[ERT_VK_MAX_LAUNCHES];
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = vk->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
	uint32_t n_sets = 0, s = 0;
	ert_status es;
	VkResult rc;

	if (st->overflow) {
		ert_err_set(err, "vulkan: %s '%s': a launch has more than %d buffers or %d push words",
			    ert_op_name(st->node->op), st->node->name, ERT_VK_MAX_BINDINGS,
			    ERT_VK_PUSH_WORDS);
		return ERT_STATUS_INTERNAL;
	}
	if (!st->n_launch)
		return ERT_OK;
	for (uint32_t i = 0; i < st->n_launch; i++)
		n_sets += !st->launch[i].is_copy;
	if (n_sets) {
		es = write_sets(vk, st, sets, n_sets, err);
		if (es != ERT_OK)
			return es;
	}
	/* the tuner runs each tunable launch on the step's buffers, then sets its pipeline */
	for (uint32_t i = 0; i < st->n_launch; i++) {
		struct ert_vk_launch *l = &st->launch[i];

		if (l->tunable) {
			es = ert_vk_tune_launch(vk, st, l, sets[s], err);
			free(l->tunable);
			l->tunable = NULL;
			if (es != ERT_OK)
				return es;
		}
		s += !l->is_copy;
	}
	s = 0;
	rc = vkAllocateCommandBuffers(vk->dev, &ai, &st->cmd);
	if (rc != VK_SUCCESS) {
		st->cmd = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkAllocateCommandBuffers", st->node);
	}
	rc = vkBeginCommandBuffer(st->cmd, &bi);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkBeginCommandBuffer", st->node);
	if (vk->device_times) {
		es = ert_vk_timer_new(vk, 2, &st->timer, err);
		/* a device without timestamps: its ops keep their host times */
		if (es != ERT_OK && es != ERT_STATUS_UNSUPPORTED)
			return es;
	}
	if (st->timer.pool) {
		/* reset each time the buffer runs; slot 0 once what ran before is done */
		ert_vk_timer_reset(st->cmd, &st->timer, 0, 2);
		ert_vk_timer_stamp(st->cmd, &st->timer, 0);
	}
	for (uint32_t i = 0; i < st->n_launch; i++) {
		const struct ert_vk_launch *l = &st->launch[i];

		/* what ran before (earlier steps, copies, the launch before) is written and visible */
		ert_vk_cmd_barrier(st->cmd);
		ert_vk_cmd_launch(vk, st->cmd, l, l->is_copy ? VK_NULL_HANDLE : sets[s++]);
	}
	if (st->timer.pool)
		ert_vk_timer_stamp(st->cmd, &st->timer, 1);
	rc = vkEndCommandBuffer(st->cmd);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkEndCommandBuffer", st->node);
	return ERT_OK;
}

ert_status ert_vk_queue_cmd(struct ert_vk *vk, VkCommandBuffer cmd, struct ert_err *err)
{
	VkCommandBuffer *p;

	if (vk->n_pending == vk->cap_pending) {
		uint32_t cap = vk->cap_pending ? 2 * vk->cap_pending : 64;

		p = realloc(vk->pending, cap * sizeof(*p));
		if (!p) {
			ert_err_set(err, "vulkan: out of memory queueing work");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		vk->pending = p;
		vk->cap_pending = cap;
	}
	vk->pending[vk->n_pending++] = cmd;
	return ERT_OK;
}

ert_status ert_vk_step_queue(struct ert_vk *vk, struct ert_vk_step *st, struct ert_err *err)
{
	ert_status s;

	if (!st->cmd)
		return ERT_OK;
	s = ert_vk_queue_cmd(vk, st->cmd, err);
	if (s != ERT_OK)
		ert_err_set(err, "vulkan: %s '%s': out of memory queueing its work",
			    ert_op_name(st->node->op), st->node->name);
	return s;
}

bool ert_vk_step_device_ns(struct ert_vk *vk, const struct ert_vk_step *st, uint64_t *ns_out)
{
	struct ert_err err;
	uint64_t ns[2];

	/* slots never written since the pool was made must not be read */
	if (!st->timer.pool || !st->queued)
		return false;
	if (ert_vk_timer_read(vk, &st->timer, 0, 2, ns, &err) != ERT_OK)
		return false;
	*ns_out = ns[1];
	return true;
}

void ert_vk_step_free(struct ert_vk *vk, struct ert_vk_step *st)
{
	/* a step that failed before the tuner ran */
	for (uint32_t i = 0; i < st->n_launch; i++)
		free(st->launch[i].tunable);
	ert_vk_timer_free(vk, &st->timer);
	if (st->cmd)
		vkFreeCommandBuffers(vk->dev, vk->cmd_pool, 1, &st->cmd);
	if (st->desc_pool)
		vkDestroyDescriptorPool(vk->dev, st->desc_pool, NULL);
	for (uint32_t i = 0; i < st->n_tables; i++) {
		ert_vk_buffer_del(vk, st->tables[i], st->table_mem[i]);
		vk->const_bytes -= st->table_bytes[i];
	}
	for (uint32_t i = 0; i < st->n_consts; i++)
		ert_vk_const_put(vk, st->consts[i]);
	memset(st, 0, sizeof(*st));
}
