/* SPDX-License-Identifier: MIT */
/*
 * Compute pipelines: a shader module per embedded SPIR-V file, made on first
 * use, and a pipeline per (shader, specialization constants), kept for the
 * backend's life and built through its VkPipelineCache.
 */
#include <string.h>

#include "vulkan/vk-impl.h"

int ert_vk_shader_index(const char *name)
{
	for (unsigned i = 0; i < ert_vk_n_shaders; i++)
		if (!strcmp(ert_vk_shaders[i].name, name))
			return (int)i;
	return -1;
}

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

ert_status ert_vk_pipeline_get(struct ert_vk *vk, const char *name, const uint32_t *spec,
			       uint32_t n_spec, VkPipeline *out, const struct ert_node *n,
			       struct ert_err *err)
{
	int idx = ert_vk_shader_index(name);
	uint32_t full[ERT_VK_MAX_SPEC] = { 0 };
	VkSpecializationMapEntry map[ERT_VK_MAX_SPEC];
	VkSpecializationInfo si = {
		.mapEntryCount = n_spec,
		.pMapEntries = map,
		.dataSize = n_spec * sizeof(uint32_t),
		.pData = full,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.pName = "main",
			.pSpecializationInfo = n_spec ? &si : NULL,
		},
		.layout = vk->pipe_layout,
	};
	struct ert_vk_pipeline *p;
	ert_status st;
	uint64_t t0;
	VkResult rc;

	if (idx < 0 || idx >= ERT_VK_MAX_SHADERS || n_spec > ERT_VK_MAX_SPEC) {
		ert_err_set(err, "vulkan: %s%s%s%sno shader '%s' in this build",
			    n ? ert_op_name(n->op) : "", n ? " '" : "", n ? n->name : "",
			    n ? "': " : "", name);
		return ERT_STATUS_INTERNAL;
	}
	if (n_spec)
		memcpy(full, spec, n_spec * sizeof(uint32_t));
	for (uint32_t i = 0; i < vk->n_pipes; i++) {
		p = &vk->pipes[i];
		if (p->shader == idx && !memcmp(p->spec, full, sizeof(full))) {
			*out = p->pipe;
			return ERT_OK;
		}
	}
	if (vk->n_pipes == ERT_VK_MAX_PIPELINES) {
		ert_err_set(err, "vulkan: %s '%s': more than %d pipelines", ert_op_name(n->op), n->name,
			    ERT_VK_MAX_PIPELINES);
		return ERT_STATUS_INTERNAL;
	}
	t0 = ert_clock_ns();
	st = module_get(vk, idx, n, err);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < n_spec; i++)
		map[i] = (VkSpecializationMapEntry){ .constantID = i, .offset = 4 * i, .size = 4 };
	ci.stage.module = vk->modules[idx];
	p = &vk->pipes[vk->n_pipes];
	rc = vkCreateComputePipelines(vk->dev, vk->pipe_cache, 1, &ci, NULL, &p->pipe);
	vk->times.programs_ns += ert_clock_ns() - t0;
	if (rc != VK_SUCCESS)
		return ert_vk_fail(err, rc, "vkCreateComputePipelines", n);
	p->shader = idx;
	memcpy(p->spec, full, sizeof(full));
	vk->n_pipes++;
	vk->times.programs_built++;
	/* the pipeline cache may hold something the file does not (the driver decides) */
	vk->cache_dirty = true;
	*out = p->pipe;
	return ERT_OK;
}

void ert_vk_pipelines_release(struct ert_vk *vk)
{
	for (uint32_t i = 0; i < vk->n_pipes; i++)
		vkDestroyPipeline(vk->dev, vk->pipes[i].pipe, NULL);
	vk->n_pipes = 0;
	for (int i = 0; i < ERT_VK_MAX_SHADERS; i++) {
		if (vk->modules[i])
			vkDestroyShaderModule(vk->dev, vk->modules[i], NULL);
		vk->modules[i] = VK_NULL_HANDLE;
	}
}
