/* SPDX-License-Identifier: MIT */
/*
 * What a session commits: the memory budget (ert_config.max_memory) and the
 * input buffers. Sizes come from the model, so a few bytes of file can declare
 * terabytes: every size is computed with overflow checks and compared with the
 * budget before anything of that size is allocated, and the input buffers are
 * zero-filled by the kernel on first touch rather than by a memset, so an
 * input the application never writes costs address space, not memory.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ert-seq.h"
#include "session/session-impl.h"

/* Input buffers from this size up are anonymous mappings (lazily zeroed). */
#define LAZY_MIN ((size_t)1 << 20)
/* Default budget where the physical memory cannot be read. */
#define FALLBACK_BUDGET ((uint64_t)2 << 30)

uint64_t ert_budget_default(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t phys;

	if (pages <= 0 || page <= 0 ||
	    __builtin_mul_overflow((uint64_t)pages, (uint64_t)page, &phys))
		return FALLBACK_BUDGET;
	phys /= 2;
	/* a 32-bit process cannot address more, whatever the machine has */
	return phys < SIZE_MAX / 2 ? phys : SIZE_MAX / 2;
}

bool ert_budget_bytes(ert_dtype dtype, int32_t rank, const int64_t *dims, uint64_t *bytes)
{
	uint64_t n = 1;

	if (rank < 0 || rank > ERT_MAX_RANK)
		return false;
	for (int32_t i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return false;
		if (dims[i] == 0) {
			/* empty, however large the other dims */
			*bytes = 0;
			return true;
		}
	}
	for (int32_t i = 0; i < rank; i++)
		if (__builtin_mul_overflow(n, (uint64_t)dims[i], &n))
			return false;
	/* element counts are int64 everywhere (ert_value.numel) */
	if (n > INT64_MAX)
		return false;
	if (dtype == ERT_DTYPE_INT4 || dtype == ERT_DTYPE_UINT4) {
		*bytes = n / 2 + (n & 1);
		return true;
	}
	return !__builtin_mul_overflow(n, (uint64_t)ert_dtype_size(dtype), bytes);
}

/* "[1,4294967296] float32" */
static const char *describe(char *buf, size_t size, ert_dtype dtype, int32_t rank,
			    const int64_t *dims)
{
	size_t n = (size_t)snprintf(buf, size, "[");

	for (int32_t i = 0; i < rank && i < ERT_MAX_RANK && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)dims[i]);
	if (n < size)
		snprintf(buf + n, size - n, "] %s", ert_dtype_name(dtype));
	return buf;
}

/* "17179869184 bytes (16.0 GiB)" */
static const char *amount(char *buf, size_t size, uint64_t bytes)
{
	static const char units[][4] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	while (v >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	/* down to a tenth: a byte under 2 MiB must not read "2.0 MiB" */
	v = (double)(uint64_t)(v * 10.0) / 10.0;
	if (u < 0)
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
	else
		snprintf(buf, size, "%llu bytes (%.1f %s)", (unsigned long long)bytes, v, units[u]);
	return buf;
}

static const char *budget_text(const struct ert_session *s, char *buf, size_t size)
{
	char a[48];

	snprintf(buf, size, "the memory budget of %s (%s)", amount(a, sizeof(a), s->budget),
		 s->cfg.max_memory ? "ert_config.max_memory"
				   : "half the physical memory, the default of ert_config.max_memory");
	return buf;
}

size_t ert_input_alloc_size(size_t need)
{
	/*
	 * Page-aligned whole pages: a backend with its own memory (the NPU) wraps
	 * the buffer as a user-pointer buffer object instead of copying it.
	 */
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;

	if (need > SIZE_MAX - page)
		return 0;
	return need ? (need + page - 1) & ~(page - 1) : page;
}

void *ert_input_alloc(size_t size)
{
	void *p;

	if (size >= LAZY_MIN) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	/* small: from the heap, where the sanitizers watch its bounds */
	p = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), size);
	if (p)
		memset(p, 0, size);
	return p;
}

bool ert_input_shrink(void *p, size_t size, size_t need)
{
	/*
	 * The buffer keeps its address (a backend may have wrapped it) and its
	 * size; the pages past @need go back to the system and read as zeros
	 * when touched again.
	 */
	if (size >= LAZY_MIN && need < size) {
		madvise((char *)p + need, size - need, MADV_DONTNEED);
		return true;
	}
	return false;
}

void ert_input_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size >= LAZY_MIN)
		munmap(p, size);
	else
		free(p);
}

ert_status ert_budget_check_input(const struct ert_session *s, uint32_t k,
				  const struct ert_value *v, uint64_t others, struct ert_err *err)
{
	const char *name = s->model->graph->tensors[s->model->graph->inputs[k]].name;
	char shape[200], a[48], b[48], c[48], lim[160];
	uint64_t bytes, held, total;

	/* whole pages of it: 0 when they do not fit a size_t */
	if (!ert_budget_bytes(v->dtype, v->rank, v->dims, &bytes) || bytes > SIZE_MAX ||
	    !(held = ert_input_alloc_size((size_t)bytes))) {
		ert_err_set(err, "input '%s' %s: its size overflows %zu bits", name,
			    describe(shape, sizeof(shape), v->dtype, v->rank, v->dims),
			    sizeof(size_t) * 8);
		return ERT_STATUS_SHAPE;
	}
	if (held > s->budget) {
		ert_err_set(err, "input '%s' %s takes %s, more than %s", name,
			    describe(shape, sizeof(shape), v->dtype, v->rank, v->dims),
			    amount(a, sizeof(a), held), budget_text(s, lim, sizeof(lim)));
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	if (__builtin_add_overflow(others, held, &total) || total > s->budget) {
		ert_err_set(err, "input '%s' %s takes %s; with the other inputs' %s that is %s, more than %s",
			    name, describe(shape, sizeof(shape), v->dtype, v->rank, v->dims),
			    amount(a, sizeof(a), held), amount(b, sizeof(b), others),
			    total < held ? "more than 2^64 bytes" : amount(c, sizeof(c), total),
			    budget_text(s, lim, sizeof(lim)));
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	return ERT_OK;
}

uint64_t ert_budget_inputs(const struct ert_session *s, int64_t except)
{
	uint64_t sum = 0;

	for (uint32_t k = 0; k < s->model->graph->n_inputs; k++)
		if ((int64_t)k != except)
			sum += ert_input_alloc_size(s->in_vals[k].nbytes); /* each checked */
	return sum;
}

uint64_t ert_budget_plan_bytes(const struct ert_plan *p)
{
	uint64_t sum = p->folded_bytes + p->dyn_bytes;

	for (uint32_t a = 0; a < p->n_arenas; a++)
		sum += p->arenas[a].size; /* checked by ert_budget_check_plan() */
	for (const struct ert_plan *c = p->conts; c; c = c->next)
		sum += ert_budget_plan_bytes(c);
	return sum;
}

static uint64_t session_bytes(const struct ert_session *s)
{
	uint64_t held = ert_budget_inputs(s, -1) + s->seqs.bytes;

	for (const struct ert_plan *p = s->plan; p; p = p->next)
		held += ert_budget_plan_bytes(p);
	return held;
}

static bool on_chain(const struct ert_plan *q, const struct ert_plan *chain)
{
	for (; chain; chain = chain->parent)
		if (q == chain)
			return true;
	return false;
}

/* The least recently used cached plan off @p's chain, as a link to unhook; NULL if none. */
static struct ert_plan **victim(struct ert_session *s, const struct ert_plan *p)
{
	struct ert_plan **pp, **found = NULL;

	/* other roots first (the list is most recent first: take the last) */
	for (pp = &s->plan; *pp; pp = &(*pp)->next)
		if (*pp != p->root)
			found = pp;
	if (found)
		return found;
	/* then continuations beside the chain, nearest the root first */
	for (const struct ert_plan *q = p->root; q && q != p; ) {
		const struct ert_plan *next = NULL;

		for (pp = (struct ert_plan **)&q->conts; *pp; pp = &(*pp)->next) {
			if (on_chain(*pp, p))
				next = *pp;
			else
				found = pp;
		}
		if (found)
			return found;
		q = next;
	}
	return NULL;
}

/*
 * Do @more bytes fit beside what the session holds? Cached plans off @p's
 * chain go first, as victim() picks them (@p NULL: none go).
 */
static bool make_room(struct ert_session *s, const struct ert_plan *p, uint64_t more)
{
	for (;;) {
		struct ert_plan **pp, *q;
		uint64_t total;

		if (!__builtin_add_overflow(session_bytes(s), more, &total) && total <= s->budget)
			return true;
		if (!p || !(pp = victim(s, p)))
			return false;
		q = *pp;
		*pp = q->next;
		ert_plan_destroy(s, q);
	}
}

ert_status ert_budget_check_run(struct ert_session *s, const struct ert_plan *p,
				const struct ert_node *n, const char *what, uint64_t more,
				struct ert_err *err)
{
	char a[48], b[48], lim[160];

	if (make_room(s, p, more))
		return ERT_OK;
	return ert_node_fail(n, err, ERT_STATUS_OUT_OF_MEMORY,
			     "%s takes %s; with the %s the session holds that is more than %s",
			     what, amount(a, sizeof(a), more),
			     amount(b, sizeof(b), session_bytes(s)),
			     budget_text(s, lim, sizeof(lim)));
}

void ert_budget_evict(struct ert_session *s, uint64_t need)
{
	for (;;) {
		uint64_t held = need;
		struct ert_plan **pp;

		for (struct ert_plan *p = s->plan; p; p = p->next)
			held += ert_budget_plan_bytes(p);
		if (held <= s->budget || !s->plan)
			return;
		/* the least recently used: the list is most recent first */
		for (pp = &s->plan; (*pp)->next; pp = &(*pp)->next)
			;
		ert_plan_destroy(s, *pp);
		*pp = NULL;
	}
}

/*
 * The session's sequence and optional objects would grow by @more bytes: the
 * plans cached for other input shapes make room (the list's head, the plan
 * running or to run, stays with its continuations), else the budget's error.
 */
static ert_status seqs_reserve(struct ert_seq_meter *m, uint64_t more, const char *what,
			       struct ert_err *err)
{
	struct ert_session *s = (struct ert_session *)(void *)((char *)m -
							       offsetof(struct ert_session, seqs));
	char a[48], b[48], lim[160];

	if (make_room(s, s->plan, more))
		return ERT_OK;
	ert_err_set(err, "%s: sequence items take %s more; with the %s the session holds that is "
		    "more than %s", what, amount(a, sizeof(a), more),
		    amount(b, sizeof(b), session_bytes(s)), budget_text(s, lim, sizeof(lim)));
	return ERT_STATUS_OUT_OF_MEMORY;
}

void ert_budget_seqs_init(struct ert_session *s)
{
	s->seqs.bytes = 0;
	s->seqs.reserve = seqs_reserve;
}

ert_status ert_budget_check_tensor(const struct ert_session *s, const struct ert_node *n,
				   int32_t t, const struct ert_value *v, struct ert_err *err)
{
	const char *name = s->model->graph->tensors[t].name;
	char shape[200], a[48], lim[160];
	uint64_t bytes;
	bool negative = false;

	for (int32_t i = 0; i < v->rank && i < ERT_MAX_RANK; i++)
		negative |= v->dims[i] < 0;
	if (v->rank < 0 || v->rank > ERT_MAX_RANK || negative)
		return ERT_OK; /* not a size: ert_value_finish() reports the shape */
	if (!ert_budget_bytes(v->dtype, v->rank, v->dims, &bytes) || bytes > SIZE_MAX)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "output '%s' %s: its size overflows %zu bits", name,
				     describe(shape, sizeof(shape), v->dtype, v->rank, v->dims),
				     sizeof(size_t) * 8);
	if (bytes > s->budget)
		return ert_node_fail(n, err, ERT_STATUS_OUT_OF_MEMORY,
				     "output '%s' %s takes %s, more than %s", name,
				     describe(shape, sizeof(shape), v->dtype, v->rank, v->dims),
				     amount(a, sizeof(a), bytes), budget_text(s, lim, sizeof(lim)));
	return ERT_OK;
}

ert_status ert_budget_check_fold(const struct ert_session *s, const struct ert_plan *p,
				 const struct ert_node *n, uint64_t bytes, struct ert_err *err)
{
	uint64_t in = ert_budget_inputs(s, -1), total;
	char a[48], lim[160];

	if (!__builtin_add_overflow(in, p->folded_bytes, &total) &&
	    !__builtin_add_overflow(total, bytes, &total) && total <= s->budget)
		return ERT_OK;
	return ert_node_fail(n, err, ERT_STATUS_OUT_OF_MEMORY,
			     "computing it while planning takes %s, which with the inputs and the values computed before it is more than %s",
			     amount(a, sizeof(a), bytes), budget_text(s, lim, sizeof(lim)));
}

ert_status ert_budget_check_plan(struct ert_session *s, const struct ert_plan *p,
				 struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	uint64_t in = ert_budget_inputs(s, -1), arenas = 0, total;
	char a[48], b[48], c[48], d[48], e[48], lim[160], shape[200], big_text[400] = "";
	int32_t big = -1;
	bool over = false;

	for (uint32_t i = 0; i < p->n_arenas; i++)
		over |= __builtin_add_overflow(arenas, (uint64_t)p->arenas[i].size, &arenas);
	if (p->parent) {
		/* planned while the parent chain runs: it stays, the rest may go */
		if (over || __builtin_add_overflow(arenas, p->folded_bytes, &total))
			total = UINT64_MAX;
		return ert_budget_check_run(s, p->parent, &g->nodes[p->parent->cut],
					    "planning the nodes after it", total, err);
	}
	over |= __builtin_add_overflow(in, arenas, &total);
	over |= __builtin_add_overflow(total, p->folded_bytes, &total);
	if (!over && total <= s->budget) {
		/* the plans cached for other shapes make room */
		ert_budget_evict(s, total);
		return ERT_OK;
	}
	/* name the largest tensor a step writes: the likeliest culprit */
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if (p->t[t].kind == ERT_PT_ARENA && (big < 0 || p->t[t].v.nbytes > p->t[big].v.nbytes))
			big = (int32_t)t;
	if (big >= 0) {
		const struct ert_plan_tensor *pt = &p->t[big];
		const struct ert_node *n = p->steps[pt->first].x.node;

		snprintf(big_text, sizeof(big_text), " (the largest tensor: '%s' %s, %s, written by %s '%s')",
			 g->tensors[big].name,
			 describe(shape, sizeof(shape), pt->v.dtype, pt->v.rank, pt->v.dims),
			 amount(e, sizeof(e), pt->v.nbytes), ert_op_name(n->op), n->name);
	}
	ert_err_set(err, "the plan needs %s: input buffers %s, the steps' tensors and workspaces %s, values computed while planning %s; more than %s%s",
		    over ? "more than 2^64 bytes" : amount(a, sizeof(a), total),
		    amount(b, sizeof(b), in), amount(c, sizeof(c), arenas),
		    amount(d, sizeof(d), p->folded_bytes), budget_text(s, lim, sizeof(lim)), big_text);
	return ERT_STATUS_OUT_OF_MEMORY;
}
