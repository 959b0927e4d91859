/* SPDX-License-Identifier: MIT */
/* Index the per-family OpenCL op tables by op. */
#include <pthread.h>

#include "opencl/ocl-impl.h"

static const struct ert_ocl_op *const families[] = {
	ert_ocl_ops_eltwise,
	ert_ocl_ops_linalg,
	ert_ocl_ops_pool,
	ert_ocl_ops_norm,
	ert_ocl_ops_movement,
};

static const struct ert_ocl_op *by_op[ERT_OP_COUNT];
static pthread_once_t by_op_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct ert_ocl_op *k = families[f]; k->prepare; k++)
			by_op[k->op] = k;
}

const struct ert_ocl_op *ert_ocl_op_find(enum ert_op op)
{
	if ((unsigned)op >= ERT_OP_COUNT)
		return NULL;
	pthread_once(&by_op_once, build_index);
	return by_op[op];
}

bool ert_ocl_claims_op(enum ert_op op)
{
	return ert_ocl_op_find(op) != NULL;
}
