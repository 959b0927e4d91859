/* SPDX-License-Identifier: MIT */
/* .ert writer: graph → image (docs/model-format.md), and atomic file output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <zlib.h>

#include "ert-file.h"
#include "ert-op-impl.h"
#include "format/format-priv.h"

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static uint8_t *buf_grow(struct buf *b, size_t n)
{
	if (b->oom || (n == 0 && !b->p))
		return NULL;
	if (n > SIZE_MAX - b->len) {
		b->oom = true;
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n)
			cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
		uint8_t *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	uint8_t *at = b->p + b->len;

	b->len += n;
	return at;
}

static void put_bytes(struct buf *b, const void *src, size_t n)
{
	uint8_t *p = buf_grow(b, n);

	if (p && n)
		memcpy(p, src, n);
}

static void put_u32(struct buf *b, uint32_t v)
{
	uint8_t *p = buf_grow(b, 4);

	if (p)
		fmt_put32(p, v);
}

static void put_u64(struct buf *b, uint64_t v)
{
	uint8_t *p = buf_grow(b, 8);

	if (p)
		fmt_put64(p, v);
}

static void put_f32(struct buf *b, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	put_u32(b, u);
}

static void pad_to(struct buf *b, size_t align)
{
	size_t n = (align - b->len % align) % align;
	uint8_t *p = buf_grow(b, n);

	if (p && n)
		memset(p, 0, n);
}

/* String table with de-duplication through an open-addressing hash. */
struct strtab {
	struct buf index, bytes;
	uint32_t count, cap;
	uint32_t *slots;   /* string number + 1; 0 empty */
	bool oom;
};

static uint32_t hash_bytes(const char *s, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static bool str_equal(const struct strtab *st, uint32_t k, const char *s, uint32_t len)
{
	uint32_t off = fmt_get32(st->index.p + 8 * k), l = fmt_get32(st->index.p + 8 * k + 4);

	return l == len && memcmp(st->bytes.p + off, s, len) == 0;
}

static bool strtab_rehash(struct strtab *st)
{
	uint32_t cap = st->cap ? st->cap * 2 : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return false;
	for (uint32_t k = 0; k < st->count; k++) {
		uint32_t off = fmt_get32(st->index.p + 8 * k), l = fmt_get32(st->index.p + 8 * k + 4);
		uint32_t j = hash_bytes((const char *)st->bytes.p + off, l) & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = k + 1;
	}
	free(st->slots);
	st->slots = slots;
	st->cap = cap;
	return true;
}

static uint32_t strtab_add(struct strtab *st, const char *s, size_t len)
{
	if (st->oom)
		return 0;
	if (len > UINT32_MAX - 1 || st->bytes.len > UINT32_MAX - len - 1 ||
	    st->count >= UINT32_MAX - 1 || ((st->count + 1) * 2 > st->cap && !strtab_rehash(st))) {
		st->oom = true;
		return 0;
	}
	uint32_t j = hash_bytes(s, (uint32_t)len) & (st->cap - 1);

	for (; st->slots[j]; j = (j + 1) & (st->cap - 1))
		if (str_equal(st, st->slots[j] - 1, s, (uint32_t)len))
			return st->slots[j] - 1;
	put_u32(&st->index, (uint32_t)st->bytes.len);
	put_u32(&st->index, (uint32_t)len);
	put_bytes(&st->bytes, s, len);
	put_bytes(&st->bytes, "", 1);
	if (st->index.oom || st->bytes.oom) {
		st->oom = true;
		return 0;
	}
	st->slots[j] = st->count + 1;
	return st->count++;
}

static uint32_t str_ref(struct strtab *st, const char *s)
{
	return s ? strtab_add(st, s, strlen(s)) : FMT_STR_NONE;
}

struct writer {
	const struct ert_graph *g;
	struct ert_write_options opt;
	struct strtab strs;
	struct buf tensors, nodes, graph, subgraphs, weights;
	/*
	 * The main graph, then its subgraphs in preorder (a subgraph after the
	 * graph holding it): file graph number i. @tbase: the first tensor
	 * record of each; the per-tensor arrays below are indexed by record.
	 */
	const struct ert_graph **graphs;
	uint32_t n_graphs, cap_graphs;
	uint32_t *tbase;
	uint32_t n_records;
	uint8_t *enc;        /* per tensor: chosen enum fmt_encoding */
	uint8_t *value_read; /* per tensor: planning reads its values (FMT_TENSOR_VALUE) */
	size_t *data_field;  /* per tensor: position of data_offset in ->tensors */
	struct ert_err *err;
};

/* Add @g and, in preorder, the subgraphs its live nodes hold. */
static bool collect_graphs(struct writer *w, const struct ert_graph *g, uint32_t depth)
{
	if (depth > ERT_GRAPH_MAX_DEPTH)
		return false;
	if (w->n_graphs == w->cap_graphs) {
		uint32_t cap = w->cap_graphs ? 2 * w->cap_graphs : 8;
		const struct ert_graph **p = realloc(w->graphs, cap * sizeof(*p));

		if (!p)
			return false;
		w->graphs = p;
		w->cap_graphs = cap;
	}
	w->graphs[w->n_graphs++] = g;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		for (uint32_t a = 0; a < n->n_attrs && !n->dead; a++)
			if (n->attrs[a].type == ERT_ATTR_GRAPH &&
			    !collect_graphs(w, n->attrs[a].graph, depth + 1))
				return false;
	}
	return true;
}

static uint32_t graph_number(const struct writer *w, const struct ert_graph *g)
{
	for (uint32_t i = 0; i < w->n_graphs; i++)
		if (w->graphs[i] == g)
			return i;
	return UINT32_MAX;
}

/* Decide the storage of every constant of graph @gi from the options and how it is used. */
static bool choose_encodings(struct writer *w, uint32_t gi)
{
	const struct ert_graph *g = w->graphs[gi];
	uint32_t base = w->tbase[gi];
	uint8_t *weight = calloc(g->n_tensors ? g->n_tensors : 1, 1);
	uint8_t *by_value = calloc(g->n_tensors ? g->n_tensors : 1, 1);
	uint8_t *value_read = ert_graph_mark_value_needed(g);

	if (!weight || !by_value || !value_read) {
		free(weight);
		free(by_value);
		free(value_read);
		return false;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];
		uint32_t vin = ert_op_value_inputs(n->op);

		if (n->dead)
			continue;
		for (uint32_t k = 0; k < n->n_inputs && k < 32; k++)
			if (n->inputs[k] >= 0 && (vin >> k) & 1)
				by_value[n->inputs[k]] = 1;
		if ((n->op == ERT_OP_Conv || n->op == ERT_OP_ConvTranspose ||
		     n->op == ERT_OP_Gemm || n->op == ERT_OP_MatMul) &&
		    n->n_inputs > 1 && n->inputs[1] >= 0)
			weight[n->inputs[1]] = 1;
	}
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ert_tensor *x = &g->tensors[t];
		int64_t numel = ert_shape_numel(x->rank, x->dims);

		w->value_read[base + t] = value_read[t];
		if (!(x->flags & ERT_TENSOR_CONST))
			continue;
		w->enc[base + t] = x->dtype == ERT_DTYPE_STRING ? FMT_ENC_STRINGS : FMT_ENC_RAW;
		if (x->dtype != ERT_DTYPE_FLOAT32 || by_value[t] || numel <= 0)
			continue;
		if (weight[t] && numel >= FMT_QUANT_MIN_ELEMS && w->opt.weight_bits == 8)
			w->enc[base + t] = FMT_ENC_Q8;
		else if (weight[t] && numel >= FMT_QUANT_MIN_ELEMS && w->opt.weight_bits == 4)
			w->enc[base + t] = FMT_ENC_Q4;
		else if (w->opt.fp16)
			w->enc[base + t] = FMT_ENC_FP16;
	}
	free(weight);
	free(by_value);
	free(value_read);
	return true;
}

/* The per-record arrays, for every graph. */
static bool plan_records(struct writer *w)
{
	uint64_t n = 0;

	w->tbase = calloc(w->n_graphs, sizeof(*w->tbase));
	if (!w->tbase)
		return false;
	for (uint32_t i = 0; i < w->n_graphs; i++) {
		w->tbase[i] = (uint32_t)n;
		n += w->graphs[i]->n_tensors;
	}
	if (n > INT32_MAX)
		return false;
	w->n_records = (uint32_t)n;
	w->enc = calloc(n ? n : 1, 1);
	w->value_read = calloc(n ? n : 1, 1);
	w->data_field = calloc(n ? n : 1, sizeof(size_t));
	if (!w->enc || !w->value_read || !w->data_field)
		return false;
	for (uint32_t i = 0; i < w->n_graphs; i++)
		if (!choose_encodings(w, i))
			return false;
	return true;
}

/* A string constant: (numel + 1) u64 offsets into the bytes that follow them. */
static ert_status write_strings(struct writer *w, const struct ert_tensor *x, int64_t numel,
				uint64_t *off, uint64_t *size)
{
	const ert_string *s = x->data;
	uint64_t bytes = 0;
	uint8_t *dst;

	if (numel < 0 || x->nbytes != ert_dtype_bytes(ERT_DTYPE_STRING, numel) || (numel && !s)) {
		ert_err_set(w->err, "string constant '%s' has no known shape or no data", x->name);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	for (int64_t i = 0; i < numel; i++)
		bytes += s[i].len;
	*size = ((uint64_t)numel + 1) * 8 + bytes;
	pad_to(&w->weights, FMT_ALIGN);
	*off = w->weights.len; /* rebased by assemble() */
	dst = buf_grow(&w->weights, (size_t)*size);
	if (!dst)
		return ERT_STATUS_OUT_OF_MEMORY;
	bytes = 0;
	for (int64_t i = 0; i <= numel; i++) {
		fmt_put64(dst + 8 * i, bytes);
		if (i < numel) {
			if (s[i].len)
				memcpy(dst + ((uint64_t)numel + 1) * 8 + bytes, s[i].data, (size_t)s[i].len);
			bytes += s[i].len;
		}
	}
	return ERT_OK;
}

static ert_status write_tensor(struct writer *w, const struct ert_graph *g, uint32_t t,
			       uint32_t rec)
{
	const struct ert_tensor *x = &g->tensors[t];
	enum fmt_encoding enc = (enum fmt_encoding)w->enc[rec];
	int64_t numel = ert_shape_numel(x->rank, x->dims);
	uint32_t block = enc == FMT_ENC_Q8 || enc == FMT_ENC_Q4 ? w->opt.weight_block : 0;
	uint64_t off = 0, size = 0;

	if (x->rank < -1 || x->rank > ERT_MAX_RANK) {
		ert_err_set(w->err, "tensor '%s' has rank %d", x->name, x->rank);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (enc == FMT_ENC_STRINGS) {
		ert_status st = write_strings(w, x, numel, &off, &size);

		if (st != ERT_OK)
			return st;
	} else if (enc != FMT_ENC_NONE) {
		if (!ert_dtype_valid((int32_t)x->dtype)) {
			ert_err_set(w->err, "constant '%s' has dtype %s, which model files cannot hold",
				    x->name, ert_dtype_name(x->dtype));
			return ERT_STATUS_UNSUPPORTED;
		}
		/* a block-quantised constant of a loaded model is written from its values */
		const void *xdata = x->wq ? (const void *)ert_wq_decoded(x->wq) : x->data;

		if (x->wq && !xdata)
			return ERT_STATUS_OUT_OF_MEMORY;
		if (numel < 0 || (!xdata && x->nbytes)) {
			ert_err_set(w->err, "constant '%s' has no known shape or no data", x->name);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		size = enc == FMT_ENC_RAW ? x->nbytes
					  : fmt_encoded_size(enc, x->rank, x->dims, numel, block);
		if (enc == FMT_ENC_RAW && x->nbytes != ert_dtype_bytes(x->dtype, numel)) {
			ert_err_set(w->err, "constant '%s' holds %zu bytes, its shape needs %zu",
				    x->name, x->nbytes, ert_dtype_bytes(x->dtype, numel));
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		pad_to(&w->weights, FMT_ALIGN);
		off = w->weights.len; /* rebased by assemble() */
		uint8_t *dst = buf_grow(&w->weights, size);

		if (!dst && (size || w->weights.oom))
			return ERT_STATUS_OUT_OF_MEMORY;
		if (enc == FMT_ENC_RAW) {
			if (size)
				memcpy(dst, xdata, size);
		} else {
			if (x->nbytes != (uint64_t)numel * 4) {
				ert_err_set(w->err, "constant '%s' holds %zu bytes, its shape needs %llu",
					    x->name, x->nbytes, (unsigned long long)numel * 4);
				return ERT_STATUS_INVALID_ARGUMENT;
			}
			fmt_encode(enc, xdata, x->rank, x->dims, numel, block, dst);
		}
	}

	struct buf *b = &w->tensors;

	put_u32(b, str_ref(&w->strs, x->name));
	put_u32(b, (uint32_t)(x->kind != ERT_VALUE_TENSOR ? x->elem : x->dtype));
	put_u32(b, enc);
	put_u32(b, (uint32_t)x->rank);
	put_u32(b, (x->flags & FMT_TENSOR_FLAGS) |
		   (enc != FMT_ENC_NONE && w->value_read[rec] ? FMT_TENSOR_VALUE : 0) |
		   ((uint32_t)x->kind << FMT_TENSOR_KIND_SHIFT & FMT_TENSOR_KIND_MASK));
	put_u32(b, block);
	for (int i = 0; i < ERT_MAX_RANK; i++)
		put_u64(b, i < x->rank ? (uint64_t)x->dims[i] : 0);
	for (int i = 0; i < ERT_MAX_RANK; i++)
		put_u32(b, i < x->rank ? str_ref(&w->strs, x->dim_names[i]) : FMT_STR_NONE);
	w->data_field[rec] = b->len;
	put_u64(b, off);
	put_u64(b, size);
	put_u32(b, (uint32_t)(x->quant.count ? x->quant.axis : -1));
	put_u32(b, x->quant.count);
	put_u32(b, x->quant.count && x->quant.zero_points ? 1 : 0);
	for (uint32_t i = 0; i < x->quant.count; i++)
		put_f32(b, x->quant.scales[i]);
	if (x->quant.count && x->quant.zero_points)
		for (uint32_t i = 0; i < x->quant.count; i++)
			put_u32(b, (uint32_t)x->quant.zero_points[i]);
	return ERT_OK;
}

static void write_attr(struct writer *w, const struct ert_attr *a)
{
	struct buf *b = &w->nodes;
	uint32_t count = a->type == ERT_ATTR_FLOATS || a->type == ERT_ATTR_INTS ||
			 a->type == ERT_ATTR_STRINGS ? a->count : 1;

	put_u32(b, str_ref(&w->strs, a->name));
	put_u32(b, a->type);
	put_u32(b, count);
	switch (a->type) {
	case ERT_ATTR_FLOAT:
		put_f32(b, a->f);
		break;
	case ERT_ATTR_INT:
		put_u64(b, (uint64_t)a->i);
		break;
	case ERT_ATTR_STRING:
		/* importers may leave len 0 for plain C strings */
		put_u32(b, strtab_add(&w->strs, a->s ? a->s : "",
				      !a->s ? 0 : a->len ? a->len : strlen(a->s)));
		break;
	case ERT_ATTR_TENSOR:
		put_u32(b, (uint32_t)a->tensor);
		break;
	case ERT_ATTR_GRAPH:
		/* the subgraph's index in the SUBGRAPHS section (graph number - 1) */
		put_u32(b, graph_number(w, a->graph) - 1);
		break;
	case ERT_ATTR_FLOATS:
		for (uint32_t i = 0; i < count; i++)
			put_f32(b, a->floats[i]);
		break;
	case ERT_ATTR_INTS:
		for (uint32_t i = 0; i < count; i++)
			put_u64(b, (uint64_t)a->ints[i]);
		break;
	case ERT_ATTR_STRINGS:
		for (uint32_t i = 0; i < count; i++)
			put_u32(b, str_ref(&w->strs, a->strings[i]));
		break;
	default:
		break;
	}
}

static uint32_t live_nodes(const struct ert_graph *g)
{
	uint32_t live = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++)
		live += !g->nodes[i].dead;
	return live;
}

/* The nodes of every graph, graph after graph; tensor indices are the graph's own. */
static ert_status write_nodes(struct writer *w)
{
	uint64_t live = 0;

	for (uint32_t gi = 0; gi < w->n_graphs; gi++)
		live += live_nodes(w->graphs[gi]);
	if (live > INT32_MAX)
		return ERT_STATUS_OUT_OF_MEMORY;
	put_u32(&w->nodes, (uint32_t)live);
	for (uint32_t gi = 0; gi < w->n_graphs; gi++) {
		const struct ert_graph *g = w->graphs[gi];

		for (uint32_t i = 0; i < g->n_nodes; i++) {
			const struct ert_node *n = &g->nodes[i];

			if (n->dead)
				continue;
			if ((unsigned)n->op >= ERT_OP_COUNT) {
				ert_err_set(w->err, "node '%s' has an unknown op", n->name);
				return ERT_STATUS_INVALID_ARGUMENT;
			}
			for (uint32_t a = 0; a < n->n_attrs; a++) {
				enum ert_attr_type ty = n->attrs[a].type;

				if (ty < ERT_ATTR_FLOAT || ty > ERT_ATTR_STRINGS ||
				    (ty == ERT_ATTR_GRAPH && !n->attrs[a].graph)) {
					ert_err_set(w->err, "node '%s' attribute '%s' has type %d",
						    n->name, n->attrs[a].name, (int)ty);
					return ERT_STATUS_INVALID_ARGUMENT;
				}
			}
			put_u32(&w->nodes, str_ref(&w->strs, ert_op_name(n->op)));
			put_u32(&w->nodes, str_ref(&w->strs, n->name));
			put_u32(&w->nodes, n->opset);
			put_u32(&w->nodes, n->n_inputs);
			put_u32(&w->nodes, n->n_outputs);
			put_u32(&w->nodes, n->n_attrs);
			for (uint32_t k = 0; k < n->n_inputs; k++)
				put_u32(&w->nodes, (uint32_t)n->inputs[k]);
			for (uint32_t k = 0; k < n->n_outputs; k++)
				put_u32(&w->nodes, (uint32_t)n->outputs[k]);
			for (uint32_t a = 0; a < n->n_attrs; a++)
				write_attr(w, &n->attrs[a]);
		}
	}
	return ERT_OK;
}

static void put_list(struct buf *b, const int32_t *v, uint32_t n)
{
	put_u32(b, n);
	for (uint32_t k = 0; k < n; k++)
		put_u32(b, (uint32_t)v[k]);
}

/* v5: one record per subgraph (docs/model-format.md, SUBGRAPHS). */
static void write_subgraphs(struct writer *w)
{
	uint32_t node = live_nodes(w->graphs[0]);

	put_u32(&w->subgraphs, w->n_graphs - 1);
	for (uint32_t gi = 1; gi < w->n_graphs; gi++) {
		const struct ert_graph *g = w->graphs[gi];

		put_u32(&w->subgraphs, graph_number(w, g->parent));
		put_u32(&w->subgraphs, w->tbase[gi]);
		put_u32(&w->subgraphs, g->n_tensors);
		put_u32(&w->subgraphs, node);
		put_u32(&w->subgraphs, live_nodes(g));
		node += live_nodes(g);
		put_list(&w->subgraphs, g->inputs, g->n_inputs);
		put_list(&w->subgraphs, g->outputs, g->n_outputs);
		put_list(&w->subgraphs, g->captures, g->n_captures);
	}
}

static void write_graph(struct writer *w)
{
	const struct ert_graph *g = w->g;

	put_u32(&w->graph, str_ref(&w->strs, g->producer ? g->producer : ""));
	put_u64(&w->graph, (uint64_t)g->ir_version);
	put_u64(&w->graph, (uint64_t)g->opset);
	put_u32(&w->graph, g->n_inputs);
	for (uint32_t k = 0; k < g->n_inputs; k++)
		put_u32(&w->graph, (uint32_t)g->inputs[k]);
	put_u32(&w->graph, g->n_outputs);
	for (uint32_t k = 0; k < g->n_outputs; k++)
		put_u32(&w->graph, (uint32_t)g->outputs[k]);
}

/* Put header, section table and sections together; weights go last, aligned. */
static ert_status assemble(struct writer *w, void **data_out, size_t *size_out)
{
	struct buf strings = { 0 }, out = { 0 };
	/* section types in file order: WEIGHTS last */
	static const uint32_t types[6] = { FMT_SEC_STRINGS, FMT_SEC_TENSORS, FMT_SEC_NODES,
					   FMT_SEC_GRAPH, FMT_SEC_SUBGRAPHS, FMT_SEC_WEIGHTS };
	struct buf *meta[5] = { &strings, &w->tensors, &w->nodes, &w->graph, &w->subgraphs };
	uint64_t off[6], size[6];
	uint32_t n_sec = 6, hdr = FMT_HEADER_V1 + n_sec * FMT_SECTION_ENTRY;

	put_u32(&strings, w->strs.count);
	if (w->strs.index.len)
		put_bytes(&strings, w->strs.index.p, w->strs.index.len);
	if (w->strs.bytes.len)
		put_bytes(&strings, w->strs.bytes.p, w->strs.bytes.len);

	uint64_t pos = hdr;

	for (int s = 0; s < 5; s++) {
		pos = (pos + 7) & ~(uint64_t)7;
		off[s] = pos;
		size[s] = meta[s]->len;
		pos += size[s];
	}
	pos = (pos + FMT_ALIGN - 1) & ~(uint64_t)(FMT_ALIGN - 1);
	off[5] = pos;
	size[5] = w->weights.len;

	/* the stored bytes of the constants planning reads, in tensor order */
	uint32_t value_crc = (uint32_t)crc32(0L, Z_NULL, 0);

	if (!w->tensors.oom)
		for (uint32_t t = 0; t < w->n_records; t++)
			if (w->enc[t] != FMT_ENC_NONE && w->value_read[t])
				value_crc = fmt_crc32(value_crc,
						      w->weights.p + fmt_get64(w->tensors.p +
									       w->data_field[t]),
						      fmt_get64(w->tensors.p + w->data_field[t] + 8));
	/* Data offsets were written relative to the weights; make them absolute. */
	if (!w->tensors.oom)
		for (uint32_t t = 0; t < w->n_records; t++)
			if (w->enc[t] != FMT_ENC_NONE)
				fmt_put64(w->tensors.p + w->data_field[t],
					  fmt_get64(w->tensors.p + w->data_field[t]) + off[5]);

	uint8_t *h = buf_grow(&out, hdr);

	if (h) {
		memset(h, 0, hdr);
		memcpy(h, FMT_MAGIC, FMT_MAGIC_LEN);
		fmt_put32(h + FMT_OFF_VERSION, ERT_FORMAT_VERSION);
		fmt_put64(h + FMT_OFF_FILE_SIZE, off[5] + size[5]);
		fmt_put32(h + FMT_OFF_NSECTIONS, n_sec);
		fmt_put32(h + FMT_OFF_HEADER_SIZE, FMT_HEADER_V1);
		fmt_put32(h + FMT_OFF_VALUE_CHECKSUM, value_crc);
		for (uint32_t s = 0; s < n_sec; s++) {
			uint8_t *e = h + FMT_HEADER_V1 + s * FMT_SECTION_ENTRY;

			fmt_put32(e, types[s]);
			fmt_put64(e + 8, off[s]);
			fmt_put64(e + 16, size[s]);
		}
	}
	for (int s = 0; s < 5; s++) {
		pad_to(&out, 8);
		if (meta[s]->len)
			put_bytes(&out, meta[s]->p, meta[s]->len);
	}
	pad_to(&out, FMT_ALIGN);
	if (w->weights.len)
		put_bytes(&out, w->weights.p, w->weights.len);
	free(strings.p);
	if (out.oom || strings.oom) {
		free(out.p);
		ert_err_set(w->err, "out of memory writing model");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	fmt_put32(out.p + FMT_OFF_CHECKSUM, fmt_checksum(out.p, FMT_HEADER_V1, n_sec));
	*data_out = out.p;
	*size_out = out.len;
	return ERT_OK;
}

ert_status ert_format_write_memory(const struct ert_graph *g,
				   const struct ert_write_options *opt, void **data_out,
				   size_t *size_out, struct ert_err *err)
{
	struct writer w = { .g = g, .err = err };
	ert_status st = ERT_OK;

	if (!g || !data_out || !size_out) {
		ert_err_set(err, "failed to write model: missing graph or output");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (opt)
		w.opt = *opt;
	if (w.opt.weight_bits != 0 && w.opt.weight_bits != 8 && w.opt.weight_bits != 4) {
		ert_err_set(err, "failed to write model: weight_bits %u (use 0, 4 or 8)",
			    w.opt.weight_bits);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (!w.opt.weight_block)
		w.opt.weight_block = FMT_DEFAULT_BLOCK;
	if (!collect_graphs(&w, g, 0)) {
		st = ERT_STATUS_INVALID_ARGUMENT;
		ert_err_set(err, "failed to write model: subgraphs nest deeper than %d levels",
			    ERT_GRAPH_MAX_DEPTH);
		goto out;
	}
	if (!plan_records(&w)) {
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	put_u32(&w.tensors, w.n_records);
	for (uint32_t gi = 0; gi < w.n_graphs && st == ERT_OK; gi++)
		for (uint32_t t = 0; t < w.graphs[gi]->n_tensors && st == ERT_OK; t++)
			st = write_tensor(&w, w.graphs[gi], t, w.tbase[gi] + t);
	if (st == ERT_OK)
		st = write_nodes(&w);
	if (st == ERT_OK) {
		write_graph(&w);
		write_subgraphs(&w);
	}
	if (st == ERT_OK && (w.strs.oom || w.tensors.oom || w.nodes.oom || w.graph.oom ||
			     w.subgraphs.oom || w.weights.oom))
		st = ERT_STATUS_OUT_OF_MEMORY;
	if (st == ERT_OK)
		st = assemble(&w, data_out, size_out);
out:
	if (st == ERT_STATUS_OUT_OF_MEMORY)
		ert_err_set(err, "out of memory writing model");
	free(w.graphs);
	free(w.tbase);
	free(w.enc);
	free(w.value_read);
	free(w.data_field);
	free(w.strs.index.p);
	free(w.strs.bytes.p);
	free(w.strs.slots);
	free(w.tensors.p);
	free(w.nodes.p);
	free(w.graph.p);
	free(w.subgraphs.p);
	free(w.weights.p);
	return st;
}

ert_status ert_format_write_file(const struct ert_graph *g, const struct ert_write_options *opt,
				 const char *path, struct ert_err *err)
{
	void *data = NULL;
	size_t size = 0;
	ert_status st;

	if (!path) {
		ert_err_set(err, "failed to write model: no path");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	st = ert_format_write_memory(g, opt, &data, &size, err);
	if (st != ERT_OK)
		return st;
	st = ert_file_write_atomic(path, &(struct iovec){ .iov_base = data, .iov_len = size }, 1,
				   err);
	free(data);
	return st;
}
