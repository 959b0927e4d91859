/* SPDX-License-Identifier: MIT */
/* Shape inference: pool ops. */
#include "ert-op-impl.h"

const struct ert_op_def ert_op_defs_pool[] = {
	{ .infer = NULL },
};
