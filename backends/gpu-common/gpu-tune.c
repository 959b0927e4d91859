/* SPDX-License-Identifier: MIT */
/* Autotuning shared by the GPU backends: candidates per mode, the table, its bytes. */
#include <stdlib.h>
#include <string.h>

#include "gpu-common/gpu-tune.h"

/* Local sizes above this are never offered (the 1-D kernels' groups). */
#define MAX_LWS 1024u

static bool has(const struct ert_tune_cand *out, uint32_t n, const struct ert_tune_cand *c)
{
	for (uint32_t i = 0; i < n; i++)
		if (!memcmp(&out[i], c, sizeof(*c)))
			return true;
	return false;
}

static void add(struct ert_tune_cand *out, uint32_t *n, uint32_t max, const struct ert_tune_cand *c)
{
	if (*n < max && !has(out, *n, c))
		out[(*n)++] = *c;
}

static struct ert_tune_cand builtin(uint16_t variant, const struct ert_tune_variant *v)
{
	struct ert_tune_cand c = { .variant = variant };

	for (uint32_t d = 0; d < 3; d++)
		c.lws[d] = (uint16_t)(d < v->dims ? v->lws[d] : 1);
	return c;
}

/*
 * Free 1-D sizes @mode offers for @v: powers of two from @lo, at most the
 * variant's limit, and not past twice the work (a group mostly empty).
 */
static void free_sizes(ert_tune mode, uint16_t variant, const struct ert_tune_variant *v,
		       bool need_lws, struct ert_tune_cand *out, uint32_t *n, uint32_t max)
{
	size_t lo = mode == ERT_TUNE_WIDE ? 16 : mode == ERT_TUNE_NORMAL ? 32 : v->lws[0];
	size_t hi = mode == ERT_TUNE_FAST ? v->lws[0] * 4 : MAX_LWS;

	for (size_t l = lo; l <= hi && l <= MAX_LWS && l <= v->max_wg; l *= 2) {
		struct ert_tune_cand c = builtin(variant, v);

		if (l > 2 * v->gws[0] && l > v->lws[0])
			break;
		c.lws[0] = (uint16_t)l;
		add(out, n, max, &c);
	}
	if (mode == ERT_TUNE_WIDE && !need_lws) {
		struct ert_tune_cand c = { .variant = variant };

		add(out, n, max, &c);
	}
}

uint32_t ert_tune_candidates(ert_tune mode, const struct ert_tune_space *sp,
			     struct ert_tune_cand *out, uint32_t max)
{
	uint32_t n = 0;

	if (!sp->n || !max)
		return 0;
	for (uint16_t i = 0; i < sp->n; i++) {
		struct ert_tune_cand c = builtin(i, &sp->v[i]);

		add(out, &n, max, &c);
		if (mode == ERT_TUNE_NONE)
			return n;
	}
	for (uint16_t i = 0; i < sp->n; i++) {
		const struct ert_tune_variant *v = &sp->v[i];

		/* 2-D and 3-D groups keep their shape: their kernels index by it */
		if (v->free_lws && v->dims == 1)
			free_sizes(mode, i, v, sp->need_lws, out, &n, max);
	}
	return n;
}

uint32_t ert_tune_repeats(ert_tune mode)
{
	switch (mode) {
	case ERT_TUNE_NONE: return 0;
	case ERT_TUNE_FAST: return 1;
	case ERT_TUNE_NORMAL: return 3;
	case ERT_TUNE_WIDE: return 5;
	}
	return 0;
}

bool ert_tune_times(ert_tune mode, bool cpu_device)
{
	return mode != ERT_TUNE_NONE && !(mode == ERT_TUNE_FAST && cpu_device);
}

bool ert_tune_valid(const struct ert_tune_space *sp, const struct ert_tune_cand *c)
{
	struct ert_tune_cand all[ERT_TUNE_MAX_CANDIDATES];
	uint32_t n = 0;

	/* every mode's candidates are among FAST's and WIDE's */
	n = ert_tune_candidates(ERT_TUNE_WIDE, sp, all, ERT_TUNE_MAX_CANDIDATES);
	if (has(all, n, c))
		return true;
	n = ert_tune_candidates(ERT_TUNE_FAST, sp, all, ERT_TUNE_MAX_CANDIDATES);
	return has(all, n, c);
}

void ert_tune_global(const struct ert_tune_space *sp, const struct ert_tune_cand *c,
		     size_t gws_out[3])
{
	const struct ert_tune_variant *v = &sp->v[c->variant < sp->n ? c->variant : 0];

	for (uint32_t d = 0; d < 3; d++) {
		size_t g = d < v->dims && v->gws[d] ? v->gws[d] : 1;
		size_t l = c->lws[0] && c->lws[d] ? c->lws[d] : 1;

		gws_out[d] = (g + l - 1) / l * l;
	}
}

static const char *const mode_names[] = {
	[ERT_TUNE_FAST] = "fast",
	[ERT_TUNE_NONE] = "none",
	[ERT_TUNE_NORMAL] = "normal",
	[ERT_TUNE_WIDE] = "wide",
};

const char *ert_tune_mode_name(ert_tune mode)
{
	return (unsigned)mode <= ERT_TUNE_WIDE ? mode_names[mode] : NULL;
}

bool ert_tune_mode_parse(const char *name, ert_tune *out)
{
	for (unsigned i = 0; i <= ERT_TUNE_WIDE; i++) {
		if (name && !strcmp(name, mode_names[i])) {
			*out = (ert_tune)i;
			return true;
		}
	}
	return false;
}

/* How modes rank: a choice made under a wider mode serves a narrower one. */
static int rank(ert_tune mode)
{
	switch (mode) {
	case ERT_TUNE_NONE: return 0;
	case ERT_TUNE_FAST: return 1;
	case ERT_TUNE_NORMAL: return 2;
	case ERT_TUNE_WIDE: return 3;
	}
	return 0;
}

/* ---- the table ---- */

static bool same_key(const struct ert_tune_key *a, const struct ert_tune_key *b)
{
	return a->source == b->source && a->shape == b->shape && !strcmp(a->kernel, b->kernel);
}

struct ert_tune_entry *ert_tune_find(const struct ert_tune_table *t, const struct ert_tune_key *k)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (same_key(&t->e[i].key, k))
			return &t->e[i];
	return NULL;
}

const struct ert_tune_entry *ert_tune_lookup(const struct ert_tune_table *t,
					     const struct ert_tune_key *k,
					     const struct ert_tune_space *sp, ert_tune mode,
					     bool *refused)
{
	const struct ert_tune_entry *e = ert_tune_find(t, k);

	*refused = e && !ert_tune_valid(sp, &e->best);
	if (!e || *refused || rank((ert_tune)e->mode) < rank(mode))
		return NULL;
	return e;
}

bool ert_tune_put(struct ert_tune_table *t, const struct ert_tune_key *k,
		  const struct ert_tune_cand *best, ert_tune mode, uint32_t ns)
{
	struct ert_tune_entry *e = ert_tune_find(t, k);

	if (!e) {
		if (t->n == t->cap) {
			uint32_t cap = t->cap ? 2 * t->cap : 64;
			struct ert_tune_entry *ne;

			if (cap > UINT32_MAX / 2 || !(ne = realloc(t->e, (size_t)cap * sizeof(*ne))))
				return false;
			t->e = ne;
			t->cap = cap;
		}
		e = &t->e[t->n++];
		e->key = *k;
		e->key.kernel[sizeof(e->key.kernel) - 1] = '\0';
	}
	e->best = *best;
	e->mode = (uint8_t)mode;
	e->ns = ns;
	t->dirty = true;
	return true;
}

void ert_tune_table_free(struct ert_tune_table *t)
{
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
	t->dirty = false;
}

/* ---- bytes ---- */

struct wr {
	unsigned char *p;
	size_t at, cap;
};

static void put(struct wr *w, const void *src, size_t n)
{
	if (w->p && w->at + n <= w->cap)
		memcpy(w->p + w->at, src, n);
	w->at += n;
}

static void put_u32(struct wr *w, uint32_t v)
{
	put(w, &v, 4);
}

static void put_u64(struct wr *w, uint64_t v)
{
	put(w, &v, 8);
}

size_t ert_tune_serialize(const struct ert_tune_table *t, unsigned char *buf, size_t cap)
{
	struct wr w = { buf, 0, cap };
	size_t need;

	/* the size first, so that a short buffer is never half written */
	if (buf) {
		need = ert_tune_serialize(t, NULL, 0);
		if (need > cap)
			return need;
	}
	put_u32(&w, t->n);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct ert_tune_entry *e = &t->e[i];
		uint32_t len = (uint32_t)strnlen(e->key.kernel, sizeof(e->key.kernel) - 1);

		put_u32(&w, len);
		put(&w, e->key.kernel, len);
		put_u64(&w, e->key.source);
		put_u64(&w, e->key.shape);
		put_u32(&w, e->mode);
		put_u32(&w, e->best.variant);
		for (int d = 0; d < 3; d++)
			put_u32(&w, e->best.lws[d]);
		put_u32(&w, e->ns);
	}
	return w.at;
}

uint64_t ert_hash64(uint64_t h, const void *data, size_t size)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < size; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

const void *ert_rd_take(struct ert_rd *r, size_t n)
{
	const void *p = r->p;

	if (r->bad || n > r->left) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

uint32_t ert_rd_u32(struct ert_rd *r)
{
	const void *p = ert_rd_take(r, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

uint64_t ert_rd_u64(struct ert_rd *r)
{
	const void *p = ert_rd_take(r, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

const char *ert_tune_parse(struct ert_tune_table *t, const unsigned char *buf, size_t size,
			   size_t *used)
{
	struct ert_tune_table got = { 0 };
	struct ert_rd r = { buf, size, false };
	uint32_t n = ert_rd_u32(&r);

	/* an entry is at least 48 bytes: a count past what is there is damage */
	if (r.bad || n > r.left / 48)
		return "damaged (tuning table)";
	for (uint32_t i = 0; i < n; i++) {
		struct ert_tune_key k;
		struct ert_tune_cand c;
		uint32_t len = ert_rd_u32(&r), mode, variant, lws[3], ns;
		const char *name = ert_rd_take(&r, len);

		memset(&k, 0, sizeof(k));
		k.source = ert_rd_u64(&r);
		k.shape = ert_rd_u64(&r);
		mode = ert_rd_u32(&r);
		variant = ert_rd_u32(&r);
		for (int d = 0; d < 3; d++)
			lws[d] = ert_rd_u32(&r);
		ns = ert_rd_u32(&r);
		if (r.bad || !len || len >= sizeof(k.kernel) || memchr(name, '\0', len) ||
		    mode > ERT_TUNE_WIDE || variant >= ERT_TUNE_MAX_VARIANTS ||
		    lws[0] > MAX_LWS || lws[1] > MAX_LWS || lws[2] > MAX_LWS) {
			ert_tune_table_free(&got);
			return "damaged (tuning entry)";
		}
		memcpy(k.kernel, name, len);
		c.variant = (uint16_t)variant;
		for (int d = 0; d < 3; d++)
			c.lws[d] = (uint16_t)lws[d];
		if (!ert_tune_put(&got, &k, &c, (ert_tune)mode, ns)) {
			ert_tune_table_free(&got);
			return "too large to read (out of memory)";
		}
	}
	for (uint32_t i = 0; i < got.n; i++) {
		const struct ert_tune_entry *e = &got.e[i];

		if (!ert_tune_put(t, &e->key, &e->best, (ert_tune)e->mode, e->ns)) {
			ert_tune_table_free(&got);
			return "too large to read (out of memory)";
		}
	}
	ert_tune_table_free(&got);
	*used = size - r.left;
	return NULL;
}
