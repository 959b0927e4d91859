/* SPDX-License-Identifier: MIT */
/*
 * Device memory: buffers, the staging buffer of the copies at splits, and the
 * one submit and fence wait per run or split.
 */
#include <stdlib.h>
#include <string.h>

#include "ert-probes.h"
#include "vulkan/ops/vk-ops.h"

#define STAGING_MIN (1u << 20)

int ert_vk_memory_type(const struct ert_vk *vk, uint32_t bits, VkMemoryPropertyFlags want,
			      VkMemoryPropertyFlags prefer)
{
	int fallback = -1;

	for (uint32_t i = 0; i < vk->mem_props.memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = vk->mem_props.memoryTypes[i].propertyFlags;

		if (!(bits & (1u << i)) || (f & want) != want)
			continue;
		if ((f & prefer) == prefer)
			return (int)i;
		if (fallback < 0)
			fallback = (int)i;
	}
	return fallback;
}

ert_status ert_vk_buffer_new(struct ert_vk *vk, VkDeviceSize size, bool host, VkBuffer *buf,
			     VkDeviceMemory *mem, void **map, const struct ert_node *n,
			     struct ert_err *err)
{
	VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size ? size : 64,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO };
	VkMemoryRequirements req;
	int type;
	VkResult rc;

	*buf = VK_NULL_HANDLE;
	*mem = VK_NULL_HANDLE;
	rc = vkCreateBuffer(vk->dev, &bi, NULL, buf);
	if (rc != VK_SUCCESS) {
		*buf = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateBuffer", n);
	}
	vkGetBufferMemoryRequirements(vk->dev, *buf, &req);
	type = host ? ert_vk_memory_type(vk, req.memoryTypeBits,
				  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
				  VK_MEMORY_PROPERTY_HOST_CACHED_BIT) :
		      ert_vk_memory_type(vk, req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	if (type < 0) {
		ert_vk_buffer_del(vk, *buf, VK_NULL_HANDLE);
		*buf = VK_NULL_HANDLE;
		ert_err_set(err, "vulkan: %s has no %s memory type for a buffer", vk->props.deviceName,
			    host ? "host-visible coherent" : "device");
		return ERT_STATUS_UNSUPPORTED;
	}
	ai.allocationSize = req.size;
	ai.memoryTypeIndex = (uint32_t)type;
	rc = vkAllocateMemory(vk->dev, &ai, NULL, mem);
	if (rc == VK_SUCCESS)
		rc = vkBindBufferMemory(vk->dev, *buf, *mem, 0);
	if (rc == VK_SUCCESS && host)
		rc = vkMapMemory(vk->dev, *mem, 0, VK_WHOLE_SIZE, 0, map);
	if (rc != VK_SUCCESS) {
		ert_vk_buffer_del(vk, *buf, *mem);
		*buf = VK_NULL_HANDLE;
		*mem = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, host ? "allocating host-visible memory (vkAllocateMemory)" :
				   "allocating device memory (vkAllocateMemory)", n);
	}
	return ERT_OK;
}

void ert_vk_buffer_del(struct ert_vk *vk, VkBuffer buf, VkDeviceMemory mem)
{
	if (buf)
		vkDestroyBuffer(vk->dev, buf, NULL);
	/* freeing mapped memory unmaps it */
	if (mem)
		vkFreeMemory(vk->dev, mem, NULL);
}

static ert_status pending_add(struct ert_vk *vk, VkCommandBuffer cb, struct ert_err *err)
{
	if (vk->n_pending == vk->cap_pending) {
		uint32_t cap = vk->cap_pending ? 2 * vk->cap_pending : 64;
		VkCommandBuffer *p = realloc(vk->pending, cap * sizeof(*p));

		if (!p) {
			ert_err_set(err, "vulkan: out of memory queueing work");
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		vk->pending = p;
		vk->cap_pending = cap;
	}
	vk->pending[vk->n_pending++] = cb;
	return ERT_OK;
}

/* Everything earlier on the queue (steps, copies) is done and visible to what follows. */
static void full_barrier(VkCommandBuffer cb, VkAccessFlags dst_access, VkPipelineStageFlags dst)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = dst_access,
	};

	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
			     dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* The copy command buffer to record into: the open one if it is still last in pending. */
static ert_status copy_cmd(struct ert_vk *vk, VkCommandBuffer *out, struct ert_err *err)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VkCommandBuffer cb;
	ert_status st;
	VkResult rc;

	if (vk->copy_open && vk->n_pending &&
	    vk->pending[vk->n_pending - 1] == vk->copy_cmds[vk->used_copy_cmds - 1]) {
		*out = vk->copy_cmds[vk->used_copy_cmds - 1];
		return ERT_OK;
	}
	if (vk->copy_open) {
		rc = vkEndCommandBuffer(vk->copy_cmds[vk->used_copy_cmds - 1]);
		vk->copy_open = false;
		if (rc != VK_SUCCESS)
			return ert_vk_fail(err, rc, "vkEndCommandBuffer (copies)", NULL);
	}
	if (vk->used_copy_cmds == sizeof(vk->copy_cmds) / sizeof(vk->copy_cmds[0])) {
		st = ert_vk_flush(vk, err);
		if (st != ERT_OK)
			return st;
	}
	if (vk->used_copy_cmds == vk->n_copy_cmds) {
		VkCommandBufferAllocateInfo ai = {
			.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
			.commandPool = vk->cmd_pool,
			.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
			.commandBufferCount = 1,
		};

		rc = vkAllocateCommandBuffers(vk->dev, &ai, &vk->copy_cmds[vk->n_copy_cmds]);
		if (rc != VK_SUCCESS)
			return ert_vk_fail(err, rc, "vkAllocateCommandBuffers (copies)", NULL);
		vk->n_copy_cmds++;
	}
	cb = vk->copy_cmds[vk->used_copy_cmds];
	rc = vkBeginCommandBuffer(cb, &bi);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkBeginCommandBuffer (copies)", NULL);
	full_barrier(cb, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		     VK_PIPELINE_STAGE_TRANSFER_BIT);
	st = pending_add(vk, cb, err);
	if (st != ERT_OK) {
		vkEndCommandBuffer(cb);
		return st;
	}
	vk->used_copy_cmds++;
	vk->copy_open = true;
	*out = cb;
	return ERT_OK;
}

ert_status ert_vk_convert_set(struct ert_vk *vk, struct ert_vk_arena *a, struct ert_err *err)
{
	VkDescriptorPoolSize size = {
		.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.descriptorCount = ERT_VK_MAX_BINDINGS,
	};
	VkDescriptorPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = 1,
		.poolSizeCount = 1,
		.pPoolSizes = &size,
	};
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorSetCount = 1,
		.pSetLayouts = &vk->set_layout,
	};
	VkDescriptorBufferInfo bi = { .buffer = a->buf, .range = VK_WHOLE_SIZE };
	VkWriteDescriptorSet w[ERT_VK_MAX_BINDINGS];
	VkResult rc = vkCreateDescriptorPool(vk->dev, &pi, NULL, &a->convert_pool);

	if (rc != VK_SUCCESS) {
		a->convert_pool = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateDescriptorPool (conversions)", NULL);
	}
	ai.descriptorPool = a->convert_pool;
	rc = vkAllocateDescriptorSets(vk->dev, &ai, &a->convert_set);
	if (rc != VK_SUCCESS) {
		ert_vk_convert_set_del(vk, a);
		return ert_vk_fail(err, rc, "vkAllocateDescriptorSets (conversions)", NULL);
	}
	/* every binding: convert.comp's two views of the arena, and the unused ones */
	for (uint32_t b = 0; b < ERT_VK_MAX_BINDINGS; b++)
		w[b] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = a->convert_set,
			.dstBinding = b,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &bi,
		};
	vkUpdateDescriptorSets(vk->dev, ERT_VK_MAX_BINDINGS, w, 0, NULL);
	return ERT_OK;
}

void ert_vk_convert_set_del(struct ert_vk *vk, struct ert_vk_arena *a)
{
	/* the set goes with its pool */
	if (a->convert_pool)
		vkDestroyDescriptorPool(vk->dev, a->convert_pool, NULL);
	a->convert_pool = VK_NULL_HANDLE;
	a->convert_set = VK_NULL_HANDLE;
}

ert_status ert_vk_convert(struct ert_vk *vk, const struct ert_vk_arena *a, size_t so, size_t dof,
			  size_t count, bool widen, struct ert_err *err)
{
	const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
					    VK_PIPELINE_STAGE_TRANSFER_BIT;
	VkMemoryBarrier after = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
				 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
	};
	int32_t push[4] = { (int32_t)so, (int32_t)dof, (int32_t)count, widen };
	uint32_t groups[3];
	VkCommandBuffer cb;
	ert_status st;

	if (!count)
		return ERT_OK;
	if (!a->convert_set || so > INT32_MAX || dof > INT32_MAX || count > INT32_MAX) {
		ert_err_set(err, "vulkan: a conversion of %zu elements at %zu to %zu cannot be launched",
			    count, so, dof);
		return ERT_STATUS_INTERNAL;
	}
	st = copy_cmd(vk, &cb, err);
	if (st != ERT_OK)
		return st;
	/* the steps and copies before it are written and visible to the shader */
	full_barrier(cb, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
		     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, vk->convert);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, vk->pipe_layout, 0, 1,
				&a->convert_set, 0, NULL);
	vkCmdPushConstants(cb, vk->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), push);
	vk_grid((count + ERT_GPU_WG_1D - 1) / ERT_GPU_WG_1D, groups);
	vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
	/* and its writes to the copies recorded after it in this command buffer */
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, stages, 0, 1, &after, 0,
			     NULL, 0, NULL);
	return ERT_OK;
}

ert_status ert_vk_flush(struct ert_vk *vk, struct ert_err *err)
{
	VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO };
	VkResult rc;

	if (vk->copy_open) {
		VkCommandBuffer cb = vk->copy_cmds[vk->used_copy_cmds - 1];
		VkMemoryBarrier mb = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_HOST_READ_BIT,
		};

		/* what was copied into the staging buffer is visible to the host after the wait */
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
				     1, &mb, 0, NULL, 0, NULL);
		rc = vkEndCommandBuffer(cb);
		vk->copy_open = false;
		if (rc != VK_SUCCESS) {
			vk->n_pending = 0;
			vk->used_copy_cmds = 0;
			return ert_vk_fail(err, rc, "vkEndCommandBuffer (copies)", NULL);
		}
	}
	if (!vk->n_pending)
		return ert_vk_validation_check(vk, err);
	si.commandBufferCount = vk->n_pending;
	si.pCommandBuffers = vk->pending;
	ert_probe_gpu_submit(vk->n_pending - vk->used_copy_cmds, vk->used_copy_cmds);
	rc = ert_vk_queue_submit(vk, &si, vk->fence);
	vk->n_pending = 0;
	if (rc != VK_SUCCESS) {
		vk->used_copy_cmds = 0;
		vk->staging_used = 0;
		return ert_vk_fail(err, rc, "vkQueueSubmit", NULL);
	}
	ert_probe_gpu_wait_start();
	rc = vkWaitForFences(vk->dev, 1, &vk->fence, VK_TRUE, UINT64_MAX);
	ert_probe_gpu_wait_end(rc);
	if (rc == VK_SUCCESS)
		rc = vkResetFences(vk->dev, 1, &vk->fence);
	vk->used_copy_cmds = 0;
	vk->staging_used = 0;
	/* a device that is lost or reset fails here, after the work was queued */
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "waiting for the device (vkWaitForFences)", NULL);
	return ert_vk_validation_check(vk, err);
}

/* Room for @size bytes in the staging buffer; waits for queued copies, or grows it, when full. */
static ert_status staging_room(struct ert_vk *vk, size_t size, size_t *off, struct ert_err *err)
{
	size_t need = (size + 63) & ~(size_t)63;
	ert_status st;

	if (vk->staging && need <= vk->staging_size - vk->staging_used) {
		*off = vk->staging_used;
		vk->staging_used += need;
		return ERT_OK;
	}
	st = ert_vk_flush(vk, err);
	if (st != ERT_OK)
		return st;
	if (need > vk->staging_size) {
		size_t cap = vk->staging_size * 2 > need ? vk->staging_size * 2 : need;

		if (cap < STAGING_MIN)
			cap = STAGING_MIN;
		ert_vk_buffer_del(vk, vk->staging, vk->staging_mem);
		vk->staging = VK_NULL_HANDLE;
		vk->staging_mem = VK_NULL_HANDLE;
		vk->staging_size = 0;
		st = ert_vk_buffer_new(vk, cap, true, &vk->staging, &vk->staging_mem,
				       &vk->staging_map, NULL, err);
		if (st != ERT_OK)
			return st;
		vk->staging_size = cap;
	}
	*off = 0;
	vk->staging_used = need;
	return ERT_OK;
}

ert_status ert_vk_write(struct ert_vk *vk, VkBuffer dst, size_t offset, const void *src,
			size_t size, struct ert_err *err)
{
	VkBufferCopy region = { .dstOffset = offset, .size = size };
	VkCommandBuffer cb;
	size_t off;
	ert_status st;

	if (!size)
		return ERT_OK;
	st = staging_room(vk, size, &off, err);
	if (st == ERT_OK)
		st = copy_cmd(vk, &cb, err);
	if (st != ERT_OK)
		return st;
	memcpy((char *)vk->staging_map + off, src, size);
	region.srcOffset = off;
	vkCmdCopyBuffer(cb, vk->staging, dst, 1, &region);
	return ERT_OK;
}

ert_status ert_vk_read(struct ert_vk *vk, VkBuffer src, size_t offset, void *dst, size_t size,
		       struct ert_err *err)
{
	VkBufferCopy region = { .srcOffset = offset, .size = size };
	VkCommandBuffer cb;
	size_t off;
	ert_status st;

	if (!size)
		return ERT_OK;
	st = staging_room(vk, size, &off, err);
	if (st == ERT_OK)
		st = copy_cmd(vk, &cb, err);
	if (st != ERT_OK)
		return st;
	region.dstOffset = off;
	vkCmdCopyBuffer(cb, src, vk->staging, 1, &region);
	st = ert_vk_flush(vk, err);
	if (st == ERT_OK)
		memcpy(dst, (const char *)vk->staging_map + off, size);
	return st;
}

ert_status ert_vk_buffer_upload(struct ert_vk *vk, const void *data, size_t size, VkBuffer *buf,
				VkDeviceMemory *mem, const struct ert_node *n, struct ert_err *err)
{
	ert_status st = ert_vk_buffer_new(vk, size, false, buf, mem, NULL, n, err);

	if (st == ERT_OK)
		st = ert_vk_write(vk, *buf, 0, data, size, err);
	if (st == ERT_OK)
		st = ert_vk_flush(vk, err);
	if (st != ERT_OK) {
		ert_vk_buffer_del(vk, *buf, *mem);
		*buf = VK_NULL_HANDLE;
		*mem = VK_NULL_HANDLE;
	}
	return st;
}

void ert_vk_memory_close(struct ert_vk *vk)
{
	if (vk->dev && vk->n_copy_cmds)
		vkFreeCommandBuffers(vk->dev, vk->cmd_pool, vk->n_copy_cmds, vk->copy_cmds);
	vk->n_copy_cmds = 0;
	if (vk->dev)
		ert_vk_buffer_del(vk, vk->staging, vk->staging_mem);
	vk->staging = VK_NULL_HANDLE;
	free(vk->pending);
	vk->pending = NULL;
}
