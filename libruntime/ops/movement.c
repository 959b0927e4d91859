/* SPDX-License-Identifier: MIT */
/* Shape inference: movement ops. */
#include "ert-op-impl.h"

const struct ert_op_def ert_op_defs_movement[] = {
	{ .infer = NULL },
};
