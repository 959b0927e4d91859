/* SPDX-License-Identifier: MIT */
/*
 * .ert loader against damaged images: each validation rule of
 * docs/model-format.md is broken on purpose (with the checksum fixed up where the
 * rule is behind it) and must give the right status and a message naming it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ert-test.h"
#include "format/format-priv.h"

/* x[1,4] → MatMul(W[4,4]) → Add(b[4]) → Relu → z */
static struct ert_graph *build_small(void)
{
	static const float w[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	static const float b[4] = { 1, 2, 3, 4 };
	struct ert_graph *g = ert_graph_create();

	if (!g)
		return NULL;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 4 });
	int32_t wt = ert_graph_add_tensor(g, "W", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 4, 4 });
	int32_t bt = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 });
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 4 });
	int32_t yb = ert_graph_add_tensor(g, "yb", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 4 });
	int32_t z = ert_graph_add_tensor(g, "z", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 4 });

	ert_graph_set_const(g, wt, w, sizeof(w), false);
	ert_graph_set_const(g, bt, b, sizeof(b), false);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_MatMul, "mm", 2, (int32_t[]){ x, wt }, 1, &y);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ y, bt }, 1, &yb);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &yb, 1, &z);
	ert_graph_add_output(g, z);
	return g;
}

struct image {
	uint8_t *p;
	size_t size;
};

static struct image fresh(void)
{
	struct image im = { NULL, 0 };
	struct ert_graph *g = build_small();
	struct ert_err err;
	void *p = NULL;

	if (g && ert_format_write_memory(g, NULL, &p, &im.size, &err) == ERT_OK)
		im.p = p;
	ert_graph_destroy(g);
	return im;
}

static uint8_t *sec_entry(struct image *im, uint32_t type)
{
	for (uint32_t s = 0; s < fmt_get32(im->p + FMT_OFF_NSECTIONS); s++) {
		uint8_t *e = im->p + FMT_HEADER_V1 + s * FMT_SECTION_ENTRY;

		if (fmt_get32(e) == type)
			return e;
	}
	return NULL;
}

static uint8_t *sec(struct image *im, uint32_t type)
{
	return im->p + fmt_get64(sec_entry(im, type) + 8);
}

/* Tensor record @i (the small graph has no quantisation arrays: fixed size). */
static uint8_t *tensor_rec(struct image *im, uint32_t i)
{
	return sec(im, FMT_SEC_TENSORS) + 4 + (size_t)i * FMT_TENSOR_FIXED;
}

/* First node record: op, name, opset, n_in, n_out, n_attrs, then indices. */
static uint8_t *node_rec(struct image *im)
{
	return sec(im, FMT_SEC_NODES) + 4;
}

/*
 * Make @im a version @v image (v < 5): the empty subgraph section that
 * version 5 adds is dropped from the section table (its four zero bytes
 * become padding), the weights' entry taking its place.
 */
static void downgrade(struct image *im, uint32_t v)
{
	uint8_t *sub = sec_entry(im, FMT_SEC_SUBGRAPHS), *wts = sec_entry(im, FMT_SEC_WEIGHTS);
	uint8_t *last = im->p + FMT_HEADER_V1 + FMT_SEC_COUNT_V1 * FMT_SECTION_ENTRY;

	if (sub && wts && fmt_get32(im->p + fmt_get64(sub + 8)) == 0) {
		memcpy(sub, wts, FMT_SECTION_ENTRY);
		if (wts != sub)
			memset(wts, 0, FMT_SECTION_ENTRY);
		memset(last, 0, FMT_SECTION_ENTRY);
		fmt_put32(im->p + FMT_OFF_NSECTIONS, FMT_SEC_COUNT_V1);
	}
	fmt_put32(im->p + FMT_OFF_VERSION, v);
}

static void reseal(struct image *im)
{
	fmt_put32(im->p + FMT_OFF_CHECKSUM,
		  fmt_checksum(im->p, FMT_HEADER_V1, fmt_get32(im->p + FMT_OFF_NSECTIONS)));
}

/* Load @im (size @size), expect @st and @needle in the message. */
static void expect(int *ert_test_failed_, int line, struct image *im, size_t size,
		   ert_status st, const char *needle)
{
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	ert_status got = ert_format_load(im->p, size, &g, &err);

	if (got != st || (st != ERT_OK && (!err.msg[0] || !strstr(err.msg, needle)))) {
		fprintf(stderr, "line %d: status %d (want %d), message '%s' (want '%s')\n", line,
			got, st, err.msg, needle);
		*ert_test_failed_ = 1;
	}
	if (got == ERT_OK)
		ert_graph_destroy(g);
	else if (g)
		*ert_test_failed_ = 1; /* output written on failure */
	free(im->p);
	im->p = NULL;
}

#define EXPECT(im, size, st, needle) expect(ert_test_failed_, __LINE__, &(im), size, st, needle)

ERT_TEST(valid_image_loads)
{
	struct image im = fresh();

	REQUIRE(im.p);
	EXPECT(im, im.size, ERT_OK, "");
}

ERT_TEST(truncated)
{
	struct image im = fresh();

	REQUIRE(im.p);
	EXPECT(im, 20, ERT_STATUS_INVALID_MODEL, "truncated");
	im = fresh();
	EXPECT(im, 6, ERT_STATUS_INVALID_MODEL, "magic");
	im = fresh();
	EXPECT(im, im.size - 1, ERT_STATUS_INVALID_MODEL, "truncated");
	im = fresh();
	EXPECT(im, FMT_HEADER_V1 + 10, ERT_STATUS_INVALID_MODEL, "truncated");
}

ERT_TEST(versions)
{
	struct image im = fresh();

	REQUIRE(im.p);
	char want[96];

	snprintf(want, sizeof(want), "model format version %d is newer than this runtime's %d",
		 ERT_FORMAT_VERSION + 2, ERT_FORMAT_VERSION);
	fmt_put32(im.p + FMT_OFF_VERSION, ERT_FORMAT_VERSION + 2);
	EXPECT(im, im.size, ERT_STATUS_VERSION, want);
	im = fresh();
	fmt_put32(im.p + FMT_OFF_VERSION, ERT_FORMAT_VERSION + 1);
	EXPECT(im, 12, ERT_STATUS_VERSION, "newer");
	im = fresh();
	fmt_put32(im.p + FMT_OFF_VERSION, 0);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "version 0");
	/* versions 1 to 5 fix the header size; such a file claiming a longer header is damaged */
	im = fresh();
	fmt_put32(im.p + FMT_OFF_HEADER_SIZE, FMT_HEADER_V1 + 8);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "header size");
}

ERT_TEST(header_fields)
{
	struct image im = fresh();

	REQUIRE(im.p);
	im.p[0] ^= 1;
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "magic");
	im = fresh();
	fmt_put32(im.p + FMT_OFF_FLAGS, 4);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "flags");
	im = fresh();
	im.p[40] = 1;
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "reserved");
	im = fresh();
	fmt_put32(im.p + FMT_OFF_NSECTIONS, 0xffffffffu);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "sections");
	im = fresh();
	fmt_put64(im.p + FMT_OFF_FILE_SIZE, UINT64_MAX);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "truncated");
}

ERT_TEST(sections)
{
	struct image im = fresh();

	REQUIRE(im.p);
	fmt_put64(sec_entry(&im, FMT_SEC_TENSORS) + 8, im.size + 100);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "outside the file");
	im = fresh();
	fmt_put64(sec_entry(&im, FMT_SEC_NODES) + 16, UINT64_MAX);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "outside the file");
	im = fresh();
	fmt_put64(sec_entry(&im, FMT_SEC_NODES) + 8, fmt_get64(sec_entry(&im, FMT_SEC_TENSORS) + 8));
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "overlaps");
	im = fresh();
	fmt_put32(sec_entry(&im, FMT_SEC_GRAPH), FMT_SEC_NODES);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "twice");
	im = fresh();
	fmt_put32(sec_entry(&im, FMT_SEC_GRAPH), 77);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "unknown type 77");
	im = fresh();
	fmt_put64(sec_entry(&im, FMT_SEC_WEIGHTS) + 8, fmt_get64(sec_entry(&im, FMT_SEC_WEIGHTS) + 8) + 4);
	fmt_put64(sec_entry(&im, FMT_SEC_WEIGHTS) + 16, fmt_get64(sec_entry(&im, FMT_SEC_WEIGHTS) + 16) - 4);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "aligned");
}

ERT_TEST(checksum)
{
	struct image im = fresh();

	REQUIRE(im.p);
	tensor_rec(&im, 0)[4] ^= 0x40;
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "checksum");
	im = fresh();
	sec(&im, FMT_SEC_STRINGS)[12] ^= 1;
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "checksum");
	/* weights are outside the checksum: a changed weight still loads */
	im = fresh();
	sec(&im, FMT_SEC_WEIGHTS)[3] ^= 1;
	EXPECT(im, im.size, ERT_OK, "");
}

/* Tensor @i's record's stored data: where it lies in the image. */
static uint8_t *tensor_data(struct image *im, uint32_t i)
{
	const uint8_t *rec = tensor_rec(im, i);
	size_t field = 6 * 4 + ERT_MAX_RANK * 8 + ERT_MAX_RANK * 4;

	return im->p + fmt_get64(rec + field);
}

/* x[1,4] -> Reshape(shape = {2, 2}) -> y: the shape is read while planning. */
static struct image fresh_reshape(void)
{
	static const int64_t shape[2] = { 2, 2 };
	struct image im = { NULL, 0 };
	struct ert_graph *g = ert_graph_create();
	struct ert_err err;
	void *p = NULL;

	if (!g)
		return im;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, 4 });
	int32_t s = ert_graph_add_tensor(g, "shape", ERT_DTYPE_INT64, 1, (int64_t[]){ 2 });
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);

	ert_graph_set_const(g, s, shape, sizeof(shape), false);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Reshape, "r", 2, (int32_t[]){ x, s }, 1, &y);
	ert_graph_add_output(g, y);
	if (ert_format_write_memory(g, NULL, &p, &im.size, &err) == ERT_OK)
		im.p = p;
	ert_graph_destroy(g);
	return im;
}

ERT_TEST(value_checksum)
{
	struct image im = fresh_reshape();

	REQUIRE(im.p);
	/* tensor 1, the shape: flagged as read by planning */
	CHECK((fmt_get32(tensor_rec(&im, 1) + 16) & FMT_TENSOR_VALUE) != 0);
	CHECK((fmt_get32(tensor_rec(&im, 0) + 16) & FMT_TENSOR_VALUE) == 0);
	EXPECT(im, im.size, ERT_OK, "");
	/* a damaged shape constant is caught, although it lies among the weights */
	im = fresh_reshape();
	tensor_data(&im, 1)[0] ^= 0x04;
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "value checksum mismatch");
	/* dropping the flag changes the tensor table: the main checksum */
	im = fresh_reshape();
	fmt_put32(tensor_rec(&im, 1) + 16, fmt_get32(tensor_rec(&im, 1) + 16) & ~FMT_TENSOR_VALUE);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "checksum mismatch");
	/* the flag is only for constants, and only from version 2 on */
	im = fresh_reshape();
	fmt_put32(tensor_rec(&im, 0) + 16, fmt_get32(tensor_rec(&im, 0) + 16) | FMT_TENSOR_VALUE);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "value flag on a non-constant");
	im = fresh_reshape();
	downgrade(&im, 1);
	fmt_put32(im.p + FMT_OFF_VALUE_CHECKSUM, 0);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "undefined flags 0x9");
	/* in a version 1 file the field is reserved */
	im = fresh();
	downgrade(&im, 1);
	fmt_put32(im.p + FMT_OFF_VALUE_CHECKSUM, 1);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "reserved header byte 36");
	/* a version 1 file with no flag and the field zero loads */
	im = fresh();
	downgrade(&im, 1);
	reseal(&im);
	EXPECT(im, im.size, ERT_OK, "");
}

/* The end of the last section before the weights section. */
static uint64_t end_before_weights(struct image *im)
{
	uint64_t end = 0;

	for (uint32_t t = FMT_SEC_STRINGS; t <= FMT_SEC_GRAPH; t++) {
		uint64_t e = fmt_get64(sec_entry(im, t) + 8) + fmt_get64(sec_entry(im, t) + 16);

		if (e > end)
			end = e;
	}
	return end;
}

ERT_TEST(padding_outside_sections)
{
	struct image im = fresh();
	uint64_t gap, weights;

	REQUIRE(im.p);
	gap = end_before_weights(&im);
	weights = fmt_get64(sec_entry(&im, FMT_SEC_WEIGHTS) + 8);
	/* the writer aligns the weights: this graph leaves padding before them */
	REQUIRE(gap < weights);
	/* no checksum covers it, so it must be zero */
	im.p[weights - 1] = 0x5a;
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "outside every section, is not zero");
	im = fresh();
	im.p[gap] = 1;
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "padding byte at");
}

ERT_TEST(strings)
{
	struct image im = fresh();

	REQUIRE(im.p);
	fmt_put32(tensor_rec(&im, 2), 9999);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "string index 9999");
	im = fresh();
	fmt_put32(sec(&im, FMT_SEC_STRINGS), 0x7fffffff);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "claims 2147483647 strings");
	/* string 0's terminating NUL overwritten */
	im = fresh();
	uint8_t *st = sec(&im, FMT_SEC_STRINGS);
	uint32_t n = fmt_get32(st);

	st[4 + 8 * n + fmt_get32(st + 4) + fmt_get32(st + 8)] = 'x';
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "NUL-terminated");
	im = fresh();
	st = sec(&im, FMT_SEC_STRINGS);
	fmt_put32(st + 8, 0xfffffff0u);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "outside the string table");
}

ERT_TEST(tensor_records)
{
	struct image im = fresh();

	REQUIRE(im.p);
	fmt_put32(tensor_rec(&im, 1) + 4, 200);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "unknown dtype 200");
	im = fresh();
	fmt_put32(tensor_rec(&im, 1) + 12, 9);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "rank 9");
	im = fresh();
	fmt_put64(tensor_rec(&im, 3) + 24, (uint64_t)-7);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "dimension 0 is -7");
	/* a constant whose element count overflows 64 bits */
	im = fresh();
	fmt_put64(tensor_rec(&im, 1) + 24, 1ull << 40);
	fmt_put64(tensor_rec(&im, 1) + 32, 1ull << 40);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "fits in 64 bits");
	/* the same with a product that fits but bytes that do not */
	im = fresh();
	fmt_put64(tensor_rec(&im, 1) + 24, 1ull << 30);
	fmt_put64(tensor_rec(&im, 1) + 32, 1ull << 30);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "need");
	im = fresh();
	fmt_put32(tensor_rec(&im, 1) + 16, 0x80);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "undefined flags");
	im = fresh();
	fmt_put32(tensor_rec(&im, 0), fmt_get32(tensor_rec(&im, 1)));
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "duplicate tensor name");
	im = fresh();
	fmt_put32(sec(&im, FMT_SEC_TENSORS), 1000000);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "claims 1000000 tensors");
}

/* Offsets of data_offset / data_size inside a tensor record. */
#define REC_DATA_OFF (6 * 4 + ERT_MAX_RANK * 12)

ERT_TEST(weight_ranges)
{
	struct image im = fresh();

	REQUIRE(im.p);
	fmt_put64(tensor_rec(&im, 1) + REC_DATA_OFF, ((im.size + 63) & ~(size_t)63) + 64 * 1000);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "outside the weights section");
	im = fresh();
	fmt_put64(tensor_rec(&im, 1) + REC_DATA_OFF, UINT64_MAX - 63);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "outside the weights section");
	im = fresh();
	fmt_put64(tensor_rec(&im, 1) + REC_DATA_OFF,
		  fmt_get64(tensor_rec(&im, 1) + REC_DATA_OFF) + 4);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "aligned");
	im = fresh();
	fmt_put64(tensor_rec(&im, 1) + REC_DATA_OFF + 8, UINT64_MAX);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "stores");
	/* b's data moved onto W's */
	im = fresh();
	fmt_put64(tensor_rec(&im, 2) + REC_DATA_OFF, fmt_get64(tensor_rec(&im, 1) + REC_DATA_OFF));
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "overlap");
	/* a non-constant with data */
	im = fresh();
	fmt_put64(tensor_rec(&im, 0) + REC_DATA_OFF, 64);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "data without encoding");
}

ERT_TEST(node_records)
{
	struct image im = fresh();

	REQUIRE(im.p);
	fmt_put32(node_rec(&im) + 24, 9999);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "tensor index 9999");
	im = fresh();
	fmt_put32(node_rec(&im) + 28, (uint32_t)-5);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "tensor index -5");
	im = fresh();
	fmt_put32(node_rec(&im) + 12, 100000);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "at most");
	im = fresh();
	fmt_put32(node_rec(&im) + 20, 0x40000000);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "attributes");
	im = fresh();
	fmt_put32(sec(&im, FMT_SEC_NODES), 0xffffffffu);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "nodes");
	/* the graph reads a tensor nobody produces: caught by ert_graph_validate() */
	im = fresh();
	fmt_put32(node_rec(&im) + 24, 5);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "before anything produces it");
}

ERT_TEST(unknown_op)
{
	struct image im = fresh();

	REQUIRE(im.p);
	/* rename "Relu" to "Relx" in the string table */
	uint8_t *st = sec(&im, FMT_SEC_STRINGS), *end = st + fmt_get64(sec_entry(&im, FMT_SEC_STRINGS) + 16);
	uint8_t *hit = NULL;

	for (uint8_t *p = st; p + 5 <= end; p++)
		if (memcmp(p, "Relu", 5) == 0)
			hit = p;
	REQUIRE(hit);
	hit[3] = 'x';
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_UNSUPPORTED, "unsupported op 'Relx' in node 'relu'");
}

ERT_TEST(graph_section)
{
	struct image im = fresh();

	REQUIRE(im.p);
	uint8_t *gs = sec(&im, FMT_SEC_GRAPH);

	fmt_put32(gs + 20, 7); /* n_inputs 7, with 1 index and the outputs behind it */
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "");
	im = fresh();
	gs = sec(&im, FMT_SEC_GRAPH);
	fmt_put32(gs + 24, 3); /* graph input is y instead of x */
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "flags disagree");
	im = fresh();
	gs = sec(&im, FMT_SEC_GRAPH);
	fmt_put32(gs + 24, 60);
	reseal(&im);
	EXPECT(im, im.size, ERT_STATUS_INVALID_MODEL, "tensor index 60");
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(valid_image_loads), ERT_TEST_ENTRY(truncated), ERT_TEST_ENTRY(versions),
	      ERT_TEST_ENTRY(header_fields), ERT_TEST_ENTRY(sections), ERT_TEST_ENTRY(checksum),
	      ERT_TEST_ENTRY(padding_outside_sections), ERT_TEST_ENTRY(value_checksum),
	      ERT_TEST_ENTRY(strings), ERT_TEST_ENTRY(tensor_records),
	      ERT_TEST_ENTRY(weight_ranges), ERT_TEST_ENTRY(node_records),
	      ERT_TEST_ENTRY(unknown_op), ERT_TEST_ENTRY(graph_section))
