/* SPDX-License-Identifier: MIT */
/* CPU reference kernels: pool ops. */
#include "cpu/cpu-impl.h"

const struct ert_cpu_op ert_cpu_ops_pool[] = {
	{ .compute = NULL },
};
