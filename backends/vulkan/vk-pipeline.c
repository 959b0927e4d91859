/* SPDX-License-Identifier: MIT */
/*
 * Compute pipelines: the device's, one per (shader, specialization
 * constants), shared by the sessions of the process on it
 * (gpu-common/gpu-share.h) and built through its VkPipelineCache; a shader
 * module per embedded SPIR-V file, made on first use and kept by the device.
 */
#include <string.h>

#include "vulkan/vk-impl.h"

/* A pipeline's key in the device's table (compared byte for byte: no padding). */
struct ert_vk_pipe_key {
	int32_t shader;
	uint32_t n_spec;
	uint32_t spec[ERT_VK_MAX_SPEC];
};

/* What a pipeline's build needs (make_pipeline's argument). */
struct pipe_make {
	struct ert_vk *vk;
	const struct ert_vk_pipe_key *key;
	const struct ert_node *n;
};

int ert_vk_shader_index(const char *name)
{
	for (unsigned i = 0; i < ert_vk_n_shaders; i++)
		if (!strcmp(ert_vk_shaders[i].name, name))
			return (int)i;
	return -1;
}

/* The device's module of shader @idx (under the pipelines' table lock). */
static ert_status module_get(struct ert_vk *vk, int idx, const struct ert_node *n,
			     struct ert_err *err)
{
	VkShaderModuleCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = ert_vk_shaders[idx].size,
		.pCode = ert_vk_shaders[idx].words,
	};
	VkResult rc;

	if (vk->modules[idx])
		return ERT_OK;
	rc = vkCreateShaderModule(vk->dev, &ci, NULL, &vk->modules[idx]);
	if (rc != VK_SUCCESS) {
		vk->modules[idx] = VK_NULL_HANDLE;
		return ert_vk_fail(err, rc, "vkCreateShaderModule", n);
	}
	return ERT_OK;
}

/* Build the pipeline of @arg's key (under the table's lock: one build per device). */
static ert_status make_pipeline(void *arg, void *obj, size_t *bytes, struct ert_err *err)
{
	const struct pipe_make *a = arg;
	struct ert_vk *vk = a->vk;
	VkSpecializationMapEntry map[ERT_VK_MAX_SPEC];
	VkSpecializationInfo si = {
		.mapEntryCount = a->key->n_spec,
		.pMapEntries = map,
		.dataSize = a->key->n_spec * sizeof(uint32_t),
		.pData = a->key->spec,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.pName = "main",
			.pSpecializationInfo = a->key->n_spec ? &si : NULL,
		},
		.layout = vk->pipe_layout,
	};
	ert_status st = module_get(vk, a->key->shader, a->n, err);
	VkResult rc;

	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < a->key->n_spec; i++)
		map[i] = (VkSpecializationMapEntry){ .constantID = i, .offset = 4 * i, .size = 4 };
	ci.stage.module = vk->modules[a->key->shader];
	rc = vkCreateComputePipelines(vk->dev, vk->pipe_cache, 1, &ci, NULL, (VkPipeline *)obj);
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkCreateComputePipelines", a->n);
	*bytes = 0;
	return ERT_OK;
}

ert_status ert_vk_pipeline_get(struct ert_vk *vk, const char *name, const uint32_t *spec,
			       uint32_t n_spec, VkPipeline *out, const struct ert_node *n,
			       struct ert_err *err)
{
	int idx = ert_vk_shader_index(name);
	struct ert_vk_pipe_key key = { 0 };
	struct pipe_make arg = { vk, &key, n };
	enum ert_gpu_found found;
	struct ert_gpu_hold *h;
	ert_status st;
	uint64_t t0;

	if (idx < 0 || idx >= ERT_VK_MAX_SHADERS || n_spec > ERT_VK_MAX_SPEC) {
		ert_err_set(err, "vulkan: %s%s%s%sno shader '%s' in this build",
			    n ? ert_op_name(n->op) : "", n ? " '" : "", n ? n->name : "",
			    n ? "': " : "", name);
		return ERT_STATUS_INTERNAL;
	}
	key.shader = idx;
	key.n_spec = n_spec;
	if (n_spec)
		memcpy(key.spec, spec, n_spec * sizeof(uint32_t));
	t0 = ert_clock_ns();
	st = ert_gpu_hold_get(&vk->pipes, vk->shared_pipes, &key, sizeof(key), make_pipeline, &arg,
			      &h, &found, err);
	if (st != ERT_OK)
		return st;
	/* held for the session's life (ert_vk_pipelines_release), however often asked for */
	if (found != ERT_GPU_HELD) {
		vk->times.programs_ns += ert_clock_ns() - t0;
		if (found == ERT_GPU_SHARED)
			vk->times.programs_shared++;
		else
			vk->times.programs_built++;
		/* the pipeline cache may hold something the file does not (the driver decides) */
		vk->cache_dirty = true;
	}
	*out = *(VkPipeline *)ert_gpu_hold_obj(h);
	return ERT_OK;
}

void ert_vk_pipeline_free(void *dev, void *obj)
{
	vkDestroyPipeline(*(VkDevice *)dev, *(VkPipeline *)obj, NULL);
}

void ert_vk_pipelines_release(struct ert_vk *vk)
{
	if (vk->shared_pipes)
		ert_gpu_holds_drop(&vk->pipes, vk->shared_pipes);
}
