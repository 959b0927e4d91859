/* SPDX-License-Identifier: MIT */
/* CPU reference kernels: resize ops. */
#include "cpu/cpu-impl.h"

const struct ert_cpu_op ert_cpu_ops_resize[] = {
	{ .compute = NULL },
};
