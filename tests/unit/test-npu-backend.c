/* SPDX-License-Identifier: MIT */
/*
 * The NPU backend's lowering against the CPU backend, byte for byte. Each
 * case builds a small int8 graph with the fixed-point rule (ert.requant = 1,
 * docs/int8.md) from seeded random weights, scales and zero points; checks
 * that its nodes named "npu:..." are placed on the NPU (and "cpu:..." on the
 * CPU); runs it on {npu, cpu}, with the userspace simulator
 * (ERT_NPU_DEVICE=sim), and on the CPU alone with the same random inputs; and
 * compares every output byte. Layers larger than the device's work limit
 * (ENPU_CS_MAX_WORK) are checked to be cut into several commands.
 *
 * The ops under test sit in one NPU island with a convolution or a matrix
 * product: islands under min_island_macs go back to the CPU.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test-qgraph.h"
#include "ert-test.h"
#include "npu/npu-impl.h"
#include "opt/opt-private.h"
#include "opt/passes.h"
#include "session/session-impl.h"

/* ---- running and comparing ------------------------------------------------- */

static ert_session *new_session(ert_model *m, bool npu)
{
	ert_session *s = NULL;
	ert_config cfg;

	ert_config_init(&cfg);
	if (npu) {
		cfg.backends[0] = ERT_BACKEND_NPU;
		cfg.backends[1] = ERT_BACKEND_CPU;
		cfg.num_backends = 2;
	}
	cfg.shape_mutable = true;
	if (ert_session_create(m, &cfg, &s) != ERT_OK)
		fprintf(stderr, "cannot create a session: %s\n", ert_last_error());
	return s;
}

struct placement {
	int want_npu, misplaced;
};

static void check_step(const struct ert_node *node, const struct ert_value *const *in,
		       uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
		       const char *backend, void *user)
{
	struct placement *pl = user;
	bool want_npu = !strncmp(node->name, "npu:", 4);
	bool want_cpu = !strncmp(node->name, "cpu:", 4);

	pl->want_npu += want_npu;
	if ((want_npu && strcmp(backend, "npu")) || (want_cpu && strcmp(backend, "cpu"))) {
		fprintf(stderr, "%s '%s' runs on %s\n", ert_op_name(node->op), node->name, backend);
		pl->misplaced++;
	}
}

/* Nodes of @m named "npu:...": each must be a step of the plan (none folded away). */
static int npu_nodes(const ert_model *m)
{
	const struct ert_graph *g = ert_model_graph(m);
	int n = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++)
		n += !strncmp(g->nodes[i].name, "npu:", 4);
	return n;
}

/* Commands the NPU lowered node @name into in the current plan; -1 when not on the NPU. */
static int npu_cmds(ert_session *s, const char *name)
{
	for (uint32_t i = 0; i < s->plan->n_steps; i++) {
		const struct ert_step *stp = &s->plan->steps[i];

		if (strcmp(stp->x.node->name, name))
			continue;
		if (strcmp(s->backends[stp->backend]->ops->name, "npu") || !stp->x.state)
			return -1;
		return (int)((const struct npu_op *)stp->x.state)->n_cmds;
	}
	return -1;
}

/* Jobs the NPU backend of @s has submitted so far. */
static uint64_t npu_jobs(ert_session *s)
{
	for (uint32_t b = 0; b < s->n_backends; b++)
		if (!strcmp(s->backends[b]->ops->name, "npu"))
			return ((const struct ert_npu *)s->backends[b]->ctx)->submitted;
	return 0;
}

/* Give every input of @s and @ref the same random values (int8, or float32 in [-3, 3)). */
static void fill_inputs(int *ert_test_failed_, ert_session *s, ert_session *ref, uint64_t seed)
{
	for (uint32_t k = 0; k < ert_session_input_count(s); k++) {
		const ert_tensor *t = ert_session_get_input(s, k);
		size_t size = ert_tensor_byte_size(t), n = ert_tensor_element_count(t);
		ert_dtype dt = ert_tensor_dtype(t);
		uint8_t *buf = malloc(size ? size : 1);

		for (size_t i = 0; i < n; i++) {
			uint64_t r = rnd(&seed);

			if (dt == ERT_DTYPE_FLOAT32) {
				float f = (float)(r >> 40) / (float)(1 << 24) * 6.0f - 3.0f;

				memcpy(buf + 4 * i, &f, 4);
			} else {
				buf[i] = (uint8_t)r;
			}
		}
		CHECK_EQ_INT(ert_session_set_input(s, k, dt, buf, size), ERT_OK);
		CHECK_EQ_INT(ert_session_set_input(ref, k, dt, buf, size), ERT_OK);
		free(buf);
	}
}

/*
 * Every output of @s equals @ref's, byte for byte, and is not degenerate:
 * a comparison of constant outputs would prove little.
 */
static void compare_outputs(int *ert_test_failed_, ert_session *s, ert_session *ref)
{
	for (uint32_t k = 0; k < ert_session_output_count(ref); k++) {
		const ert_tensor *t = ert_session_get_output(s, k);
		const ert_tensor *r = ert_session_get_output(ref, k);
		const uint8_t *a = ert_tensor_data(t), *e = ert_tensor_data(r);
		size_t size = ert_tensor_byte_size(r), diff = 0;
		bool seen[256] = { false };
		int distinct = 0;

		REQUIRE(t && r && ert_tensor_byte_size(t) == size && size > 0);
		CHECK_EQ_INT(ert_tensor_dtype(t), ert_tensor_dtype(r));
		for (size_t i = 0; i < size; i++) {
			distinct += !seen[e[i]];
			seen[e[i]] = true;
			if (a[i] == e[i])
				continue;
			if (diff++ < 4)
				fprintf(stderr, "output '%s' byte %zu: npu %d, cpu %d\n",
					ert_tensor_name(t), i, a[i], e[i]);
		}
		if (diff)
			fprintf(stderr, "output '%s': %zu of %zu bytes differ\n", ert_tensor_name(t),
				diff, size);
		CHECK_EQ_INT(diff, 0);
		CHECK(distinct >= (size >= 64 ? 8 : 2));
	}
}

/*
 * Check placement on a fresh pair of sessions and that nodes @split[0..n_split)
 * were cut into at least @min_cmds commands each; then run and compare @runs
 * times. Consumes @m.
 */
static void check_model(int *ert_test_failed_, ert_model *m, int runs, uint64_t seed,
			const char *const *split, int n_split, int min_cmds)
{
	ert_session *s, *ref;
	struct placement pl = { 0, 0 };

	REQUIRE(m);
	s = new_session(m, true);
	ref = new_session(m, false);
	if (!s || !ref)
		goto out;
	CHECK_EQ_INT(ert_session_visit_steps(s, check_step, &pl), ERT_OK);
	CHECK(pl.want_npu > 0);
	CHECK_EQ_INT(pl.want_npu, npu_nodes(m));
	CHECK_EQ_INT(pl.misplaced, 0);
	for (int i = 0; i < n_split; i++) {
		int cmds = npu_cmds(s, split[i]);

		if (cmds < min_cmds)
			fprintf(stderr, "'%s': %d commands\n", split[i], cmds);
		CHECK(cmds >= min_cmds);
	}
	for (int i = 0; i < runs; i++) {
		fill_inputs(ert_test_failed_, s, ref, seed + (uint64_t)i);
		CHECK_EQ_INT(ert_session_run(ref), ERT_OK);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		if (*ert_test_failed_) {
			fprintf(stderr, "%s\n", ert_session_error(s));
			break;
		}
		compare_outputs(ert_test_failed_, s, ref);
	}
	CHECK_EQ_INT(ert_session_copied_bytes(s), 0);
out:
	CHECK(s && ref);
	ert_session_destroy(s);
	ert_session_destroy(ref);
	ert_model_unref(m);
}

/* One run of a model whose nodes @split must each be cut into at least @min_cmds commands. */
static void check_split(int *ert_test_failed_, struct qb *b, const char *const *split,
			int n_split, int min_cmds)
{
	check_model(ert_test_failed_, model_from_graph(b->g), 1, b->rng, split, n_split,
		    min_cmds);
}

/* Work of a CONV2D command over the whole layer (uapi/drm/enpu_cmdstream.h). */
static uint64_t conv_work(struct qt x, struct qt y, const struct conv_spec *c)
{
	int64_t icg = x.dims[1] / (c->group ? c->group : 1);

	return (uint64_t)(y.dims[0] * y.dims[2] * y.dims[3] * y.dims[1]) *
	       (uint64_t)(c->kh * c->kw * (icg + 4) + 16);
}

/* ---- cases ------------------------------------------------------------------- */

ERT_TEST(conv_shapes)
{
	struct qb b = qb_begin(101);
	int64_t xd[4] = { 2, 16, 23, 19 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec cs[] = {
		{ .oc = 24, .kh = 1, .kw = 1, .bias = true },
		{ .oc = 20, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 }, .stride = { 2, 2 },
		  .dil = { 2, 2 }, .per_channel = true, .lo = -5, .hi = 127 },
		{ .oc = 12, .kh = 3, .kw = 2, .pads = { 0, 2, 1, 0 }, .stride = { 1, 2 },
		  .per_channel = true, .bias = true, .wzp = 3 },
		{ .oc = 8, .kh = 5, .kw = 5, .pads = { 2, 0, 3, 4 }, .dil = { 1, 2 },
		  .stride = { 3, 1 }, .bias = true, .lo = -60, .hi = 50 },
		{ .oc = 16, .kh = 7, .kw = 1, .pads = { 3, 0, 3, 0 }, .per_channel = true },
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		qb_output(&b, q_conv(&b, "npu:conv", x, &cs[i]).t);
	check_model(ert_test_failed_, model_from_graph(b.g), 2, 1, NULL, 0, 0);
}

ERT_TEST(conv_depthwise_grouped)
{
	struct qb b = qb_begin(202);
	int64_t xd[4] = { 1, 24, 30, 30 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec cs[] = {
		/* depthwise */
		{ .oc = 24, .group = 24, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 }, .bias = true,
		  .per_channel = true },
		/* depthwise, channel multiplier 2 */
		{ .oc = 48, .group = 24, .kh = 3, .kw = 3, .pads = { 1, 1, 0, 0 },
		  .stride = { 2, 2 }, .per_channel = true, .lo = 0, .hi = 100 },
		{ .oc = 32, .group = 2, .kh = 3, .kw = 3, .bias = true },
		{ .oc = 12, .group = 3, .kh = 1, .kw = 1, .per_channel = true, .bias = true },
		{ .oc = 8, .group = 4, .kh = 3, .kw = 3, .pads = { 2, 2, 2, 2 }, .dil = { 2, 2 },
		  .per_channel = true, .wzp = -2, .lo = -128, .hi = 20 },
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		qb_output(&b, q_conv(&b, "npu:conv", x, &cs[i]).t);
	check_model(ert_test_failed_, model_from_graph(b.g), 2, 2, NULL, 0, 0);
}

/* 3x3 256 -> 256 at 14x14: about four times the work limit, cut by output channels. */
ERT_TEST(conv_split_channels)
{
	struct qb b = qb_begin(303);
	int64_t xd[4] = { 1, 256, 14, 14 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c = { .oc = 256, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				     .per_channel = true, .bias = true };
	struct qt y = q_conv(&b, "npu:big", x, &c);
	const char *names[] = { "npu:big" };

	CHECK(conv_work(x, y, &c) > 3 * ENPU_CS_MAX_WORK);
	qb_output(&b, y.t);
	check_split(ert_test_failed_, &b, names, 1, 4);
}

/* Grouped and depthwise layers too large for one command: cut by whole groups. */
ERT_TEST(conv_split_groups)
{
	struct qb b = qb_begin(404);
	int64_t xd[4] = { 1, 64, 64, 64 }, dd[4] = { 1, 4, 512, 512 };
	struct qt x = qb_input(&b, "x", 4, xd), d = qb_input(&b, "d", 4, dd);
	const struct conv_spec cg = { .oc = 64, .group = 4, .kh = 3, .kw = 3,
				      .pads = { 1, 1, 1, 1 }, .per_channel = true, .bias = true };
	const struct conv_spec dw = { .oc = 8, .group = 4, .kh = 3, .kw = 3,
				      .pads = { 1, 0, 1, 2 }, .per_channel = true };
	struct qt y = q_conv(&b, "npu:grouped", x, &cg), z = q_conv(&b, "npu:dw", d, &dw);
	const char *names[] = { "npu:grouped", "npu:dw" };

	CHECK(conv_work(x, y, &cg) > ENPU_CS_MAX_WORK);
	CHECK(conv_work(d, z, &dw) > 2 * ENPU_CS_MAX_WORK);
	qb_output(&b, y.t);
	qb_output(&b, z.t);
	check_split(ert_test_failed_, &b, names, 2, 2);
}

/*
 * Single-output-channel and depthwise layers with a large plane: cut by
 * output rows, chunks with padding at their top or bottom included.
 */
ERT_TEST(conv_split_rows)
{
	struct qb b = qb_begin(505);
	int64_t ad[4] = { 1, 1, 700, 700 }, bd[4] = { 2, 2, 700, 700 };
	int64_t cd[4] = { 1, 16, 8, 6000 }, dd[4] = { 1, 64, 17, 5000 };
	struct qt xa = qb_input(&b, "a", 4, ad), xb = qb_input(&b, "b", 4, bd);
	struct qt xc = qb_input(&b, "c", 4, cd), xd = qb_input(&b, "d", 4, dd);
	/* 700 rows in chunks of 175 */
	const struct conv_spec ca = { .oc = 1, .kh = 5, .kw = 5, .pads = { 2, 2, 2, 2 },
				      .bias = true };
	/* depthwise, batch 2: one channel per command, then rows */
	const struct conv_spec cb = { .oc = 2, .group = 2, .kh = 5, .kw = 5,
				      .pads = { 2, 1, 2, 3 }, .per_channel = true };
	/* 8 rows of 2: pad_top 4 reaches into the second chunk, pad_bottom into the third */
	const struct conv_spec cc = { .oc = 1, .kh = 9, .kw = 9, .pads = { 4, 4, 4, 4 },
				      .bias = true, .lo = -100, .hi = 100 };
	/* stride 2: 9 rows of 3 */
	const struct conv_spec cdd = { .oc = 1, .kh = 7, .kw = 7, .pads = { 3, 0, 3, 0 },
				       .stride = { 2, 2 }, .bias = true };
	struct qt ya = q_conv(&b, "npu:rows-a", xa, &ca), yb = q_conv(&b, "npu:rows-b", xb, &cb);
	struct qt yc = q_conv(&b, "npu:rows-c", xc, &cc), yd = q_conv(&b, "npu:rows-d", xd, &cdd);
	const char *names[] = { "npu:rows-a", "npu:rows-b", "npu:rows-c", "npu:rows-d" };

	CHECK(conv_work(xa, ya, &ca) > 2 * ENPU_CS_MAX_WORK);
	CHECK(conv_work(xc, yc, &cc) > 2 * ENPU_CS_MAX_WORK);
	CHECK(conv_work(xd, yd, &cdd) > 2 * ENPU_CS_MAX_WORK);
	qb_output(&b, ya.t);
	qb_output(&b, yb.t);
	qb_output(&b, yc.t);
	qb_output(&b, yd.t);
	check_split(ert_test_failed_, &b, names, 4, 3);
}

/*
 * Pads larger than the kernel: the first and last rows read only padding,
 * and with one to two rows per command, whole chunks do.
 */
ERT_TEST(conv_split_padding_rows)
{
	struct qb b = qb_begin(555);
	int64_t xd[4] = { 1, 64, 8, 6000 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c = { .oc = 1, .kh = 3, .kw = 3, .pads = { 10, 1, 7, 1 },
				     .bias = true };
	struct qt y = q_conv(&b, "npu:pads", x, &c);
	const char *names[] = { "npu:pads" };

	CHECK(conv_work(x, y, &c) > 2 * ENPU_CS_MAX_WORK);
	qb_output(&b, y.t);
	check_split(ert_test_failed_, &b, names, 1, 3);
}

/*
 * One output row of one channel over the work limit cannot be cut: the node
 * runs on the CPU, and the session works.
 */
ERT_TEST(conv_row_over_limit)
{
	struct qb b = qb_begin(556);
	int64_t xd[4] = { 1, 4096, 2, 1000 }, sd[4] = { 1, 8, 32, 32 };
	struct qt x = qb_input(&b, "x", 4, xd), s = qb_input(&b, "s", 4, sd);
	const struct conv_spec c = { .oc = 1, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };
	const struct conv_spec cs = { .oc = 8, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };
	struct qt y = q_conv(&b, "cpu:wide", x, &c);

	CHECK(conv_work(x, y, &c) / 2 > ENPU_CS_MAX_WORK);
	qb_output(&b, y.t);
	qb_output(&b, q_conv(&b, "npu:conv", s, &cs).t);
	check_model(ert_test_failed_, model_from_graph(b.g), 1, 7, NULL, 0, 0);
}

ERT_TEST(matmul_gemm)
{
	struct qb b = qb_begin(606);
	int64_t ad[2] = { 64, 96 }, bd[3] = { 4, 32, 64 };
	struct qt a = qb_input(&b, "a", 2, ad), a3 = qb_input(&b, "a3", 3, bd);

	qb_output(&b, q_matmul(&b, "npu:mm", a, 80, false, true).t);
	qb_output(&b, q_matmul(&b, "npu:mm", a, 40, false, false).t);
	/* batched: shared and per-batch weights */
	qb_output(&b, q_matmul(&b, "npu:mm3", a3, 48, false, true).t);
	qb_output(&b, q_matmul(&b, "npu:mm3", a3, 24, true, true).t);
	qb_output(&b, q_matmul(&b, "npu:mm3", a3, 16, true, false).t);
	qb_output(&b, q_gemm(&b, "npu:gemm", a, 72, false, true, 1, 0).t);
	qb_output(&b, q_gemm(&b, "npu:gemm", a, 56, true, false, 1, 0).t);
	qb_output(&b, q_gemm(&b, "npu:gemm", a, 32, true, true, -20, 90).t);
	check_model(ert_test_failed_, model_from_graph(b.g), 2, 3, NULL, 0, 0);
}

/* M = 512, K = 1024, N = 512, and a batched product: cut by columns and rows. */
ERT_TEST(matmul_split)
{
	struct qb b = qb_begin(707);
	int64_t ad[2] = { 512, 1024 }, bd[3] = { 2, 256, 1024 };
	struct qt a = qb_input(&b, "a", 2, ad), a3 = qb_input(&b, "a3", 3, bd);
	const char *names[] = { "npu:gemm", "npu:mm" };

	qb_output(&b, q_gemm(&b, "npu:gemm", a, 512, true, true, 1, 0).t);
	qb_output(&b, q_matmul(&b, "npu:mm", a3, 256, false, true).t);
	check_split(ert_test_failed_, &b, names, 2, 4);
}

ERT_TEST(eltwise_broadcast)
{
	struct qb b = qb_begin(808);
	int64_t xd[4] = { 2, 16, 20, 20 }, cd[4] = { 1, 16, 1, 1 }, sd[1] = { 1 };
	int64_t hd[4] = { 1, 1, 20, 1 }, nd[4] = { 2, 1, 20, 20 }, wd[1] = { 20 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c = { .oc = 16, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				     .bias = true };
	struct qt y = q_conv(&b, "npu:conv", x, &c);

	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:add-ch", y, qb_const_act(&b, 4, cd),
			       1, 0).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearMul, "npu:mul-ch", qb_const_act(&b, 4, cd), y,
			       1, 0).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearMul, "npu:mul-scalar", y,
			       qb_const_act(&b, 1, sd), 1, 0).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:add-scalar", qb_const_act(&b, 1, sd),
			       x, -30, 30).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:add-xy", y, x, y.zp, 127).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearMul, "npu:mul-xy", x, y, 1, 0).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:add-h", x, qb_const_act(&b, 4, hd),
			       1, 0).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearMul, "npu:mul-n", qb_const_act(&b, 4, nd), y,
			       -100, 100).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:add-w", y, qb_const_act(&b, 1, wd),
			       1, 0).t);
	check_model(ert_test_failed_, model_from_graph(b.g), 2, 4, NULL, 0, 0);
}

/*
 * ResNet blocks whose QLinearAdds the optimiser fuses into the QLinearConv
 * before them (opt/fuse-residual.c, "ert.residual"): the conv on either
 * side of its Add, a stride-2 block with a shortcut convolution, and one
 * block past the work limit, whose CONV2D and ELTWISE commands are cut. The
 * fused model on the NPU and on the CPU, and the model the quantizer's undo
 * (ert_opt_unfuse_activations) makes of it, give the unfused model's bytes;
 * an Add of a broadcast operand stays unfused.
 */
static struct ert_graph *residual_blocks(void)
{
	struct qb b = qb_begin(1313);
	int64_t xd[4] = { 2, 16, 12, 10 }, bd[4] = { 1, 40, 256, 256 }, cd[4] = { 1, 16, 1, 1 };
	struct qt x = qb_input(&b, "x", 4, xd), big = qb_input(&b, "big", 4, bd);
	const struct conv_spec c3 = { .oc = 16, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				      .per_channel = true, .bias = true, .lo = -20, .hi = 127 };
	const struct conv_spec c1 = { .oc = 16, .kh = 1, .kw = 1, .bias = true };
	const struct conv_spec c3s = { .oc = 24, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				       .stride = { 2, 2 }, .per_channel = true };
	const struct conv_spec c1s = { .oc = 24, .kh = 1, .kw = 1, .stride = { 2, 2 },
				       .bias = true };
	const struct conv_spec cb = { .oc = 40, .kh = 1, .kw = 1, .bias = true };
	struct qt a = q_conv(&b, "npu:a", x, &c3);
	struct qt s1 = q_binary(&b, ERT_OP_QLinearAdd, "npu:add1", q_conv(&b, "npu:b", a, &c1), x,
				-10, 127);
	struct qt s2 = q_binary(&b, ERT_OP_QLinearAdd, "npu:add2", s1,
				q_conv(&b, "npu:c", s1, &c1), 1, 0);
	struct qt s3 = q_binary(&b, ERT_OP_QLinearAdd, "npu:add3", q_conv(&b, "npu:d", s2, &c3s),
				q_conv(&b, "npu:e", s2, &c1s), 0, 100);
	struct qt s4 = q_binary(&b, ERT_OP_QLinearAdd, "npu:add4", q_conv(&b, "npu:f", s2, &c1),
				qb_const_act(&b, 4, cd), 1, 0);
	struct qt sb = q_binary(&b, ERT_OP_QLinearAdd, "npu:add-big",
				q_conv(&b, "npu:big", big, &cb), big, -128, 60);

	/* the big block's ELTWISE exceeds the work limit: 40 * 256 * 256 * 16 > 2^25 */
	qb_output(&b, s3.t);
	qb_output(&b, s4.t);
	qb_output(&b, sb.t);
	return b.g;
}

static int count_residual_graph(const struct ert_graph *g)
{
	int n = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++)
		n += g->nodes[i].op == ERT_OP_QLinearConv &&
		     ert_attr_int(&g->nodes[i], "ert.residual", 0) == 1;
	return n;
}

static int count_residual(const ert_model *m)
{
	return count_residual_graph(ert_model_graph(m));
}

ERT_TEST(conv_residual)
{
	struct ert_graph *fg = residual_blocks(), *ug = residual_blocks(), *eg = residual_blocks();
	struct ert_err err = { "" };
	ert_model *plain = model_from_graph(residual_blocks()), *fused, *unfused, *envf;
	ert_session *npu = NULL, *cpu = NULL, *ref = NULL, *un = NULL, *enpu = NULL, *ecpu = NULL;

	REQUIRE(fg && ug && eg && plain);
	bool changed = false;

	/*
	 * The optimiser makes the int8 form with ERT_FUSE_Q8_RESIDUAL=1 only
	 * (unset: ERT_OPT_Q8_RESIDUAL_DEFAULT); else the fusion is asked for.
	 */
	setenv("ERT_FUSE_Q8_RESIDUAL", "1", 1);
	CHECK_EQ_INT(ert_graph_optimize(eg, &err), ERT_OK);
	setenv("ERT_FUSE_Q8_RESIDUAL", "0", 1);
	CHECK_EQ_INT(ert_graph_optimize(fg, &err), ERT_OK);
	CHECK_EQ_INT(count_residual_graph(fg), 0);
	unsetenv("ERT_FUSE_Q8_RESIDUAL");
	CHECK_EQ_INT(ert_graph_optimize(fg, &err), ERT_OK);
	CHECK_EQ_INT(count_residual_graph(fg), ERT_OPT_Q8_RESIDUAL_DEFAULT ? 4 : 0);
	CHECK_EQ_INT(ert_opt_fuse_q8_residual(fg, &changed, &err), ERT_OK);
	CHECK(changed || ERT_OPT_Q8_RESIDUAL_DEFAULT);
	/* the pass in the optimiser makes what the call makes */
	CHECK_EQ_INT(eg->n_nodes, fg->n_nodes);
	envf = model_from_graph(eg);
	REQUIRE(envf);
	CHECK_EQ_INT(count_residual(envf), 4);
	/* the quantizer's undo gives the two ops back */
	CHECK_EQ_INT(ert_graph_optimize(ug, &err), ERT_OK);
	CHECK_EQ_INT(ert_opt_fuse_q8_residual(ug, &changed, &err), ERT_OK);
	CHECK_EQ_INT(ert_opt_unfuse_activations(ug, &err), ERT_OK);
	fused = model_from_graph(fg);
	unfused = model_from_graph(ug);
	REQUIRE(fused && unfused);
	CHECK_EQ_INT(count_residual(unfused), 0);
	CHECK_EQ_INT(ert_model_graph(unfused)->n_nodes, ert_model_graph(plain)->n_nodes);
	/* add1 to add3 and add-big fuse; add4's operand is a broadcast constant */
	CHECK_EQ_INT(count_residual(plain), 0);
	CHECK_EQ_INT(count_residual(fused), 4);
	npu = new_session(fused, true);
	cpu = new_session(fused, false);
	ref = new_session(plain, false);
	un = new_session(unfused, false);
	enpu = new_session(envf, true);
	ecpu = new_session(envf, false);
	if (!npu || !cpu || !ref || !un || !enpu || !ecpu)
		goto out;
	CHECK(npu_cmds(npu, "npu:big") >= 4);
	CHECK(npu_cmds(npu, "npu:b") >= 2);
	for (int i = 0; i < 2; i++) {
		fill_inputs(ert_test_failed_, npu, ref, 77 + (uint64_t)i);
		fill_inputs(ert_test_failed_, cpu, ref, 77 + (uint64_t)i);
		fill_inputs(ert_test_failed_, un, ref, 77 + (uint64_t)i);
		fill_inputs(ert_test_failed_, enpu, ref, 77 + (uint64_t)i);
		fill_inputs(ert_test_failed_, ecpu, ref, 77 + (uint64_t)i);
		CHECK_EQ_INT(ert_session_run(ref), ERT_OK);
		CHECK_EQ_INT(ert_session_run(cpu), ERT_OK);
		CHECK_EQ_INT(ert_session_run(un), ERT_OK);
		CHECK_EQ_INT(ert_session_run(npu), ERT_OK);
		CHECK_EQ_INT(ert_session_run(enpu), ERT_OK);
		CHECK_EQ_INT(ert_session_run(ecpu), ERT_OK);
		if (*ert_test_failed_) {
			fprintf(stderr, "%s\n", ert_session_error(npu));
			break;
		}
		compare_outputs(ert_test_failed_, cpu, ref);
		compare_outputs(ert_test_failed_, npu, ref);
		compare_outputs(ert_test_failed_, un, ref);
		compare_outputs(ert_test_failed_, enpu, ref);
		compare_outputs(ert_test_failed_, ecpu, ref);
	}
out:
	CHECK(npu && cpu && ref && un && enpu && ecpu);
	ert_session_destroy(npu);
	ert_session_destroy(cpu);
	ert_session_destroy(ref);
	ert_session_destroy(un);
	ert_session_destroy(enpu);
	ert_session_destroy(ecpu);
	ert_model_unref(envf);
	ert_model_unref(fused);
	ert_model_unref(unfused);
	ert_model_unref(plain);
}

/* Element-wise ops over more than the work limit, in one island with a small convolution. */
ERT_TEST(eltwise_split)
{
	struct qb b = qb_begin(909);
	int64_t sd[4] = { 1, 8, 32, 32 }, xd[4] = { 1, 64, 256, 256 }, cd[4] = { 1, 64, 1, 1 };
	struct qt s = qb_input(&b, "s", 4, sd);
	struct qt x = qb_input(&b, "x", 4, xd), y = qb_input(&b, "y", 4, xd);
	const struct conv_spec c = { .oc = 8, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };
	const char *names[] = { "npu:add", "npu:mul" };

	qb_output(&b, q_conv(&b, "npu:conv", s, &c).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:add", x, y, 1, 0).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearMul, "npu:mul", x, qb_const_act(&b, 4, cd), 1,
			       0).t);
	CHECK(xd[1] * xd[2] * xd[3] * 16 > (int64_t)ENPU_CS_MAX_WORK);
	check_split(ert_test_failed_, &b, names, 2, 2);
}

/*
 * Element-wise ops and byte moves on wide rank-2 and rank-3 tensors: all of
 * a [rows, columns] matrix exceeds the limit, and must be cut by rows.
 */
ERT_TEST(wide_split)
{
	struct qb b = qb_begin(1010);
	int64_t sd[4] = { 1, 8, 32, 32 }, xd[2] = { 1536, 2048 }, zd[3] = { 1, 1024, 4096 };
	int64_t rd[1] = { 2048 }, td[2] = { 3000, 4000 };
	const int64_t perm[2] = { 1, 0 };
	struct qt s = qb_input(&b, "s", 4, sd), x = qb_input(&b, "x", 2, xd);
	struct qt z = qb_input(&b, "z", 3, zd), t = qb_input(&b, "t", 2, td);
	const struct conv_spec c = { .oc = 8, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };
	const char *names[] = { "npu:add", "npu:mul", "npu:transpose", "npu:dq" };

	qb_output(&b, q_conv(&b, "npu:conv", s, &c).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:add", x, qb_const_act(&b, 1, rd), 1,
			       0).t);
	qb_output(&b, q_binary(&b, ERT_OP_QLinearMul, "npu:mul", z, z, 1, 0).t);
	qb_output(&b, mv_transpose(&b, "npu:transpose", t, perm).t);
	qb_output(&b, dequant(&b, "npu:dq", x));
	check_split(ert_test_failed_, &b, names, 4, 2);
}

ERT_TEST(pools)
{
	struct qb b = qb_begin(1111);
	int64_t xd[4] = { 2, 16, 33, 31 }, bd[4] = { 1, 32, 256, 256 };
	struct qt x = qb_input(&b, "x", 4, xd), big = qb_input(&b, "big", 4, bd);
	const struct conv_spec c = { .oc = 16, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				     .bias = true };
	const struct pool_spec ps[] = {
		{ .kh = 3, .kw = 3, .stride = { 2, 2 }, .pads = { 1, 1, 1, 1 }, .lo = 1 },
		{ .kh = 2, .kw = 3, .stride = { 1, 2 }, .pads = { 0, 1, 1, 0 }, .lo = -3, .hi = 40 },
		{ .kh = 2, .kw = 2, .stride = { 2, 2 }, .lo = 1 },
		{ .kh = 5, .kw = 4, .stride = { 3, 1 }, .pads = { 2, 3, 4, 0 }, .lo = 1 },
	};
	const struct pool_spec bp = { .kh = 7, .kw = 7, .stride = { 1, 1 },
				      .pads = { 3, 3, 3, 3 } };
	struct qt y = q_conv(&b, "npu:conv", x, &c);
	const char *names[] = { "npu:max-big", "npu:avg-big" };

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		qb_output(&b, q_pool(&b, "npu:avg", y, &ps[i], false).t);
		qb_output(&b, q_pool(&b, "npu:max", y, &ps[i], true).t);
	}
	qb_output(&b, q_global_avg(&b, "npu:gap", y).t);
	qb_output(&b, q_pool(&b, "npu:max-x", x, &ps[0], true).t);
	qb_output(&b, q_global_avg(&b, "npu:gap-x", x).t);
	/* 7x7 windows over 32 channels of 256x256: cut by channels */
	qb_output(&b, q_pool(&b, "npu:max-big", big, &bp, true).t);
	qb_output(&b, q_pool(&b, "npu:avg-big", big, &bp, false).t);
	check_split(ert_test_failed_, &b, names, 2, 2);
}

/* Pools over a large plane: one channel alone exceeds the work limit. */
ERT_TEST(pool_split_rows)
{
	struct qb b = qb_begin(1112);
	int64_t xd[4] = { 1, 2, 1024, 1024 }, sd[4] = { 1, 8, 32, 32 };
	struct qt x = qb_input(&b, "x", 4, xd), s = qb_input(&b, "s", 4, sd);
	const struct conv_spec c = { .oc = 8, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };
	const struct pool_spec mp = { .kh = 5, .kw = 5, .stride = { 1, 1 },
				      .pads = { 2, 2, 2, 2 } };
	const struct pool_spec ap = { .kh = 6, .kw = 5, .stride = { 1, 1 },
				      .pads = { 3, 2, 2, 2 }, .lo = -50, .hi = 50 };
	const char *names[] = { "npu:max", "npu:avg" };

	qb_output(&b, q_conv(&b, "npu:conv", s, &c).t);
	qb_output(&b, q_pool(&b, "npu:max", x, &mp, true).t);
	qb_output(&b, q_pool(&b, "npu:avg", x, &ap, false).t);
	check_split(ert_test_failed_, &b, names, 2, 4);
}

ERT_TEST(movement)
{
	struct qb b = qb_begin(1212);
	int64_t xd[4] = { 1, 8, 12, 10 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c = { .oc = 16, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				     .bias = true };
	struct qt y = q_conv(&b, "npu:conv", x, &c), y2 = q_conv(&b, "npu:conv", x, &c);
	const int64_t perms[][4] = { { 0, 2, 3, 1 }, { 0, 1, 3, 2 }, { 3, 1, 0, 2 },
				     { 2, 0, 3, 1 }, { 1, 0, 2, 3 } };

	for (size_t i = 0; i < sizeof(perms) / sizeof(perms[0]); i++)
		qb_output(&b, mv_transpose(&b, "npu:transpose", y, perms[i]).t);
	/* Concat along channels (with the graph input and a constant) and along width */
	int64_t kd[4] = { 1, 3, 12, 10 };
	struct qt cat1[3] = { y, x, qb_const_act(&b, 4, kd) }, cat3[2] = { y, y2 };

	qb_output(&b, mv_concat(&b, "npu:concat1", 1, 3, cat1).t);
	qb_output(&b, mv_concat(&b, "npu:concat3", 3, 2, cat3).t);
	/* Slice with steps 1 and 2, negative starts, ends past the end */
	const int64_t s1[4] = { 0, 2, 1, -7 }, e1[4] = { 1, 14, 11, 99 }, t1[4] = { 1, 1, 1, 1 };
	const int64_t s2[4] = { 0, 1, 0, 1 }, e2[4] = { 1, 16, 12, 10 }, t2[4] = { 1, 2, 2, 2 };
	const int64_t s3[4] = { 0, -9, 3, 0 }, e3[4] = { 1, 16, 12, 7 }, t3[4] = { 1, 2, 1, 1 };

	qb_output(&b, mv_slice(&b, "npu:slice", y, s1, e1, t1).t);
	qb_output(&b, mv_slice(&b, "npu:slice", y, s2, e2, t2).t);
	qb_output(&b, mv_slice(&b, "npu:slice", y2, s3, e3, t3).t);
	/* Reshape and Flatten between NPU ops */
	const int64_t rd[4] = { 1, 32, 6, 10 };
	const struct conv_spec c1 = { .oc = 8, .kh = 1, .kw = 1, .per_channel = true };
	struct qt r = mv_reshape(&b, "reshape", y, 4, rd);

	qb_output(&b, q_conv(&b, "npu:conv-r", r, &c1).t);
	/* a Reshape of the graph input: copied out of its userptr BO */
	const int64_t xr[4] = { 1, 16, 6, 10 };

	qb_output(&b, q_conv(&b, "npu:conv-x", mv_reshape(&b, "npu:reshape-x", x, 4, xr),
			     &c1).t);
	qb_output(&b, q_gemm(&b, "npu:gemm-f", mv_flatten(&b, "flatten", y2), 24, true, true, 1,
			     0).t);
	/* Pad (constant): the zero point, another value, padding on every axis */
	const int64_t p1[8] = { 0, 0, 1, 2, 0, 0, 3, 1 }, p2[8] = { 1, 2, 0, 0, 0, 1, 2, 0 };

	qb_output(&b, mv_pad(&b, "npu:pad", y, p1, y.zp).t);
	qb_output(&b, mv_pad(&b, "npu:pad", y2, p2, -77).t);
	/* DequantizeLinear at the output, through LUTs */
	qb_output(&b, dequant(&b, "npu:dq", y2));
	check_model(ert_test_failed_, model_from_graph(b.g), 2, 5, NULL, 0, 0);
}

/* A Concat of more graph inputs (one userptr BO each) than one node had buffers for. */
ERT_TEST(concat_many_inputs)
{
	struct qb b = qb_begin(1213);
	int64_t xd[4] = { 1, 8, 32, 32 }, id[4] = { 1, 2, 16, 16 };
	struct qt x = qb_input(&b, "x", 4, xd), in[12];
	const struct conv_spec c = { .oc = 8, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };

	qb_output(&b, q_conv(&b, "npu:conv", x, &c).t);
	for (int i = 0; i < 12; i++) {
		char name[32];

		snprintf(name, sizeof(name), "in%d", i);
		in[i] = qb_input(&b, name, 4, id);
	}
	qb_output(&b, mv_concat(&b, "npu:concat", 1, 12, in).t);
	check_model(ert_test_failed_, model_from_graph(b.g), 2, 8, NULL, 0, 0);
}

/*
 * Three Concats of 30 graph inputs each in one island: more BOs than one job
 * may name, so the island runs as several jobs.
 */
ERT_TEST(island_many_buffers)
{
	struct qb b = qb_begin(1214);
	int64_t xd[4] = { 1, 8, 32, 32 }, id[4] = { 1, 1, 8, 16 };
	struct qt x = qb_input(&b, "x", 4, xd), in[30];
	const struct conv_spec c = { .oc = 8, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };
	ert_session *s, *ref;
	ert_model *m;

	qb_output(&b, q_conv(&b, "npu:conv", x, &c).t);
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 30; i++) {
			char name[32];

			snprintf(name, sizeof(name), "in%d_%d", k, i);
			in[i] = qb_input(&b, name, 4, id);
		}
		qb_output(&b, mv_concat(&b, "npu:concat", 1 + 2 * (k == 1), 30, in).t);
	}
	m = model_from_graph(b.g);
	REQUIRE(m);
	s = new_session(m, true);
	ref = new_session(m, false);
	if (s && ref) {
		fill_inputs(ert_test_failed_, s, ref, 9);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		CHECK(npu_jobs(s) >= 2);
	}
	ert_session_destroy(s);
	ert_session_destroy(ref);
	check_model(ert_test_failed_, m, 2, 9, NULL, 0, 0);
}

/* Large byte moves: several COPY / LUT commands for one node. */
ERT_TEST(movement_split)
{
	struct qb b = qb_begin(1313);
	int64_t xd[4] = { 1, 8, 32, 32 }, bd[4] = { 1, 128, 256, 256 };
	struct qt x = qb_input(&b, "x", 4, xd), big = qb_input(&b, "big", 4, bd);
	const struct conv_spec c = { .oc = 8, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 } };
	const int64_t perm[4] = { 0, 2, 3, 1 };
	const int64_t s[4] = { 0, 1, 0, 0 }, e[4] = { 1, 128, 256, 256 }, t[4] = { 1, 1, 1, 1 };
	struct qt cat[2] = { big, big };
	const char *names[] = { "npu:transpose", "npu:slice", "npu:concat", "npu:dq" };

	qb_output(&b, q_conv(&b, "npu:conv", x, &c).t);
	qb_output(&b, mv_transpose(&b, "npu:transpose", big, perm).t);
	qb_output(&b, mv_slice(&b, "npu:slice", big, s, e, t).t);
	qb_output(&b, mv_concat(&b, "npu:concat", 3, 2, cat).t);
	qb_output(&b, dequant(&b, "npu:dq", big));
	check_split(ert_test_failed_, &b, names, 4, 2);
}

/* A float input quantised on the CPU, an NPU island, dequantised at the output. */
ERT_TEST(quantize_input)
{
	struct qb b = qb_begin(1414);
	int64_t xd[4] = { 1, 3, 32, 32 };
	int32_t xf = ert_graph_add_tensor(b.g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	const struct conv_spec c1 = { .oc = 16, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				      .per_channel = true, .bias = true };
	const struct conv_spec c2 = { .oc = 8, .kh = 3, .kw = 3, .stride = { 2, 2 },
				      .pads = { 0, 0, 1, 1 }, .bias = true };

	ert_graph_add_input(b.g, xf);
	struct qt q = quant(&b, "cpu:quantize", xf, 4, xd);
	struct qt y = q_conv(&b, "npu:conv2", q_conv(&b, "npu:conv1", q, &c1), &c2);

	qb_output(&b, dequant(&b, "npu:dq", y));
	qb_output(&b, y.t);
	check_model(ert_test_failed_, model_from_graph(b.g), 3, 6, NULL, 0, 0);
}

/* Does [p, p + n) lie in the plan's arena of buffer type @type? */
static bool in_arena(const ert_session *s, const char *type, const void *p, size_t n)
{
	const struct ert_plan *pl = s->plan;

	for (uint32_t a = 0; a < pl->n_arenas; a++) {
		const uint8_t *base = pl->arenas[a].buf.host, *q = p;

		if (!strcmp(pl->arenas[a].type, type) && base && q >= base &&
		    q + n <= base + pl->arenas[a].size)
			return true;
	}
	return false;
}

struct crossing {
	const ert_session *s;
	int checked, copied;
};

/* Every tensor an NPU step reads from a CPU step lies in the NPU's arena. */
static void check_crossing(const struct ert_node *node, const struct ert_value *const *in,
			   uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
			   const char *backend, void *user)
{
	struct crossing *c = user;

	if (strcmp(backend, "npu") || strcmp(node->name, "npu:conv1"))
		return;
	c->checked++;
	c->copied += !in_arena(c->s, "enpu", in[0]->data, in[0]->nbytes);
}

/*
 * Zero copy: the CPU's QuantizeLinear writes its output straight into the
 * NPU's arena (which the NPU reads in place), and the NPU's DequantizeLinear
 * writes the graph output there too, which the application reads in place.
 */
ERT_TEST(crossings_in_place)
{
	struct qb b = qb_begin(77);
	int64_t xd[4] = { 1, 3, 16, 16 };
	int32_t xf = ert_graph_add_tensor(b.g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	const struct conv_spec c1 = { .oc = 64, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				      .bias = true };

	ert_graph_add_input(b.g, xf);
	struct qt q = quant(&b, "cpu:quantize", xf, 4, xd);

	qb_output(&b, dequant(&b, "npu:dq", q_conv(&b, "npu:conv1", q, &c1)));
	ert_model *m = model_from_graph(b.g);
	ert_session *s = m ? new_session(m, true) : NULL;
	struct crossing c = { s, 0, 0 };

	REQUIRE(s);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_EQ_INT(ert_session_visit_steps(s, check_crossing, &c), ERT_OK);
	CHECK_EQ_INT(c.checked, 1);
	CHECK_EQ_INT(c.copied, 0);
	const ert_tensor *y = ert_session_get_output(s, 0);

	CHECK(in_arena(s, "enpu", ert_tensor_data(y), ert_tensor_byte_size(y)));
	CHECK_EQ_INT(ert_session_copied_bytes(s), 0);
	ert_session_destroy(s);
	ert_model_unref(m);
}

/*
 * Run model @m (input 0 of shape [batch, @chw]) on the NPU and on the CPU at
 * each batch of @batches in turn, checking placement (@want_npu nodes on the
 * NPU) and comparing outputs byte for byte. Returns the input buffer's
 * address at the first and at the last run in @addr. Consumes @m.
 */
static void run_batches(int *ert_test_failed_, ert_model *m, const int64_t *chw,
			const int64_t *batches, size_t n, int want_npu, uint64_t seed,
			void *addr[2])
{
	ert_session *s, *ref;

	REQUIRE(m);
	s = new_session(m, true);
	ref = new_session(m, false);
	if (!s || !ref)
		goto out;
	for (size_t i = 0; i < n; i++) {
		int64_t d[4] = { batches[i], chw[0], chw[1], chw[2] };
		struct placement pl = { 0, 0 };

		CHECK_EQ_INT(ert_session_resize_input(s, 0, 4, d), ERT_OK);
		CHECK_EQ_INT(ert_session_resize_input(ref, 0, 4, d), ERT_OK);
		CHECK_EQ_INT(ert_session_visit_steps(s, check_step, &pl), ERT_OK);
		CHECK_EQ_INT(pl.want_npu, want_npu);
		CHECK_EQ_INT(pl.misplaced, 0);
		fill_inputs(ert_test_failed_, s, ref, seed + i);
		addr[i ? 1 : 0] = ert_tensor_data(ert_session_get_input(s, 0));
		CHECK_EQ_INT(ert_session_run(ref), ERT_OK);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		if (*ert_test_failed_) {
			fprintf(stderr, "%s\n", ert_session_error(s));
			break;
		}
		compare_outputs(ert_test_failed_, s, ref);
		if (*ert_test_failed_) {
			fprintf(stderr, "run %zu, batch %lld\n", i, (long long)batches[i]);
			break;
		}
	}
out:
	CHECK(s && ref);
	ert_session_destroy(s);
	ert_session_destroy(ref);
	ert_model_unref(m);
}

/*
 * Input x with a batch dimension feeds three NPU nodes. Runs at batch 1
 * (twice), 4 (a second plan; the input buffer moves), 1 again (the first
 * plan from the cache, the input at its new address) and 4 again.
 */
ERT_TEST(resize_input)
{
	struct qb b = qb_begin(1515);
	int64_t xd[4] = { -1, 8, 24, 24 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c1 = { .oc = 16, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				      .bias = true };
	const struct conv_spec c2 = { .oc = 8, .kh = 1, .kw = 1, .per_channel = true };
	const struct pool_spec mp = { .kh = 2, .kw = 2, .stride = { 2, 2 } };
	struct qt y = q_conv(&b, "npu:conv2", q_conv(&b, "npu:conv1", x, &c1), &c2);
	const int64_t batches[] = { 1, 1, 4, 1, 4 };
	void *addr[2] = { NULL, NULL };

	qb_output(&b, q_binary(&b, ERT_OP_QLinearAdd, "npu:residual", y, x, 1, 0).t);
	qb_output(&b, q_pool(&b, "npu:max", x, &mp, true).t);
	run_batches(ert_test_failed_, model_from_graph(b.g), xd + 1, batches,
		    sizeof(batches) / sizeof(batches[0]), 4, 77, addr);
	/* the premise: the input buffer moved */
	CHECK(addr[0] != addr[1]);
}

/*
 * An input of 1 MiB and more is an anonymous mapping: when a smaller shape
 * keeps the buffer, the session gives the pages past its end back to the
 * system. The NPU's wrapper of the big shape pinned the old pages, so when
 * the big shape comes back (its plan cached, the buffer at the same
 * address) the node must wrap the input again or the device reads the
 * stale pages. Only the real driver pins (tests/vm/models.sh runs this case
 * on /dev/accel/accel0); the simulator reads through the address.
 */
ERT_TEST(resize_input_pages)
{
	struct qb b = qb_begin(1717);
	int64_t xd[4] = { -1, 16, 96, 96 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c = { .oc = 8, .kh = 1, .kw = 1, .bias = true };
	const int64_t batches[] = { 8, 2, 8, 1, 8 };
	void *addr[2] = { NULL, NULL };

	qb_output(&b, q_conv(&b, "npu:conv", x, &c).t);
	run_batches(ert_test_failed_, model_from_graph(b.g), xd + 1, batches,
		    sizeof(batches) / sizeof(batches[0]), 1, 91, addr);
	/* the premise: one buffer (1.2 MiB at batch 8) for every shape */
	CHECK(addr[0] && addr[0] == addr[1]);
}

/*
 * An arena's BO as a dma-buf, for a GPU backend to import (buffer_export_fd,
 * docs/vulkan.md "Zero copy with the NPU"): the simulator has none to give
 * (UNSUPPORTED, saying so, the fd untouched); a kernel device gives a
 * dma-buf at least the arena's size whose mapping holds the arena's bytes
 * (tests/vm/models.sh runs this case on /dev/accel/accel0). A buffer never
 * allocated is refused either way.
 */
ERT_TEST(arena_export)
{
	struct ert_backend *be = NULL;
	struct ert_err err = { "" };
	struct ert_buffer buf = { 0 }, none = { 0 };
	size_t size = 3 * 4096 + 100;
	int fd = -7;
	ert_status st;

	REQUIRE(ert_backend_create(ERT_BACKEND_NPU, NULL, &be, &err) == ERT_OK);
	REQUIRE(be->ops->buffer_export_fd);
	CHECK_EQ_INT(be->ops->buffer_export_fd(be, &none, &fd, &err), ERT_STATUS_INVALID_ARGUMENT);
	CHECK_EQ_INT(fd, -7);
	REQUIRE(be->ops->buffer_alloc(be, size, &buf, &err) == ERT_OK);
	for (size_t i = 0; i < size; i++)
		((uint8_t *)buf.host)[i] = (uint8_t)(i * 13 + 5);
	st = be->ops->buffer_export_fd(be, &buf, &fd, &err);
	if (((struct ert_npu *)be->ctx)->info->simulated) {
		CHECK_EQ_INT(st, ERT_STATUS_UNSUPPORTED);
		CHECK(strstr(err.msg, "simulator") != NULL);
		CHECK_EQ_INT(fd, -7);
	} else {
		off_t end;
		uint8_t *map;

		CHECK_EQ_INT(st, ERT_OK);
		REQUIRE(fd >= 0);
		end = lseek(fd, 0, SEEK_END);
		CHECK(end >= (off_t)size);
		map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		CHECK(map != MAP_FAILED);
		if (map != MAP_FAILED) {
			CHECK(!memcmp(map, buf.host, size));
			munmap(map, size);
		}
		close(fd);
	}
	be->ops->buffer_free(be, &buf);
	ert_backend_destroy(be);
}

/* The test hook hangs the first job: that run fails with ETIMEDOUT, the next one matches. */
ERT_TEST(hang_then_recover)
{
	struct qb b = qb_begin(1616);
	int64_t xd[4] = { 1, 16, 20, 20 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c = { .oc = 32, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				     .bias = true };
	ert_model *m;
	ert_session *s, *ref;

	qb_output(&b, q_conv(&b, "npu:conv", x, &c).t);
	m = model_from_graph(b.g);
	REQUIRE(m);
	setenv("ERT_NPU_TEST_HANG", "1", 1);
	s = new_session(m, true);
	unsetenv("ERT_NPU_TEST_HANG");
	ref = new_session(m, false);
	if (!s || !ref)
		goto out;
	fill_inputs(ert_test_failed_, s, ref, 99);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_BACKEND);
	CHECK(strstr(ert_session_error(s), "ETIMEDOUT") != NULL);
	for (int i = 0; i < 2; i++) {
		fill_inputs(ert_test_failed_, s, ref, 100 + (uint64_t)i);
		CHECK_EQ_INT(ert_session_run(ref), ERT_OK);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		compare_outputs(ert_test_failed_, s, ref);
	}
out:
	CHECK(s && ref);
	ert_session_destroy(s);
	ert_session_destroy(ref);
	ert_model_unref(m);
}

/*
 * The userspace simulator, unless ERT_NPU_DEVICE names a device: the test VM
 * runs some cases on /dev/accel/accel0 (tests/vm/models.sh).
 */
static void use_simulator(void)
{
	setenv("ERT_NPU_DEVICE", "sim", 0);
	setenv("ERT_QUIET", "1", 1);
}

int main(int argc, char **argv)
{
	static const struct ert_test_case cases[] = {
		ERT_TEST_ENTRY(conv_shapes), ERT_TEST_ENTRY(conv_depthwise_grouped),
		ERT_TEST_ENTRY(conv_split_channels), ERT_TEST_ENTRY(conv_split_groups),
		ERT_TEST_ENTRY(conv_split_rows), ERT_TEST_ENTRY(conv_split_padding_rows),
		ERT_TEST_ENTRY(conv_row_over_limit), ERT_TEST_ENTRY(matmul_gemm),
		ERT_TEST_ENTRY(matmul_split), ERT_TEST_ENTRY(eltwise_broadcast),
		ERT_TEST_ENTRY(conv_residual), ERT_TEST_ENTRY(eltwise_split),
		ERT_TEST_ENTRY(wide_split),
		ERT_TEST_ENTRY(pools), ERT_TEST_ENTRY(pool_split_rows), ERT_TEST_ENTRY(movement),
		ERT_TEST_ENTRY(concat_many_inputs), ERT_TEST_ENTRY(island_many_buffers),
		ERT_TEST_ENTRY(movement_split),
		ERT_TEST_ENTRY(quantize_input), ERT_TEST_ENTRY(crossings_in_place),
		ERT_TEST_ENTRY(resize_input), ERT_TEST_ENTRY(resize_input_pages),
		ERT_TEST_ENTRY(hang_then_recover), ERT_TEST_ENTRY(arena_export),
	};

	use_simulator();
	return ert_test_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
