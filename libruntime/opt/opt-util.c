/* SPDX-License-Identifier: MIT */
/* Helpers shared by the optimisation passes. */
#include <stdlib.h>
#include <string.h>

#include "opt/opt-private.h"

uint32_t *ert_opt_count_uses(const struct ert_graph *g)
{
	uint32_t *uses = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(*uses));

	if (!uses)
		return NULL;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] >= 0)
				uses[n->inputs[k]]++;
	}
	for (uint32_t k = 0; k < g->n_outputs; k++)
		uses[g->outputs[k]]++;
	return uses;
}

int32_t *ert_opt_producers(const struct ert_graph *g)
{
	int32_t *prod = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof(*prod));

	if (!prod)
		return NULL;
	for (uint32_t t = 0; t < g->n_tensors; t++)
		prod[t] = -1;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (uint32_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0)
				prod[n->outputs[k]] = (int32_t)i;
	}
	return prod;
}

void ert_opt_replace_uses(struct ert_graph *g, int32_t from, int32_t to)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ert_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] == from)
				n->inputs[k] = to;
	}
}

bool ert_opt_is_graph_output(const struct ert_graph *g, int32_t t)
{
	for (uint32_t k = 0; k < g->n_outputs; k++)
		if (g->outputs[k] == t)
			return true;
	return false;
}

bool ert_opt_shape_static(const struct ert_tensor *t)
{
	if (t->rank < 0)
		return false;
	for (int32_t i = 0; i < t->rank; i++)
		if (t->dims[i] < 0)
			return false;
	return true;
}

void ert_opt_tensor_value(const struct ert_graph *g, int32_t ti, struct ert_value *v)
{
	const struct ert_tensor *t = &g->tensors[ti];

	memset(v, 0, sizeof(*v));
	v->dtype = t->dtype;
	v->rank = t->rank;
	for (int32_t i = 0; i < t->rank && i < ERT_MAX_RANK; i++)
		v->dims[i] = t->dims[i];
	v->numel = ert_shape_numel(t->rank, t->dims);
	v->nbytes = v->numel < 0 ? 0 : ert_dtype_bytes(t->dtype, v->numel);
	if (t->flags & ERT_TENSOR_CONST) {
		/* Kernels and shape inference only read inputs. */
		v->data = (void *)t->data;
		v->nbytes = t->nbytes;
	}
	v->quant = t->quant.count ? &t->quant : NULL;
}

const float *ert_opt_const_f32(const struct ert_graph *g, int32_t ti, int64_t numel)
{
	const struct ert_tensor *t;

	if (ti < 0)
		return NULL;
	t = &g->tensors[ti];
	if (!(t->flags & ERT_TENSOR_CONST) || t->dtype != ERT_DTYPE_FLOAT32 ||
	    ert_shape_numel(t->rank, t->dims) != numel || t->nbytes != (size_t)numel * 4)
		return NULL;
	return t->data;
}

int32_t ert_opt_add_const(struct ert_graph *g, const char *hint, ert_dtype dt, int32_t rank,
			  const int64_t *dims, void *data, size_t nbytes)
{
	int32_t t = ert_graph_add_tensor_unique(g, hint, dt, rank, dims);

	if (t < 0) {
		free(data);
		return -1;
	}
	ert_graph_set_const(g, t, data, nbytes, true);
	return t;
}

bool ert_opt_set_attr_floats(struct ert_graph *g, struct ert_node *n, const char *name,
			     const float *v, uint32_t count)
{
	float *copy = ert_graph_alloc(g, (count ? count : 1) * sizeof(*copy));
	struct ert_attr *a = NULL;

	if (!copy)
		return false;
	if (count)
		memcpy(copy, v, count * sizeof(*copy));
	for (uint32_t i = 0; i < n->n_attrs && !a; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			a = &n->attrs[i];
	if (!a)
		a = ert_node_add_attr(g, n, name, ERT_ATTR_FLOATS);
	if (!a)
		return false;
	a->type = ERT_ATTR_FLOATS;
	a->floats = copy;
	a->count = count;
	return true;
}

bool ert_opt_env_switch(const char *name, bool dflt)
{
	const char *v = getenv(name);

	return v && *v ? strcmp(v, "0") != 0 : dflt;
}
