/* SPDX-License-Identifier: MIT */
/*
 * Data-dependent shapes (docs/dynamic-shapes.md): the storage of a dynamic
 * step's outputs, and the continuation plans of the nodes after it.
 *
 * A dynamic step's outputs live in host buffers of their plan, sized when
 * the kernel gives each output's shape and kept for later runs: they grow
 * (under the memory budget) and never shrink, so a run whose shapes fit
 * what an earlier run allocated allocates nothing. The nodes after the step
 * are planned once per set of output shapes (and bytes, for outputs that
 * shape inference reads), like plans per input shape; a continuation reads
 * its parent chain's tensors in place.
 */
#include <stdlib.h>
#include <string.h>

#include "session/session-impl.h"

ert_status ert_dyn_alloc(struct ert_exec *x, uint32_t k, int32_t rank, const int64_t *dims,
			 struct ert_err *err)
{
	struct ert_plan *p = x->alloc_ctx;
	struct ert_plan_dyn *d = k < p->n_dyn ? &p->dyn[k] : NULL;
	struct ert_value *v = k < x->n_out ? x->out[k] : NULL;
	struct ert_value nv;
	ert_status st;

	if (!d || !v || d->tensor < 0)
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
				     "no output %u to give a shape", k);
	st = ert_exec_output_value(x, k, rank, dims, &nv, err);
	if (st != ERT_OK)
		return st;
	if (nv.nbytes > d->cap || !d->data) {
		size_t want = nv.nbytes ? nv.nbytes : 1;
		void *buf;

		st = ert_budget_check_run(p->sess, p, x->node,
					  "a data-dependent output of this shape", want, err);
		if (st != ERT_OK)
			return st;
		buf = malloc(want);
		if (!buf)
			return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY,
					     "out of memory for output %u (%zu bytes)", k, want);
		free(d->data);
		p->dyn_bytes = p->dyn_bytes - d->cap + want;
		d->data = buf;
		d->cap = want;
	}
	nv.data = d->data;
	*v = nv;
	d->given = true;
	return ERT_OK;
}

/* Does continuation @c fit the shapes (and keyed bytes) @p's dynamic step gave? */
static bool cont_matches(const struct ert_plan *c, const struct ert_plan *p)
{
	size_t vlen = 0;

	for (uint32_t k = 0; k < p->n_dyn; k++) {
		const struct ert_plan_dyn *d = &p->dyn[k];
		const int64_t *row = &c->sig[k * (ERT_MAX_RANK + 2)];
		const struct ert_value *v;

		if (d->tensor < 0)
			continue;
		v = &p->t[d->tensor].v;
		if (row[0] != v->dtype || row[1] != v->rank)
			return false;
		for (int32_t i = 0; i < v->rank; i++)
			if (row[2 + i] != v->dims[i])
				return false;
		if (!d->keyed)
			continue;
		if (vlen + v->nbytes > c->sig_values_len ||
		    (v->nbytes && memcmp(c->sig_values + vlen, v->data, v->nbytes) != 0))
			return false;
		vlen += v->nbytes;
	}
	return true;
}

ert_status ert_dyn_next(struct ert_session *s, struct ert_plan *p, struct ert_plan **out,
			struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	const struct ert_node *n = &g->nodes[p->cut];
	struct ert_plan **pp, *c;
	uint32_t count = 0;
	ert_status st;

	for (uint32_t k = 0; k < p->n_dyn; k++) {
		if (p->dyn[k].tensor >= 0 && !p->dyn[k].given)
			return ert_node_fail(n, err, ERT_STATUS_STOPPED,
					     "output %u has no shape: the step did not run (skipped by before_op?) and the nodes after it need it",
					     k);
	}
	for (pp = &p->conts; (c = *pp); pp = &c->next) {
		if (cont_matches(c, p)) {
			*pp = c->next;
			goto found;
		}
	}
	st = ert_plan_create_cont(s, p, &c, err);
	if (st != ERT_OK)
		return st;
found:
	c->next = p->conts;
	p->conts = c;
	for (pp = &p->conts; (c = *pp); pp = &c->next) {
		if (++count > ERT_PLAN_CACHE_MAX) {
			*pp = NULL;
			while (c) {
				struct ert_plan *next = c->next;

				ert_plan_destroy(s, c);
				c = next;
			}
			break;
		}
	}
	c = p->conts;
	/*
	 * The parent's dynamic outputs (its own, or as it sees its parent's)
	 * and the input buffers may have moved since: the rest stays put.
	 */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		enum ert_plan_kind k = p->t[t].kind;

		if (k == ERT_PT_DYNAMIC || k == ERT_PT_OUTER || k == ERT_PT_INPUT)
			c->t[t].v.data = p->t[t].v.data;
	}
	for (uint32_t k = 0; k < c->n_dyn; k++)
		c->dyn[k].given = false;
	*out = c;
	return ERT_OK;
}
