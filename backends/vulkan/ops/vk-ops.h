/* SPDX-License-Identifier: MIT */
/* vk-ops.h — helpers the Vulkan op files share. */
#ifndef ERT_VK_OPS_H
#define ERT_VK_OPS_H

#include "gpu-common/gpu-ops.h"
#include "vulkan/shaders/vk-codes.h"
#include "vulkan/vk-impl.h"

/* Work-groups along x: the least maxComputeWorkGroupCount[0] any device has. */
#define VK_GRID_X 65535u

/* @n groups as a 2-D grid (shaders: ert_gid1(), ert_group1()). */
static inline void vk_grid(uint64_t n, uint32_t groups[3])
{
	uint64_t x = n < VK_GRID_X ? n : VK_GRID_X;

	groups[0] = (uint32_t)(x ? x : 1);
	groups[1] = (uint32_t)(x ? (n + x - 1) / x : 1);
	groups[2] = 1;
}

/* A 1-D launch of @n items of @shader, in groups of ERT_GPU_WG_1D (specialization constant 0). */
static inline ert_status vk_launch_1d(struct ert_vk *vk, struct ert_vk_step *st,
				      const char *shader, int64_t n, struct ert_err *err)
{
	uint32_t spec[1] = { ERT_GPU_WG_1D }, groups[3];

	vk_grid(((uint64_t)n + ERT_GPU_WG_1D - 1) / ERT_GPU_WG_1D, groups);
	return ert_vk_launch_add(vk, st, shader, spec, 1, groups, err);
}

/* A launch of one work-group per row (@rows of them). */
static inline ert_status vk_launch_rows(struct ert_vk *vk, struct ert_vk_step *st,
					const char *shader, int64_t rows, struct ert_err *err)
{
	uint32_t groups[3];

	vk_grid((uint64_t)rows, groups);
	return ert_vk_launch_add(vk, st, shader, NULL, 0, groups, err);
}

/* Push @rank values of @v as 8 ints (the rest 0). */
static inline void vk_arg_int8(struct ert_vk_step *st, const int64_t *v, int rank)
{
	for (int i = 0; i < 8; i++)
		ert_vk_arg_int(st, i < rank ? (int32_t)v[i] : 0);
}

#endif
