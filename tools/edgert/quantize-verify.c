/* SPDX-License-Identifier: MIT */
/*
 * edgert quantize: float model against int8 model, input by input. The int8
 * run goes first and keeps a copy of every quantised activation (int8, so a
 * quarter of the float size); the float run then compares each of its
 * tensors with that copy as soon as the op that wrote it returns.
 */
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "quantize.h"
#include "session/session-impl.h"

struct capture {
	int8_t *data;
	size_t cap;
	size_t n;        /* elements captured for the current input; 0: none */
};

struct cmp_run {
	const struct q_result *r;
	const struct ert_graph *fg;
	struct q_step_map fmap, qmap;
	int32_t *f_row;  /* float graph tensor -> act row, or -1 */
	int32_t *q_row;  /* int8 graph tensor -> act row, or -1 */
	struct capture *cap;
	struct q_layer_cos *lc;
	bool oom;
};

static void row_done(struct cmp_run *c, int32_t row, const float *x, size_t n)
{
	struct q_cosine cs = { 0 };

	if (c->cap[row].n != n)
		return; /* the int8 model has no such tensor, or it has another size */
	q_cosine_add_q8(&cs, x, c->cap[row].data, c->r->acts[row].p, n);
	c->lc->act_sum[row] += q_cosine_value(&cs);
	c->lc->act_n[row]++;
}

static int quant_after_op(const ert_op_info *op, void *user)
{
	struct cmp_run *c = user;
	const struct ert_node *node;

	/* steps of the session's graph only (a subgraph's ops repeat their indices) */
	if (op->depth || op->index >= c->qmap.n_steps)
		return 0;
	node = c->qmap.node[op->index];
	for (uint32_t k = 0; k < c->qmap.n_out[op->index] && k < node->n_outputs; k++) {
		const struct ert_value *v = c->qmap.out[op->index][k];
		int32_t t = node->outputs[k];
		struct capture *cp;

		if (!v || t < 0 || c->q_row[t] < 0 || v->dtype != ERT_DTYPE_INT8 || !v->data)
			continue;
		cp = &c->cap[c->q_row[t]];
		if (cp->cap < (size_t)v->numel) {
			int8_t *d = realloc(cp->data, (size_t)v->numel);

			if (!d) {
				c->oom = true;
				return 1;
			}
			cp->data = d;
			cp->cap = (size_t)v->numel;
		}
		memcpy(cp->data, v->data, (size_t)v->numel);
		cp->n = (size_t)v->numel;
	}
	return 0;
}

static int float_after_op(const ert_op_info *op, void *user)
{
	struct cmp_run *c = user;
	const struct ert_node *node;

	/* steps of the session's graph only (a subgraph's ops repeat their indices) */
	if (op->depth || op->index >= c->fmap.n_steps)
		return 0;
	node = c->fmap.node[op->index];
	for (uint32_t k = 0; k < c->fmap.n_out[op->index] && k < node->n_outputs; k++) {
		const struct ert_value *v = c->fmap.out[op->index][k];
		int32_t t = node->outputs[k];

		if (v && t >= 0 && c->f_row[t] >= 0 && v->dtype == ERT_DTYPE_FLOAT32 && v->data)
			row_done(c, c->f_row[t], v->data, (size_t)v->numel);
	}
	return 0;
}

/* The float session's inputs, copied into the int8 one by name. */
static bool copy_inputs(ert_session *fs, ert_session *qs)
{
	for (uint32_t k = 0; k < ert_session_input_count(fs); k++) {
		const ert_tensor *a = ert_session_get_input(fs, k);
		ert_tensor *b = ert_session_get_input_by_name(qs, ert_tensor_name(a));
		int64_t dims[ERT_MAX_RANK];
		uint32_t rank = ert_tensor_rank(a);
		uint32_t idx;

		if (!b)
			return cli_error("quantize", "the quantised model has no input '%s'",
					 ert_tensor_name(a)),
			       false;
		for (idx = 0; ert_session_get_input(qs, idx) != b; idx++)
			;
		for (uint32_t d = 0; d < rank && d < ERT_MAX_RANK; d++)
			dims[d] = ert_tensor_dim(a, d);
		if (ert_session_resize_input(qs, idx, rank, dims) != ERT_OK ||
		    ert_session_set_input(qs, idx, ert_tensor_dtype(a), ert_tensor_data(a),
					  ert_tensor_byte_size(a)) != ERT_OK)
			return cli_error("quantize", "cannot feed the quantised model: %s",
					 ert_session_error(qs)),
			       false;
	}
	return true;
}

static bool compare_outputs(ert_session *fs, ert_session *qs, struct q_layer_cos *lc,
			    uint32_t input)
{
	for (uint32_t o = 0; o < lc->n_outputs; o++) {
		const ert_tensor *a = ert_session_get_output(fs, o);
		const ert_tensor *b = ert_session_get_output_by_name(qs, ert_tensor_name(a));
		struct q_cosine cs = { 0 };
		double v;

		if (!b || ert_tensor_dtype(a) != ERT_DTYPE_FLOAT32 ||
		    ert_tensor_dtype(b) != ERT_DTYPE_FLOAT32 ||
		    ert_tensor_element_count(a) != ert_tensor_element_count(b))
			return cli_error("quantize", "output '%s' of the quantised model does not match the float model's",
					 ert_tensor_name(a)),
			       false;
		q_cosine_add_f32(&cs, ert_tensor_data(a), ert_tensor_data(b),
				 ert_tensor_element_count(a));
		v = q_cosine_value(&cs);
		lc->out_sum[o] += v;
		if (!(v >= lc->out_min[o]))
			lc->out_min[o] = v;
		/* NaN counts as the worst */
		if (!(v >= lc->worst)) {
			lc->worst = v;
			lc->worst_input = input;
		}
	}
	return true;
}

static bool one_input(struct cmp_run *c, ert_session *fs, ert_session *qs,
		      const struct q_samples *s, uint32_t i, uint64_t seed)
{
	const struct ert_graph *fg = c->fg;

	if (s ? !q_samples_feed(s, i, fs) : !cli_inputs_random("quantize", fs, seed + i))
		return false;
	if (!copy_inputs(fs, qs) || !q_step_map_update(&c->qmap, qs, "quantize") ||
	    !q_step_map_update(&c->fmap, fs, "quantize"))
		return false;
	for (uint32_t k = 0; k < c->r->n_acts; k++)
		c->cap[k].n = 0;
	if (ert_session_run(qs) != ERT_OK)
		return cli_error("quantize", "failed to run the quantised model: %s",
				 c->oom ? "out of memory" : ert_session_error(qs)),
		       false;
	for (uint32_t k = 0; k < fg->n_inputs; k++) {
		const ert_tensor *in = ert_session_get_input(fs, k);

		if (c->f_row[fg->inputs[k]] >= 0 && ert_tensor_dtype(in) == ERT_DTYPE_FLOAT32)
			row_done(c, c->f_row[fg->inputs[k]], ert_tensor_data(in),
				 ert_tensor_element_count(in));
	}
	if (ert_session_run(fs) != ERT_OK)
		return cli_error("quantize", "failed to run the float model: %s",
				 ert_session_error(fs)),
		       false;
	return compare_outputs(fs, qs, c->lc, i);
}

static bool alloc_run(struct cmp_run *c, ert_model *fmodel, ert_model *qmodel)
{
	const struct ert_graph *fg = ert_model_graph(fmodel), *qg = ert_model_graph(qmodel);
	const struct q_result *r = c->r;
	struct q_layer_cos *lc = c->lc;

	c->fg = fg;
	c->f_row = malloc((fg->n_tensors ? fg->n_tensors : 1) * sizeof(*c->f_row));
	c->q_row = malloc((qg->n_tensors ? qg->n_tensors : 1) * sizeof(*c->q_row));
	c->cap = calloc(r->n_acts ? r->n_acts : 1, sizeof(*c->cap));
	lc->n_outputs = ert_model_output_count(fmodel);
	lc->act_sum = calloc(r->n_acts ? r->n_acts : 1, sizeof(*lc->act_sum));
	lc->act_n = calloc(r->n_acts ? r->n_acts : 1, sizeof(*lc->act_n));
	lc->out_sum = calloc(lc->n_outputs ? lc->n_outputs : 1, sizeof(*lc->out_sum));
	lc->out_min = calloc(lc->n_outputs ? lc->n_outputs : 1, sizeof(*lc->out_min));
	if (!c->f_row || !c->q_row || !c->cap || !lc->act_sum || !lc->act_n || !lc->out_sum ||
	    !lc->out_min)
		return false;
	for (uint32_t t = 0; t < fg->n_tensors; t++)
		c->f_row[t] = -1;
	for (uint32_t t = 0; t < qg->n_tensors; t++)
		c->q_row[t] = -1;
	for (uint32_t k = 0; k < r->n_acts; k++) {
		int32_t qt = ert_graph_find_tensor(qg, r->acts[k].qname);

		if (r->acts[k].tensor >= 0)
			c->f_row[r->acts[k].tensor] = (int32_t)k;
		if (qt >= 0)
			c->q_row[qt] = (int32_t)k;
	}
	for (uint32_t o = 0; o < lc->n_outputs; o++)
		lc->out_min[o] = 1.0;
	lc->worst = 1.0;
	return true;
}

bool q_compare(ert_model *fmodel, ert_model *qmodel, const ert_config *cfg,
	       const struct q_result *r, const struct q_samples *s, uint32_t n, uint64_t seed,
	       const char *what, struct q_layer_cos *out)
{
	struct cmp_run c = { .r = r, .lc = out };
	ert_session *fs = NULL, *qs = NULL;
	ert_config fc = *cfg, qc = *cfg;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (!alloc_run(&c, fmodel, qmodel)) {
		cli_error("quantize", "out of memory");
		goto out;
	}
	fc.after_op = float_after_op;
	fc.callback_user = &c;
	qc.after_op = quant_after_op;
	qc.callback_user = &c;
	if (ert_session_create(fmodel, &fc, &fs) != ERT_OK ||
	    ert_session_create(qmodel, &qc, &qs) != ERT_OK) {
		cli_error("quantize", "failed to create a session: %s", ert_last_error());
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		q_progress(what, i, n);
		if (!one_input(&c, fs, qs, s, i, seed)) {
			cli_progress_done();
			goto out;
		}
		out->inputs++;
	}
	q_progress(what, n, n);
	cli_progress_done();
	ok = true;
out:
	for (uint32_t k = 0; c.cap && k < r->n_acts; k++)
		free(c.cap[k].data);
	free(c.cap);
	free(c.f_row);
	free(c.q_row);
	q_step_map_free(&c.fmap);
	q_step_map_free(&c.qmap);
	ert_session_destroy(fs);
	ert_session_destroy(qs);
	return ok;
}

void q_layer_cos_free(struct q_layer_cos *lc)
{
	free(lc->act_sum);
	free(lc->act_n);
	free(lc->out_sum);
	free(lc->out_min);
	memset(lc, 0, sizeof(*lc));
}
