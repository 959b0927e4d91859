/* SPDX-License-Identifier: MIT */
/*
 * String tensors (docs/strings.md): the run heap and packed blocks, the
 * string ops' kernels against Python's and RE2's semantics, a session whose
 * model went through the .ert format (string constants, set_input copying
 * the caller's strings, outputs valid until the next run), and hostile
 * string offsets in a model file refused by name.
 */
#include "cpu/ops/strings.h"
#include "ert-op-test.h"
#include "ert-strings.h"
#include "ert-test-model.h"
#include "ert-test.h"
#include "format/format-priv.h"

static ert_string str(const char *s)
{
	return (ert_string){ s, strlen(s) };
}

static bool str_is(const ert_string *s, const char *want)
{
	if (s->len == strlen(want) && (!s->len || memcmp(s->data, want, s->len) == 0))
		return true;
	fprintf(stderr, "got '%.*s', want '%s'\n", (int)s->len, s->len ? s->data : "", want);
	return false;
}

ERT_TEST(heap_and_pack)
{
	struct ert_str_heap *h = ert_str_heap_create();
	ert_string src[3] = { str("ab"), { "x\0y", 3 }, str("") }, *b;
	char *p, *first;
	size_t bytes = 0;

	REQUIRE(h);
	first = ert_str_heap_alloc(h, 10);
	REQUIRE(first);
	/* growth past the first block, then a reset keeps one block of the total */
	for (int i = 0; i < 100; i++)
		REQUIRE((p = ert_str_heap_alloc(h, 1000)) != NULL);
	ert_str_heap_reset(h);
	p = ert_str_heap_alloc(h, 100 * 1000);
	CHECK(p != NULL);
	CHECK(p && p[100 * 1000] == '\0');
	ert_str_heap_destroy(h);

	b = ert_strings_pack(src, 3, &bytes);
	REQUIRE(b);
	CHECK_EQ_INT(bytes, 3 * sizeof(ert_string) + 3 + 4 + 1);
	CHECK(b[1].len == 3 && memcmp(b[1].data, "x\0y", 3) == 0);
	CHECK(b[0].data != src[0].data && str_is(&b[0], "ab") && str_is(&b[2], ""));
	CHECK(ert_string_cmp(&b[0], &src[0]) == 0 && ert_string_cmp(&b[2], &b[0]) < 0);
	free(b);
}

/* A data-dependent output: the shape the kernel gives, over a new zeroed buffer. */
static ert_status test_alloc(struct ert_exec *x, uint32_t k, int32_t rank, const int64_t *dims,
			     struct ert_err *err)
{
	struct ert_value nv;
	ert_status st = ert_exec_output_value(x, k, rank, dims, &nv, err);

	if (st != ERT_OK)
		return st;
	free(x->out[k]->data);
	nv.data = calloc(1, nv.nbytes + 1);
	*x->out[k] = nv;
	return nv.data ? ERT_OK : ERT_STATUS_OUT_OF_MEMORY;
}

/* @op on x (strings) with the CPU kernel, in a heap as a session's run has */
static ert_status run_str(struct one *o, struct ert_str_heap *h, int32_t rank,
			  const int64_t *dims, const ert_string *x)
{
	const struct ert_cpu_op *k = ert_cpu_op_find(o->n->op);
	ert_infer_fn infer = ert_op_infer(o->n->op);
	struct ert_value *outp[ONE_MAX_IO];
	struct ert_exec ex;
	ert_status st;

	set_in(o, 0, ERT_DTYPE_STRING, rank, dims, x);
	one_free_out(o);
	for (uint32_t i = 0; i < o->n_out; i++)
		outp[i] = &o->out[i];
	struct ert_infer_ctx ic = { .graph = o->g, .node = o->n, .in = o->inp, .out = outp,
				    .n_in = o->n_in, .n_out = o->n_out, .err = &o->err };

	if ((st = infer(&ic)) != ERT_OK)
		return st;
	for (uint32_t i = 0; i < o->n_out; i++) {
		for (int32_t d = 0; d < o->out[i].rank; d++)
			if (o->out[i].dims[d] < 0)
				o->out[i].dims[d] = 64; /* room for what the kernel decides */
		ert_value_finish(&o->out[i]);
		o->out[i].data = calloc(1, o->out[i].nbytes + 1);
	}
	memset(&ex, 0, sizeof(ex));
	ex.graph = o->g;
	ex.node = o->n;
	ex.in = (struct ert_value **)o->inp;
	ex.out = outp;
	ex.n_in = o->n_in;
	ex.n_out = o->n_out;
	ex.strings = h;
	ex.alloc_output = test_alloc;
	ex.workspace_size = k->workspace ? k->workspace(NULL, &ex) : 0;
	ex.workspace = calloc(1, ex.workspace_size + 1);
	st = k->prepare ? k->prepare(NULL, &ex, &o->err) : ERT_OK;
	if (st == ERT_OK)
		st = k->compute(NULL, &ex, &o->err);
	if (k->release)
		k->release(&ex);
	free(ex.workspace);
	return st;
}

ERT_TEST(split_like_python)
{
	struct ert_str_heap *h = ert_str_heap_create();
	ert_string x[4] = { str("  a b\tc  "), str(""), str("a,,b"), str("one") };
	int64_t n = 4;
	struct one o;

	REQUIRE(h);
	/* no delimiter: runs of whitespace, none at the ends; "" gives no substring */
	one_init(&o, ERT_OP_StringSplit, 20, 1, 2);
	o.n_out = 2;
	REQUIRE(run_str(&o, h, 1, &n, x) == ERT_OK);
	{
		const ert_string *y = o.out[0].data;
		const int64_t *z = o.out[1].data;

		CHECK(z[0] == 3 && z[1] == 0 && z[2] == 1 && z[3] == 1);
		CHECK(str_is(&y[0], "a") && str_is(&y[1], "b") && str_is(&y[2], "c"));
		CHECK(str_is(&y[6], "a,,b") && str_is(&y[9], "one") && str_is(&y[10], ""));
	}
	/* maxsplit 1 without a delimiter: the rest keeps its inner and trailing whitespace */
	ert_node_set_attr_int(o.g, o.n, "maxsplit", 1);
	REQUIRE(run_str(&o, h, 1, &n, x) == ERT_OK);
	CHECK(str_is(&((const ert_string *)o.out[0].data)[1], "b\tc  "));
	one_fini(&o);
	/* a delimiter keeps empty pieces; "" splits into one empty string */
	one_init(&o, ERT_OP_StringSplit, 20, 1, 2);
	ert_node_set_attr_string(o.g, o.n, "delimiter", ",");
	REQUIRE(run_str(&o, h, 1, &n, x) == ERT_OK);
	{
		const ert_string *y = o.out[0].data;
		const int64_t *z = o.out[1].data;

		CHECK(z[1] == 1 && z[2] == 3 && str_is(&y[3 * 2 + 1], "") && str_is(&y[3 * 2 + 2], "b"));
	}
	one_fini(&o);
	ert_str_heap_destroy(h);
}

ERT_TEST(normalizer_and_regex)
{
	struct ert_str_heap *h = ert_str_heap_create();
	ert_string x[4] = { str("Monday"), str("tuesday"), str("Straße"), str("MONDAY") };
	const char *stop[1] = { "monday" };
	int64_t n = 4;
	struct one o;
	struct ert_attr *a;

	REQUIRE(h);
	one_init(&o, ERT_OP_StringNormalizer, 10, 1, 1);
	ert_node_set_attr_string(o.g, o.n, "case_change_action", "UPPER");
	a = ert_node_add_attr(o.g, o.n, "stopwords", ERT_ATTR_STRINGS);
	REQUIRE(a);
	a->strings = stop;
	a->count = 1;
	REQUIRE(run_str(&o, h, 1, &n, x) == ERT_OK);
	CHECK(str_is(&((const ert_string *)o.out[0].data)[0], "TUESDAY"));
	/* case mapping per UTF-8 code point (towupper keeps ß: it has no one-letter upper case) */
	CHECK(str_is(&((const ert_string *)o.out[0].data)[1], "STRAßE"));
	one_fini(&o);

	/* RE2 escapes translated to POSIX, lazy quantifiers read as greedy */
	static const struct {
		const char *re, *s;
		bool match;
	} cases[] = {
		{ "www\\.[\\w.-]+\\.\\bcom\\b", "www.my-site.com", true },
		{ "www\\.[\\w.-]+\\.\\bcom\\b", "www.my site.com", false },
		{ "\\d{3}-\\d+?", "123-45", true },
		{ "\\d{3}-\\d+?", "12a-45", false },
		{ "(?:ab)+[^\\s]", "ababx", true },
		{ "a.c", "a\xc3\xa9" "c", true },  /* '.' takes one UTF-8 character */
		{ "[\\]x-]+", "]-x", true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ert_string s = str(cases[i].s);
		int64_t one1 = 1;

		one_init(&o, ERT_OP_RegexFullMatch, 20, 1, 1);
		ert_node_set_attr_string(o.g, o.n, "pattern", cases[i].re);
		REQUIRE(run_str(&o, h, 1, &one1, &s) == ERT_OK);
		if (*(const uint8_t *)o.out[0].data != cases[i].match) {
			fprintf(stderr, "'%s' on '%s': %d\n", cases[i].re, cases[i].s,
				*(const uint8_t *)o.out[0].data);
			CHECK(0);
		}
		one_fini(&o);
	}
	/* what POSIX cannot say is refused with the pattern named */
	static const char *const refused[] = { "(?i)abc", "\\p{L}+", "[\\W]", "a\\z" };

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ert_string s = str("abc");
		int64_t one1 = 1;

		one_init(&o, ERT_OP_RegexFullMatch, 20, 1, 1);
		ert_node_set_attr_string(o.g, o.n, "pattern", refused[i]);
		CHECK_EQ_INT(run_str(&o, h, 1, &one1, &s), ERT_STATUS_UNSUPPORTED);
		CHECK(strstr(o.err.msg, refused[i]) != NULL);
		one_fini(&o);
	}
	ert_str_heap_destroy(h);
}

ERT_TEST(cast_formats)
{
	float f[5] = { 0.1f, 1.0f, -2.5f, 1e20f, 0.039187793f };
	static const char *const want[5] = { "0.1", "1.0", "-2.5", "1e+20", "0.039187793" };
	ert_string in[3] = { str("NaN"), str("-INF"), str("0.25") };
	struct one o;
	int64_t n = 5, three = 3;

	/* outside a session (folding) there is no heap: the cast runs as a step instead */
	one_init(&o, ERT_OP_Cast, 21, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "to", ERT_DTYPE_STRING);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 1, &n, f);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	one_fini(&o);

	struct ert_str_heap *h = ert_str_heap_create();
	struct ert_exec ex;
	struct ert_value out;
	ert_string s[5];

	REQUIRE(h);
	one_init(&o, ERT_OP_Cast, 21, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "to", ERT_DTYPE_STRING);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 1, &n, f);
	out = mkval(ERT_DTYPE_STRING, 1, &n, s);
	struct ert_value *outp = &out, *inp = &o.in[0];

	memset(&ex, 0, sizeof(ex));
	ex = (struct ert_exec){ .graph = o.g, .node = o.n, .in = &inp, .out = &outp, .n_in = 1,
				.n_out = 1, .strings = h };
	REQUIRE(ert_cpu_string_cast(&ex, &o.err) == ERT_OK);
	for (int i = 0; i < 5; i++)
		CHECK(str_is(&s[i], want[i]));
	/* and back: numpy's spellings of the special values parse */
	float back[3];

	o.in[0] = mkval(ERT_DTYPE_STRING, 1, &three, in);
	out = mkval(ERT_DTYPE_FLOAT32, 1, &three, back);
	REQUIRE(ert_cpu_string_cast(&ex, &o.err) == ERT_OK);
	CHECK(isnan(back[0]) && isinf(back[1]) && back[1] < 0 && back[2] == 0.25f);
	/* text that is no number fails the run */
	in[2] = str("0.25x");
	CHECK_EQ_INT(ert_cpu_string_cast(&ex, &o.err), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "0.25x") != NULL);
	one_fini(&o);
	ert_str_heap_destroy(h);
}

/* x[3] string → StringConcat(x, suffix const) → out[3]; Equal(out, want const) → eq */
static struct ert_graph *concat_graph(void)
{
	static const ert_string suffix[3] = { { "-a", 2 }, { "", 0 }, { "b\0c", 3 } };
	static const ert_string want[3] = { { "x-a", 3 }, { "yy", 2 }, { "zb\0c", 4 } };
	struct ert_graph *g = ert_graph_create();
	int64_t three = 3;
	int32_t x, s, w, c, e;

	if (!g)
		abort();
	g->opset = 20;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_STRING, 1, &three);
	s = ert_graph_add_tensor(g, "suffix", ERT_DTYPE_STRING, 1, &three);
	w = ert_graph_add_tensor(g, "want", ERT_DTYPE_STRING, 1, &three);
	c = ert_graph_add_tensor(g, "out", ERT_DTYPE_STRING, 1, &three);
	e = ert_graph_add_tensor(g, "eq", ERT_DTYPE_BOOL, 1, &three);
	ert_graph_set_const(g, s, ert_strings_pack(suffix, 3, NULL), 3 * sizeof(ert_string), true);
	ert_graph_set_const(g, w, ert_strings_pack(want, 3, NULL), 3 * sizeof(ert_string), true);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_StringConcat, "cat", 2, (int32_t[]){ x, s }, 1, &c);
	ert_graph_add_node(g, ERT_OP_Equal, "eq", 2, (int32_t[]){ c, w }, 1, &e);
	ert_graph_add_output(g, c);
	ert_graph_add_output(g, e);
	return g;
}

ERT_TEST(session_through_ert_file)
{
	ert_model *m = model_from_graph(concat_graph());
	ert_session *sess = NULL;
	char *mine = strdup("x");
	ert_string in[3] = { { mine, 1 }, str("yy"), str("z") };
	const ert_string *out;
	const uint8_t *eq;

	REQUIRE(m);
	REQUIRE(ert_session_create(m, NULL, &sess) == ERT_OK);
	REQUIRE(ert_session_set_input(sess, 0, ERT_DTYPE_STRING, in, sizeof(in)) == ERT_OK);
	/* set_input copied the strings: the caller's may go before the run */
	mine[0] = 'Q';
	free(mine);
	REQUIRE(ert_session_run(sess) == ERT_OK);
	out = ert_tensor_data(ert_session_get_output(sess, 0));
	eq = ert_tensor_data(ert_session_get_output(sess, 1));
	CHECK(str_is(&out[0], "x-a") && str_is(&out[1], "yy"));
	CHECK(out[2].len == 4 && memcmp(out[2].data, "zb\0c", 4) == 0);
	CHECK(eq[0] && eq[1] && eq[2]);
	/* a second run with other strings: the heap was emptied and refilled */
	in[0] = str("nope");
	REQUIRE(ert_session_set_input(sess, 0, ERT_DTYPE_STRING, in, sizeof(in)) == ERT_OK);
	REQUIRE(ert_session_run(sess) == ERT_OK);
	CHECK(str_is(&out[0], "nope-a") && !eq[0] && eq[1]);
	/* a handle with no bytes but a length is refused */
	in[1] = (ert_string){ NULL, 5 };
	CHECK_EQ_INT(ert_session_set_input(sess, 0, ERT_DTYPE_STRING, in, sizeof(in)),
		     ERT_STATUS_INVALID_ARGUMENT);
	ert_session_destroy(sess);
	ert_model_unref(m);
}

/* Offsets of the "suffix" constant in an .ert image of concat_graph(). */
static uint8_t *string_offsets(uint8_t *img, size_t size, uint64_t *n_bytes)
{
	/* the writer puts "-a", "", "b\0c" as offsets 0, 2, 2, 5 then the bytes */
	static const uint8_t pat[32] = { 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
					 2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0 };

	for (size_t i = 0; i + sizeof(pat) <= size; i += 8)
		if (memcmp(img + i, pat, sizeof(pat)) == 0) {
			*n_bytes = 5;
			return img + i;
		}
	return NULL;
}

ERT_TEST(hostile_string_offsets)
{
	struct ert_graph *g = concat_graph(), *h = NULL;
	struct ert_err err = { "" };
	void *img = NULL;
	size_t size = 0;
	uint64_t nb = 0;

	REQUIRE(ert_graph_toposort(g, &err) == ERT_OK);
	REQUIRE(ert_format_write_memory(g, NULL, &img, &size, &err) == ERT_OK);
	ert_graph_destroy(g);
	CHECK_EQ_INT(((uint8_t *)img)[8], ERT_FORMAT_VERSION);
	uint8_t *off = string_offsets(img, size, &nb), *copy = aligned_alloc(64, (size + 63) & ~63ul);

	REQUIRE(off && copy);
	static const struct {
		int idx;
		uint64_t v;
		const char *msg;
	} cases[] = {
		{ 0, 1, "string offset 0 is 1" },              /* the first must be 0 */
		{ 2, 1, "string offset 2 is 1 (after 2" },     /* decreasing */
		{ 3, 6, "string offset 3 is 6" },              /* past the bytes */
		{ 3, 4, "the strings end at 4 of 5 bytes" },   /* short of the stored size */
		{ 2, UINT64_MAX, "string offset 2 is 18446744073709551615" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(copy, img, size);
		fmt_put64(copy + (off - (uint8_t *)img) + 8 * cases[i].idx, cases[i].v);
		/* weights lie outside the header checksum: only the offsets' checks stand */
		h = NULL;
		CHECK_EQ_INT(ert_format_load(copy, size, &h, &err), ERT_STATUS_INVALID_MODEL);
		CHECK(h == NULL);
		if (!strstr(err.msg, cases[i].msg)) {
			fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, cases[i].msg);
			CHECK(0);
		}
		ert_graph_destroy(h);
	}
	/* encoding 5 came with version 7: a version 6 file holding it is damaged */
	memcpy(copy, img, size);
	fmt_put32(copy + FMT_OFF_VERSION, 6);
	fmt_put32(copy + FMT_OFF_CHECKSUM, fmt_checksum(copy, fmt_get32(copy + FMT_OFF_HEADER_SIZE),
						    fmt_get32(copy + FMT_OFF_NSECTIONS)));
	h = NULL;
	CHECK_EQ_INT(ert_format_load(copy, size, &h, &err), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(err.msg, "unknown encoding 5") != NULL);
	ert_graph_destroy(h);
	free(copy);
	free(img);
}

/* Ops that only move elements move string handles, as any 16-byte element. */
ERT_TEST(movement_ops_move_handles)
{
	static const struct {
		enum ert_op op;
		int opset;
		uint32_t n_in;
	} ops[] = {
		{ ERT_OP_Identity, 16, 1 }, { ERT_OP_Reshape, 14, 2 }, { ERT_OP_Transpose, 13, 1 },
		{ ERT_OP_Gather, 13, 2 }, { ERT_OP_Concat, 13, 2 }, { ERT_OP_Flatten, 13, 1 },
		{ ERT_OP_Squeeze, 13, 1 }, { ERT_OP_Unsqueeze, 13, 2 }, { ERT_OP_Expand, 13, 2 },
		{ ERT_OP_Slice, 13, 3 }, { ERT_OP_Tile, 13, 2 },
	};
	ert_string x[4] = { str("a"), str("bb"), str("ccc"), str("") };
	int64_t dims[2] = { 2, 2 }, shape[1] = { 4 }, idx[2] = { 1, 0 }, two = 2, one1 = 1;
	int64_t axes0[1] = { 0 }, exp_shape[2] = { 2, 2 }, st[1] = { 1 }, en[1] = { 2 };
	int64_t reps[2] = { 1, 2 };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct one o;
		ert_status rc;

		one_init(&o, ops[i].op, ops[i].opset, ops[i].n_in, 1);
		set_in(&o, 0, ERT_DTYPE_STRING, 2, dims, x);
		switch (ops[i].op) {
		case ERT_OP_Reshape: set_in(&o, 1, ERT_DTYPE_INT64, 1, &one1, shape); break;
		case ERT_OP_Gather: set_in(&o, 1, ERT_DTYPE_INT64, 1, &two, idx); break;
		case ERT_OP_Concat:
			ert_node_set_attr_int(o.g, o.n, "axis", 0);
			set_in(&o, 1, ERT_DTYPE_STRING, 2, dims, x);
			break;
		case ERT_OP_Unsqueeze: set_in(&o, 1, ERT_DTYPE_INT64, 1, &one1, axes0); break;
		case ERT_OP_Expand: set_in(&o, 1, ERT_DTYPE_INT64, 1, &two, exp_shape); break;
		case ERT_OP_Slice:
			set_in(&o, 1, ERT_DTYPE_INT64, 1, &one1, st);
			set_in(&o, 2, ERT_DTYPE_INT64, 1, &one1, en);
			break;
		case ERT_OP_Tile: set_in(&o, 1, ERT_DTYPE_INT64, 1, &two, reps); break;
		case ERT_OP_Squeeze: set_in(&o, 0, ERT_DTYPE_STRING, 1, shape, x); break;
		default: break;
		}
		rc = one_run(&o);
		if (rc != ERT_OK || o.out[0].dtype != ERT_DTYPE_STRING) {
			fprintf(stderr, "%s on strings: %d %s\n", ert_op_name(ops[i].op), (int)rc, o.err.msg);
			CHECK(0);
		} else {
			const ert_string *y = o.out[0].data;

			/* every element is one of x's handles, untouched */
			for (int64_t k = 0; k < o.out[0].numel; k++)
				CHECK(y[k].data == x[0].data || y[k].data == x[1].data ||
				      y[k].data == x[2].data || y[k].data == x[3].data);
		}
		one_fini(&o);
	}
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(heap_and_pack), ERT_TEST_ENTRY(split_like_python),
	      ERT_TEST_ENTRY(normalizer_and_regex), ERT_TEST_ENTRY(cast_formats),
	      ERT_TEST_ENTRY(session_through_ert_file), ERT_TEST_ENTRY(hostile_string_offsets),
	      ERT_TEST_ENTRY(movement_ops_move_handles))
