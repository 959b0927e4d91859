/* SPDX-License-Identifier: MIT */
/* Shape inference: reduce ops. */
#include "ert-op-impl.h"

const struct ert_op_def ert_op_defs_reduce[] = {
	{ .infer = NULL },
};
