/* SPDX-License-Identifier: MIT */
/* CPU reference kernels: reduce ops. */
#include "cpu/cpu-impl.h"

const struct ert_cpu_op ert_cpu_ops_reduce[] = {
	{ .compute = NULL },
};
