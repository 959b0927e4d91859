/* SPDX-License-Identifier: MIT */
/* vk-ops.h — helpers the Vulkan op files share. */
#ifndef ERT_VK_OPS_H
#define ERT_VK_OPS_H

#include <string.h>

#include "gpu-common/gpu-ops.h"
#include "vulkan/shaders/vk-codes.h"
#include "vulkan/vk-impl.h"

/*
 * The shader @f32 or its float16-storage variant @f16 ("NAME.f16", precision
 * LOW): the float ops' shaders follow the step (@st->f16), the movement
 * ones the size of the elements they move.
 */
static inline const char *vk_shader(bool use_f16, const char *f32, const char *f16)
{
	return use_f16 ? f16 : f32;
}

/*
 * An elementwise shader: @f16a, its half-arithmetic variant ("NAME.f16a"),
 * for a float16 step where the device computes in half (vk->f16_arith).
 */
static inline const char *vk_shader_half(const struct ert_vk *vk, const struct ert_vk_step *st,
					 const char *f32, const char *f16, const char *f16a)
{
	return !st->f16 ? f32 : vk->f16_arith ? f16a : f16;
}

/*
 * A row reduction's shader: its subgroup variants @sg and @f16sg ("NAME.sg",
 * "NAME.f16.sg") where the device has subgroup arithmetic (vk->subgroup).
 */
static inline const char *vk_shader_rows(const struct ert_vk *vk, const struct ert_vk_step *st,
					 const char *f32, const char *f16, const char *sg,
					 const char *f16sg)
{
	if (vk->subgroup)
		return st->f16 ? f16sg : sg;
	return st->f16 ? f16 : f32;
}

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

/*
 * Add to @t a variant of 1-D shader @shader over @items items: groups of
 * ERT_GPU_WG_1D built in, any size the device allows for the tuner
 * (specialization constant 0).
 */
static inline void vk_variant_1d(const struct ert_vk *vk, struct ert_vk_tunable *t,
				 const char *shader, uint64_t items)
{
	const VkPhysicalDeviceLimits *lim = &vk->props.limits;
	uint32_t i = t->space.n++;
	struct ert_tune_variant *v = &t->space.v[i];

	v->dims = 1;
	v->gws[0] = items;
	v->lws[0] = ERT_GPU_WG_1D;
	v->free_lws = true;
	v->max_wg = lim->maxComputeWorkGroupInvocations < lim->maxComputeWorkGroupSize[0] ?
		    lim->maxComputeWorkGroupInvocations : lim->maxComputeWorkGroupSize[0];
	t->shader[i] = shader;
	t->spec[i][0] = ERT_GPU_WG_1D;
	t->n_spec[i] = 1;
}

/* A 1-D launch of @n items of @shader, its work-group size tuned (ERT_GPU_WG_1D built in). */
static inline ert_status vk_launch_1d(struct ert_vk *vk, struct ert_vk_step *st,
				      const char *shader, int64_t n, struct ert_err *err)
{
	struct ert_vk_tunable t;

	memset(&t, 0, sizeof(t));
	vk_variant_1d(vk, &t, shader, (uint64_t)(n > 0 ? n : 0));
	t.zgroups = 1;
	t.name = shader;
	return ert_vk_launch_tunable(vk, st, &t, err);
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
