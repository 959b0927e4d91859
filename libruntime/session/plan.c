/* SPDX-License-Identifier: MIT */
/*
 * Planning: shape inference, plan-time evaluation, placement, memory plan,
 * kernel preparation. Everything that depends on input shapes happens here so
 * that a run only walks the steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "session/session-impl.h"

/*
 * Nodes whose inputs are all known are evaluated while planning when their
 * outputs fit this budget (they then cost memory instead of run time).
 */
static size_t fold_max_bytes(ert_level memory)
{
	switch (memory) {
	case ERT_LEVEL_LOW: return (size_t)1 << 20;
	case ERT_LEVEL_HIGH: return (size_t)256 << 20;
	default: return (size_t)64 << 20;
	}
}

static bool is_view_op(const struct ert_node *n)
{
	switch (n->op) {
	case ERT_OP_Reshape:
	case ERT_OP_Flatten:
	case ERT_OP_Squeeze:
	case ERT_OP_Unsqueeze:
	case ERT_OP_Identity:
		return true;
	case ERT_OP_Dropout:
		return n->n_outputs < 2 || n->outputs[1] < 0;
	default:
		return false;
	}
}

/* Unary ops whose output may be written over their input (ert_exec says so to backends). */
static bool is_inplace_op(enum ert_op op)
{
	switch (op) {
	case ERT_OP_Relu: case ERT_OP_Sigmoid: case ERT_OP_Tanh: case ERT_OP_Clip:
	case ERT_OP_LeakyRelu: case ERT_OP_HardSwish: case ERT_OP_HardSigmoid:
	case ERT_OP_Elu: case ERT_OP_Exp: case ERT_OP_Neg: case ERT_OP_Abs:
	case ERT_OP_Sqrt: case ERT_OP_Erf: case ERT_OP_Gelu:
		return true;
	default:
		return false;
	}
}

/*
 * One signature row per key value: dtype, rank, dims; then the bytes of those
 * shape inference reads. A root plan is keyed by the graph inputs, a
 * continuation by its parent's dynamic outputs.
 */
static ert_status build_signature(struct ert_session *s, struct ert_plan *p)
{
	const struct ert_graph *g = s->model->graph;
	uint32_t rows = p->parent ? p->parent->n_dyn : g->n_inputs;
	size_t vlen = 0;

	p->sig_len = (size_t)rows * (ERT_MAX_RANK + 2);
	p->sig = calloc(p->sig_len ? p->sig_len : 1, sizeof(int64_t));
	if (!p->sig)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (uint32_t k = 0; k < rows; k++) {
		const struct ert_value *v = NULL;
		bool keyed;
		int64_t *row = &p->sig[k * (ERT_MAX_RANK + 2)];

		if (p->parent) {
			const struct ert_plan_dyn *d = &p->parent->dyn[k];

			v = d->tensor >= 0 ? &p->parent->t[d->tensor].v : NULL;
			keyed = d->keyed;
		} else {
			v = &s->in_vals[k];
			keyed = s->in_value_needed[k];
		}
		if (!v)
			continue;
		row[0] = v->dtype;
		row[1] = v->rank;
		for (int32_t d = 0; d < v->rank; d++)
			row[2 + d] = v->dims[d];
		if (keyed)
			vlen += v->nbytes;
	}
	p->sig_values = malloc(vlen ? vlen : 1);
	if (!p->sig_values)
		return ERT_STATUS_OUT_OF_MEMORY;
	p->sig_values_len = vlen;
	vlen = 0;
	for (uint32_t k = 0; k < rows; k++) {
		const void *data;
		size_t n;

		if (p->parent) {
			const struct ert_plan_dyn *d = &p->parent->dyn[k];

			if (!d->keyed)
				continue;
			data = p->parent->t[d->tensor].v.data;
			n = p->parent->t[d->tensor].v.nbytes;
		} else {
			if (!s->in_value_needed[k])
				continue;
			data = s->in_bufs[k];
			n = s->in_vals[k].nbytes;
		}
		if (n)
			memcpy(p->sig_values + vlen, data, n);
		vlen += n;
	}
	return ERT_OK;
}

bool ert_plan_matches(const struct ert_session *s, const struct ert_plan *p)
{
	const struct ert_graph *g = s->model->graph;
	size_t vlen = 0;

	for (uint32_t k = 0; k < g->n_inputs; k++) {
		const struct ert_value *v = &s->in_vals[k];
		const int64_t *row = &p->sig[k * (ERT_MAX_RANK + 2)];

		if (row[0] != v->dtype || row[1] != v->rank)
			return false;
		for (int32_t d = 0; d < v->rank; d++)
			if (row[2 + d] != v->dims[d])
				return false;
	}
	for (uint32_t k = 0; k < g->n_inputs; k++) {
		if (!s->in_value_needed[k])
			continue;
		if (vlen + s->in_vals[k].nbytes > p->sig_values_len ||
		    memcmp(p->sig_values + vlen, s->in_bufs[k], s->in_vals[k].nbytes) != 0)
			return false;
		vlen += s->in_vals[k].nbytes;
	}
	return true;
}

void ert_plan_destroy(struct ert_session *s, struct ert_plan *p)
{
	if (!p)
		return;
	while (p->conts) {
		struct ert_plan *c = p->conts;

		p->conts = c->next;
		ert_plan_destroy(s, c);
	}
	if (s->leaf == p)
		s->leaf = NULL;
	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_step *st = &p->steps[i];

		if (st->prepared)
			ert_backend_release(s->backends[st->backend], &st->x);
	}
	ert_copies_unshare(s, p);
	for (uint32_t a = 0; a < p->n_arenas; a++)
		if (p->arenas[a].allocated)
			ert_backend_buffer_free(s->backends[p->arenas[a].backend], &p->arenas[a].buf);
	for (uint32_t f = 0; f < p->n_folded; f++)
		free(p->folded[f]);
	free(p->folded);
	free(p->arenas);
	free(p->steps);
	free(p->io_ptrs);
	free(p->in_const);
	free(p->io_locs);
	free(p->mirrors);
	free(p->staging);
	for (uint32_t d = 0; d < p->n_dyn; d++)
		free(p->dyn[d].data);
	free(p->dyn);
	free(p->t);
	free(p->sig);
	free(p->sig_values);
	free(p);
}

/* Fill the exec views of a node (pointers into p->t). */
static void bind_exec(struct ert_plan *p, const struct ert_graph *g, const struct ert_node *n,
		      struct ert_exec *x, struct ert_value **ptrs, bool *in_const)
{
	memset(x, 0, sizeof(*x));
	x->graph = g;
	x->node = n;
	x->strings = p->sess->strings;
	x->seqs = &p->sess->seqs;
	x->in = ptrs;
	x->out = ptrs + n->n_inputs;
	x->in_const = in_const;
	x->n_in = n->n_inputs;
	x->n_out = n->n_outputs;
	for (uint32_t k = 0; k < n->n_inputs; k++) {
		int32_t t = n->inputs[k];

		ptrs[k] = t >= 0 ? &p->t[t].v : NULL;
		in_const[k] = t >= 0 && (p->t[t].kind == ERT_PT_CONST || p->t[t].kind == ERT_PT_FOLDED);
	}
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];

		x->out[k] = t >= 0 ? &p->t[t].v : NULL;
	}
}

static ert_status fold_node(struct ert_session *s, struct ert_plan *p, const struct ert_graph *g,
			    const struct ert_node *n, struct ert_value **ptrs, struct ert_err *err)
{
	struct ert_value *outs;
	uint64_t bytes = 0;
	void **folded;
	ert_status st;

	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0 &&
		    __builtin_add_overflow(bytes, (uint64_t)p->t[n->outputs[k]].v.nbytes, &bytes))
			bytes = UINT64_MAX;
	st = ert_budget_check_fold(s, p, n, bytes, err);
	if (st != ERT_OK)
		return st;
	outs = calloc(n->n_outputs ? n->n_outputs : 1, sizeof(*outs));
	if (!outs)
		return ERT_STATUS_OUT_OF_MEMORY;
	st = ert_cpu_eval_node(g, n, (const struct ert_value *const *)ptrs, n->n_inputs, outs,
			       n->n_outputs, err);
	if (st == ERT_OK) {
		uint64_t got = 0;

		/* a data-dependent op's outputs were sized only now */
		for (uint32_t k = 0; k < n->n_outputs; k++)
			got += outs[k].nbytes;
		if (got > bytes)
			st = ert_budget_check_fold(s, p, n, got, err);
		if (st != ERT_OK)
			for (uint32_t k = 0; k < n->n_outputs; k++)
				free(outs[k].data);
	}
	if (st != ERT_OK) {
		free(outs);
		return st;
	}
	folded = realloc(p->folded, (p->n_folded + n->n_outputs) * sizeof(*folded));
	if (!folded) {
		for (uint32_t k = 0; k < n->n_outputs; k++)
			free(outs[k].data);
		free(outs);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	p->folded = folded;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];

		p->folded[p->n_folded++] = outs[k].data;
		p->folded_bytes += outs[k].nbytes;
		if (t < 0)
			continue;
		p->t[t].v = outs[k];
		p->t[t].kind = ERT_PT_FOLDED;
	}
	free(outs);
	return ERT_OK;
}

static ert_status fail_node(struct ert_session *s, struct ert_err *err, const struct ert_node *n,
			    ert_status st)
{
	snprintf(s->failed_op, sizeof(s->failed_op), "%s", ert_op_name(n->op));
	if (!err->msg[0])
		ert_node_fail(n, err, st, "%s", ert_status_string(st));
	return st;
}

/* A dimension of -1 from shape inference: known only when the op runs. */
static bool value_dynamic(const struct ert_value *v)
{
	/* a tensor taken out of a sequence or optional: even its rank is known only then */
	if (v->rank < 0)
		return true;
	for (int32_t i = 0; i < v->rank && i < ERT_MAX_RANK; i++)
		if (v->dims[i] == -1)
			return true;
	return false;
}

static ert_status infer_node(struct ert_session *s, struct ert_plan *p, const struct ert_graph *g,
			     const struct ert_node *n, struct ert_value **ptrs, bool *dynamic,
			     struct ert_err *err)
{
	ert_infer_fn infer = ert_op_infer(n->op);
	ert_status st;

	*dynamic = false;

	if (!infer) {
		ert_err_set(err, "unsupported op '%s' (node '%s'): no shape inference",
			    ert_op_name(n->op), n->name);
		return fail_node(s, err, n, ERT_STATUS_UNSUPPORTED);
	}
	for (uint32_t k = 0; k < n->n_inputs; k++) {
		int32_t t = n->inputs[k];

		if (t >= 0 && p->t[t].kind == ERT_PT_UNUSED) {
			ert_err_set(err, "node '%s' reads '%s', which nothing produced", n->name,
				    g->tensors[t].name);
			return fail_node(s, err, n, ERT_STATUS_INVALID_MODEL);
		}
	}
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];

		if (t >= 0) {
			memset(&p->t[t].v, 0, sizeof(p->t[t].v));
			p->t[t].v.quant = g->tensors[t].quant.count ? &g->tensors[t].quant : NULL;
		}
	}
	struct ert_infer_ctx ic = {
		.graph = g,
		.node = n,
		.in = (const struct ert_value *const *)ptrs,
		.out = ptrs + n->n_inputs,
		.n_in = n->n_inputs,
		.n_out = n->n_outputs,
		.err = err,
	};

	st = infer(&ic);
	if (st != ERT_OK)
		return fail_node(s, err, n, st);
	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0 && value_dynamic(&p->t[n->outputs[k]].v))
			*dynamic = true;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];

		if (t < 0)
			continue;
		if (*dynamic) {
			/* sized when the kernel gives the shape (ert_dyn_alloc() checks the budget) */
			p->t[t].v.numel = 0;
			p->t[t].v.nbytes = 0;
			continue;
		}
		/* before anything of that size exists: folding allocates it next */
		st = ert_budget_check_tensor(s, n, t, &p->t[t].v, err);
		if (st != ERT_OK)
			return fail_node(s, err, n, st);
		if (!ert_value_finish(&p->t[t].v))
			return fail_node(s, err, n,
					 ert_node_fail(n, err, ERT_STATUS_SHAPE,
						       "output '%s' has an invalid or huge shape",
						       g->tensors[t].name));
	}
	return ERT_OK;
}

static bool inputs_known(const struct ert_plan *p, const struct ert_node *n)
{
	/* Shape and Size read only their input's shape, known by now */
	if (n->op == ERT_OP_Shape || n->op == ERT_OP_Size)
		return true;
	/* a random generator draws anew at every run: never fold it */
	if (ert_op_is_random(n->op))
		return false;
	/* sequences and optionals live in objects a step owns (ert-seq.h) */
	if (ert_op_is_sequence(n->op))
		return false;
	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0 && p->t[n->outputs[k]].v.kind != ERT_VALUE_TENSOR)
			return false;
	for (uint32_t k = 0; k < n->n_inputs; k++) {
		int32_t t = n->inputs[k];

		if (t >= 0 && (!p->t[t].v.data || p->t[t].v.kind != ERT_VALUE_TENSOR))
			return false;
	}
	return true;
}

static size_t outputs_bytes(const struct ert_plan *p, const struct ert_node *n)
{
	size_t sum = 0;

	for (uint32_t k = 0; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0)
			sum += p->t[n->outputs[k]].v.nbytes;
	return sum;
}

/*
 * A step reading or writing strings, sequences or optionals: their handles
 * point into host memory (ert-strings.h, ert-seq.h), so only the CPU runs it.
 */
static bool step_host_only(const struct ert_exec *x)
{
	for (uint32_t k = 0; k < x->n_in + x->n_out; k++) {
		const struct ert_value *v = k < x->n_in ? x->in[k] : x->out[k - x->n_in];

		if (v && (v->dtype == ERT_DTYPE_STRING || v->kind != ERT_VALUE_TENSOR))
			return true;
	}
	return false;
}

static ert_status place_step(struct ert_session *s, struct ert_step *st, struct ert_err *err)
{
	bool host_only = step_host_only(&st->x);

	for (uint32_t b = 0; b < s->n_backends; b++) {
		if (host_only && s->backends[b]->type != ERT_BACKEND_CPU)
			continue;
		if (ert_backend_supports_op(s->backends[b], &st->x)) {
			st->backend = b;
			return ERT_OK;
		}
	}
	const struct ert_node *n = st->x.node;
	const char *dt = st->x.n_in && st->x.in[0] ? ert_dtype_name(st->x.in[0]->dtype) : "-";

	ert_err_set(err, "unsupported op '%s' (node '%s', input dtype %s): no backend runs it",
		    ert_op_name(n->op), n->name, dt);
	return fail_node(s, err, n, ERT_STATUS_UNSUPPORTED);
}

/*
 * One arena per buffer type that some step uses, in the order of the session's
 * backends. Backends naming the same type share it; the first of them that runs
 * a step allocates and frees it. A step's outputs and workspace go to its
 * backend's arena.
 */
static ert_status assign_arenas(struct ert_session *s, struct ert_plan *p)
{
	int32_t arena_of[ERT_MAX_BACKENDS + 1];
	const struct ert_graph *g = s->model->graph;

	p->arenas = calloc(s->n_backends, sizeof(*p->arenas));
	if (!p->arenas)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (uint32_t b = 0; b < s->n_backends; b++)
		arena_of[b] = -1;
	for (uint32_t i = 0; i < p->n_steps; i++)
		arena_of[p->steps[i].backend] = 0; /* used */
	for (uint32_t b = 0; b < s->n_backends; b++) {
		const char *type = ert_backend_buffer_type(s->backends[b]);
		uint32_t a = 0;

		if (arena_of[b] < 0)
			continue;
		while (a < p->n_arenas && strcmp(p->arenas[a].type, type) != 0)
			a++;
		if (a == p->n_arenas) {
			p->arenas[a].type = type;
			p->arenas[a].backend = b;
			p->arenas[a].visible = ert_backend_buffer_host_visible(s->backends[b]);
			p->n_arenas++;
		}
		arena_of[b] = (int32_t)a;
	}
	for (uint32_t i = 0; i < p->n_steps; i++)
		p->steps[i].arena = (uint32_t)arena_of[p->steps[i].backend];
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if (p->t[t].kind == ERT_PT_ARENA)
			p->t[t].arena = p->steps[p->t[t].first].arena;
	/*
	 * A tensor that a host ("host" buffer type) step writes and a step of a
	 * backend with host-visible memory of its own reads lives in that
	 * backend's arena: the host step writes it through the mapping (checked
	 * in check_access) and the device reads it in place, with no copy.
	 * Memory the host cannot see gets a copy instead (copies.c).
	 */
	for (uint32_t i = 0; i < p->n_steps; i++) {
		const struct ert_node *n = p->steps[i].x.node;
		uint32_t a = p->steps[i].arena;

		if (!strcmp(p->arenas[a].type, "host") || !p->arenas[a].visible)
			continue;
		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];
			struct ert_plan_tensor *pt = t >= 0 ? &p->t[t] : NULL;

			if (pt && pt->kind == ERT_PT_ARENA &&
			    !strcmp(p->arenas[pt->arena].type, "host"))
				pt->arena = a;
		}
	}
	return ERT_OK;
}

/* Multiply-accumulates of a convolution or matrix product step; 0 for others. */
static uint64_t step_macs(const struct ert_exec *x)
{
	const struct ert_value *out = x->n_out ? x->out[0] : NULL;
	const struct ert_value *w = NULL;

	switch (x->node->op) {
	case ERT_OP_Conv: case ERT_OP_ConvInteger:
		w = x->n_in > 1 ? x->in[1] : NULL;
		break;
	case ERT_OP_QLinearConv:
		w = x->n_in > 3 ? x->in[3] : NULL;
		break;
	case ERT_OP_MatMul: case ERT_OP_Gemm: case ERT_OP_MatMulInteger:
	case ERT_OP_QLinearMatMul: case ERT_OP_QGemm: {
		const struct ert_value *a = x->n_in ? x->in[0] : NULL;

		if (!out || !a || a->rank < 1)
			return 0;
		/* K is the last dim of A (Gemm's transA aside: an estimate) */
		return (uint64_t)out->numel * (uint64_t)a->dims[a->rank - 1];
	}
	default:
		return 0;
	}
	if (!out || !w || w->rank < 1 || !w->dims[0])
		return 0;
	return (uint64_t)out->numel * (uint64_t)(w->numel / w->dims[0]);
}

/*
 * Tiny islands stay on the CPU: a run of consecutive steps on another backend
 * whose multiply-accumulates are too few to pay for that backend's dispatch
 * (min_island_macs: a job submission and a wait on the NPU), such as one that
 * only moves bytes, goes back to the CPU backend when it supports every step.
 */
static void sink_tiny_islands(struct ert_session *s, struct ert_plan *p)
{
	uint32_t cpu = 0;

	while (cpu < s->n_backends && s->backends[cpu]->type != ERT_BACKEND_CPU)
		cpu++;
	if (cpu == s->n_backends)
		return;
	for (uint32_t i = 0; i < p->n_steps;) {
		uint32_t b = p->steps[i].backend, j = i;
		uint64_t macs = 0;
		bool movable = true;

		if (b == cpu) {
			i++;
			continue;
		}
		for (; j < p->n_steps && p->steps[j].backend == b; j++) {
			macs += step_macs(&p->steps[j].x);
			movable = movable && ert_backend_supports_op(s->backends[cpu], &p->steps[j].x);
		}
		if (movable && macs < s->backends[b]->ops->min_island_macs)
			for (uint32_t k = i; k < j; k++)
				p->steps[k].backend = cpu;
		i = j;
	}
}

/*
 * Share storage for views and in-place ops whose input dies at this step, within
 * one arena only: an alias across buffer types would be a copy in disguise.
 */
static void plan_aliases(struct ert_plan *p, const struct ert_graph *g)
{
	for (uint32_t i = 0; i < p->n_steps; i++) {
		const struct ert_node *n = p->steps[i].x.node;

		if (!n->n_inputs || !n->n_outputs || n->inputs[0] < 0 || n->outputs[0] < 0)
			continue;
		if (!is_view_op(n) && !is_inplace_op(n->op))
			continue;
		struct ert_plan_tensor *in = &p->t[n->inputs[0]], *out = &p->t[n->outputs[0]];

		if (in->kind != ERT_PT_ARENA || out->kind != ERT_PT_ARENA || in->arena != out->arena)
			continue;
		struct ert_plan_tensor *root = &p->t[in->root];

		if (root->last != (int32_t)i || in->v.nbytes != out->v.nbytes)
			continue;
		if (is_inplace_op(n->op) && in->v.dtype != out->v.dtype)
			continue;
		/* one stored as float16, the other not (precision LOW): a conversion */
		if (in->fp16 != out->fp16)
			continue;
		out->root = in->root;
		if (out->last > root->last)
			root->last = out->last;
	}
	(void)g;
}

/*
 * Steps read host-visible memory of other arenas in place, and the
 * application reads graph outputs there, so memory a backend calls
 * host-visible must have a host address: a backend that says so and hands
 * out buffers without one would have its tensors read through NULL.
 */
static ert_status check_access(struct ert_session *s, struct ert_plan *p, struct ert_err *err)
{
	for (uint32_t a = 0; a < p->n_arenas; a++) {
		const struct ert_arena_buf *ab = &p->arenas[a];

		if (!ab->visible || ab->buf.host)
			continue;
		ert_err_set(err, "backend %s calls buffer type '%s' host-visible, but its buffer of %zu bytes has no host address",
			    s->backends[ab->backend]->ops->name, ab->type, ab->size);
		return ERT_STATUS_BACKEND;
	}
	return ERT_OK;
}

/*
 * Where each step finds its inputs and outputs in arenas of its own buffer
 * type (ert_exec.in_loc/out_loc): a mirror there, or the tensor's home.
 */
static void set_locations(struct ert_plan *p)
{
	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_exec *x = &p->steps[i].x;
		struct ert_tensor_loc *loc = p->io_locs + (x->in - p->io_ptrs);
		const char *type = p->arenas[p->steps[i].arena].type;

		x->in_loc = loc;
		x->out_loc = loc + x->n_in;
		for (uint32_t k = 0; k < x->n_in + x->n_out; k++) {
			bool is_in = k < x->n_in;
			int32_t t = is_in ? x->node->inputs[k] : x->node->outputs[k - x->n_in];
			int32_t m = t >= 0 && is_in ?
				ert_copies_find(p, t, p->steps[i].arena,
						ert_step_reads_fp16(p, i, t)) : -1;
			uint32_t a;
			size_t off;
			bool fp16;

			loc[k] = (struct ert_tensor_loc){ NULL, 0, 0 };
			if (t < 0 || ert_copies_shared_loc(p, m, &loc[k]))
				continue;
			if (m >= 0) {
				a = p->mirrors[m].arena;
				off = p->mirrors[m].offset;
				fp16 = p->mirrors[m].fp16;
			} else if (p->t[t].kind == ERT_PT_ARENA) {
				a = p->t[t].arena;
				off = p->t[p->t[t].root].offset;
				fp16 = p->t[t].fp16;
			} else {
				continue;
			}
			if (!strcmp(p->arenas[a].type, type))
				loc[k] = (struct ert_tensor_loc){ &p->arenas[a].buf, off,
								  fp16 ? ERT_DTYPE_FLOAT16 : 0 };
		}
	}
}

/* Data address of arena offset @off: none in memory the host cannot see. */
static void *arena_addr(const struct ert_plan *p, uint32_t arena, size_t off)
{
	uint8_t *base = p->arenas[arena].buf.host;

	return base ? base + off : NULL;
}

static ert_status plan_memory(struct ert_session *s, struct ert_plan *p, struct ert_err *err)
{
	ert_status st = ert_memplan_run(s, p, err);

	if (st != ERT_OK)
		return st;
	st = ert_budget_check_plan(s, p, err);
	if (st != ERT_OK)
		return st;
	p->peak_bytes = 0;
	for (uint32_t a = 0; a < p->n_arenas; a++) {
		struct ert_arena_buf *ab = &p->arenas[a];

		st = ert_backend_buffer_alloc(s->backends[ab->backend], ab->size, &ab->buf, err);
		if (st != ERT_OK)
			return st;
		ab->allocated = true;
		p->peak_bytes += ab->size;
	}
	st = check_access(s, p, err);
	if (st != ERT_OK)
		return st;
	ert_copies_share(s, p);
	for (uint32_t t = 0; t < s->model->graph->n_tensors; t++) {
		struct ert_plan_tensor *pt = &p->t[t];

		if (pt->kind == ERT_PT_ARENA)
			pt->v.data = arena_addr(p, pt->arena, p->t[pt->root].offset);
	}
	for (uint32_t m = 0; m < p->n_mirrors; m++)
		p->mirrors[m].v.data = arena_addr(p, p->mirrors[m].arena, p->mirrors[m].offset);
	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_step *stp = &p->steps[i];

		if (stp->x.workspace_size) {
			stp->x.workspace = arena_addr(p, stp->arena, stp->ws_offset);
			stp->x.ws_loc = (struct ert_tensor_loc){ &p->arenas[stp->arena].buf,
								 stp->ws_offset, 0 };
		}
	}
	set_locations(p);
	return ERT_OK;
}

/* Where a continuation reads tensor @t of its parent @q in host memory. */
static void *outer_data(const struct ert_plan *q, int32_t t)
{
	const struct ert_plan_tensor *qt = &q->t[t];

	if (qt->kind == ERT_PT_ARENA && !q->arenas[qt->arena].visible)
		return qt->host_mirror >= 0 ? q->mirrors[qt->host_mirror].v.data : NULL;
	return qt->v.data;
}

/* Does a node from @first on read tensor @t? */
static bool read_after(const struct ert_graph *g, uint32_t first, int32_t t)
{
	for (uint32_t i = first; i < g->n_nodes; i++)
		for (uint32_t k = 0; k < g->nodes[i].n_inputs; k++)
			if (g->nodes[i].inputs[k] == t)
				return true;
	return false;
}

/*
 * The tensors a plan starts from. A root plan: the constants and the graph
 * inputs. A continuation: whatever its parent chain has (constants and
 * values computed while planning shared as they are, inputs, and the rest as
 * OUTER tensors in the parent's memory); shape inference sees the values
 * fixed for its lifetime, as the root's sees only inputs read for their value.
 */
static ert_status init_tensors(struct ert_session *s, struct ert_plan *p, const uint8_t *need,
			       struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	const struct ert_plan *q = p->parent;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ert_tensor *gt = &g->tensors[t];
		struct ert_plan_tensor *pt = &p->t[t];

		pt->root = (int32_t)t;
		pt->first = pt->last = -1;
		pt->host_mirror = -1;
		if (gt->flags & ERT_TENSOR_CONST) {
			pt->kind = ERT_PT_CONST;
			pt->fixed = true;
			ert_value_set_shape(&pt->v, gt->dtype, gt->rank, gt->dims);
			ert_value_finish(&pt->v);
			pt->v.quant = gt->quant.count ? &gt->quant : NULL;
			pt->v.wq = gt->wq;
			/* memory LOW: see keep_encoded(); planning reads no weight of these */
			if (gt->wq && s->cfg.memory == ERT_LEVEL_LOW && !need[t])
				continue;
			pt->v.data = (void *)ert_graph_const_data(g, (int32_t)t);
			if (!pt->v.data && gt->wq) {
				ert_err_set(err, "out of memory decoding the weights '%s'", gt->name);
				return ERT_STATUS_OUT_OF_MEMORY;
			}
			continue;
		}
		if (!q || q->t[t].kind == ERT_PT_UNUSED)
			continue;
		const struct ert_plan_tensor *qt = &q->t[t];

		pt->v = qt->v;
		pt->kind = qt->kind;
		pt->fixed = qt->fixed;
		switch (qt->kind) {
		case ERT_PT_ARENA:
			pt->kind = ERT_PT_OUTER;
			if (q->arenas[qt->arena].visible)
				break;
			/* device memory: a graph output's copy in host memory, else nothing */
			if (qt->host_mirror >= 0) {
				pt->v = q->mirrors[qt->host_mirror].v;
				break;
			}
			if (!read_after(g, p->first_node, (int32_t)t)) {
				pt->kind = ERT_PT_UNUSED;
				break;
			}
			ert_err_set(err, "'%s' lies in memory the host cannot see (backend %s), and the nodes after the data-dependent %s '%s' read it: not implemented",
				    gt->name, s->backends[q->arenas[qt->arena].backend]->ops->name,
				    ert_op_name(g->nodes[q->cut].op), g->nodes[q->cut].name);
			return ERT_STATUS_UNSUPPORTED;
		case ERT_PT_DYNAMIC:
			pt->kind = ERT_PT_OUTER;
			pt->fixed = need[t] != 0;
			break;
		default:
			break;
		}
		if (!pt->fixed)
			pt->v.data = NULL;
	}
	for (uint32_t k = 0; k < g->n_inputs && !q; k++) {
		struct ert_plan_tensor *pt = &p->t[g->inputs[k]];

		pt->kind = ERT_PT_INPUT;
		pt->v = s->in_vals[k];
		pt->fixed = s->in_value_needed[k];
		/* only inputs read for their value are visible to shape inference */
		pt->v.data = s->in_value_needed[k] ? s->in_bufs[k] : NULL;
		pt->v.storage_gen = s->in_gens[k];
	}
	return ERT_OK;
}

/*
 * The data-dependent step @i ends the plan: its outputs get host storage
 * when the kernel gives their shapes (ert_dyn_alloc()), and the nodes after
 * it are planned as a continuation once it ran.
 */
static ert_status add_dynamic_step(struct ert_plan *p, const struct ert_graph *g, uint32_t i,
				   const uint8_t *need)
{
	const struct ert_node *n = &g->nodes[i];
	struct ert_step *stp = &p->steps[p->n_steps];

	p->dyn = calloc(n->n_outputs ? n->n_outputs : 1, sizeof(*p->dyn));
	if (!p->dyn)
		return ERT_STATUS_OUT_OF_MEMORY;
	p->n_dyn = n->n_outputs;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];

		p->dyn[k].tensor = t;
		if (t < 0)
			continue;
		p->dyn[k].keyed = need[t] != 0;
		p->t[t].kind = ERT_PT_DYNAMIC;
		p->t[t].first = p->t[t].last = (int32_t)p->n_steps;
		p->t[t].v.data = NULL;
	}
	stp->x.alloc_output = ert_dyn_alloc;
	stp->x.alloc_ctx = p;
	p->dyn_step = (int32_t)p->n_steps;
	p->cut = i + 1 < g->n_nodes ? (int32_t)i : -1;
	return ERT_OK;
}

/*
 * Memory LOW leaves block-quantised weights encoded (init_tensors()). They
 * stay so where every step that reads them is a CPU step whose int8 kernels
 * take them as they are (ert_cpu_dq_accepts()); anything else (another
 * backend, another op, a graph output) gets the float32 values, decoded once
 * for the model.
 */
static ert_status keep_encoded(struct ert_session *s, struct ert_plan *p, struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	uint8_t *fp32 = NULL;
	bool any = false;

	for (uint32_t t = 0; t < g->n_tensors && !any; t++)
		any = p->t[t].kind == ERT_PT_CONST && p->t[t].v.wq && !p->t[t].v.data;
	if (!any)
		return ERT_OK;
	fp32 = calloc(g->n_tensors, 1);
	if (!fp32)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (uint32_t k = 0; k < g->n_outputs; k++)
		fp32[g->outputs[k]] = 1;
	for (uint32_t i = 0; i < p->n_steps; i++) {
		const struct ert_step *stp = &p->steps[i];
		const struct ert_node *n = stp->x.node;
		bool cpu = s->backends[stp->backend]->type == ERT_BACKEND_CPU;

		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] >= 0 && !(cpu && k == 1 && ert_cpu_dq_accepts(&stp->x)))
				fp32[n->inputs[k]] = 1;
	}
	/* nodes after a cut are planned later, with their own placement */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		struct ert_plan_tensor *pt = &p->t[t];

		if (pt->kind != ERT_PT_CONST || !pt->v.wq || pt->v.data || !fp32[t])
			continue;
		pt->v.data = (void *)ert_graph_const_data(g, (int32_t)t);
		if (!pt->v.data) {
			free(fp32);
			ert_err_set(err, "out of memory decoding the weights '%s'", g->tensors[t].name);
			return ERT_STATUS_OUT_OF_MEMORY;
		}
	}
	free(fp32);
	return ERT_OK;
}

static ert_status plan_create(struct ert_session *s, struct ert_plan *parent,
			      struct ert_plan **out, struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	struct ert_plan *p = calloc(1, sizeof(*p));
	uint8_t *need = NULL;
	size_t n_io = 0;
	ert_status st = ERT_STATUS_OUT_OF_MEMORY;
	uint64_t t0;

	s->failed_op[0] = '\0';
	s->planned = (struct ert_create_times){ 0 };
	if (!p)
		goto error;
	p->sess = s;
	p->parent = parent;
	p->root = parent ? parent->root : p;
	p->first_node = parent ? (uint32_t)parent->cut + 1 : 0;
	p->dyn_step = p->cut = -1;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		n_io += g->nodes[i].n_inputs + g->nodes[i].n_outputs;
	p->t = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(*p->t));
	p->steps = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*p->steps));
	p->io_ptrs = calloc(n_io ? n_io : 1, sizeof(*p->io_ptrs));
	p->in_const = calloc(n_io ? n_io : 1, sizeof(*p->in_const));
	p->io_locs = calloc(n_io ? n_io : 1, sizeof(*p->io_locs));
	need = ert_graph_mark_value_needed(g);
	if (!p->t || !p->steps || !p->io_ptrs || !p->in_const || !p->io_locs || !need)
		goto error;
	st = build_signature(s, p);
	if (st != ERT_OK)
		goto error;
	st = init_tensors(s, p, need, err);
	if (st != ERT_OK)
		goto error;

	size_t io = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];
		struct ert_value **ptrs = p->io_ptrs + io;
		bool *in_const = p->in_const + io;
		struct ert_step *stp = &p->steps[p->n_steps];
		bool needed = false, dynamic;

		io += n->n_inputs + n->n_outputs;
		if (i < p->first_node)
			continue;
		bind_exec(p, g, n, &stp->x, ptrs, in_const);
		stp->x.session_cfg = &s->cfg;
		st = infer_node(s, p, g, n, ptrs, &dynamic, err);
		if (st != ERT_OK)
			goto error;
		for (uint32_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0 && need[n->outputs[k]])
				needed = true;
		if (inputs_known(p, n) && (needed || outputs_bytes(p, n) <= fold_max_bytes(s->cfg.memory))) {
			st = fold_node(s, p, g, n, ptrs, err);
			if (st == ERT_OK) {
				for (uint32_t k = 0; k < n->n_outputs; k++)
					if (n->outputs[k] >= 0)
						p->t[n->outputs[k]].fixed = true;
				continue;
			}
			if (needed || st != ERT_STATUS_UNSUPPORTED) {
				fail_node(s, err, n, st);
				goto error;
			}
			err->msg[0] = '\0';
		}
		if (needed && !dynamic) {
			st = ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED,
					   "its output is needed while planning but its inputs are not known");
			fail_node(s, err, n, st);
			goto error;
		}
		stp->node = i;
		if (dynamic) {
			st = add_dynamic_step(p, g, i, need);
			if (st == ERT_OK)
				st = place_step(s, stp, err);
			if (st != ERT_OK)
				goto error;
			p->n_steps++;
			break;
		}
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];

			if (t < 0)
				continue;
			p->t[t].kind = ERT_PT_ARENA;
			p->t[t].first = (int32_t)p->n_steps;
			p->t[t].last = (int32_t)p->n_steps;
		}
		st = place_step(s, stp, err);
		if (st != ERT_OK)
			goto error;
		p->n_steps++;
	}

	/* Data pointers for the run: the input buffers, the parent's tensors. */
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if (parent && (p->t[t].kind == ERT_PT_OUTER || p->t[t].kind == ERT_PT_INPUT))
			p->t[t].v.data = outer_data(parent, (int32_t)t);
	for (uint32_t k = 0; k < g->n_inputs && !parent; k++) {
		p->t[g->inputs[k]].v.data = s->in_bufs[k];
		p->t[g->inputs[k]].v.storage_gen = s->in_gens[k];
	}

	for (uint32_t i = 0; i < p->n_steps; i++) {
		const struct ert_node *n = p->steps[i].x.node;

		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];

			if (t >= 0 && p->t[t].kind == ERT_PT_ARENA)
				p->t[t].last = (int32_t)i;
		}
	}
	/* what the nodes after a cut read lives until the plan's end */
	for (uint32_t i = p->cut >= 0 ? (uint32_t)p->cut + 1 : g->n_nodes; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];

			if (t >= 0 && p->t[t].kind == ERT_PT_ARENA)
				p->t[t].last = (int32_t)p->n_steps;
		}
	}
	for (uint32_t k = 0; k < g->n_outputs; k++) {
		struct ert_plan_tensor *pt = &p->t[g->outputs[k]];

		if (pt->kind == ERT_PT_UNUSED) {
			if (p->cut >= 0)
				continue; /* a continuation makes it */
			st = ERT_STATUS_INVALID_MODEL;
			ert_err_set(err, "graph output '%s' is never produced",
				    g->tensors[g->outputs[k]].name);
			goto error;
		}
		pt->last = (int32_t)p->n_steps;
	}
	sink_tiny_islands(s, p);
	st = keep_encoded(s, p, err);
	if (st != ERT_OK)
		goto error;
	st = assign_arenas(s, p);
	if (st != ERT_OK)
		goto error;
	t0 = ert_clock_ns();
	st = ert_fp16_plan(s, p, err);
	s->planned.calib_ns = ert_clock_ns() - t0;
	if (st != ERT_OK)
		goto error;
	plan_aliases(p, g);
	st = ert_copies_plan(s, p, err);
	if (st != ERT_OK)
		goto error;
	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_step *stp = &p->steps[i];

		stp->x.workspace_size = ert_backend_workspace_size(s->backends[stp->backend], &stp->x);
	}
	t0 = ert_clock_ns();
	st = plan_memory(s, p, err);
	s->planned.memory_ns = ert_clock_ns() - t0;
	if (st != ERT_OK)
		goto error;
	t0 = ert_clock_ns();
	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_step *stp = &p->steps[i];

		st = ert_backend_prepare(s->backends[stp->backend], &stp->x, err);
		if (st != ERT_OK) {
			/* "Type 'name': [backend: ]why", each named once (status.c) */
			ert_op_error_set(err, stp->x.node, s->backends[stp->backend], st, err->msg);
			fail_node(s, err, stp->x.node, st);
			goto error;
		}
		stp->prepared = true;
	}
	s->planned.prepare_ns = ert_clock_ns() - t0;
	t0 = ert_clock_ns();
	for (uint32_t i = 0; i < s->n_backends; i++)
		ert_backend_plan_prepared(s->backends[i]);
	s->planned.prepared_ns = ert_clock_ns() - t0;
	free(need);
	*out = p;
	return ERT_OK;
error:
	if (st == ERT_STATUS_OUT_OF_MEMORY && !err->msg[0])
		ert_err_set(err, "out of memory while planning");
	free(need);
	ert_plan_destroy(s, p);
	return st;
}

ert_status ert_plan_create(struct ert_session *s, struct ert_plan **out, struct ert_err *err)
{
	return plan_create(s, NULL, out, err);
}

ert_status ert_plan_create_cont(struct ert_session *s, struct ert_plan *parent,
				struct ert_plan **out, struct ert_err *err)
{
	return plan_create(s, parent, out, err);
}
