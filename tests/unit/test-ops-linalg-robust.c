/* SPDX-License-Identifier: MIT */
/*
 * Hostile attributes and shapes for the linalg, pool and qlinalg families:
 * random (seeded) combinations of ranks, dims, strides, pads, dilations,
 * groups, auto_pad and equations must fail with a status and a message or
 * succeed, never crash (run under ASan by the asan suite).
 */
#include <stdlib.h>

#include "cpu/cpu-impl.h"
#include "ert-test.h"

static uint32_t rng = 4242;

static int64_t rnd(int64_t lo, int64_t hi)
{
	rng = rng * 1103515245u + 12345u;
	return lo + (int64_t)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

static struct ert_value mk(ert_dtype dt, int32_t rank, const int64_t *dims)
{
	struct ert_value v;

	memset(&v, 0, sizeof(v));
	ert_value_set_shape(&v, dt, rank, dims);
	if (!ert_value_finish(&v))
		v.nbytes = 0;
	v.data = calloc(1, v.nbytes + 16);
	return v;
}

static const char *const auto_pads[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "BOGUS" };

/* One random windowed op; returns 1 when it ran, 0 when it was refused. */
static int try_window_op(int *ert_test_failed_, enum ert_op op)
{
	struct ert_graph *g = ert_graph_create();
	bool sane = rnd(0, 1);      /* half the cases are valid, to reach the kernels */
	int32_t nsp = sane ? (int32_t)rnd(1, 3) : (int32_t)rnd(0, 4), rank = nsp + 2;
	int64_t xd[8], wd[8], v[16];
	bool conv = op == ERT_OP_Conv || op == ERT_OP_ConvTranspose || op == ERT_OP_ConvInteger;
	ert_dtype dt = op == ERT_OP_ConvInteger ? ERT_DTYPE_UINT8 : ERT_DTYPE_FLOAT32;
	int32_t in[3], out[2];
	struct ert_value vals[3], res[2];
	struct ert_err err;
	int ran;

	xd[0] = rnd(0, 2);
	xd[1] = rnd(0, 6);
	wd[0] = rnd(0, 6);
	wd[1] = rnd(0, 6);
	for (int32_t i = 0; i < nsp; i++) {
		xd[2 + i] = sane ? rnd(4, 9) : rnd(0, 9);
		wd[2 + i] = sane ? rnd(1, 3) : rnd(0, 4);
	}
	if (sane) {
		wd[1] = op == ERT_OP_ConvTranspose ? rnd(1, 3) : xd[1] ? xd[1] : 1;
		xd[1] = op == ERT_OP_ConvTranspose ? wd[0] : wd[1];
	}
	in[0] = ert_graph_add_tensor(g, "x", dt, rank, xd);
	in[1] = ert_graph_add_tensor(g, "w", dt, rank, wd);
	in[2] = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, 1, wd);
	out[0] = ert_graph_add_tensor(g, "y", dt, -1, NULL);
	out[1] = ert_graph_add_tensor(g, "i", ERT_DTYPE_INT64, -1, NULL);
	uint32_t n_in = conv ? (uint32_t)rnd(2, 3) : 1;
	uint32_t n_out = op == ERT_OP_MaxPool ? 2 : 1;

	if (op == ERT_OP_ConvInteger)
		n_in = 2;
	int32_t ni = ert_graph_add_node(g, op, "n", n_in, in, n_out, out);
	struct ert_node *node = &g->nodes[ni];
	int32_t nattr = sane ? nsp : nsp + (int32_t)rnd(-1, 1);

	if (nattr < 0)
		nattr = 0;
	for (int i = 0; i < 16; i++)
		v[i] = sane ? rnd(1, 2) : rnd(-1, 3);
	if (rnd(0, 3))
		ert_node_set_attr_ints(g, node, "strides", v, (uint32_t)nattr);
	if (rnd(0, 3))
		ert_node_set_attr_ints(g, node, "dilations", v + 3, (uint32_t)nattr);
	if (rnd(0, 3))
		ert_node_set_attr_ints(g, node, "pads", v + 4, (uint32_t)(2 * nattr));
	if (sane) {
		for (int i = 0; i < 16; i++)
			v[i] = 0;
		if (rnd(0, 1))
			ert_node_set_attr_ints(g, node, "pads", v, (uint32_t)(2 * nattr));
	}
	if (!conv || rnd(0, 1))
		ert_node_set_attr_ints(g, node, "kernel_shape", wd + 2, (uint32_t)nattr);
	if (!sane && rnd(0, 2) == 0)
		ert_node_set_attr_int(g, node, "group", rnd(0, 4));
	if (rnd(0, 2) == 0)
		ert_node_set_attr_ints(g, node, "output_padding", v + 6, (uint32_t)nattr);
	if (!sane && rnd(0, 3) == 0)
		ert_node_set_attr_ints(g, node, "output_shape", v + 2, (uint32_t)nattr);
	if (rnd(0, 1))
		ert_node_set_attr_int(g, node, "ceil_mode", 1);
	if (rnd(0, 2) == 0) {
		struct ert_attr *a = ert_node_add_attr(g, node, "auto_pad", ERT_ATTR_STRING);

		a->s = auto_pads[rnd(0, sane ? 3 : 4)];
		a->len = (uint32_t)strlen(a->s);
	}
	vals[0] = mk(dt, rank, xd);
	vals[1] = mk(dt, rank, wd);
	vals[2] = mk(ERT_DTYPE_FLOAT32, 1, wd);
	const struct ert_value *inv[3] = { &vals[0], &vals[1], &vals[2] };
	ert_status st = ert_cpu_eval_node(g, node, inv, n_in, res, n_out, &err);

	if (st == ERT_OK) {
		for (uint32_t i = 0; i < n_out; i++)
			free(res[i].data);
		ran = 1;
	} else {
		CHECK(err.msg[0] != 0);
		ran = 0;
	}
	for (int i = 0; i < 3; i++)
		free(vals[i].data);
	ert_graph_destroy(g);
	return ran;
}

ERT_TEST(random_windows)
{
	static const enum ert_op ops[] = { ERT_OP_Conv, ERT_OP_ConvTranspose, ERT_OP_MaxPool,
					   ERT_OP_AveragePool, ERT_OP_LpPool, ERT_OP_ConvInteger };
	int ran = 0;

	for (int it = 0; it < 3000; it++)
		ran += try_window_op(ert_test_failed_, ops[it % 6]);
	/* The generator must reach the kernels too, not only the validation. */
	CHECK(ran > 100);
}

ERT_TEST(random_matmul_and_einsum)
{
	static const char *const eqs[] = { "ij,jk->ik", "ij,jk", "...ij,...jk->...ik", "ii->i",
					   "i,i", "ab,cd->abcd", "a...,...->", "ij->kj", "ij,,jk",
					   "ij,jk->iik", "...a,b...->", "", "->", "a.b", "ABc,c" };
	int ran = 0;

	for (int it = 0; it < 2000; it++) {
		struct ert_graph *g = ert_graph_create();
		int32_t ra = (int32_t)rnd(0, 4), rb = (int32_t)rnd(0, 4);
		int64_t ad[4], bd[4];
		bool ein = it % 2;
		int32_t in[2], out;
		struct ert_value a, b, y;
		struct ert_err err;

		for (int i = 0; i < 4; i++) {
			ad[i] = rnd(0, 4);
			bd[i] = rnd(0, 1) ? ad[(i + 1) % 4] : rnd(0, 4);
		}
		in[0] = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, ra, ad);
		in[1] = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, rb, bd);
		out = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
		uint32_t n_in = ein ? (uint32_t)rnd(1, 2) : 2;
		int32_t ni = ert_graph_add_node(g, ein ? ERT_OP_Einsum : ERT_OP_MatMul, "n", n_in, in,
						1, &out);

		if (ein) {
			struct ert_attr *at = ert_node_add_attr(g, &g->nodes[ni], "equation",
								ERT_ATTR_STRING);

			at->s = eqs[rnd(0, (int64_t)(sizeof(eqs) / sizeof(eqs[0])) - 1)];
			at->len = (uint32_t)strlen(at->s);
		}
		a = mk(ERT_DTYPE_FLOAT32, ra, ad);
		b = mk(ERT_DTYPE_FLOAT32, rb, bd);
		const struct ert_value *inv[2] = { &a, &b };
		ert_status st = ert_cpu_eval_node(g, &g->nodes[ni], inv, n_in, &y, 1, &err);

		if (st == ERT_OK) {
			free(y.data);
			ran++;
		} else {
			CHECK(err.msg[0] != 0);
		}
		free(a.data);
		free(b.data);
		ert_graph_destroy(g);
	}
	CHECK(ran > 100);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(random_windows), ERT_TEST_ENTRY(random_matmul_and_einsum))
