/* SPDX-License-Identifier: MIT */
/* The ONNX opset range of each op (ert-ops-opset.def), indexed by op. */
#include "ert-graph.h"

static const struct ert_op_opset ranges[ERT_OP_COUNT] = {
#define ERT_OPSET(name, dom, lo, hi) \
	[ERT_OP_##name] = { (dom), (lo), (hi) ? (hi) : ERT_ONNX_OPSET_MAX },
#include "ert-ops-opset.def"
#undef ERT_OPSET
};

const struct ert_op_opset *ert_op_opset(enum ert_op op)
{
	if ((unsigned)op >= ERT_OP_COUNT || !ranges[op].domain)
		return NULL;
	return &ranges[op];
}
