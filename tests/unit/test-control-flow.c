/* SPDX-License-Identifier: MIT */
/*
 * Control flow (docs/control-flow.md): If, Loop and Scan run on the CPU
 * against references computed here, through the .ert format and through
 * ONNX; runs of known shapes allocate nothing; and hostile subgraphs (too
 * deep, reading a value that does not exist, branches that disagree, links
 * in a file that make a cycle or share a subgraph) are refused with a
 * message naming the problem, from memory, from ONNX and from .ert files.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ert-test.h"
#include "ert-test-control.h"
#include "ert-test-malloc-count.h"
#include "ert-test-model.h"
#include "ert-test-onnx-write.h"
#include "format/format-priv.h"
#include "onnx/onnx-import.h"

static const float x_vals[6] = { 1, -2, 3, -0.5f, 0.25f, 4 };
static const float w_vals[6] = { 0.5f, -1, 2, 3, -0.25f, 1 };

/* The if_loop model's outputs for @c and @n, computed here. */
static void if_loop_ref(bool c, int64_t n, float *sel, float *yf, float *ys)
{
	float y[6];

	for (int k = 0; k < 6; k++)
		y[k] = sel[k] = c ? x_vals[k] + w_vals[k] : x_vals[k] * w_vals[k];
	for (int64_t i = 0; i < n; i++) {
		for (int k = 0; k < 6; k++) {
			float y2 = y[k] + x_vals[k];

			ys[i * 6 + k] = y2;
			y[k] = c ? -y2 : (y2 > 0 ? y2 : 0);
		}
	}
	memcpy(yf, y, sizeof(y));
}

static int check_if_loop(ert_session *s, bool c, int64_t n)
{
	int ert_test_failed = 0, *ert_test_failed_ = &ert_test_failed;
	uint8_t cv = c;
	float sel[6], yf[6], ys[6 * 8];
	const ert_tensor *o;

	if_loop_ref(c, n, sel, yf, ys);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x_vals, sizeof(x_vals)), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(s, 1, ERT_DTYPE_BOOL, &cv, 1), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(s, 2, ERT_DTYPE_INT64, &n, 8), ERT_OK);
	if (ert_session_run(s) != ERT_OK) {
		fprintf(stderr, "run (c %d, n %lld): %s\n", c, (long long)n, ert_session_error(s));
		return 1;
	}
	o = ert_session_get_output(s, 0);
	for (int k = 0; k < 6; k++)
		CHECK_NEAR(((const float *)ert_tensor_data(o))[k], sel[k], 1e-6);
	o = ert_session_get_output(s, 1);
	CHECK_EQ_INT(ert_tensor_rank(o), 2);
	for (int k = 0; k < 6; k++)
		CHECK_NEAR(((const float *)ert_tensor_data(o))[k], yf[k], 1e-5);
	o = ert_session_get_output(s, 2);
	CHECK_EQ_INT(ert_tensor_rank(o), 3);
	CHECK_EQ_INT(ert_tensor_dim(o, 0), n);
	CHECK_EQ_INT(ert_tensor_dim(o, 1), 2);
	CHECK_EQ_INT(ert_tensor_dim(o, 2), 3);
	for (int64_t k = 0; k < 6 * n && ert_tensor_dim(o, 0) == n; k++)
		CHECK_NEAR(((const float *)ert_tensor_data(o))[k], ys[k], 1e-5);
	if (ert_test_failed)
		fprintf(stderr, "  (c %d, n %lld)\n", c, (long long)n);
	return ert_test_failed;
}

/* Both branches, trip counts changing run to run (0 included), cached plans reused. */
static void run_if_loop(int *ert_test_failed_, ert_model *m)
{
	ert_session *s = session_one_thread(m);

	REQUIRE(s);
	CHECK(!check_if_loop(s, true, 3));
	CHECK(!check_if_loop(s, false, 2));
	CHECK(!check_if_loop(s, true, 0));
	CHECK(!check_if_loop(s, false, 5));
	CHECK(!check_if_loop(s, true, 3));
	ert_session_destroy(s);
}

ERT_TEST(if_loop_through_ert)
{
	ert_model *m = model_from_graph(ct_build_if_loop());

	REQUIRE(m);
	run_if_loop(ert_test_failed_, m);
	ert_model_unref(m);
}

ERT_TEST(if_loop_through_onnx)
{
	ert_model *m = model_from_graph_onnx(ct_build_if_loop());

	REQUIRE(m);
	run_if_loop(ert_test_failed_, m);
	ert_model_unref(m);
}

/* What the callbacks saw of one run of the if_loop model. */
struct cb_log {
	uint32_t before, after;
	uint32_t acc, neg, then_add, loop;  /* after_op calls for these names */
	bool bad_depth, loop_early;
	uint32_t stop_at_neg;                /* stop after this "loop/inner/neg" (0: never) */
};

static int log_before(const ert_op_info *op, void *user)
{
	struct cb_log *l = user;

	(void)op;
	l->before++;
	return 0;
}

static int log_after(const ert_op_info *op, void *user)
{
	struct cb_log *l = user;
	uint32_t want = 0;

	l->after++;
	if (strcmp(op->name, "loop/acc") == 0) {
		l->acc++;
		want = 1;
	} else if (strcmp(op->name, "loop/inner/neg") == 0) {
		l->neg++;
		want = 2;
		if (l->neg == l->stop_at_neg)
			return 1;
	} else if (strcmp(op->name, "select/then_add") == 0) {
		l->then_add++;
		want = 1;
	} else if (strcmp(op->name, "loop") == 0) {
		l->loop++;
		l->loop_early |= l->acc != 3;
	} else if (!strchr(op->name, '/')) {
		want = 0;
	} else {
		want = op->depth ? op->depth : 1;
	}
	l->bad_depth |= op->depth != want;
	return 0;
}

/* The ops of branches and bodies reach the callbacks, named under their nodes; a stop in a body stops the run. */
ERT_TEST(callbacks_see_subgraph_ops)
{
	ert_model *m = model_from_graph(ct_build_if_loop());
	struct cb_log l = { 0 };
	ert_session *s = NULL;
	ert_config cfg;
	ert_status st;

	REQUIRE(m);
	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.before_op = log_before;
	cfg.after_op = log_after;
	cfg.callback_user = &l;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
	REQUIRE(s);
	CHECK(!check_if_loop(s, true, 3));
	CHECK_EQ_INT(l.acc, 3);
	CHECK_EQ_INT(l.neg, 3);
	CHECK_EQ_INT(l.then_add, 1);
	CHECK_EQ_INT(l.loop, 1);
	CHECK(!l.loop_early);
	CHECK(!l.bad_depth);
	CHECK_EQ_INT(l.before, l.after);
	CHECK(l.after >= 3 + 3 + 1 + 1 + 3 + 2);

	/* after_op stops the second iteration's inner If's Neg: the whole run stops */
	memset(&l, 0, sizeof(l));
	l.stop_at_neg = 2;
	uint8_t cv = 1;
	int64_t n = 5;

	CHECK_EQ_INT(ert_session_set_input(s, 1, ERT_DTYPE_BOOL, &cv, 1), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(s, 2, ERT_DTYPE_INT64, &n, 8), ERT_OK);
	st = ert_session_run(s);
	CHECK_EQ_INT(st, ERT_STATUS_STOPPED);
	/* each op named once, outermost first */
	CHECK_EQ_STR(ert_session_error(s), "failed to run Loop 'loop': body op If 'inner': "
					   "then_branch: run stopped after Neg 'neg'");
	CHECK_EQ_INT(l.neg, 2);
	CHECK_EQ_INT(l.acc, 2);
	CHECK_EQ_INT(l.loop, 0);
	/* and the session runs again, whole */
	memset(&l, 0, sizeof(l));
	CHECK(!check_if_loop(s, false, 4));
	CHECK_EQ_INT(l.acc, 4);
	CHECK_EQ_INT(l.neg, 0);
	CHECK_EQ_INT(l.loop, 1);
	ert_session_destroy(s);
	ert_model_unref(m);
}

/*
 * Main graph: input n int64, constants t f32[3] = { 1, 2, 3 } and y0 = 0.
 *   yf = Loop(n, "", y0) body(i, cond, y) { (cond, y + Gather(t, i)) }
 * The body's Gather reads past t from the fourth iteration on.
 */
static struct ert_graph *build_loop_gather(void)
{
	static const float tv[3] = { 1, 2, 3 }, zero = 0;
	const int64_t d3 = 3;
	struct ert_graph *g = ert_graph_create(), *body;
	int32_t n, t, y0, yf;

	if (!g)
		return NULL;
	g->opset = 13;
	n = ct_tensor(g, "n", ERT_DTYPE_INT64, 0, NULL);
	t = ct_const_f32(g, "t", 1, &d3, tv);
	y0 = ct_const_f32(g, "y0", 0, NULL, &zero);
	yf = ct_tensor(g, "yf", ERT_DTYPE_FLOAT32, 0, NULL);
	body = ert_graph_add_subgraph(g);
	if (n < 0 || t < 0 || y0 < 0 || yf < 0 || !body || !ert_graph_add_input(g, n) ||
	    !ert_graph_add_output(g, yf))
		goto error;
	{
		int32_t i = ct_tensor(body, "i", ERT_DTYPE_INT64, 0, NULL);
		int32_t cin = ct_tensor(body, "cond_in", ERT_DTYPE_BOOL, 0, NULL);
		int32_t y = ct_tensor(body, "y", ERT_DTYPE_FLOAT32, 0, NULL);
		int32_t bt = ct_capture(body, t);
		int32_t picked = ct_tensor(body, "picked", ERT_DTYPE_FLOAT32, 0, NULL);
		int32_t cout, y2, gin[2] = { bt, i };

		if (i < 0 || cin < 0 || y < 0 || bt < 0 || picked < 0 ||
		    !ert_graph_add_input(body, i) || !ert_graph_add_input(body, cin) ||
		    !ert_graph_add_input(body, y) ||
		    ert_graph_add_node(body, ERT_OP_Gather, "pick", 2, gin, 1, &picked) < 0)
			goto error;
		y2 = ct_binary(body, ERT_OP_Add, "sum", y, picked, "y2");
		cout = ct_unary(body, ERT_OP_Identity, "keep", cin, "cond_out");
		if (y2 < 0 || cout < 0 || !ert_graph_add_output(body, cout) ||
		    !ert_graph_add_output(body, y2))
			goto error;
	}
	{
		int32_t in[4] = { n, -1, y0, t };
		int32_t ni = ert_graph_add_node(g, ERT_OP_Loop, "loop", 4, in, 1, &yf);

		if (ni < 0 || !ert_node_set_attr_graph(g, &g->nodes[ni], "body", body))
			goto error;
	}
	return g;
error:
	ert_graph_destroy(g);
	return NULL;
}

/* An op failing in a body: the error names the Loop, then the body's op, each once. */
ERT_TEST(body_op_error_names_each_op_once)
{
	ert_model *m = model_from_graph(build_loop_gather());
	ert_session *s = session_one_thread(m);
	int64_t n = 3;

	REQUIRE(s);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_INT64, &n, 8), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_NEAR(*(const float *)ert_tensor_data(ert_session_get_output(s, 0)), 6, 0);
	n = 5;
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_INT64, &n, 8), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_INVALID_ARGUMENT);
	CHECK_EQ_STR(ert_session_error(s), "failed to run Loop 'loop': body op Gather 'pick': "
					   "index 3 out of range for an axis of size 3");
	/* and the session runs again */
	n = 2;
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_INT64, &n, 8), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_NEAR(*(const float *)ert_tensor_data(ert_session_get_output(s, 0)), 3, 0);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(scan_axes_directions)
{
	static const float s0[2] = { 1, -1 };
	static const float xv[8] = { 1, 2, 3, 4, -1, 0.5f, 2, -3 }; /* [2,4] */
	ert_model *m = model_from_graph(ct_build_scan());
	ert_session *s = session_one_thread(m);
	float st[2] = { s0[0], s0[1] }, o1[8], o2[8];

	REQUIRE(s);
	/* columns read backwards: iteration it reads column 3 - it */
	for (int it = 0; it < 4; it++) {
		for (int r = 0; r < 2; r++) {
			float xs = xv[r * 4 + 3 - it];

			st[r] += xs;
			o1[it * 2 + r] = xs * st[r];     /* axis 0, forwards */
			o2[r * 4 + 3 - it] = st[r];      /* axis 1, backwards */
		}
	}
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, s0, sizeof(s0)), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(s, 1, ERT_DTYPE_FLOAT32, xv, sizeof(xv)), ERT_OK);
	for (int pass = 0; pass < 2; pass++) {
		/* the second run, of the same shapes, allocates nothing */
		atomic_store(&allocations, 0);
		atomic_store(&counting, pass);
		ert_status st_run = ert_session_run(s);

		atomic_store(&counting, 0);
		if (st_run != ERT_OK)
			fprintf(stderr, "run: %s\n", ert_session_error(s));
		REQUIRE(st_run == ERT_OK);
		if (pass && HOOK_MALLOC)
			CHECK_EQ_INT(atomic_load(&allocations), 0);
		const ert_tensor *t0 = ert_session_get_output(s, 0), *t1 = ert_session_get_output(s, 1),
				 *t2 = ert_session_get_output(s, 2);

		CHECK_EQ_INT(ert_tensor_dim(t1, 0), 4);
		CHECK_EQ_INT(ert_tensor_dim(t2, 1), 4);
		for (int k = 0; k < 2; k++)
			CHECK_NEAR(((const float *)ert_tensor_data(t0))[k], st[k], 1e-6);
		for (int k = 0; k < 8; k++) {
			CHECK_NEAR(((const float *)ert_tensor_data(t1))[k], o1[k], 1e-6);
			CHECK_NEAR(((const float *)ert_tensor_data(t2))[k], o2[k], 1e-6);
		}
	}
	ert_session_destroy(s);
	ert_model_unref(m);
}

/* The deepest nesting allowed runs; both ends of the chain are reached. */
ERT_TEST(deepest_nesting_runs)
{
	struct ert_graph *g = ct_build_deep(ERT_GRAPH_MAX_DEPTH);
	struct ert_err err = { "" };
	static const float x = 2.5f;

	REQUIRE(g);
	CHECK_EQ_INT(ert_graph_validate(g, &err), ERT_OK);
	ert_model *m = model_from_graph(g);
	ert_session *s = session_one_thread(m);

	REQUIRE(s);
	for (int c = 0; c < 2; c++) {
		uint8_t cv = (uint8_t)c;

		CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_BOOL, &cv, 1), ERT_OK);
		CHECK_EQ_INT(ert_session_set_input(s, 1, ERT_DTYPE_FLOAT32, &x, 4), ERT_OK);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		CHECK_NEAR(*(const float *)ert_tensor_data(ert_session_get_output(s, 0)), c ? x : -x,
			   0);
	}
	ert_session_destroy(s);
	ert_model_unref(m);
}

/* ---- hostile subgraphs ---- */

static void expect_msg(int *ert_test_failed_, ert_status st, ert_status want, const char *msg,
		       const char *needle)
{
	CHECK_EQ_INT(st, want);
	if (!strstr(msg, needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", msg, needle);
		*ert_test_failed_ = 1;
	}
}

/* @g (consumed) is refused in memory, as ONNX and as an .ert file, each naming @needle. */
static void expect_refused(int *ert_test_failed_, struct ert_graph *g, const char *needle)
{
	struct ert_err err = { "" };
	struct ert_graph *back = NULL;
	uint8_t *onnx = NULL;
	void *img = NULL;
	size_t size = 0;

	REQUIRE(g);
	expect_msg(ert_test_failed_, ert_graph_validate(g, &err), ERT_STATUS_INVALID_MODEL,
		   err.msg, needle);
	size = ert_test_graph_to_onnx(g, &onnx);
	REQUIRE(size);
	err.msg[0] = '\0';
	expect_msg(ert_test_failed_,
		   ert_onnx_import_memory(onnx, size, NULL, &(struct ert_onnx_options){ false },
					  &back, &err),
		   ERT_STATUS_INVALID_MODEL, err.msg, needle);
	CHECK(back == NULL);
	free(onnx);
	/* the writer stores what it is given; the loader refuses it */
	if (ert_format_write_memory(g, NULL, &img, &size, &err) == ERT_OK) {
		err.msg[0] = '\0';
		expect_msg(ert_test_failed_, ert_format_load(img, size, &back, &err),
			   ERT_STATUS_INVALID_MODEL, err.msg, needle);
		CHECK(back == NULL);
		free(img);
	}
	ert_graph_destroy(g);
}

ERT_TEST(too_deep)
{
	struct ert_graph *g = ct_build_deep(ERT_GRAPH_MAX_DEPTH + 1);
	struct ert_err err = { "" };
	void *img = NULL;
	size_t size;

	REQUIRE(g);
	/* the writer will not write it either */
	CHECK(ert_format_write_memory(g, NULL, &img, &size, &err) != ERT_OK);
	CHECK(strstr(err.msg, "deeper than 16") != NULL);
	expect_refused(ert_test_failed_, g, "nest deeper than 16 levels");
}

/* A branch reads a value that nothing in any enclosing graph produces. */
ERT_TEST(missing_outer_value)
{
	struct ert_graph *g = ct_build_deep(1);
	int32_t ghost;
	struct ert_graph *tb;

	REQUIRE(g);
	ghost = ct_tensor(g, "ghost", ERT_DTYPE_FLOAT32, 1, (const int64_t[]){ 1 });
	tb = ert_attr_graph(&g->nodes[0], "then_branch");
	REQUIRE(ghost >= 0 && tb);
	/* the then-branch's output becomes Neg(ghost) */
	int32_t cg = ct_capture(tb, ghost), o = ct_unary(tb, ERT_OP_Neg, "neg_ghost", cg, "ng");
	int32_t *in = realloc(g->nodes[0].inputs, (g->nodes[0].n_inputs + 1) * sizeof(*in));

	REQUIRE(cg >= 0 && o >= 0 && in);
	/* the then-branch's captures come first among the implicit inputs: append after them */
	g->nodes[0].inputs = in;
	memmove(in + 3, in + 2, (g->nodes[0].n_inputs - 2) * sizeof(*in));
	in[2] = ghost;
	g->nodes[0].n_inputs++;
	tb->tensors[tb->outputs[0]].flags &= ~(uint32_t)ERT_TENSOR_OUTPUT;
	tb->outputs[0] = o;
	tb->tensors[o].flags |= ERT_TENSOR_OUTPUT;
	expect_refused(ert_test_failed_, g, "reads 'ghost' before anything produces it");
}

/* A branch node reads a tensor of its own that nothing produces. */
ERT_TEST(missing_inner_value)
{
	struct ert_graph *g = ct_build_deep(1);
	struct ert_graph *eb;

	REQUIRE(g);
	eb = ert_attr_graph(&g->nodes[0], "else_branch");
	REQUIRE(eb && eb->n_nodes == 1);
	int32_t orphan = ct_tensor(eb, "orphan", ERT_DTYPE_FLOAT32, 1, (const int64_t[]){ 1 });

	REQUIRE(orphan >= 0);
	eb->nodes[0].inputs[0] = orphan;
	expect_refused(ert_test_failed_, g, "reads 'orphan' before anything produces it");
}

ERT_TEST(branches_disagree)
{
	struct ert_graph *g = ct_build_deep(1);
	struct ert_graph *tb;

	REQUIRE(g);
	tb = ert_attr_graph(&g->nodes[0], "then_branch");
	REQUIRE(tb && ert_graph_add_output(tb, tb->outputs[0]));
	expect_refused(ert_test_failed_, g, "then_branch has 2 outputs and else_branch 1");
}

/* The branches' outputs are declared with different types. */
ERT_TEST(branches_disagree_on_type)
{
	struct ert_graph *g = ct_build_deep(1);
	struct ert_graph *eb;
	int32_t o;

	REQUIRE(g);
	eb = ert_attr_graph(&g->nodes[0], "else_branch");
	REQUIRE(eb && eb->n_outputs == 1);
	/* else gives the Shape (int64) of its float output */
	o = ct_tensor(eb, "shape", ERT_DTYPE_INT64, 1, (const int64_t[]){ 1 });
	REQUIRE(o >= 0);
	REQUIRE(ert_graph_add_node(eb, ERT_OP_Shape, "shape", 1, &eb->outputs[0], 1, &o) >= 0);
	eb->tensors[eb->outputs[0]].flags &= ~(uint32_t)ERT_TENSOR_OUTPUT;
	eb->outputs[0] = o;
	eb->tensors[o].flags |= ERT_TENSOR_OUTPUT;
	expect_refused(ert_test_failed_, g, "then_branch gives output 0 as float32, else_branch as int64");
}

/* A Scan body that takes one input more than the node's states and scan inputs. */
ERT_TEST(scan_body_arity)
{
	struct ert_graph *g = ct_build_scan();
	struct ert_graph *body;

	REQUIRE(g);
	body = ert_attr_graph(&g->nodes[0], "body");
	REQUIRE(body && body->n_inputs == 2);
	int32_t extra = ct_tensor(body, "extra", ERT_DTYPE_FLOAT32, 0, NULL);

	REQUIRE(extra >= 0 && ert_graph_add_input(body, extra));
	expect_refused(ert_test_failed_, g, "body has 3 inputs, expected 2 (1 states, 1 scan inputs)");
}

ERT_TEST(loop_body_arity)
{
	struct ert_graph *g = ct_build_if_loop();
	struct ert_graph *body;

	REQUIRE(g);
	body = ert_attr_graph(&g->nodes[1], "body");
	REQUIRE(body && body->n_inputs == 3);
	/* a second loop-carried input that the node does not give */
	int32_t extra = ct_tensor(body, "extra", ERT_DTYPE_FLOAT32, 0, NULL);

	REQUIRE(extra >= 0 && ert_graph_add_input(body, extra));
	expect_refused(ert_test_failed_, g, "body has 4 inputs; with 1 loop-carried values it needs 3");
}

/* Nodes of a branch that feed each other. */
ERT_TEST(cycle_in_branch)
{
	struct ert_graph *g = ct_build_deep(1);
	struct ert_graph *eb;
	struct ert_err err = { "" };
	uint8_t *onnx = NULL;
	size_t size;
	struct ert_graph *back = NULL;

	REQUIRE(g);
	eb = ert_attr_graph(&g->nodes[0], "else_branch");
	REQUIRE(eb);
	int32_t a = ct_tensor(eb, "a", ERT_DTYPE_FLOAT32, 1, (const int64_t[]){ 1 });
	int32_t b = ct_tensor(eb, "b", ERT_DTYPE_FLOAT32, 1, (const int64_t[]){ 1 });

	REQUIRE(a >= 0 && b >= 0);
	REQUIRE(ert_graph_add_node(eb, ERT_OP_Relu, "ra", 1, &b, 1, &a) >= 0);
	REQUIRE(ert_graph_add_node(eb, ERT_OP_Relu, "rb", 1, &a, 1, &b) >= 0);
	eb->tensors[eb->outputs[0]].flags &= ~(uint32_t)ERT_TENSOR_OUTPUT;
	eb->outputs[0] = b;
	eb->tensors[b].flags |= ERT_TENSOR_OUTPUT;
	size = ert_test_graph_to_onnx(g, &onnx);
	REQUIRE(size);
	expect_msg(ert_test_failed_,
		   ert_onnx_import_memory(onnx, size, NULL, &(struct ert_onnx_options){ false },
					  &back, &err),
		   ERT_STATUS_INVALID_MODEL, err.msg, "cycle");
	CHECK(strstr(err.msg, "else_branch") != NULL);
	CHECK(back == NULL);
	free(onnx);
	err.msg[0] = '\0';
	expect_msg(ert_test_failed_, ert_graph_validate(g, &err), ERT_STATUS_INVALID_MODEL, err.msg,
		   "before anything produces it");
	ert_graph_destroy(g);
}

/* ---- damaged links between graphs in .ert files ---- */

struct image {
	uint8_t *p;
	size_t size;
};

static struct image image_of(struct ert_graph *g)
{
	struct image im = { NULL, 0 };
	struct ert_err err = { "" };
	void *p = NULL;

	if (g && ert_graph_toposort(g, &err) == ERT_OK &&
	    ert_format_write_memory(g, NULL, &p, &im.size, &err) == ERT_OK)
		im.p = p;
	ert_graph_destroy(g);
	return im;
}

static uint8_t *section_of(struct image *im, uint32_t type)
{
	for (uint32_t s = 0; s < fmt_get32(im->p + FMT_OFF_NSECTIONS); s++) {
		uint8_t *e = im->p + FMT_HEADER_V1 + s * FMT_SECTION_ENTRY;

		if (fmt_get32(e) == type)
			return im->p + fmt_get64(e + 8);
	}
	return NULL;
}

/* Subgraph record @k in the SUBGRAPHS section. */
static uint8_t *sub_record(struct image *im, uint32_t k)
{
	uint8_t *p = section_of(im, FMT_SEC_SUBGRAPHS) + 4;

	for (uint32_t i = 0; i < k; i++) {
		p += 5 * 4;
		for (int l = 0; l < 3; l++)
			p += 4 + 4 * (size_t)fmt_get32(p);
	}
	return p;
}

/* The value field of the first GRAPH attribute named @name in the node table. */
static uint8_t *graph_attr_value(struct image *im, const char *name)
{
	uint8_t *strs = section_of(im, FMT_SEC_STRINGS), *nodes = section_of(im, FMT_SEC_NODES);
	uint32_t n = fmt_get32(strs), idx = UINT32_MAX;
	size_t len = 0;

	for (uint32_t i = 0; i < n; i++)
		if (strcmp((const char *)strs + 4 + 8 * n + fmt_get32(strs + 4 + 8 * i), name) == 0)
			idx = i;
	for (uint8_t *e = section_of(im, FMT_SEC_SUBGRAPHS); e && nodes + len + 12 <= e; len += 4)
		if (fmt_get32(nodes + len) == idx && fmt_get32(nodes + len + 4) == ERT_ATTR_GRAPH &&
		    fmt_get32(nodes + len + 8) == 1)
			return nodes + len + 12;
	return NULL;
}

static void load_damaged(int *ert_test_failed_, struct image *im, const char *needle)
{
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };

	fmt_put32(im->p + FMT_OFF_CHECKSUM,
		  fmt_checksum(im->p, FMT_HEADER_V1, fmt_get32(im->p + FMT_OFF_NSECTIONS)));
	expect_msg(ert_test_failed_, ert_format_load(im->p, im->size, &g, &err),
		   ERT_STATUS_INVALID_MODEL, err.msg, needle);
	CHECK(g == NULL);
	ert_graph_destroy(g);
	free(im->p);
}

ERT_TEST(file_links)
{
	/* if_loop's subgraphs in preorder: then, else, body, body's then and else */
	struct image im = image_of(ct_build_if_loop());
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };

	REQUIRE(im.p);
	CHECK_EQ_INT(fmt_get32(section_of(&im, FMT_SEC_SUBGRAPHS)), 5);
	CHECK_EQ_INT(fmt_get32(sub_record(&im, 3)), 3);
	CHECK_EQ_INT(ert_format_load(im.p, im.size, &g, &err), ERT_OK);
	REQUIRE(g);
	CHECK_EQ_INT(g->n_subs, 3);
	ert_graph_destroy(g);
	/* a subgraph whose parent comes after it: the only way to write a cycle */
	fmt_put32(sub_record(&im, 0), 1);
	load_damaged(ert_test_failed_, &im, "a parent comes before its subgraphs");
	/* the body's If naming a subgraph of the main graph */
	im = image_of(ct_build_if_loop());
	REQUIRE(im.p);
	fmt_put32(sub_record(&im, 3), 0);
	load_damaged(ert_test_failed_, &im, "belongs to graph 0, not to this graph 3");
	/* both branches naming the same subgraph */
	im = image_of(ct_build_if_loop());
	REQUIRE(im.p);
	uint8_t *v = graph_attr_value(&im, "else_branch");

	REQUIRE(v && fmt_get32(v) == 1);
	fmt_put32(v, 0);
	load_damaged(ert_test_failed_, &im, "which another attribute holds already");
	/* a subgraph index past the table */
	im = image_of(ct_build_if_loop());
	REQUIRE(im.p);
	v = graph_attr_value(&im, "body");
	REQUIRE(v);
	fmt_put32(v, 99);
	load_damaged(ert_test_failed_, &im, "refers to subgraph 99 of 5");
	/* a body input outside its own graph's tensors */
	im = image_of(ct_build_if_loop());
	REQUIRE(im.p);
	fmt_put32(sub_record(&im, 2) + 6 * 4, 1000);
	load_damaged(ert_test_failed_, &im, "subgraph 2 input 0: tensor index 1000 out of range");
}

/* A chain one level too deep, made in the file by re-parenting the last branch. */
ERT_TEST(file_too_deep)
{
	struct image im = image_of(ct_build_deep(ERT_GRAPH_MAX_DEPTH));
	uint32_t last = 2 * ERT_GRAPH_MAX_DEPTH - 1;

	REQUIRE(im.p);
	REQUIRE(fmt_get32(section_of(&im, FMT_SEC_SUBGRAPHS)) == last + 1);
	/* the innermost If's else-branch, at depth 16, under its sibling then-branch */
	CHECK_EQ_INT(fmt_get32(sub_record(&im, ERT_GRAPH_MAX_DEPTH)), ERT_GRAPH_MAX_DEPTH - 1);
	fmt_put32(sub_record(&im, ERT_GRAPH_MAX_DEPTH), ERT_GRAPH_MAX_DEPTH);
	load_damaged(ert_test_failed_, &im, "nests 17 levels deep, at most 16");
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(if_loop_through_ert), ERT_TEST_ENTRY(if_loop_through_onnx),
	      ERT_TEST_ENTRY(callbacks_see_subgraph_ops), ERT_TEST_ENTRY(body_op_error_names_each_op_once),
	      ERT_TEST_ENTRY(scan_axes_directions), ERT_TEST_ENTRY(deepest_nesting_runs),
	      ERT_TEST_ENTRY(too_deep), ERT_TEST_ENTRY(missing_outer_value),
	      ERT_TEST_ENTRY(missing_inner_value), ERT_TEST_ENTRY(branches_disagree),
	      ERT_TEST_ENTRY(loop_body_arity),
	      ERT_TEST_ENTRY(branches_disagree_on_type), ERT_TEST_ENTRY(scan_body_arity), ERT_TEST_ENTRY(cycle_in_branch),
	      ERT_TEST_ENTRY(file_links), ERT_TEST_ENTRY(file_too_deep))
