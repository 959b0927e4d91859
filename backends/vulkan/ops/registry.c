/* SPDX-License-Identifier: MIT */
/* Index the per-family Vulkan op tables by kind of op (gpu-common/gpu-ops.h). */
#include <pthread.h>

#include "vulkan/vk-impl.h"

static const struct ert_vk_op *const families[] = {
	ert_vk_ops_eltwise,
	ert_vk_ops_linalg,
	ert_vk_ops_pool,
	ert_vk_ops_norm,
	ert_vk_ops_movement,
};

static const struct ert_vk_op *by_kind[ERT_GPU_KIND_COUNT];
static pthread_once_t by_kind_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct ert_vk_op *k = families[f]; k->prepare; k++)
			by_kind[k->kind] = k;
}

const struct ert_vk_op *ert_vk_op_find(enum ert_op op)
{
	const struct ert_gpu_op *g = ert_gpu_op_find(op);

	if (!g)
		return NULL;
	pthread_once(&by_kind_once, build_index);
	return by_kind[g->kind];
}

bool ert_vk_claims_op(enum ert_op op)
{
	return ert_vk_op_find(op) != NULL;
}
