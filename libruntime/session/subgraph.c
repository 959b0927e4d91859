/* SPDX-License-Identifier: MIT */
/*
 * A subgraph run as a session of its own (ert-subgraph.h). The session's
 * model is a view of the subgraph: its tensors copied (so inputs and
 * constant captures can be marked), its nodes, outputs, strings and
 * subgraphs shared with the model's graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ert-seq.h"
#include "ert-subgraph.h"
#include "session/session-impl.h"

struct subrun_input {
	struct ert_seq *box; /* a sequence or optional set last: the run's own copy */
	int32_t tensor;      /* tensor of the view */
	int32_t slot;        /* the session's input index, or -1: a constant capture */
	struct ert_value v;  /* the value set last (data: the staged copy) */
	size_t cap;          /* bytes allocated at v.data */
	bool set;
};

struct ert_subrun {
	const struct ert_graph *sub;
	struct ert_graph *view;
	ert_model *model;
	ert_session *sess;
	ert_config cfg;
	uint32_t n_in;
	struct subrun_input *in;
	/* the application's callbacks, seen by the body's ops (ert_subrun_set_callbacks) */
	ert_before_op_fn app_before;
	ert_after_op_fn app_after;
	void *app_user;
	const char *owner;   /* the node holding the subgraph: its name prefixes the ops' */
	struct ert_seq_meter *seqs;  /* where the inputs' sequence copies count */
	char name[256];      /* "owner/op", valid during one callback */
};

/* @op of the body as the application sees it: named under its owner, one level deeper. */
static const ert_op_info *outer_info(struct ert_subrun *r, const ert_op_info *op,
				     ert_op_info *out)
{
	*out = *op;
	snprintf(r->name, sizeof(r->name), "%s/%s", r->owner, op->name);
	out->name = r->name;
	out->depth = op->depth + 1;
	return out;
}

static int body_before_op(const ert_op_info *op, void *user)
{
	struct ert_subrun *r = user;
	ert_op_info info;

	return r->app_before(outer_info(r, op, &info), r->app_user);
}

static int body_after_op(const ert_op_info *op, void *user)
{
	struct ert_subrun *r = user;
	ert_op_info info;

	return r->app_after(outer_info(r, op, &info), r->app_user);
}

static void view_free(struct ert_graph *g)
{
	if (!g)
		return;
	free(g->tensors);
	free(g->inputs);
	free(g);
}

static struct ert_graph *view_create(const struct ert_graph *sub,
				     const struct ert_value *const *caps, const bool *caps_const)
{
	struct ert_graph *g = calloc(1, sizeof(*g));
	uint32_t n_in = sub->n_inputs + sub->n_captures;

	if (!g)
		return NULL;
	*g = *sub;
	g->parent = NULL;
	g->captures = NULL;
	g->n_captures = g->cap_captures = 0;
	g->subs = NULL;
	g->n_subs = g->cap_subs = 0;
	g->tensors = malloc((sub->n_tensors ? sub->n_tensors : 1) * sizeof(*g->tensors));
	g->inputs = malloc((n_in ? n_in : 1) * sizeof(*g->inputs));
	if (!g->tensors || !g->inputs) {
		view_free(g);
		return NULL;
	}
	if (sub->n_tensors)
		memcpy(g->tensors, sub->tensors, sub->n_tensors * sizeof(*g->tensors));
	g->cap_tensors = sub->n_tensors;
	g->n_inputs = 0;
	g->cap_inputs = n_in;
	for (uint32_t k = 0; k < sub->n_inputs; k++)
		g->inputs[g->n_inputs++] = sub->inputs[k];
	for (uint32_t c = 0; c < sub->n_captures; c++) {
		struct ert_tensor *x = &g->tensors[sub->captures[c]];
		const struct ert_value *v = caps ? caps[c] : NULL;

		x->flags &= ~(uint32_t)(ERT_TENSOR_OUTER | ERT_TENSOR_OWNED);
		if (v && v->data && caps_const && caps_const[c]) {
			/* the same value every run: the body reads it in place, as a constant */
			x->flags |= ERT_TENSOR_CONST;
			x->dtype = v->dtype;
			x->rank = v->rank;
			memcpy(x->dims, v->dims, sizeof(x->dims));
			x->data = v->data;
			x->nbytes = v->nbytes;
			x->wq = NULL;
			memset(&x->quant, 0, sizeof(x->quant));
			x->quant.axis = -1;
			continue;
		}
		x->flags |= ERT_TENSOR_INPUT;
		g->inputs[g->n_inputs++] = sub->captures[c];
	}
	return g;
}

void ert_subrun_destroy(struct ert_subrun *r)
{
	if (!r)
		return;
	ert_session_destroy(r->sess);
	ert_model_unref(r->model);
	view_free(r->view);
	if (r->in)
		for (uint32_t k = 0; k < r->n_in; k++) {
			free(r->in[k].v.data);
			ert_seq_destroy(r->in[k].box);
		}
	free(r->in);
	free(r);
}

ert_status ert_subrun_create(const struct ert_graph *sub, const ert_config *cfg,
			     const struct ert_value *const *caps, const bool *caps_const,
			     struct ert_seq_meter *meter, struct ert_subrun **out,
			     struct ert_err *err)
{
	struct ert_subrun *r = calloc(1, sizeof(*r));
	uint32_t slot = 0;

	if (!r)
		goto oom;
	r->sub = sub;
	r->seqs = meter;
	r->cfg = *cfg;
	r->cfg.backends[0] = ERT_BACKEND_CPU;
	r->cfg.num_backends = 1;
	r->cfg.shape_mutable = 1;
	r->cfg.cache_path = NULL;
	r->cfg.before_op = NULL;
	r->cfg.after_op = NULL;
	r->cfg.callback_user = NULL;
	r->n_in = sub->n_inputs + sub->n_captures;
	r->in = calloc(r->n_in ? r->n_in : 1, sizeof(*r->in));
	r->view = view_create(sub, caps, caps_const);
	if (!r->in || !r->view)
		goto oom;
	r->model = calloc(1, sizeof(*r->model));
	if (!r->model)
		goto oom;
	atomic_init(&r->model->refs, 1);
	r->model->graph = r->view;
	r->model->graph_borrowed = true;
	for (uint32_t k = 0; k < r->n_in; k++) {
		int32_t t = k < sub->n_inputs ? sub->inputs[k] : sub->captures[k - sub->n_inputs];

		r->in[k].tensor = t;
		r->in[k].slot = (r->view->tensors[t].flags & ERT_TENSOR_CONST) ? -1 : (int32_t)slot++;
	}
	*out = r;
	return ERT_OK;
oom:
	ert_subrun_destroy(r);
	ert_err_set(err, "out of memory preparing a subgraph");
	return ERT_STATUS_OUT_OF_MEMORY;
}

void ert_subrun_set_callbacks(struct ert_subrun *r, const char *owner, const ert_config *app)
{
	r->app_before = app ? app->before_op : NULL;
	r->app_after = app ? app->after_op : NULL;
	r->app_user = app ? app->callback_user : NULL;
	r->owner = owner ? owner : "";
	r->cfg.before_op = r->app_before ? body_before_op : NULL;
	r->cfg.after_op = r->app_after ? body_after_op : NULL;
	r->cfg.callback_user = r;
	/* the next run makes its session with them */
	ert_session_destroy(r->sess);
	r->sess = NULL;
}

/*
 * A sequence or optional: the subgraph reads a copy of its own, of the kind
 * its input declares (a sequence carried into a Loop body's optional
 * sequence is a present one), so the value's owner may change or drop it
 * while the subgraph runs, and the subgraph's steps never see their own
 * objects as inputs.
 */
static ert_status set_box(struct ert_subrun *r, struct subrun_input *in,
			  const struct ert_value *v, struct ert_err *err)
{
	const struct ert_tensor *x = &r->view->tensors[in->tensor];
	const struct ert_seq *src = ert_seq_of(v);
	uint8_t kind = x->kind != ERT_VALUE_TENSOR ? x->kind : v->kind;

	if (!src) {
		ert_err_set(err, "subgraph input '%s' has no value", x->name);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (in->box && in->box->kind != kind) {
		ert_seq_destroy(in->box);
		in->box = NULL;
	}
	if (!in->box && !(in->box = ert_seq_create(kind, ERT_DTYPE_UNDEFINED, r->seqs))) {
		ert_err_set(err, "out of memory setting subgraph input '%s'", x->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	in->box->elem = src->elem;
	ert_status st = ert_seq_assign(in->box, src, x->name, err);

	if (st != ERT_OK)
		return st;
	in->v.kind = kind;
	in->v.elem = src->elem;
	ert_seq_put(&in->v, in->box);
	in->set = true;
	return ERT_OK;
}

ert_status ert_subrun_set(struct ert_subrun *r, uint32_t k, const struct ert_value *v,
			  struct ert_err *err)
{
	struct subrun_input *in = &r->in[k];
	void *data = in->v.data;

	if (in->slot < 0)
		return ERT_OK;
	if (!v || (!v->data && v->nbytes)) {
		ert_err_set(err, "subgraph input '%s' has no value",
			    r->view->tensors[in->tensor].name);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (v->nbytes > in->cap) {
		data = realloc(in->v.data, v->nbytes);
		if (!data) {
			ert_err_set(err, "out of memory setting subgraph input '%s'",
				    r->view->tensors[in->tensor].name);
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		in->cap = v->nbytes;
	}
	in->v = *v;
	in->v.data = data;
	in->v.quant = NULL;
	in->v.wq = NULL;
	if (v->kind != ERT_VALUE_TENSOR)
		return set_box(r, in, v, err);
	if (v->nbytes)
		memcpy(data, v->data, v->nbytes);
	in->set = true;
	return ERT_OK;
}

/* The session fits the inputs' types and ranks; else (re)create it for them. */
static ert_status ensure_session(struct ert_subrun *r, struct ert_err *err)
{
	bool fits = r->sess != NULL;
	ert_status st;

	for (uint32_t k = 0; k < r->n_in && fits; k++) {
		const struct ert_tensor *x = &r->view->tensors[r->in[k].tensor];

		if (r->in[k].slot >= 0)
			fits = x->dtype == r->in[k].v.dtype && x->rank == r->in[k].v.rank &&
			       x->kind == r->in[k].v.kind;
	}
	if (fits)
		return ERT_OK;
	ert_session_destroy(r->sess);
	r->sess = NULL;
	for (uint32_t k = 0; k < r->n_in; k++) {
		struct ert_tensor *x = &r->view->tensors[r->in[k].tensor];

		if (r->in[k].slot < 0)
			continue;
		/* any extent: the session is resized to each run's shapes */
		x->dtype = r->in[k].v.dtype;
		x->rank = r->in[k].v.rank;
		x->kind = r->in[k].v.kind;
		x->elem = r->in[k].v.elem;
		for (int32_t d = 0; d < x->rank; d++) {
			x->dims[d] = -1;
			x->dim_names[d] = NULL;
		}
	}
	st = ert_session_create(r->model, &r->cfg, &r->sess);
	if (st != ERT_OK)
		ert_err_set(err, "%s", ert_last_error());
	return st;
}

/*
 * A body's strings live in its own session's run heap, emptied at each of its
 * runs (ert-strings.h): a string handed across a body's inputs or outputs
 * (a Loop's state, a Scan's outputs) would outlive its bytes. Refused until
 * bodies share their parent's heap (docs/strings.md).
 */
static ert_status string_crossing(const struct ert_subrun *r, struct ert_err *err)
{
	(void)r;
	ert_err_set(err, "string values do not cross into or out of If, Loop and Scan bodies "
		    "(docs/strings.md)");
	return ERT_STATUS_UNSUPPORTED;
}

static ert_status subrun_run(struct ert_subrun *r, bool *in_op, struct ert_err *err)
{
	ert_status st;

	for (uint32_t k = 0; k < r->n_in; k++) {
		if (r->in[k].slot >= 0 && !r->in[k].set) {
			ert_err_set(err, "subgraph input '%s' was not set",
				    r->view->tensors[r->in[k].tensor].name);
			return ERT_STATUS_INTERNAL;
		}
	}
	st = ensure_session(r, err);
	if (st != ERT_OK)
		return st;
	for (uint32_t k = 0; k < r->n_in; k++) {
		const struct ert_value *v = &r->in[k].v;
		ert_tensor *t;

		if (r->in[k].slot < 0)
			continue;
		if (v->dtype == ERT_DTYPE_STRING)
			return string_crossing(r, err);
		st = ert_session_resize_input(r->sess, (uint32_t)r->in[k].slot, (uint32_t)v->rank,
					      v->dims);
		if (st != ERT_OK) {
			ert_err_set(err, "%s", ert_session_error(r->sess));
			return st;
		}
		t = ert_session_get_input(r->sess, (uint32_t)r->in[k].slot);
		/* the input buffer itself: a sequence's handle is not the application's to write */
		if (v->nbytes)
			memcpy(r->sess->in_bufs[t->index], v->data, v->nbytes);
	}
	st = ert_session_run(r->sess);
	if (st != ERT_OK) {
		*in_op = ert_session_op_error(r->sess) != NULL;
		ert_err_set(err, "%s", *in_op ? ert_session_op_error(r->sess) :
			    ert_session_error(r->sess));
	}
	for (uint32_t k = 0; st == ERT_OK && k < ert_session_output_count(r->sess); k++)
		if (ert_tensor_dtype(ert_session_get_output(r->sess, k)) == ERT_DTYPE_STRING)
			return string_crossing(r, err);
	return st;
}

ert_status ert_subrun_run(struct ert_subrun *r, const char *what, struct ert_err *err)
{
	struct ert_err e = { { 0 } };
	bool in_op = false;
	ert_status st = subrun_run(r, &in_op, &e);

	if (st != ERT_OK)
		ert_err_set(err, "%s%s %s", what, in_op ? " op" : ":", e.msg);
	return st;
}

void ert_subrun_output(struct ert_subrun *r, uint32_t k, struct ert_value *out)
{
	const struct ert_value *v = ert_session_output_value(r->sess, k);

	memset(out, 0, sizeof(*out));
	if (!v)
		return;
	ert_value_set_shape(out, v->dtype, v->rank, v->dims);
	ert_value_copy_kind(out, v);
	ert_value_finish(out);
	out->data = v->data;
}
