/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels of the string ops: StringConcat, StringSplit,
 * StringNormalizer, LabelEncoder, and Cast/CastLike from or to strings.
 * Strings a kernel makes go to the run's heap (ert_cpu_str_alloc());
 * substrings and unchanged strings are handles into their input's bytes,
 * which live as long as the run's outputs (ert-strings.h).
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "cpu/ops/elementwise.h"
#include "cpu/ops/strings.h"
#include "cpu/ops/value-store.h"

char *ert_cpu_str_alloc(const struct ert_exec *x, size_t len, ert_status *st,
			struct ert_err *err)
{
	char *p;

	if (!x->strings) {
		*st = ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				    "makes strings, which only a session's run holds");
		return NULL;
	}
	p = ert_str_heap_alloc(x->strings, len);
	if (!p) {
		*st = ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY,
				    "out of memory for a string of %zu bytes", len);
	}
	return p;
}

/* ---- StringConcat ---- */

struct concat_job {
	const struct ert_exec *x;
	const ert_string *a, *b;
	ert_string *y;
	ert_status st;
	struct ert_err *err;
};

static void concat_run(void *ctx, const int64_t *off, const int64_t *step, int64_t out_off,
		       int64_t n)
{
	struct concat_job *j = ctx;

	for (int64_t i = 0; i < n && j->st == ERT_OK; i++) {
		const ert_string *a = &j->a[off[0] + i * step[0]], *b = &j->b[off[1] + i * step[1]];
		char *p = ert_cpu_str_alloc(j->x, (size_t)(a->len + b->len), &j->st, j->err);

		if (!p)
			return;
		if (a->len)
			memcpy(p, a->data, (size_t)a->len);
		if (b->len)
			memcpy(p + a->len, b->data, (size_t)b->len);
		j->y[out_off + i].data = p;
		j->y[out_off + i].len = a->len + b->len;
	}
}

static ert_status concat_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in[2] = { x->in[0], x->in[1] };
	struct concat_job j = { x, x->in[0]->data, x->in[1]->data, x->out[0]->data, ERT_OK, err };
	struct ert_bcast bc;

	if (ert_bcast_init(&bc, x->out[0], in, 2, err) != ERT_OK)
		return ERT_STATUS_INTERNAL;
	/* one thread: the run's heap is not shared between threads */
	ert_bcast_run(NULL, &bc, concat_run, &j);
	return j.st;
}

/* ---- StringSplit ---- */

/* Python's str.isspace() for ASCII, which str.split() without a separator splits on */
static bool split_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/*
 * The substrings of @s, as Python's str.split(sep, maxsplit) gives them (sep
 * NULL: runs of whitespace, none at the ends); stored to @out when not NULL.
 * Returns their count.
 */
static int64_t split_one(const ert_string *s, const char *sep, size_t sep_len, int64_t maxsplit,
			 ert_string *out)
{
	const char *p = s->len ? s->data : "", *end = p + s->len;
	int64_t n = 0;

	if (!sep) {
		for (;;) {
			const char *b;

			while (p < end && split_space((unsigned char)*p))
				p++;
			if (p == end)
				return n;
			b = p;
			/* past maxsplit, the rest is one piece, trailing whitespace kept */
			if (maxsplit >= 0 && n == maxsplit)
				p = end;
			while (p < end && !split_space((unsigned char)*p))
				p++;
			if (out)
				out[n] = (ert_string){ b, (uint64_t)(p - b) };
			n++;
		}
	}
	for (;;) {
		const char *q = NULL;

		if (maxsplit < 0 || n < maxsplit)
			q = memmem(p, (size_t)(end - p), sep, sep_len);
		if (!q)
			q = end;
		if (out)
			out[n] = (ert_string){ p, (uint64_t)(q - p) };
		n++;
		if (q == end)
			return n;
		p = q + sep_len;
	}
}

static ert_status split_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const ert_string *s = in->data;
	const struct ert_attr *d = ert_node_attr(x->node, "delimiter");
	const char *sep = d && d->type == ERT_ATTR_STRING && d->len ? d->s : NULL;
	size_t sep_len = sep ? d->len : 0;
	int64_t maxsplit = ert_node_attr(x->node, "maxsplit") ?
				   ert_attr_int(x->node, "maxsplit", 0) : -1;
	int64_t most = 0, dims[ERT_MAX_RANK];
	ert_status st;

	for (int64_t i = 0; i < in->numel; i++) {
		int64_t n = split_one(&s[i], sep, sep_len, maxsplit, NULL);

		most = n > most ? n : most;
	}
	memcpy(dims, in->dims, sizeof(dims[0]) * (size_t)in->rank);
	dims[in->rank] = most;
	if ((st = ert_exec_output(x, 0, in->rank + 1, dims, err)) != ERT_OK)
		return st;
	if (x->n_out > 1 && x->out[1] && (st = ert_exec_output(x, 1, in->rank, in->dims, err)))
		return st;
	for (int64_t i = 0; i < in->numel; i++) {
		ert_string *row = (ert_string *)x->out[0]->data + i * most;
		int64_t n = split_one(&s[i], sep, sep_len, maxsplit, row);

		for (int64_t k = n; k < most; k++)
			row[k] = (ert_string){ "", 0 };
		if (x->n_out > 1 && x->out[1])
			((int64_t *)x->out[1]->data)[i] = n;
	}
	return ERT_OK;
}

/* ---- StringNormalizer ---- */

/*
 * Case mapping by the C.UTF-8 locale's towlower/towupper, code point by
 * code point; without that locale (or on bytes that are not UTF-8) ASCII
 * letters only. The node's locale attribute is not read (docs/strings.md).
 */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_init(void)
{
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* One UTF-8 code point at @p (< @end): its length, or 0 when malformed. */
static int utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
	int n = p[0] < 0x80 ? 1 : (p[0] >> 5) == 6 ? 2 : (p[0] >> 4) == 14 ? 3 : (p[0] >> 3) == 30 ? 4 : 0;
	uint32_t v = n == 1 ? p[0] : n == 2 ? p[0] & 0x1fu : n == 3 ? p[0] & 0xfu : p[0] & 7u;

	if (!n || end - p < n)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3fu);
	}
	*cp = v;
	return n;
}

static int utf8_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* @s with its case changed (@upper or lower) into @out (room for 4 * len bytes); its length. */
static size_t case_map(const ert_string *s, bool upper, char *out)
{
	const unsigned char *p = (const unsigned char *)s->data, *end = p + s->len;
	size_t n = 0;

	pthread_once(&utf8_once, utf8_init);
	while (p < end) {
		uint32_t cp;
		int k = utf8_locale ? utf8_decode(p, end, &cp) : 0;

		if (!k) { /* a byte as it is, ASCII letters mapped */
			int c = *p++;

			if (upper && c >= 'a' && c <= 'z')
				c -= 32;
			else if (!upper && c >= 'A' && c <= 'Z')
				c += 32;
			out[n++] = (char)c;
			continue;
		}
		p += k;
		cp = (uint32_t)(upper ? towupper_l((wint_t)cp, utf8_locale)
				      : towlower_l((wint_t)cp, utf8_locale));
		n += (size_t)utf8_encode(cp > 0x10ffff ? 0xfffd : cp, out + n);
	}
	return n;
}

/* Is @s one of the stopwords (compared lower-cased unless @sensitive)? */
static bool is_stopword(const struct ert_attr *stop, const ert_string *s, bool sensitive,
			char *tmp_a, char *tmp_b)
{
	for (uint32_t k = 0; stop && k < stop->count; k++) {
		ert_string w = { stop->strings[k], strlen(stop->strings[k]) };

		if (sensitive) {
			if (!ert_string_cmp(&w, s))
				return true;
			continue;
		}
		/* lower cases take 4 bytes per byte at most: tmp_a and tmp_b are that long */
		ert_string lw = { tmp_a, case_map(&w, false, tmp_a) };
		ert_string ls = { tmp_b, case_map(s, false, tmp_b) };

		if (!ert_string_cmp(&lw, &ls))
			return true;
	}
	return false;
}

static size_t normalizer_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	const struct ert_attr *stop = ert_node_attr(x->node, "stopwords");
	size_t most = 0;

	/* the lower case of the longest stopword: 4 bytes per byte at most */
	for (uint32_t k = 0; stop && stop->type == ERT_ATTR_STRINGS && k < stop->count; k++)
		most = strlen(stop->strings[k]) > most ? strlen(stop->strings[k]) : most;
	return 4 * (most + 1);
}

static ert_status normalizer_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const ert_string *s = in->data;
	const struct ert_attr *stop = ert_node_attr(x->node, "stopwords");
	const char *action = ert_attr_string(x->node, "case_change_action", "NONE");
	bool sensitive = ert_attr_int(x->node, "is_case_sensitive", 0) != 0;
	bool change = strcmp(action, "NONE") != 0, upper = strcmp(action, "UPPER") == 0;
	char *tmp_w = x->workspace, *tmp_s = NULL;
	int64_t kept = 0, dims[2];
	ert_string *out;
	ert_status st = ERT_OK;

	if (stop && stop->type != ERT_ATTR_STRINGS)
		stop = NULL;
	/* the lower case of an input to compare: as long as the longest input, from the heap */
	if (stop && !sensitive) {
		size_t most = 0;

		for (int64_t i = 0; i < in->numel; i++)
			most = s[i].len > most ? (size_t)s[i].len : most;
		if (most > SIZE_MAX / 4 - 1 || !(tmp_s = ert_cpu_str_alloc(x, 4 * most + 4, &st, err)))
			return st != ERT_OK ? st : ERT_STATUS_OUT_OF_MEMORY;
	}
	for (int64_t i = 0; i < in->numel; i++)
		if (!is_stopword(stop, &s[i], sensitive, tmp_w, tmp_s))
			kept++;
	/* everything dropped: one empty string, as ONNX's reference gives */
	dims[0] = 1;
	dims[in->rank - 1] = kept ? kept : 1;
	if (x->alloc_output && (st = ert_exec_output(x, 0, in->rank, dims, err)) != ERT_OK)
		return st;
	out = x->out[0]->data;
	if (!kept)
		out[0] = (ert_string){ "", 0 };
	kept = 0;
	for (int64_t i = 0; i < in->numel; i++) {
		char *p;

		if (is_stopword(stop, &s[i], sensitive, tmp_w, tmp_s))
			continue;
		if (!change || !s[i].len) {
			out[kept++] = s[i];
			continue;
		}
		if (s[i].len > SIZE_MAX / 4 - 1)
			return ERT_STATUS_OUT_OF_MEMORY;
		if (!(p = ert_cpu_str_alloc(x, 4 * (size_t)s[i].len, &st, err)))
			return st;
		out[kept].data = p;
		out[kept++].len = case_map(&s[i], upper, p);
	}
	return ERT_OK;
}

/* ---- LabelEncoder (ai.onnx.ml) ---- */

/* keys_* or values_*: a STRINGS attribute (@strs) or numbers and string tensors (@v) */
struct label_list {
	const struct ert_attr *strs;
	struct ert_value v;
};

static bool label_list(const struct ert_exec *x, const char *kind, struct label_list *l)
{
	static const struct {
		const char *suffix;
		enum ert_attr_type type;
		ert_dtype dt;
	} forms[] = {
		{ "int64s", ERT_ATTR_INTS, ERT_DTYPE_INT64 },
		{ "floats", ERT_ATTR_FLOATS, ERT_DTYPE_FLOAT32 },
	};
	const struct ert_attr *a;
	char name[32];

	memset(l, 0, sizeof(*l));
	snprintf(name, sizeof(name), "%s_strings", kind);
	if ((a = ert_node_attr(x->node, name)) && a->type == ERT_ATTR_STRINGS) {
		l->strs = a;
		l->v.dtype = ERT_DTYPE_STRING;
		l->v.numel = a->count;
		return true;
	}
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		snprintf(name, sizeof(name), "%s_%s", kind, forms[f].suffix);
		if ((a = ert_node_attr(x->node, name)) && a->type == forms[f].type) {
			l->v.dtype = forms[f].dt;
			l->v.numel = a->count;
			l->v.data = (void *)(forms[f].type == ERT_ATTR_INTS ? (const void *)a->ints
									    : (const void *)a->floats);
			return true;
		}
	}
	snprintf(name, sizeof(name), "%s_tensor", kind);
	if ((a = ert_node_attr(x->node, name)) && a->type == ERT_ATTR_TENSOR && a->tensor >= 0 &&
	    (uint32_t)a->tensor < x->graph->n_tensors) {
		const struct ert_tensor *t = &x->graph->tensors[a->tensor];
		size_t es = ert_dtype_size(t->dtype);

		l->v.dtype = t->dtype;
		l->v.data = (void *)ert_graph_const_data(x->graph, a->tensor);
		l->v.numel = es ? (int64_t)(t->nbytes / es) : 0;
		return l->v.data != NULL;
	}
	return false;
}

static ert_string label_str(const struct label_list *l, int64_t i)
{
	if (l->strs)
		return (ert_string){ l->strs->strings[i], strlen(l->strs->strings[i]) };
	return ((const ert_string *)l->v.data)[i];
}

static bool label_equal(const struct label_list *k, int64_t i, const struct ert_value *x, int64_t j)
{
	if (k->v.dtype == ERT_DTYPE_STRING) {
		ert_string a = label_str(k, i);

		return !ert_string_cmp(&a, &((const ert_string *)x->data)[j]);
	}
	if (ert_dtype_is_float(k->v.dtype))
		return ert_value_get_float(&k->v, i) == ert_value_get_float(x, j);
	return ert_value_get_int(&k->v, i) == ert_value_get_int(x, j);
}

/* The value for a missing key: default_tensor, or default_<type> (ONNX's defaults). */
static void label_default(const struct ert_exec *x, struct ert_value *out, int64_t j)
{
	const struct ert_attr *a = ert_node_attr(x->node, "default_tensor");
	size_t es = ert_dtype_size(out->dtype);

	if (a && a->type == ERT_ATTR_TENSOR && a->tensor >= 0 &&
	    (uint32_t)a->tensor < x->graph->n_tensors &&
	    x->graph->tensors[a->tensor].dtype == out->dtype &&
	    x->graph->tensors[a->tensor].nbytes >= es) {
		const void *d = ert_graph_const_data(x->graph, a->tensor);

		if (d) {
			memcpy((char *)out->data + (size_t)j * es, d, es);
			return;
		}
	}
	if (out->dtype == ERT_DTYPE_STRING) {
		const struct ert_attr *s = ert_node_attr(x->node, "default_string");
		bool set = s && s->type == ERT_ATTR_STRING;

		((ert_string *)out->data)[j] = (ert_string){ set ? s->s : "_Unused",
							     set ? s->len : strlen("_Unused") };
	} else if (ert_dtype_is_float(out->dtype)) {
		ert_cpu_store_f64(out, j, ert_attr_float(x->node, "default_float", -0.0f));
	} else {
		ert_cpu_store_f64(out, j, (double)ert_attr_int(x->node, "default_int64", -1));
	}
}

static ert_status label_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	struct label_list keys, vals;
	size_t es = ert_dtype_size(out->dtype);

	if (!label_list(x, "keys", &keys) || !label_list(x, "values", &vals) ||
	    keys.v.numel != vals.v.numel || keys.v.dtype != in->dtype ||
	    vals.v.dtype != out->dtype)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
				     "needs as many keys of the input's type (%s) as values of "
				     "the output's (%s)", ert_dtype_name(in->dtype),
				     ert_dtype_name(out->dtype));
	for (int64_t j = 0; j < in->numel; j++) {
		int64_t i = 0;

		while (i < keys.v.numel && !label_equal(&keys, i, in, j))
			i++;
		if (i == keys.v.numel)
			label_default(x, out, j);
		else if (vals.strs)
			((ert_string *)out->data)[j] = label_str(&vals, i);
		else
			memcpy((char *)out->data + (size_t)j * es,
			       (const char *)vals.v.data + (size_t)i * es, es);
	}
	return ERT_OK;
}

/* ---- Cast from and to strings ---- */

/*
 * A number as the shortest text that reads back to the same value (printf's
 * %g with the fewest digits that round-trip, ".0" added to whole numbers as
 * numpy prints them), "nan", "inf" or "-inf".
 */
static int format_float(double v, ert_dtype dt, char *buf, size_t size)
{
	int n = 0;

	if (isnan(v))
		return snprintf(buf, size, "nan");
	if (isinf(v))
		return snprintf(buf, size, v < 0 ? "-inf" : "inf");
	for (int p = 1; p <= 17; p++) {
		n = snprintf(buf, size, "%.*g", p, v);
		double back = strtod(buf, NULL);

		if (dt == ERT_DTYPE_FLOAT32 ? (float)back == (float)v
		    : dt == ERT_DTYPE_FLOAT16 ? ert_fp32_to_fp16((float)back) == ert_fp32_to_fp16((float)v)
		    : dt == ERT_DTYPE_BFLOAT16 ? ert_fp32_to_bf16((float)back) == ert_fp32_to_bf16((float)v)
		    : back == v)
			break;
	}
	if (!strpbrk(buf, ".en") && (size_t)n + 2 < size)
		n += snprintf(buf + n, size - (size_t)n, ".0");
	return n;
}

static ert_status to_string(const struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	ert_string *out = x->out[0]->data;
	bool fl = ert_dtype_is_float(in->dtype);
	ert_status st = ERT_OK;
	char buf[64];

	for (int64_t i = 0; i < in->numel; i++) {
		int n;
		char *p;

		if (fl)
			n = format_float(ert_value_get_float(in, i), in->dtype, buf, sizeof(buf));
		else if (in->dtype == ERT_DTYPE_UINT64)
			n = snprintf(buf, sizeof(buf), "%llu",
				     (unsigned long long)((const uint64_t *)in->data)[i]);
		else
			n = snprintf(buf, sizeof(buf), "%lld", (long long)ert_value_get_int(in, i));
		if (!(p = ert_cpu_str_alloc(x, (size_t)n, &st, err)))
			return st;
		memcpy(p, buf, (size_t)n);
		out[i] = (ert_string){ p, (uint64_t)n };
	}
	return ERT_OK;
}

static ert_status from_string(const struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	const ert_string *s = in->data;
	bool fl = ert_dtype_is_float(out->dtype);
	char buf[128];

	for (int64_t i = 0; i < in->numel; i++) {
		char *end;
		double v;

		/* strtod needs a NUL: numbers are short, a longer text is not one */
		if (s[i].len >= sizeof(buf) || !s[i].len)
			goto bad;
		memcpy(buf, s[i].data, (size_t)s[i].len);
		buf[s[i].len] = '\0';
		errno = 0;
		if (fl) {
			v = strtod(buf, &end);
		} else if (out->dtype == ERT_DTYPE_UINT64) {
			unsigned long long u = strtoull(buf, &end, 10);

			if (*end || errno)
				goto bad;
			((uint64_t *)out->data)[i] = u;
			continue;
		} else {
			long long k = strtoll(buf, &end, 10);

			if (errno)
				goto bad;
			v = (double)k;
			if (!*end && ert_dtype_size(out->dtype) == 8) {
				((int64_t *)out->data)[i] = k;
				continue;
			}
		}
		if (*end)
			goto bad;
		ert_cpu_store_f64(out, i, v);
		continue;
bad:
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
				     "string %lld ('%.*s') is not a number", (long long)i,
				     (int)(s[i].len < 40 ? s[i].len : 40),
				     s[i].len ? s[i].data : "");
	}
	return ERT_OK;
}

ert_status ert_cpu_string_cast(const struct ert_exec *x, struct ert_err *err)
{
	if (x->in[0]->dtype == x->out[0]->dtype) {
		if (x->in[0]->data != x->out[0]->data && x->out[0]->nbytes)
			memmove(x->out[0]->data, x->in[0]->data, x->out[0]->nbytes);
		return ERT_OK;
	}
	if (x->out[0]->dtype == ERT_DTYPE_STRING)
		return to_string(x, err);
	return from_string(x, err);
}

const struct ert_cpu_op ert_cpu_ops_strings[] = {
	{ .op = ERT_OP_StringConcat, .compute = concat_compute },
	{ .op = ERT_OP_StringSplit, .compute = split_compute },
	{ .op = ERT_OP_StringNormalizer, .workspace = normalizer_workspace,
	  .compute = normalizer_compute },
	{ .op = ERT_OP_RegexFullMatch, .prepare = ert_cpu_regex_prepare,
	  .compute = ert_cpu_regex_compute, .release = ert_cpu_regex_release },
	{ .op = ERT_OP_LabelEncoder, .compute = label_compute },
	{ .compute = NULL },
};
