/* SPDX-License-Identifier: MIT */
/* CPU reference kernels: linalg ops. */
#include "cpu/cpu-impl.h"

const struct ert_cpu_op ert_cpu_ops_linalg[] = {
	{ .compute = NULL },
};
