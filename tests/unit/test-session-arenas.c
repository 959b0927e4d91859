/* SPDX-License-Identifier: MIT */
/*
 * One arena per buffer type. A second backend, "testdev", lives in this file: it
 * runs Relu and Add on float32 in memory of its own buffer type, from its own
 * allocator, which records what it hands out. It is registered as the factory of
 * ERT_BACKEND_OPENCL, a type with no backend in this build, through the internal
 * ert_backend_register() (the static library has it; libedgert.so does not).
 * Sessions on {testdev, cpu} must give the CPU-only answers with two arenas.
 * A testdev whose memory the host cannot see (it says so, and copies with
 * buffer_write/buffer_read) gets the tensors that cross at its splits copied,
 * and counted in ert_session_copied_bytes(); one that calls such memory
 * host-visible fails to plan, saying why. Asked to (ert_config.device_times),
 * testdev "measures" each step's device time (a number made from the step's
 * size), which after_op callbacks must then see, and CPU ops must not.
 */
#include <stdlib.h>

#include "edgert.h"
#include "ert-backend-impl.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test.h"
#include "session/session-impl.h"

#define DEV_TYPE "testdev-mem"

static struct {
	bool hidden;          /* buffers have no host address (device-only memory) */
	bool lies;            /* ... and buffer_host_visible() says they have one */
	int allocs, frees, steps_run;
	int bad_locs;         /* compute() found an input or output it cannot locate */
	uint64_t copied;      /* bytes through buffer_write/buffer_read */
	void *last;           /* the most recent allocation */
	size_t last_size;
	bool timing;          /* the factory's config asked for device times */
	int device_time_calls;
	/* faults: the node (by name) whose prepare or compute fails, how it words it */
	const char *fail_node;
	bool fail_prepare;
	int fail_form;        /* 0: "testdev: Type 'name': why", 1: ert_node_fail(), 2: "why" */
	bool fail_sync;       /* synchronize() fails: "testdev: device lost" */
} dev;

/* The fault @dev asks for on @x, else ERT_OK. */
static ert_status dev_fault(const struct ert_exec *x, struct ert_err *err)
{
	if (!dev.fail_node || strcmp(x->node->name, dev.fail_node))
		return ERT_OK;
	if (dev.fail_form == 0)
		ert_err_set(err, "testdev: %s '%s': device lost", ert_op_name(x->node->op),
			    x->node->name);
	else if (dev.fail_form == 1)
		ert_node_fail(x->node, err, ERT_STATUS_BACKEND, "device lost");
	else
		ert_err_set(err, "device lost");
	return ERT_STATUS_BACKEND;
}

static ert_status dev_prepare(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	return dev.fail_prepare ? dev_fault(x, err) : ERT_OK;
}

static ert_status dev_synchronize(struct ert_backend *be, struct ert_err *err)
{
	if (!dev.fail_sync)
		return ERT_OK;
	ert_err_set(err, "testdev: device lost");
	return ERT_STATUS_BACKEND;
}

static bool dev_supports_op(struct ert_backend *be, const struct ert_exec *x)
{
	if (x->node->op != ERT_OP_Relu && x->node->op != ERT_OP_Add)
		return false;
	if (x->n_out != 1 || !x->out[0] || x->out[0]->dtype != ERT_DTYPE_FLOAT32)
		return false;
	/* no broadcasting: every input has the output's shape */
	for (uint32_t k = 0; k < x->n_in; k++)
		if (!x->in[k] || x->in[k]->dtype != ERT_DTYPE_FLOAT32 ||
		    x->in[k]->numel != x->out[0]->numel)
			return false;
	return true;
}

static const char *dev_buffer_type(struct ert_backend *be)
{
	return DEV_TYPE;
}

static ert_status dev_buffer_alloc(struct ert_backend *be, size_t size, struct ert_buffer *out,
				   struct ert_err *err)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		ert_err_set(err, "testdev: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	dev.allocs++;
	dev.last = p;
	dev.last_size = size;
	out->host = dev.hidden ? NULL : p;
	out->size = size;
	out->handle = p;
	return ERT_OK;
}

static void dev_buffer_free(struct ert_backend *be, struct ert_buffer *buf)
{
	dev.frees++;
	free(buf->handle);
}

static bool dev_host_visible(struct ert_backend *be)
{
	return !dev.hidden || dev.lies;
}

static ert_status dev_write(struct ert_backend *be, const struct ert_buffer *buf, size_t offset,
			    const void *src, size_t size, struct ert_err *err)
{
	if (offset > buf->size || size > buf->size - offset) {
		ert_err_set(err, "testdev: write of %zu bytes at %zu past %zu", size, offset,
			    buf->size);
		return ERT_STATUS_BACKEND;
	}
	memcpy((uint8_t *)buf->handle + offset, src, size);
	dev.copied += size;
	return ERT_OK;
}

static ert_status dev_read(struct ert_backend *be, const struct ert_buffer *buf, size_t offset,
			   void *dst, size_t size, struct ert_err *err)
{
	if (offset > buf->size || size > buf->size - offset) {
		ert_err_set(err, "testdev: read of %zu bytes at %zu past %zu", size, offset,
			    buf->size);
		return ERT_STATUS_BACKEND;
	}
	memcpy(dst, (const uint8_t *)buf->handle + offset, size);
	dev.copied += size;
	return ERT_OK;
}

static uint64_t dev_copied_bytes(struct ert_backend *be)
{
	return dev.copied;
}

/*
 * Device memory is found through the step's locations, its data pointers
 * being NULL. Host-visible memory through the data pointers; a location, set
 * for what lies in testdev's own arena, agrees with them.
 */
static void *dev_addr(const struct ert_value *v, const struct ert_tensor_loc *loc)
{
	void *p = loc->buf ? (uint8_t *)loc->buf->handle + loc->offset : NULL;

	if (dev.hidden) {
		if (!p || v->data)
			dev.bad_locs++;
		return p;
	}
	if (!v->data || (p && p != v->data))
		dev.bad_locs++;
	return v->data;
}

static ert_status dev_compute(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	float *o = dev_addr(x->out[0], &x->out_loc[0]);
	const float *a = dev_addr(x->in[0], &x->in_loc[0]);
	int64_t n = x->out[0]->numel;

	if (!dev.fail_prepare && dev_fault(x, err) != ERT_OK)
		return ERT_STATUS_BACKEND;
	if (!o || !a) {
		ert_err_set(err, "testdev: %s '%s' has a tensor outside its memory",
			    ert_op_name(x->node->op), x->node->name);
		return ERT_STATUS_BACKEND;
	}
	/* element by element, reading before writing: in place is fine */
	if (x->node->op == ERT_OP_Relu) {
		for (int64_t i = 0; i < n; i++)
			o[i] = a[i] > 0 ? a[i] : 0;
	} else {
		const float *b = dev_addr(x->in[1], &x->in_loc[1]);

		if (!b) {
			ert_err_set(err, "testdev: Add '%s' cannot locate its second input",
				    x->node->name);
			return ERT_STATUS_BACKEND;
		}
		for (int64_t i = 0; i < n; i++)
			o[i] = a[i] + b[i];
	}
	dev.steps_run++;
	return ERT_OK;
}

/* What testdev says a step ran for: nanoseconds, distinct per op and size. */
static uint64_t dev_step_ns(enum ert_op op, int64_t numel)
{
	return 1000u * (uint64_t)op + (uint64_t)numel;
}

static bool dev_device_time(struct ert_backend *be, const struct ert_exec *x, uint64_t *ns_out)
{
	dev.device_time_calls++;
	if (!dev.timing)
		return false;
	*ns_out = dev_step_ns(x->node->op, x->out[0]->numel);
	return true;
}

static void dev_destroy(struct ert_backend *be)
{
	free(be);
}

static const struct ert_backend_ops dev_ops = {
	.abi_version = ERT_BACKEND_ABI_VERSION,
	.name = "testdev",
	.supports_op = dev_supports_op,
	.buffer_type = dev_buffer_type,
	.buffer_alloc = dev_buffer_alloc,
	.buffer_free = dev_buffer_free,
	.buffer_host_visible = dev_host_visible,
	.buffer_write = dev_write,
	.buffer_read = dev_read,
	.prepare = dev_prepare,
	.compute = dev_compute,
	.synchronize = dev_synchronize,
	.destroy = dev_destroy,
	.copied_bytes = dev_copied_bytes,
	.device_time = dev_device_time,
};

static ert_status dev_create(const ert_config *cfg, struct ert_backend **out,
			     struct ert_err *err)
{
	struct ert_backend *be = calloc(1, sizeof(*be));

	if (!be) {
		ert_err_set(err, "testdev: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	be->ops = &dev_ops;
	be->type = ERT_BACKEND_OPENCL;
	dev.timing = cfg && cfg->device_times;
	*out = be;
	return ERT_OK;
}

/*
 * Register testdev (with host-visible buffers or not), reset its records and
 * create a session on {testdev, cpu}.
 */
static ert_session *dev_session(ert_model *m, bool hidden, ert_status *st)
{
	ert_session *s = NULL;
	ert_config cfg;

	memset(&dev, 0, sizeof(dev));
	dev.hidden = hidden;
	dev.lies = false;
	ert_backend_register(ERT_BACKEND_OPENCL, dev_create);

	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_OPENCL;
	cfg.backends[1] = ERT_BACKEND_CPU;
	cfg.num_backends = 2;
	cfg.shape_mutable = true;
	*st = ert_session_create(m, &cfg, &s);
	return s;
}

/*
 * x[B,8] -> MatMul(w) -> m -> Relu -> r -> Add(r, x) -> a -> Relu -> a2 -> Softmax -> y
 * MatMul and Softmax run on the CPU, the rest on testdev (with @dev_ops): m, which
 * the CPU writes and testdev reads, lies in testdev's arena (the CPU writes it
 * through the mapping), a reads the graph input, a2 may be a in place, y reads
 * testdev's arena. Without @dev_ops: x -> MatMul -> m -> Softmax -> y, all on the CPU.
 */
static ert_model *mixed_model(int64_t batch, bool with_dev_ops)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[2] = { batch, 8 }, wd[2] = { 8, 8 };
	float *w = malloc(64 * sizeof(float));
	int32_t x, wt, m, r, a, a2, y;

	for (int i = 0; i < 64; i++)
		w[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, xd);
	if (batch < 0)
		g->tensors[x].dim_names[0] = ert_graph_strdup(g, "batch");
	wt = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, 2, wd);
	ert_graph_set_const(g, wt, w, 64 * sizeof(float), true);
	m = ert_graph_add_tensor(g, "m", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_MatMul, "matmul", 2, (int32_t[]){ x, wt }, 1, &m);
	if (with_dev_ops) {
		r = ert_graph_add_tensor(g, "r", ERT_DTYPE_FLOAT32, -1, NULL);
		a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, -1, NULL);
		a2 = ert_graph_add_tensor(g, "a2", ERT_DTYPE_FLOAT32, -1, NULL);
		ert_graph_add_node(g, ERT_OP_Relu, "relu1", 1, &m, 1, &r);
		ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ r, x }, 1, &a);
		ert_graph_add_node(g, ERT_OP_Relu, "relu2", 1, &a, 1, &a2);
		ert_graph_add_node(g, ERT_OP_Softmax, "softmax", 1, &a2, 1, &y);
	} else {
		ert_graph_add_node(g, ERT_OP_Softmax, "softmax", 1, &m, 1, &y);
	}
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

static void fill_x(ert_session *s, int64_t batch)
{
	float *x = ert_tensor_data(ert_session_get_input(s, 0));

	for (int64_t i = 0; i < batch * 8; i++)
		x[i] = (float)(i % 5) - 2.0f;
}

static const struct ert_value *plan_value(ert_session *s, const char *name)
{
	const struct ert_graph *g = s->model->graph;

	for (uint32_t t = 0; t < g->n_tensors; t++)
		if (!strcmp(g->tensors[t].name, name))
			return &s->plan->t[t].v;
	return NULL;
}

struct visit {
	int dev_steps, outside;   /* testdev steps; outputs not where they should be */
};

/* Bytes the session's backends hold outside the plan (packed weights). */
static size_t resident_bytes(const ert_session *s)
{
	size_t n = 0;

	for (uint32_t b = 0; b < s->n_backends; b++)
		n += ert_backend_resident_bytes(s->backends[b]);
	return n;
}

/*
 * Outputs of testdev steps lie in testdev's allocation, and so does m, which a
 * CPU step writes for testdev to read; the CPU's other outputs lie outside it.
 */
static void check_step(const struct ert_node *node, const struct ert_value *const *in,
		       uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
		       const char *backend, void *user)
{
	struct visit *v = user;
	bool on_dev = !strcmp(backend, "testdev");

	v->dev_steps += on_dev;
	for (uint32_t k = 0; k < n_out; k++) {
		const uint8_t *p = out[k]->data, *lo = dev.last;
		bool inside = p >= lo && p + out[k]->nbytes <= lo + dev.last_size;

		v->outside += inside != (on_dev || node->op == ERT_OP_MatMul);
	}
}

/* With device memory, testdev's outputs have no host address, the CPU's all have one. */
static void check_step_hidden(const struct ert_node *node, const struct ert_value *const *in,
			      uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
			      const char *backend, void *user)
{
	struct visit *v = user;
	bool on_dev = !strcmp(backend, "testdev");

	v->dev_steps += on_dev;
	for (uint32_t k = 0; k < n_out; k++)
		v->outside += (out[k]->data == NULL) != on_dev;
	for (uint32_t k = 0; k < n_in; k++)
		v->outside += !on_dev && !in[k]->data;
}

ERT_TEST(two_arenas_match_cpu)
{
	ert_model *m = mixed_model(-1, true);
	ert_session *s, *ref = NULL;
	ert_config cfg;
	ert_status st;

	REQUIRE(m);
	s = dev_session(m, false, &st);
	CHECK_EQ_INT(st, ERT_OK);
	ert_config_init(&cfg);
	cfg.shape_mutable = true;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &ref), ERT_OK);
	REQUIRE(s && ref);
	for (int64_t batch = 2; batch <= 3; batch++) {
		int64_t dims[2] = { batch, 8 };
		struct visit v = { 0, 0 };

		CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, dims), ERT_OK);
		CHECK_EQ_INT(ert_session_resize_input(ref, 0, 2, dims), ERT_OK);
		fill_x(s, batch);
		fill_x(ref, batch);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		CHECK_EQ_INT(ert_session_run(ref), ERT_OK);
		const ert_tensor *y = ert_session_get_output(s, 0);

		REQUIRE(ert_tensor_byte_size(y) == (size_t)batch * 8 * sizeof(float));
		CHECK(!memcmp(ert_tensor_data(y), ert_tensor_data(ert_session_get_output(ref, 0)),
			      ert_tensor_byte_size(y)));
		/* each plan allocates testdev's arena once, with its own allocator */
		CHECK_EQ_INT(dev.allocs, batch - 1);
		CHECK(dev.last_size > 0);
		CHECK_EQ_INT(dev.steps_run, 3 * (batch - 1));
		CHECK_EQ_INT(dev.bad_locs, 0);
		CHECK_EQ_INT(ert_session_copied_bytes(s), 0);

		const struct ert_plan *p = s->plan;

		REQUIRE(p->n_arenas == 2);
		CHECK(!strcmp(p->arenas[0].type, DEV_TYPE));
		CHECK(!strcmp(p->arenas[1].type, "host"));
		CHECK(p->arenas[0].buf.host == dev.last);
		CHECK_EQ_INT(p->arenas[0].size, dev.last_size);
		CHECK_EQ_INT(p->peak_bytes, p->arenas[0].size + p->arenas[1].size);
		CHECK_EQ_INT(ert_session_peak_bytes(s),
			     s->in_caps[0] + p->peak_bytes + resident_bytes(s));

		CHECK_EQ_INT(ert_session_visit_steps(s, check_step, &v), ERT_OK);
		CHECK_EQ_INT(v.dev_steps, 3);
		CHECK_EQ_INT(v.outside, 0);
		/* in place within testdev's arena, m included; never across arenas */
		CHECK(plan_value(s, "a2")->data == plan_value(s, "a")->data);
		CHECK(plan_value(s, "r")->data == plan_value(s, "m")->data);
		CHECK((const uint8_t *)plan_value(s, "y")->data < (const uint8_t *)dev.last ||
		      (const uint8_t *)plan_value(s, "y")->data >= (const uint8_t *)dev.last + dev.last_size);
	}
	ert_session_destroy(s);
	CHECK_EQ_INT(dev.frees, dev.allocs);
	ert_session_destroy(ref);
	ert_model_unref(m);
	ert_backend_register(ERT_BACKEND_OPENCL, NULL);
}

/* A buffer type no step uses gets no arena: testdev's allocator is never called. */
ERT_TEST(unused_buffer_type_has_no_arena)
{
	ert_model *m = mixed_model(2, false);
	ert_session *s;
	ert_status st;

	REQUIRE(m);
	s = dev_session(m, false, &st);
	CHECK_EQ_INT(st, ERT_OK);
	REQUIRE(s);
	fill_x(s, 2);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_EQ_INT(s->plan->n_arenas, 1);
	CHECK(!strcmp(s->plan->arenas[0].type, "host"));
	CHECK_EQ_INT(ert_session_peak_bytes(s),
		     s->in_caps[0] + s->plan->arenas[0].size + resident_bytes(s));
	CHECK_EQ_INT(dev.allocs, 0);
	ert_session_destroy(s);
	ert_model_unref(m);
	ert_backend_register(ERT_BACKEND_OPENCL, NULL);
}

/*
 * testdev's memory is not host-visible: the CPU's MatMul writes m in host
 * memory and m is copied to testdev's arena before Relu reads it, the graph
 * input x before Add reads it, and a2 back to host memory before Softmax
 * reads it: 3 x batch x 8 floats per run, for the CPU-only answers.
 */
ERT_TEST(hidden_buffer_type_copies_at_splits)
{
	ert_model *m = mixed_model(-1, true);
	ert_session *s, *ref = NULL;
	ert_config cfg;
	ert_status st;

	REQUIRE(m);
	s = dev_session(m, true, &st);
	CHECK_EQ_INT(st, ERT_OK);
	ert_config_init(&cfg);
	cfg.shape_mutable = true;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &ref), ERT_OK);
	REQUIRE(s && ref);
	for (int64_t batch = 2; batch <= 3; batch++) {
		int64_t dims[2] = { batch, 8 };
		struct visit v = { 0, 0 };
		size_t bytes = (size_t)batch * 8 * sizeof(float);

		CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, dims), ERT_OK);
		CHECK_EQ_INT(ert_session_resize_input(ref, 0, 2, dims), ERT_OK);
		fill_x(s, batch);
		fill_x(ref, batch);
		for (int run = 0; run < 2; run++) {
			CHECK_EQ_INT(ert_session_run(s), ERT_OK);
			CHECK_EQ_INT(ert_session_copied_bytes(s), 3 * bytes);
		}
		CHECK_EQ_INT(ert_session_run(ref), ERT_OK);
		CHECK_EQ_INT(ert_session_copied_bytes(ref), 0);
		const ert_tensor *y = ert_session_get_output(s, 0);

		REQUIRE(ert_tensor_byte_size(y) == bytes);
		CHECK(!memcmp(ert_tensor_data(y), ert_tensor_data(ert_session_get_output(ref, 0)),
			      bytes));
		CHECK_EQ_INT(dev.steps_run, 6 * (batch - 1));
		CHECK_EQ_INT(dev.bad_locs, 0);

		const struct ert_plan *p = s->plan;

		REQUIRE(p->n_arenas == 2);
		CHECK(!strcmp(p->arenas[0].type, DEV_TYPE));
		CHECK(!p->arenas[0].visible && p->arenas[0].buf.host == NULL);
		CHECK_EQ_INT(p->n_mirrors, 3);
		/* mirrors are blocks of the memory plan, counted in the arenas */
		CHECK_EQ_INT(p->peak_bytes, p->arenas[0].size + p->arenas[1].size);
		CHECK(p->arenas[0].size >= 3 * bytes);
		CHECK_EQ_INT(ert_session_visit_steps(s, check_step_hidden, &v), ERT_OK);
		CHECK_EQ_INT(v.dev_steps, 3);
		CHECK_EQ_INT(v.outside, 0);
	}
	ert_session_destroy(s);
	CHECK_EQ_INT(dev.frees, dev.allocs);
	ert_session_destroy(ref);
	ert_model_unref(m);
	ert_backend_register(ERT_BACKEND_OPENCL, NULL);
}

/*
 * x -> MatMul (cpu) -> m -> Relu (testdev) -> y: the graph output lies in
 * memory the host cannot see, so every run reads it back after the last step;
 * the application reads it in host memory.
 */
ERT_TEST(hidden_graph_output_read_back)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[2] = { 2, 8 }, wd[2] = { 8, 8 };
	float *w = malloc(64 * sizeof(float));
	int32_t x, wt, mm, y;
	ert_session *s;
	ert_status st;

	REQUIRE(g && w);
	for (int i = 0; i < 64; i++)
		w[i] = (float)((i * 5) % 7) * 0.5f - 1.5f;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, xd);
	wt = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, 2, wd);
	ert_graph_set_const(g, wt, w, 64 * sizeof(float), true);
	mm = ert_graph_add_tensor(g, "m", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_MatMul, "matmul", 2, (int32_t[]){ x, wt }, 1, &mm);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &mm, 1, &y);
	ert_graph_add_output(g, y);

	ert_model *m = model_from_graph(g);

	REQUIRE(m);
	s = dev_session(m, true, &st);
	CHECK_EQ_INT(st, ERT_OK);
	REQUIRE(s);
	fill_x(s, 2);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_EQ_INT(ert_session_copied_bytes(s), 2 * 64);
	CHECK_EQ_INT(dev.bad_locs, 0);

	const float *xv = ert_tensor_data(ert_session_get_input(s, 0));
	const ert_tensor *yt = ert_session_get_output(s, 0);
	const float *yv = ert_tensor_data(yt);

	REQUIRE(yv && ert_tensor_byte_size(yt) == 64);
	for (int r = 0; r < 2; r++) {
		for (int c = 0; c < 8; c++) {
			float acc = 0;

			for (int k = 0; k < 8; k++)
				acc += xv[r * 8 + k] * ((float)(((k * 8 + c) * 5) % 7) * 0.5f - 1.5f);
			CHECK_NEAR(yv[r * 8 + c], acc > 0 ? acc : 0, 1e-5);
		}
	}
	/* the output's copy is host memory of the plan, not testdev's */
	CHECK(s->plan->t[y].host_mirror >= 0);
	CHECK((const void *)yv == s->plan->mirrors[s->plan->t[y].host_mirror].v.data);
	ert_session_destroy(s);
	CHECK_EQ_INT(dev.frees, dev.allocs);
	ert_model_unref(m);
	ert_backend_register(ERT_BACKEND_OPENCL, NULL);
}

/*
 * A backend that calls its memory host-visible and hands out buffers with no
 * host address would have the CPU write through NULL: planning refuses it.
 */
ERT_TEST(hidden_buffer_type_called_visible_fails_to_plan)
{
	ert_model *m = mixed_model(2, true);
	ert_session *s = NULL;
	ert_config cfg;
	ert_status st;

	REQUIRE(m);
	memset(&dev, 0, sizeof(dev));
	dev.hidden = true;
	dev.lies = true;
	ert_backend_register(ERT_BACKEND_OPENCL, dev_create);
	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_OPENCL;
	cfg.backends[1] = ERT_BACKEND_CPU;
	cfg.num_backends = 2;
	st = ert_session_create(m, &cfg, &s);
	CHECK(s == NULL);
	CHECK_EQ_INT(st, ERT_STATUS_BACKEND);
	const char *msg = ert_last_error();

	CHECK(strstr(msg, "backend testdev calls buffer type '" DEV_TYPE "' host-visible") != NULL);
	CHECK(strstr(msg, "has no host address") != NULL);
	CHECK_EQ_INT(dev.allocs, 1);
	CHECK_EQ_INT(dev.frees, 1);
	ert_model_unref(m);
	ert_backend_register(ERT_BACKEND_OPENCL, NULL);
}

/*
 * An op failing on a backend other than the CPU: the session's error names the
 * op, its type and the backend once each, whichever way the backend worded
 * it (its own "testdev: Type 'name': " prefix, ert_node_fail()'s, or none).
 * Before, the backend's prefixed form came out doubled: "failed to run Relu
 * 'relu2': testdev: Relu 'relu2': device lost".
 */
ERT_TEST(op_errors_name_op_and_backend_once)
{
	ert_model *m = mixed_model(2, true);
	ert_session *s;
	ert_status st;

	REQUIRE(m);
	for (int form = 0; form < 3; form++) {
		/* while running */
		s = dev_session(m, false, &st);
		REQUIRE(s);
		dev.fail_node = "relu2";
		dev.fail_form = form;
		fill_x(s, 2);
		CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_BACKEND);
		CHECK_EQ_STR(ert_session_error(s), "failed to run Relu 'relu2': testdev: device lost");
		CHECK_EQ_STR(ert_session_op_error(s), "Relu 'relu2': testdev: device lost");
		CHECK_EQ_STR(ert_session_failed_op(s), "Relu");
		ert_session_destroy(s);

		/* while planning */
		s = NULL;
		memset(&dev, 0, sizeof(dev));
		dev.fail_node = "relu1";
		dev.fail_prepare = true;
		dev.fail_form = form;
		ert_backend_register(ERT_BACKEND_OPENCL, dev_create);
		ert_config cfg;

		ert_config_init(&cfg);
		cfg.backends[0] = ERT_BACKEND_OPENCL;
		cfg.num_backends = 1;
		CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_STATUS_BACKEND);
		CHECK(s == NULL);
		CHECK_EQ_STR(ert_last_error(), "failed to create session: failed to plan: "
					       "Relu 'relu1': testdev: device lost");
	}
	/* the backend's split ends in a failure: the backend named once */
	s = dev_session(m, false, &st);
	REQUIRE(s);
	dev.fail_sync = true;
	fill_x(s, 2);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_BACKEND);
	CHECK_EQ_STR(ert_session_error(s), "failed to run the ops before Softmax 'softmax' on "
					   "testdev: device lost");
	CHECK(ert_session_op_error(s) == NULL);
	ert_session_destroy(s);
	ert_model_unref(m);
	ert_backend_register(ERT_BACKEND_OPENCL, NULL);
}

/* What after_op saw of each op: its backend and its device time. */
struct seen {
	uint32_t n, timed, bad;
	char backend[8][16];
	uint32_t device_timed[8];
	uint64_t device_ns[8];
};

static int see_op(const ert_op_info *op, void *user)
{
	struct seen *v = user;

	if (op->index >= 8 || op->depth) {
		v->bad++;
		return 0;
	}
	snprintf(v->backend[op->index], sizeof(v->backend[0]), "%s", op->backend);
	v->device_timed[op->index] = op->device_timed;
	v->device_ns[op->index] = op->device_ns;
	v->timed += op->device_timed != 0;
	v->n++;
	return 0;
}

/* before_op gets no device time: nothing has run yet. */
static int see_before(const ert_op_info *op, void *user)
{
	struct seen *v = user;

	v->bad += op->device_timed != 0 || op->device_ns != 0;
	return 0;
}

/*
 * ert_config.device_times: after_op of each testdev op carries the time the
 * backend measured (device_timed set), CPU ops carry none; without it the
 * backend is not asked and no op is timed. A config of the layout before
 * device_times (struct_size ends there, garbage after) gets the default: off.
 */
ERT_TEST(device_times_reach_after_op)
{
	ert_model *m = mixed_model(3, true);
	static const enum ert_op want_op[5] = { ERT_OP_MatMul, ERT_OP_Relu, ERT_OP_Add, ERT_OP_Relu,
						ERT_OP_Softmax };

	REQUIRE(m);
	for (int pass = 0; pass < 3; pass++) {
		bool on = pass == 1, old_layout = pass == 2;
		struct seen v = { 0 };
		ert_session *s = NULL;
		ert_config cfg;

		memset(&dev, 0, sizeof(dev));
		dev.hidden = true;
		ert_backend_register(ERT_BACKEND_OPENCL, dev_create);
		ert_config_init(&cfg);
		cfg.backends[0] = ERT_BACKEND_OPENCL;
		cfg.backends[1] = ERT_BACKEND_CPU;
		cfg.num_backends = 2;
		cfg.before_op = see_before;
		cfg.after_op = see_op;
		cfg.callback_user = &v;
		cfg.device_times = on;
		if (old_layout) {
			/* as device_times, the garbage would ask for times */
			memset((char *)&cfg + offsetof(ert_config, device_times), 0xff,
			       sizeof(cfg) - offsetof(ert_config, device_times));
			cfg.struct_size = offsetof(ert_config, device_times);
		}
		CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
		REQUIRE(s);
		fill_x(s, 3);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		CHECK_EQ_INT(v.n, 5);
		CHECK_EQ_INT(v.bad, 0);
		CHECK_EQ_INT(v.timed, on ? 3 : 0);
		/* asked once per testdev op after it ran, only when the session wants times */
		CHECK_EQ_INT(dev.device_time_calls, on ? 3 : 0);
		for (uint32_t i = 0; i < 5 && i < v.n; i++) {
			bool on_dev = !strcmp(v.backend[i], "testdev");

			CHECK_EQ_INT(on_dev, i >= 1 && i <= 3);
			CHECK_EQ_INT(v.device_timed[i], on && on_dev);
			CHECK_EQ_INT(v.device_ns[i], on && on_dev ? dev_step_ns(want_op[i], 3 * 8) : 0);
		}
		ert_session_destroy(s);
		ert_backend_register(ERT_BACKEND_OPENCL, NULL);
	}
	ert_model_unref(m);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(two_arenas_match_cpu), ERT_TEST_ENTRY(unused_buffer_type_has_no_arena),
	      ERT_TEST_ENTRY(op_errors_name_op_and_backend_once),
	      ERT_TEST_ENTRY(hidden_buffer_type_copies_at_splits),
	      ERT_TEST_ENTRY(hidden_graph_output_read_back),
	      ERT_TEST_ENTRY(hidden_buffer_type_called_visible_fails_to_plan),
	      ERT_TEST_ENTRY(device_times_reach_after_op))
