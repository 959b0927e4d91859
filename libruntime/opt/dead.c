/* SPDX-License-Identifier: MIT */
/*
 * Dead-node removal: a node none of whose outputs is read by a live node or is
 * a graph output goes. Walking backwards over the sorted graph, whole dead
 * chains go in one walk (a node's death releases its inputs).
 */
#include <stdlib.h>

#include "opt/opt-private.h"

ert_status ert_opt_remove_dead(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses = ert_opt_count_uses(g);

	if (!uses) {
		ert_err_set(err, "failed to remove dead nodes: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	for (uint32_t i = g->n_nodes; i-- > 0;) {
		struct ert_node *n = &g->nodes[i];
		bool live = false;

		if (n->dead)
			continue;
		for (uint32_t k = 0; k < n->n_outputs && !live; k++)
			live = n->outputs[k] >= 0 && uses[n->outputs[k]] > 0;
		if (live)
			continue;
		n->dead = true;
		*changed = true;
		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] >= 0)
				uses[n->inputs[k]]--;
	}
	free(uses);
	return ERT_OK;
}
