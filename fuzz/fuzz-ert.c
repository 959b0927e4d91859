/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the .ert loader: any input must give a graph or a status
 * with a message, never a crash, a leak or undefined behaviour. An image that
 * loads is also planned and run (fz_plan_run), as `edgert run` would.
 *
 * The custom mutator knows the format: half of the mutations load the image,
 * plant an extreme integer (fuzz-common.h) in a node attribute (or add one),
 * a tensor dim or an integer constant, and write the graph again (so the
 * checksums and offsets stay valid and the loader's checks pass on to
 * planning); the others are libFuzzer's own, with fuzz/ert.dict.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "format/ert-format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	/* Alternate between the in-place path (64-byte aligned image, as a mapping)
	 * and the copying path (misaligned image) so both are exercised. */
	uint8_t *buf = aligned_alloc(64, ((size + 1 + 63) & ~(size_t)63) + 64);

	if (!buf)
		return 0;
	uint8_t *img = buf + (size & 1);

	if (size)
		memcpy(img, data, size);
	ert_status st = ert_format_load(img, size, &g, &err);

	if (st == ERT_OK) {
		/* touch every constant so ASan sees any pointer outside the image */
		volatile uint8_t sink = 0;

		for (uint32_t t = 0; t < g->n_tensors; t++) {
			size_t n;
			const uint8_t *b = ert_tensor_stored(&g->tensors[t], &n);

			if (n)
				sink ^= b[n - 1];
		}
		bool npu = fz_wants_npu(g);

		(void)sink;
		ert_graph_destroy(g);
		fz_plan_run(img, size, npu);
	} else if (!err.msg[0] || g) {
		fprintf(stderr, "status %d without a message or with an output graph\n", st);
		abort();
	}
	free(buf);
	return 0;
}

/* ---- the mutator ---- */

static bool is_int_type(ert_dtype dt)
{
	return dt == ERT_DTYPE_INT64 || dt == ERT_DTYPE_INT32;
}

/* Copy constant @t's data (borrowed from the image) and plant @v in one element. */
static void plant_const(struct ert_graph *g, int32_t t, uint64_t *rs, int64_t v)
{
	struct ert_tensor *x = &g->tensors[t];
	size_t w = x->dtype == ERT_DTYPE_INT64 ? 8 : 4, k;
	uint8_t *copy = malloc(x->nbytes);
	int32_t v32 = (int32_t)(uint32_t)(uint64_t)v;

	if (!copy)
		return;
	memcpy(copy, x->data, x->nbytes);
	k = (fz_rand(rs) % (x->nbytes / w)) * w;
	memcpy(copy + k, w == 8 ? (const void *)&v : (const void *)&v32, w);
	ert_graph_set_const(g, t, copy, x->nbytes, true);
}

static void mutate_graph(struct ert_graph *g, uint64_t *rs)
{
	uint32_t n_int_attrs = 0, n_dims = 0, n_consts = 0, pick;
	int64_t v = fz_pick(rs);

	for (uint32_t i = 0; i < g->n_nodes; i++)
		for (uint32_t a = 0; a < g->nodes[i].n_attrs; a++) {
			const struct ert_attr *at = &g->nodes[i].attrs[a];

			n_int_attrs += at->type == ERT_ATTR_INT ? 1 : at->type == ERT_ATTR_INTS ? at->count : 0;
		}
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ert_tensor *x = &g->tensors[t];

		if (!(x->flags & ERT_TENSOR_CONST) && x->rank > 0)
			n_dims += (uint32_t)x->rank;
		if ((x->flags & ERT_TENSOR_CONST) && is_int_type(x->dtype) && x->nbytes >= 8)
			n_consts++;
	}
	switch (fz_rand(rs) % 4) {
	case 0: /* an attribute the node may not have had */
		if (g->n_nodes) {
			struct ert_node *n = &g->nodes[fz_rand(rs) % g->n_nodes];
			const char *name = fz_attr_names[fz_rand(rs) % (sizeof(fz_attr_names) /
								       sizeof(fz_attr_names[0]))];

			if (!ert_node_attr(n, name))
				ert_node_set_attr_int(g, n, name, v);
			return;
		}
		break;
	case 1:
		if (n_dims) {
			pick = (uint32_t)(fz_rand(rs) % n_dims);
			for (uint32_t t = 0; t < g->n_tensors; t++) {
				struct ert_tensor *x = &g->tensors[t];

				if ((x->flags & ERT_TENSOR_CONST) || x->rank <= 0)
					continue;
				if (pick < (uint32_t)x->rank) {
					x->dims[pick] = v;
					return;
				}
				pick -= (uint32_t)x->rank;
			}
		}
		break;
	case 2:
		if (n_consts) {
			pick = (uint32_t)(fz_rand(rs) % n_consts);
			for (uint32_t t = 0; t < g->n_tensors; t++) {
				const struct ert_tensor *x = &g->tensors[t];

				if (!(x->flags & ERT_TENSOR_CONST) || !is_int_type(x->dtype) ||
				    x->nbytes < 8)
					continue;
				if (pick-- == 0) {
					plant_const(g, (int32_t)t, rs, v);
					return;
				}
			}
		}
		break;
	default:
		break;
	}
	if (!n_int_attrs)
		return;
	pick = (uint32_t)(fz_rand(rs) % n_int_attrs);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		for (uint32_t a = 0; a < g->nodes[i].n_attrs; a++) {
			struct ert_attr *at = &g->nodes[i].attrs[a];
			uint32_t c = at->type == ERT_ATTR_INT ? 1 : at->type == ERT_ATTR_INTS ? at->count : 0;

			if (pick >= c) {
				pick -= c;
				continue;
			}
			if (at->type == ERT_ATTR_INT) {
				at->i = v;
			} else {
				/* the list lives in the graph's arena: copy, plant, point */
				int64_t *ints = ert_graph_alloc(g, at->count * sizeof(*ints));

				if (!ints)
					return;
				memcpy(ints, at->ints, at->count * sizeof(*ints));
				ints[pick] = v;
				at->ints = ints;
			}
			return;
		}
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t rs = seed;
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	uint8_t *buf;
	void *img = NULL;
	size_t n = 0;

	if (fz_rand(&rs) % 2)
		return LLVMFuzzerMutate(data, size, max_size);
	buf = aligned_alloc(64, ((size + 63) & ~(size_t)63) + 64);
	if (!buf)
		return LLVMFuzzerMutate(data, size, max_size);
	if (size)
		memcpy(buf, data, size);
	if (ert_format_load(buf, size, &g, &err) != ERT_OK) {
		free(buf);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	mutate_graph(g, &rs);
	if (ert_format_write_memory(g, NULL, &img, &n, &err) != ERT_OK || n > max_size) {
		free(img);
		img = NULL;
	} else {
		memcpy(data, img, n);
	}
	ert_graph_destroy(g);
	free(buf);
	if (!img)
		return LLVMFuzzerMutate(data, size, max_size);
	free(img);
	return n;
}
