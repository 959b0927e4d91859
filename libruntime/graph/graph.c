/* SPDX-License-Identifier: MIT */
/* The in-memory graph: building, look-ups, attributes. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ert-graph.h"
#include "ert-op-impl.h"
#include "graph/arena.h"

struct ert_graph_hash {
	uint32_t cap;      /* power of two */
	uint32_t used;
	int32_t *slots;    /* tensor index or -1 */
};

static const char *const op_names[] = {
#define ERT_OP(name, value_inputs) #name,
#include "ert-ops.def"
#undef ERT_OP
};

static const uint32_t op_value_inputs[] = {
#define ERT_OP(name, value_inputs) value_inputs,
#include "ert-ops.def"
#undef ERT_OP
};

const char *ert_op_name(enum ert_op op)
{
	return (unsigned)op < ERT_OP_COUNT ? op_names[op] : "?";
}

enum ert_op ert_op_from_name(const char *name)
{
	for (unsigned i = 0; i < ERT_OP_COUNT; i++)
		if (strcmp(op_names[i], name) == 0)
			return (enum ert_op)i;
	return ERT_OP_COUNT;
}

uint32_t ert_op_value_inputs(enum ert_op op)
{
	return (unsigned)op < ERT_OP_COUNT ? op_value_inputs[op] : 0;
}

void ert_err_vset(struct ert_err *e, const char *fmt, va_list ap)
{
	if (e)
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

void ert_err_set(struct ert_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ert_err_vset(e, fmt, ap);
	va_end(ap);
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static bool hash_grow(struct ert_graph *g)
{
	struct ert_graph_hash *h = g->names;
	uint32_t cap = h->cap ? h->cap * 2 : 64;
	int32_t *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return false;
	memset(slots, 0xff, cap * sizeof(*slots));
	for (uint32_t i = 0; i < h->cap; i++) {
		int32_t t = h->slots[i];

		if (t < 0)
			continue;
		uint32_t j = hash_str(g->tensors[t].name) & (cap - 1);
		while (slots[j] >= 0)
			j = (j + 1) & (cap - 1);
		slots[j] = t;
	}
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	return true;
}

static void hash_rebuild(struct ert_graph *g)
{
	struct ert_graph_hash *h = g->names;

	memset(h->slots, 0xff, h->cap * sizeof(*h->slots));
	h->used = 0;
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		uint32_t j = hash_str(g->tensors[t].name) & (h->cap - 1);

		while (h->slots[j] >= 0)
			j = (j + 1) & (h->cap - 1);
		h->slots[j] = (int32_t)t;
		h->used++;
	}
}

int32_t ert_graph_find_tensor(const struct ert_graph *g, const char *name)
{
	const struct ert_graph_hash *h = g->names;

	if (!h->cap || !name)
		return -1;
	for (uint32_t j = hash_str(name) & (h->cap - 1);; j = (j + 1) & (h->cap - 1)) {
		int32_t t = h->slots[j];

		if (t < 0)
			return -1;
		if (strcmp(g->tensors[t].name, name) == 0)
			return t;
	}
}

struct ert_graph *ert_graph_create(void)
{
	struct ert_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->arena = ert_arena_create();
	g->names = calloc(1, sizeof(*g->names));
	if (!g->arena || !g->names) {
		ert_graph_destroy(g);
		return NULL;
	}
	g->producer = "";
	return g;
}

/* What a tensor owns besides the arena: its data, a block-quantised copy and decode. */
static void tensor_free_data(struct ert_tensor *t)
{
	if (t->flags & ERT_TENSOR_OWNED)
		free((void *)t->data);
	if (t->wq) {
		free(t->wq->own);
		free(atomic_load(&t->wq->decoded));
		t->wq->own = NULL;
		atomic_store(&t->wq->decoded, NULL);
	}
}

void ert_graph_destroy(struct ert_graph *g)
{
	if (!g)
		return;
	for (uint32_t t = 0; t < g->n_tensors; t++)
		tensor_free_data(&g->tensors[t]);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		free(g->nodes[i].inputs);
		free(g->nodes[i].outputs);
	}
	for (uint32_t i = 0; i < g->n_subs; i++)
		ert_graph_destroy(g->subs[i]);
	free(g->subs);
	free(g->captures);
	free(g->tensors);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	if (g->names)
		free(g->names->slots);
	free(g->names);
	if (!g->parent)
		ert_arena_destroy(g->arena);
	free(g);
}

void *ert_graph_alloc(struct ert_graph *g, size_t size)
{
	return ert_arena_alloc(g->arena, size);
}

char *ert_graph_strndup(struct ert_graph *g, const char *s, size_t len)
{
	char *p = ert_arena_alloc(g->arena, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *ert_graph_strdup(struct ert_graph *g, const char *s)
{
	return ert_graph_strndup(g, s, strlen(s));
}

static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	uint32_t n = *cap ? *cap : 16;

	while (n < need) {
		if (n > UINT32_MAX / 2)
			return false;
		n *= 2;
	}
	void *p = realloc(*arr, (size_t)n * elem);

	if (!p)
		return false;
	*arr = p;
	*cap = n;
	return true;
}

int32_t ert_graph_add_tensor(struct ert_graph *g, const char *name, ert_dtype dtype,
			     int32_t rank, const int64_t *dims)
{
	if (rank > ERT_MAX_RANK || g->n_tensors >= INT32_MAX)
		return -1;
	if (ert_graph_find_tensor(g, name) >= 0)
		return -1;
	if (!grow((void **)&g->tensors, &g->cap_tensors, g->n_tensors + 1, sizeof(*g->tensors)))
		return -1;
	if ((g->names->used + 1) * 2 > g->names->cap && !hash_grow(g))
		return -1;

	struct ert_tensor *t = &g->tensors[g->n_tensors];

	memset(t, 0, sizeof(*t));
	t->name = ert_graph_strdup(g, name);
	if (!t->name)
		return -1;
	t->dtype = dtype;
	t->rank = rank;
	for (int32_t i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->quant.axis = -1;

	struct ert_graph_hash *h = g->names;
	uint32_t j = hash_str(t->name) & (h->cap - 1);

	while (h->slots[j] >= 0)
		j = (j + 1) & (h->cap - 1);
	h->slots[j] = (int32_t)g->n_tensors;
	h->used++;
	return (int32_t)g->n_tensors++;
}

int32_t ert_graph_add_tensor_unique(struct ert_graph *g, const char *hint, ert_dtype dtype,
				    int32_t rank, const int64_t *dims)
{
	char name[256];

	for (uint32_t k = g->n_tensors;; k++) {
		snprintf(name, sizeof(name), "%.200s__%u", hint, k);
		if (ert_graph_find_tensor(g, name) < 0)
			return ert_graph_add_tensor(g, name, dtype, rank, dims);
	}
}

void ert_graph_set_const(struct ert_graph *g, int32_t ti, const void *data, size_t nbytes,
			 bool owned)
{
	struct ert_tensor *t = &g->tensors[ti];

	tensor_free_data(t);
	t->wq = NULL;
	t->data = data;
	t->nbytes = nbytes;
	t->flags |= ERT_TENSOR_CONST;
	if (owned)
		t->flags |= ERT_TENSOR_OWNED;
	else
		t->flags &= ~ERT_TENSOR_OWNED;
}

const void *ert_graph_const_data(const struct ert_graph *g, int32_t ti)
{
	const struct ert_tensor *t = &g->tensors[ti];

	if (!(t->flags & ERT_TENSOR_CONST))
		return NULL;
	return t->wq ? (const void *)ert_wq_decoded(t->wq) : t->data;
}

int32_t ert_graph_add_node(struct ert_graph *g, enum ert_op op, const char *name,
			   uint32_t n_in, const int32_t *in, uint32_t n_out, const int32_t *out)
{
	if (n_in > ERT_NODE_MAX_IO || n_out > ERT_NODE_MAX_IO || g->n_nodes >= INT32_MAX)
		return -1;
	if (!grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(*g->nodes)))
		return -1;

	struct ert_node *n = &g->nodes[g->n_nodes];

	memset(n, 0, sizeof(*n));
	n->op = op;
	n->opset = (uint16_t)(g->opset > 0 && g->opset < 65535 ? g->opset : 0);
	n->inputs = malloc((n_in ? n_in : 1) * sizeof(int32_t));
	n->outputs = malloc((n_out ? n_out : 1) * sizeof(int32_t));
	if (!n->inputs || !n->outputs) {
		free(n->inputs);
		free(n->outputs);
		return -1;
	}
	if (n_in)
		memcpy(n->inputs, in, n_in * sizeof(int32_t));
	if (n_out)
		memcpy(n->outputs, out, n_out * sizeof(int32_t));
	n->n_inputs = n_in;
	n->n_outputs = n_out;
	if (name && *name) {
		n->name = ert_graph_strdup(g, name);
	} else {
		char buf[64];

		snprintf(buf, sizeof(buf), "%s_%u", ert_op_name(op), g->n_nodes);
		n->name = ert_graph_strdup(g, buf);
	}
	if (!n->name) {
		free(n->inputs);
		free(n->outputs);
		return -1;
	}
	return (int32_t)g->n_nodes++;
}

struct ert_attr *ert_node_add_attr(struct ert_graph *g, struct ert_node *n, const char *name,
				   enum ert_attr_type type)
{
	struct ert_attr *a = ert_graph_alloc(g, (n->n_attrs + 1) * sizeof(*a));

	if (!a)
		return NULL;
	/* Attributes live in the arena: the old array is simply abandoned there. */
	if (n->n_attrs)
		memcpy(a, n->attrs, n->n_attrs * sizeof(*a));
	struct ert_attr *na = &a[n->n_attrs];

	memset(na, 0, sizeof(*na));
	na->name = ert_graph_strdup(g, name);
	if (!na->name)
		return NULL;
	na->type = type;
	na->count = 1;
	n->attrs = a;
	n->n_attrs++;
	return na;
}

static struct ert_attr *attr_replace(struct ert_graph *g, struct ert_node *n, const char *name,
				     enum ert_attr_type type)
{
	for (uint32_t i = 0; i < n->n_attrs; i++) {
		if (strcmp(n->attrs[i].name, name) == 0) {
			n->attrs[i].type = type;
			n->attrs[i].count = 1;
			return &n->attrs[i];
		}
	}
	return ert_node_add_attr(g, n, name, type);
}

bool ert_node_set_attr_int(struct ert_graph *g, struct ert_node *n, const char *name, int64_t v)
{
	struct ert_attr *a = attr_replace(g, n, name, ERT_ATTR_INT);

	if (a)
		a->i = v;
	return a != NULL;
}

bool ert_node_set_attr_float(struct ert_graph *g, struct ert_node *n, const char *name, float v)
{
	struct ert_attr *a = attr_replace(g, n, name, ERT_ATTR_FLOAT);

	if (a)
		a->f = v;
	return a != NULL;
}

bool ert_node_set_attr_string(struct ert_graph *g, struct ert_node *n, const char *name,
			      const char *v)
{
	size_t len = strlen(v);
	char *copy = ert_graph_alloc(g, len + 1);
	struct ert_attr *a;

	if (!copy)
		return false;
	memcpy(copy, v, len + 1);
	a = attr_replace(g, n, name, ERT_ATTR_STRING);
	if (!a)
		return false;
	a->s = copy;
	a->len = (uint32_t)len;
	return true;
}

bool ert_node_set_attr_ints(struct ert_graph *g, struct ert_node *n, const char *name,
			    const int64_t *v, uint32_t count)
{
	int64_t *copy = ert_graph_alloc(g, (count ? count : 1) * sizeof(*copy));
	struct ert_attr *a;

	if (!copy)
		return false;
	if (count)
		memcpy(copy, v, count * sizeof(*copy));
	a = attr_replace(g, n, name, ERT_ATTR_INTS);
	if (!a)
		return false;
	a->ints = copy;
	a->count = count;
	return true;
}

static bool add_index(int32_t **arr, uint32_t *n, uint32_t *cap, int32_t t)
{
	if (!grow((void **)arr, cap, *n + 1, sizeof(int32_t)))
		return false;
	(*arr)[(*n)++] = t;
	return true;
}

bool ert_graph_add_input(struct ert_graph *g, int32_t t)
{
	g->tensors[t].flags |= ERT_TENSOR_INPUT;
	return add_index(&g->inputs, &g->n_inputs, &g->cap_inputs, t);
}

bool ert_graph_add_output(struct ert_graph *g, int32_t t)
{
	g->tensors[t].flags |= ERT_TENSOR_OUTPUT;
	return add_index(&g->outputs, &g->n_outputs, &g->cap_outputs, t);
}

struct ert_graph *ert_graph_add_subgraph(struct ert_graph *g)
{
	struct ert_graph *sub;

	if (!grow((void **)&g->subs, &g->cap_subs, g->n_subs + 1, sizeof(*g->subs)))
		return NULL;
	/* strings and attributes go to the main graph's arena: subgraphs are small */
	sub = calloc(1, sizeof(*sub));
	if (sub)
		sub->names = calloc(1, sizeof(*sub->names));
	if (!sub || !sub->names) {
		free(sub);
		return NULL;
	}
	sub->arena = g->arena;
	sub->producer = "";
	sub->parent = g;
	sub->opset = g->opset;
	sub->ir_version = g->ir_version;
	g->subs[g->n_subs++] = sub;
	return sub;
}

bool ert_graph_add_capture(struct ert_graph *g, int32_t t)
{
	g->tensors[t].flags |= ERT_TENSOR_OUTER;
	return add_index(&g->captures, &g->n_captures, &g->cap_captures, t);
}

bool ert_node_set_attr_graph(struct ert_graph *g, struct ert_node *n, const char *name,
			     struct ert_graph *sub)
{
	struct ert_attr *a = attr_replace(g, n, name, ERT_ATTR_GRAPH);

	if (!a)
		return false;
	a->graph = sub;
	return true;
}

struct ert_graph *ert_attr_graph(const struct ert_node *n, const char *name)
{
	const struct ert_attr *a = ert_node_attr(n, name);

	return a && a->type == ERT_ATTR_GRAPH ? a->graph : NULL;
}

uint32_t ert_node_implicit_inputs(const struct ert_node *n)
{
	uint64_t sum = 0;

	for (uint32_t a = 0; a < n->n_attrs; a++)
		if (n->attrs[a].type == ERT_ATTR_GRAPH && n->attrs[a].graph)
			sum += n->attrs[a].graph->n_captures;
	return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

uint32_t ert_graph_depth(const struct ert_graph *g)
{
	uint32_t d = 0;

	for (; g->parent && d <= ERT_GRAPH_MAX_DEPTH; g = g->parent)
		d++;
	return d;
}

int32_t ert_graph_producer(const struct ert_graph *g, int32_t t)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (uint32_t o = 0; o < n->n_outputs; o++)
			if (n->outputs[o] == t)
				return (int32_t)i;
	}
	return -1;
}

uint32_t ert_graph_consumers(const struct ert_graph *g, int32_t t)
{
	uint32_t count = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (uint32_t k = 0; k < n->n_inputs; k++)
			count += n->inputs[k] == t;
	}
	for (uint32_t k = 0; k < g->n_outputs; k++)
		count += g->outputs[k] == t;
	return count;
}

const struct ert_attr *ert_node_attr(const struct ert_node *n, const char *name)
{
	for (uint32_t i = 0; i < n->n_attrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

int64_t ert_attr_int(const struct ert_node *n, const char *name, int64_t def)
{
	const struct ert_attr *a = ert_node_attr(n, name);

	if (!a)
		return def;
	if (a->type == ERT_ATTR_INT)
		return a->i;
	if (a->type == ERT_ATTR_FLOAT) {
		/* an int stored as a float: out-of-range values saturate (the
		 * conversion itself would be undefined), NaN reads as absent */
		if (a->f != a->f)
			return def;
		if (a->f >= 0x1p63f)
			return INT64_MAX;
		if (a->f < -0x1p63f)
			return INT64_MIN;
		return (int64_t)a->f;
	}
	return def;
}

float ert_attr_float(const struct ert_node *n, const char *name, float def)
{
	const struct ert_attr *a = ert_node_attr(n, name);

	if (!a)
		return def;
	if (a->type == ERT_ATTR_FLOAT)
		return a->f;
	if (a->type == ERT_ATTR_INT)
		return (float)a->i;
	return def;
}

const char *ert_attr_string(const struct ert_node *n, const char *name, const char *def)
{
	const struct ert_attr *a = ert_node_attr(n, name);

	return a && a->type == ERT_ATTR_STRING ? a->s : def;
}

const int64_t *ert_attr_ints(const struct ert_node *n, const char *name, uint32_t *count)
{
	const struct ert_attr *a = ert_node_attr(n, name);

	if (!a || a->type != ERT_ATTR_INTS) {
		*count = 0;
		return NULL;
	}
	*count = a->count;
	return a->ints;
}

const float *ert_attr_floats(const struct ert_node *n, const char *name, uint32_t *count)
{
	const struct ert_attr *a = ert_node_attr(n, name);

	if (!a || a->type != ERT_ATTR_FLOATS) {
		*count = 0;
		return NULL;
	}
	*count = a->count;
	return a->floats;
}

int64_t ert_shape_numel(int32_t rank, const int64_t *dims)
{
	int64_t n = 1;

	if (rank < 0)
		return -1;
	for (int32_t i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return -1;
		if (dims[i] && n > INT64_MAX / dims[i])
			return -1;
		n *= dims[i];
	}
	return n;
}

/* ---- ordering, compaction, validation ---- */

ert_status ert_graph_toposort(struct ert_graph *g, struct ert_err *err)
{
	uint32_t nn = g->n_nodes, nt = g->n_tensors;
	int32_t *producer = malloc((nt ? nt : 1) * sizeof(*producer));
	uint8_t *state = calloc(nn ? nn : 1, 1); /* 0 new, 1 on stack, 2 done */
	uint32_t *order = malloc((nn ? nn : 1) * sizeof(*order));
	uint32_t *stack = malloc((nn ? nn : 1) * sizeof(*stack) * 2);
	uint32_t n_order = 0;
	ert_status st = ERT_OK;

	if (!producer || !state || !order || !stack) {
		st = ERT_STATUS_OUT_OF_MEMORY;
		ert_err_set(err, "out of memory sorting graph");
		goto out;
	}
	for (uint32_t t = 0; t < nt; t++)
		producer[t] = -1;
	for (uint32_t i = 0; i < nn; i++) {
		const struct ert_node *n = &g->nodes[i];

		for (uint32_t o = 0; o < n->n_outputs; o++) {
			int32_t t = n->outputs[o];

			if (t < 0)
				continue;
			if (producer[t] >= 0) {
				st = ERT_STATUS_INVALID_MODEL;
				ert_err_set(err, "tensor '%s' is produced by both '%s' and '%s'",
					    g->tensors[t].name, g->nodes[producer[t]].name, n->name);
				goto out;
			}
			producer[t] = (int32_t)i;
		}
	}
	/* Iterative DFS: (node, next input) pairs on an explicit stack. */
	for (uint32_t root = 0; root < nn; root++) {
		uint32_t sp = 0;

		if (state[root])
			continue;
		stack[sp++] = root;
		stack[sp++] = 0;
		state[root] = 1;
		while (sp) {
			uint32_t i = stack[sp - 2], k = stack[sp - 1];
			const struct ert_node *n = &g->nodes[i];

			if (k < n->n_inputs) {
				int32_t t = n->inputs[k];

				stack[sp - 1]++;
				if (t < 0 || producer[t] < 0)
					continue;
				uint32_t p = (uint32_t)producer[t];

				if (state[p] == 1) {
					st = ERT_STATUS_INVALID_MODEL;
					ert_err_set(err, "graph has a cycle through node '%s'",
						    g->nodes[p].name);
					goto out;
				}
				if (state[p] == 0) {
					state[p] = 1;
					stack[sp++] = p;
					stack[sp++] = 0;
				}
				continue;
			}
			state[i] = 2;
			order[n_order++] = i;
			sp -= 2;
		}
	}
	struct ert_node *sorted = malloc((nn ? nn : 1) * sizeof(*sorted));

	if (!sorted) {
		st = ERT_STATUS_OUT_OF_MEMORY;
		ert_err_set(err, "out of memory sorting graph");
		goto out;
	}
	for (uint32_t i = 0; i < nn; i++)
		sorted[i] = g->nodes[order[i]];
	memcpy(g->nodes, sorted, nn * sizeof(*sorted));
	free(sorted);
out:
	free(producer);
	free(state);
	free(order);
	free(stack);
	return st;
}

ert_status ert_graph_compact(struct ert_graph *g)
{
	uint32_t nt = g->n_tensors;
	int32_t *remap = malloc((nt ? nt : 1) * sizeof(*remap));
	uint8_t *used = calloc(nt ? nt : 1, 1);
	uint32_t w = 0;

	if (!remap || !used) {
		free(remap);
		free(used);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ert_node *n = &g->nodes[i];

		if (n->dead) {
			free(n->inputs);
			free(n->outputs);
			continue;
		}
		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] >= 0)
				used[n->inputs[k]] = 1;
		for (uint32_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0)
				used[n->outputs[k]] = 1;
		for (uint32_t a = 0; a < n->n_attrs; a++)
			if (n->attrs[a].type == ERT_ATTR_TENSOR && n->attrs[a].tensor >= 0)
				used[n->attrs[a].tensor] = 1;
		g->nodes[w++] = *n;
	}
	g->n_nodes = w;
	for (uint32_t k = 0; k < g->n_inputs; k++)
		used[g->inputs[k]] = 1;
	for (uint32_t k = 0; k < g->n_outputs; k++)
		used[g->outputs[k]] = 1;

	w = 0;
	for (uint32_t t = 0; t < nt; t++) {
		if (!used[t]) {
			tensor_free_data(&g->tensors[t]);
			remap[t] = -1;
			continue;
		}
		remap[t] = (int32_t)w;
		g->tensors[w++] = g->tensors[t];
	}
	g->n_tensors = w;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ert_node *n = &g->nodes[i];

		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] >= 0)
				n->inputs[k] = remap[n->inputs[k]];
		for (uint32_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0)
				n->outputs[k] = remap[n->outputs[k]];
		for (uint32_t a = 0; a < n->n_attrs; a++)
			if (n->attrs[a].type == ERT_ATTR_TENSOR && n->attrs[a].tensor >= 0)
				n->attrs[a].tensor = remap[n->attrs[a].tensor];
	}
	for (uint32_t k = 0; k < g->n_inputs; k++)
		g->inputs[k] = remap[g->inputs[k]];
	for (uint32_t k = 0; k < g->n_outputs; k++)
		g->outputs[k] = remap[g->outputs[k]];
	hash_rebuild(g);
	free(remap);
	free(used);
	return ERT_OK;
}

static ert_status validate_graph(const struct ert_graph *g, uint32_t depth, struct ert_err *err);

/*
 * The GRAPH attributes of @n (in @g at @depth): each a subgraph of @g,
 * within the nesting limit, its captures bound to the node's last inputs;
 * each validated like a graph, then the structure the op asks for.
 */
static ert_status validate_subgraphs(const struct ert_graph *g, const struct ert_node *n,
				     uint32_t depth, struct ert_err *err)
{
	uint64_t implicit = 0;
	uint32_t next;
	ert_status st;

	for (uint32_t a = 0; a < n->n_attrs; a++) {
		const struct ert_attr *at = &n->attrs[a];

		if (at->type != ERT_ATTR_GRAPH)
			continue;
		if (!at->graph) {
			ert_err_set(err, "%s '%s' attribute '%s' holds no graph", ert_op_name(n->op),
				    n->name, at->name);
			return ERT_STATUS_INVALID_MODEL;
		}
		if (at->graph->parent != g) {
			ert_err_set(err, "%s '%s' attribute '%s': the subgraph belongs to another graph (a cycle?)",
				    ert_op_name(n->op), n->name, at->name);
			return ERT_STATUS_INVALID_MODEL;
		}
		if (depth + 1 > ERT_GRAPH_MAX_DEPTH) {
			ert_err_set(err, "%s '%s' attribute '%s': subgraphs nest deeper than %d levels",
				    ert_op_name(n->op), n->name, at->name, ERT_GRAPH_MAX_DEPTH);
			return ERT_STATUS_INVALID_MODEL;
		}
		implicit += at->graph->n_captures;
	}
	if (implicit > n->n_inputs) {
		ert_err_set(err, "%s '%s' has %u inputs, fewer than the %llu outer values its subgraphs read",
			    ert_op_name(n->op), n->name, n->n_inputs, (unsigned long long)implicit);
		return ERT_STATUS_INVALID_MODEL;
	}
	/* the op's own structure first: it says what is wrong in the op's terms */
	st = ert_op_check_subgraphs(n, err);
	if (st != ERT_OK)
		return st;
	next = n->n_inputs - (uint32_t)implicit;
	for (uint32_t a = 0; a < n->n_attrs; a++) {
		const struct ert_attr *at = &n->attrs[a];
		const struct ert_graph *sub = at->graph;
		struct ert_err sub_err = { { 0 } };

		if (at->type != ERT_ATTR_GRAPH)
			continue;
		st = validate_graph(sub, depth + 1, &sub_err);
		if (st != ERT_OK) {
			ert_err_set(err, "%s '%s' %s: %s", ert_op_name(n->op), n->name, at->name,
				    sub_err.msg);
			return st;
		}
		for (uint32_t c = 0; c < sub->n_captures; c++, next++) {
			const struct ert_tensor *in = &sub->tensors[sub->captures[c]];
			int32_t t = n->inputs[next];

			if (t < 0) {
				ert_err_set(err, "%s '%s' %s: outer value '%s' is bound to no input",
					    ert_op_name(n->op), n->name, at->name, in->name);
				return ERT_STATUS_INVALID_MODEL;
			}
			if (in->dtype != ERT_DTYPE_UNDEFINED &&
			    g->tensors[t].dtype != ERT_DTYPE_UNDEFINED &&
			    in->dtype != g->tensors[t].dtype) {
				ert_err_set(err, "%s '%s' %s: outer value '%s' is %s, but '%s' bound to it is %s",
					    ert_op_name(n->op), n->name, at->name, in->name,
					    ert_dtype_name(in->dtype), g->tensors[t].name,
					    ert_dtype_name(g->tensors[t].dtype));
				return ERT_STATUS_INVALID_MODEL;
			}
		}
	}
	return ERT_OK;
}

ert_status ert_graph_validate(const struct ert_graph *g, struct ert_err *err)
{
	return validate_graph(g, ert_graph_depth(g), err);
}

static ert_status validate_graph(const struct ert_graph *g, uint32_t depth, struct ert_err *err)
{
	uint32_t nt = g->n_tensors;
	uint8_t *avail = calloc(nt ? nt : 1, 1);

	if (!avail) {
		ert_err_set(err, "out of memory validating graph");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	ert_status st = ERT_STATUS_INVALID_MODEL;

	for (uint32_t t = 0; t < nt; t++) {
		const struct ert_tensor *x = &g->tensors[t];

		if (x->rank < -1 || x->rank > ERT_MAX_RANK) {
			ert_err_set(err, "tensor '%s' has rank %d", x->name, x->rank);
			goto out;
		}
		/*
		 * A dim is known (>= 0) or not (-1). Constants meet the invariant of
		 * ert_value_finish() (bounded dims, and a bounded product of the
		 * non-zero ones) now; other tensors' shapes are declarations that
		 * planning checks (an input's with the memory budget's message).
		 */
		int64_t nz = 1;

		for (int32_t i = 0; i < x->rank; i++) {
			if (x->dims[i] < -1 ||
			    ((x->flags & ERT_TENSOR_CONST) && x->dims[i] > ERT_DIM_MAX)) {
				ert_err_set(err, "tensor '%s' dimension %d is %lld (at most %lld)",
					    x->name, (int)i, (long long)x->dims[i],
					    (long long)ERT_DIM_MAX);
				goto out;
			}
			if ((x->flags & ERT_TENSOR_CONST) && x->dims[i] > 0 &&
			    (!ert_mul_i64(nz, x->dims[i], &nz) || nz > (int64_t)(SIZE_MAX / 16))) {
				ert_err_set(err, "tensor '%s' has dimensions whose product overflows",
					    x->name);
				goto out;
			}
		}
		if (x->flags & ERT_TENSOR_CONST) {
			int64_t n = ert_shape_numel(x->rank, x->dims);

			if (n < 0 || ert_dtype_bytes(x->dtype, n) != x->nbytes) {
				ert_err_set(err, "constant '%s' holds %zu bytes, its shape needs %zu",
					    x->name, x->nbytes,
					    n < 0 ? (size_t)0 : ert_dtype_bytes(x->dtype, n));
				goto out;
			}
			avail[t] = 1;
		}
	}
	for (uint32_t k = 0; k < g->n_inputs; k++) {
		if (g->inputs[k] < 0 || (uint32_t)g->inputs[k] >= nt) {
			ert_err_set(err, "graph input %u refers to tensor %d of %u", k,
				    g->inputs[k], nt);
			goto out;
		}
		avail[g->inputs[k]] = 1;
	}
	if (g->n_captures && !g->parent) {
		ert_err_set(err, "a main graph reads %u outer values", g->n_captures);
		goto out;
	}
	for (uint32_t k = 0; k < g->n_captures; k++) {
		int32_t t = g->captures[k];

		if (t < 0 || (uint32_t)t >= nt || !(g->tensors[t].flags & ERT_TENSOR_OUTER) ||
		    (g->tensors[t].flags & (ERT_TENSOR_CONST | ERT_TENSOR_INPUT)) || avail[t]) {
			ert_err_set(err, "outer value %u refers to tensor %d of %u, not a value of its own",
				    k, t, nt);
			goto out;
		}
		avail[t] = 1;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if ((unsigned)n->op >= ERT_OP_COUNT) {
			ert_err_set(err, "node %u has an unknown op", i);
			goto out;
		}
		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];

			if (t < -1 || t >= (int32_t)nt) {
				ert_err_set(err, "node '%s' input %u refers to tensor %d of %u",
					    n->name, k, t, nt);
				goto out;
			}
			if (t >= 0 && !avail[t]) {
				ert_err_set(err, "node '%s' reads '%s' before anything produces it",
					    n->name, g->tensors[t].name);
				goto out;
			}
		}
		for (uint32_t a = 0; a < n->n_attrs; a++) {
			const struct ert_attr *at = &n->attrs[a];

			if (at->type == ERT_ATTR_TENSOR &&
			    (at->tensor < 0 || at->tensor >= (int32_t)nt)) {
				ert_err_set(err, "node '%s' attribute '%s' refers to tensor %d of %u",
					    n->name, at->name, at->tensor, nt);
				goto out;
			}
		}
		/* integer attributes within their op's bounds (ops/: ert_attr_rule) */
		if (ert_op_check_attrs(n, err) != ERT_OK)
			goto out;
		st = validate_subgraphs(g, n, depth, err);
		if (st != ERT_OK)
			goto out;
		st = ERT_STATUS_INVALID_MODEL;
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];

			if (t < -1 || t >= (int32_t)nt) {
				ert_err_set(err, "node '%s' output %u refers to tensor %d of %u",
					    n->name, k, t, nt);
				goto out;
			}
			if (t >= 0 && avail[t]) {
				ert_err_set(err, "node '%s' writes '%s', which already has a value",
					    n->name, g->tensors[t].name);
				goto out;
			}
			if (t >= 0)
				avail[t] = 1;
		}
	}
	for (uint32_t k = 0; k < g->n_outputs; k++) {
		int32_t t = g->outputs[k];

		if (t < 0 || (uint32_t)t >= nt || !avail[t]) {
			ert_err_set(err, "graph output %u is never produced", k);
			goto out;
		}
	}
	st = ERT_OK;
out:
	free(avail);
	return st;
}

/*
 * Ops whose needed output does not make their inputs needed: Shape and Size
 * read only a shape; the selecting ops give their outputs when they run, and
 * the nodes after them are planned then, for those values
 * (docs/dynamic-shapes.md).
 */
static bool value_from_run(enum ert_op op)
{
	switch (op) {
	case ERT_OP_Shape: case ERT_OP_Size:
	case ERT_OP_NonZero: case ERT_OP_Compress: case ERT_OP_Unique:
	case ERT_OP_NonMaxSuppression:
		return true;
	default:
		return false;
	}
}

uint8_t *ert_graph_mark_value_needed(const struct ert_graph *g)
{
	uint8_t *need = calloc(g->n_tensors ? g->n_tensors : 1, 1);

	if (!need)
		return NULL;
	for (uint32_t i = g->n_nodes; i-- > 0;) {
		const struct ert_node *n = &g->nodes[i];
		uint32_t mask = ert_op_value_inputs(n->op);
		bool out_needed = false;

		for (uint32_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0 && need[n->outputs[k]])
				out_needed = true;
		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];

			if (t < 0)
				continue;
			if ((k < 32 && (mask >> k) & 1) ||
			    (out_needed && !value_from_run(n->op)))
				need[t] = 1;
		}
	}
	return need;
}
