/* SPDX-License-Identifier: MIT */
/*
 * Copies at splits. A step reads a tensor in place when the tensor lies in
 * its own arena, or when both memories are host-visible (the CPU and the NPU
 * share mapped buffers). Otherwise one side is device memory (a GPU's), and
 * the tensor gets a mirror in the reader's arena: a block of its own in the
 * memory plan, filled once per run from the tensor's home right before the
 * first step there that reads it. Tensors are written once per run, so one
 * fill is enough; the mirror's lifetime ends with its last reader, like any
 * other block. Graph outputs in device memory get a mirror in host memory,
 * filled after the last step, which the application reads.
 *
 * The copy is done by the backend that owns the device memory (its
 * buffer_write() or buffer_read()), which counts the bytes in copied_bytes().
 * Nothing here is specific to an API: OpenCL and Vulkan both come through it.
 *
 * Precision LOW (fp16-guard.c): a mirror in device memory is stored as
 * float16 when its readers run in float16; copies into it convert on the
 * host, reads of float16 widen on the host. Where a step reads a tensor of
 * its own arena stored otherwise than it runs, the mirror is in that same
 * arena, and the backend converts (buffer_convert()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ert-probes.h"
#include "session/session-impl.h"

int32_t ert_copies_find(const struct ert_plan *p, int32_t t, uint32_t arena, bool fp16)
{
	for (uint32_t m = 0; m < p->n_mirrors; m++)
		if (p->mirrors[m].tensor == t && p->mirrors[m].arena == arena &&
		    p->mirrors[m].fp16 == fp16)
			return (int32_t)m;
	return -1;
}

static int32_t add_mirror(struct ert_plan *p, int32_t t, uint32_t arena, int32_t first,
			  bool fp16)
{
	struct ert_plan_mirror *m = &p->mirrors[p->n_mirrors];

	memset(m, 0, sizeof(*m));
	m->tensor = t;
	m->arena = arena;
	m->first = m->last = first;
	m->v = p->t[t].v;
	m->v.data = NULL;
	m->fp16 = fp16;
	m->share = -1;
	return (int32_t)p->n_mirrors++;
}

/* The arena of the CPU backend's buffer type, added when no step uses it. */
static int32_t host_arena(struct ert_session *s, struct ert_plan *p)
{
	for (uint32_t b = 0; b < s->n_backends; b++) {
		const char *type;

		if (s->backends[b]->type != ERT_BACKEND_CPU)
			continue;
		type = ert_backend_buffer_type(s->backends[b]);
		for (uint32_t a = 0; a < p->n_arenas; a++)
			if (!strcmp(p->arenas[a].type, type))
				return (int32_t)a;
		/* arenas has room for one per backend, and this type has none */
		p->arenas[p->n_arenas] = (struct ert_arena_buf){ .type = type, .backend = b,
								 .visible = true };
		return (int32_t)p->n_arenas++;
	}
	return -1;
}

static const char *arena_backend(const struct ert_session *s, const struct ert_plan *p,
				 uint32_t a)
{
	return s->backends[p->arenas[a].backend]->ops->name;
}

/* Step @i (in @arena) reads @t: in place, or from a mirror in @arena, made here. */
static ert_status plan_mirror(struct ert_session *s, struct ert_plan *p, uint32_t i,
			      uint32_t arena, int32_t t, struct ert_err *err)
{
	const struct ert_plan_tensor *pt = &p->t[t];
	const struct ert_node *n = p->steps[i].x.node;
	bool fp16 = ert_step_reads_fp16(p, i, t);
	int32_t m;

	if (pt->kind == ERT_PT_INPUT || pt->kind == ERT_PT_DYNAMIC || pt->kind == ERT_PT_OUTER) {
		/* host memory outside the arenas */
		if (p->arenas[arena].visible)
			return ERT_OK;
	} else if (pt->kind == ERT_PT_ARENA) {
		/* in its home, stored as the step reads it; else converted there */
		if (pt->arena == arena && pt->fp16 == fp16)
			return ERT_OK;
		if (p->arenas[arena].visible && p->arenas[pt->arena].visible)
			return ERT_OK;
		if (pt->arena != arena && !p->arenas[arena].visible &&
		    !p->arenas[pt->arena].visible) {
			ert_err_set(err, "%s '%s' on backend %s reads '%s' from backend %s: copies between two kinds of device memory ('%s', '%s') are not implemented",
				    ert_op_name(n->op), n->name, arena_backend(s, p, arena),
				    s->model->graph->tensors[t].name,
				    arena_backend(s, p, pt->arena), p->arenas[pt->arena].type,
				    p->arenas[arena].type);
			return ERT_STATUS_UNSUPPORTED;
		}
	} else {
		/* constants: prepare() gets their host data, to upload if it must */
		return ERT_OK;
	}
	m = ert_copies_find(p, t, arena, fp16);
	if (m < 0)
		m = add_mirror(p, t, arena, (int32_t)i, fp16);
	p->mirrors[m].last = (int32_t)i;
	return ERT_OK;
}

/*
 * Host bytes for the copies that convert on the host: float32 into a float16
 * mirror in device memory (the source is not ours to overwrite). Reads of
 * float16 from device memory widen in the destination, from its end.
 */
static ert_status plan_staging(struct ert_plan *p)
{
	size_t need = 0;

	for (uint32_t m = 0; m < p->n_mirrors; m++) {
		const struct ert_plan_mirror *mr = &p->mirrors[m];
		const struct ert_plan_tensor *pt = &p->t[mr->tensor];

		if (mr->fp16 && (pt->kind != ERT_PT_ARENA || pt->arena != mr->arena) &&
		    (size_t)mr->v.numel * 2 > need)
			need = (size_t)mr->v.numel * 2;
	}
	if (!need)
		return ERT_OK;
	p->staging = malloc(need);
	if (!p->staging)
		return ERT_STATUS_OUT_OF_MEMORY;
	p->staging_size = need;
	return ERT_OK;
}

static void check_backend_copies(struct ert_session *s, const struct ert_plan *p, uint32_t a,
				 bool *ok, struct ert_err *err)
{
	const struct ert_backend_ops *ops = s->backends[p->arenas[a].backend]->ops;

	if (*ok && !p->arenas[a].visible && (!ops->buffer_write || !ops->buffer_read)) {
		ert_err_set(err, "backend %s: buffer type '%s' is not host-visible and the backend cannot copy to or from it",
			    ops->name, p->arenas[a].type);
		*ok = false;
	}
}

ert_status ert_copies_plan(struct ert_session *s, struct ert_plan *p, struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	size_t cap = g->n_outputs;
	bool ok = true;
	ert_status st;

	for (uint32_t i = 0; i < p->n_steps; i++)
		cap += p->steps[i].x.n_in;
	/* at most one mirror per step input and per graph output: never reallocated */
	p->mirrors = calloc(cap ? cap : 1, sizeof(*p->mirrors));
	if (!p->mirrors)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (uint32_t t = 0; t < g->n_tensors; t++)
		p->t[t].host_mirror = -1;
	for (uint32_t a = 0; a < p->n_arenas; a++)
		check_backend_copies(s, p, a, &ok, err);
	if (!ok)
		return ERT_STATUS_BACKEND;

	for (uint32_t i = 0; i < p->n_steps; i++) {
		const struct ert_node *n = p->steps[i].x.node;

		for (uint32_t k = 0; k < n->n_inputs; k++) {
			if (n->inputs[k] < 0)
				continue;
			st = plan_mirror(s, p, i, p->steps[i].arena, n->inputs[k], err);
			if (st != ERT_OK)
				return st;
		}
	}
	for (uint32_t k = 0; k < g->n_outputs; k++) {
		struct ert_plan_tensor *pt = &p->t[g->outputs[k]];
		int32_t h, m;

		if (pt->kind != ERT_PT_ARENA || p->arenas[pt->arena].visible || pt->host_mirror >= 0)
			continue;
		h = host_arena(s, p);
		if (h < 0) {
			ert_err_set(err, "graph output '%s' lies in device memory and the session has no cpu backend to read it back to",
				    g->tensors[g->outputs[k]].name);
			return ERT_STATUS_UNSUPPORTED;
		}
		m = ert_copies_find(p, g->outputs[k], (uint32_t)h, false);
		if (m < 0)
			m = add_mirror(p, g->outputs[k], (uint32_t)h, (int32_t)p->n_steps, false);
		p->mirrors[m].last = (int32_t)p->n_steps;
		pt->host_mirror = m;
	}
	/*
	 * Whether a reader needs a mirror depends on the tensor and the reader's
	 * arena alone, so every reader in that arena reads the one mirror. The
	 * array is complete now: its addresses hold.
	 */
	for (uint32_t i = 0; i < p->n_steps; i++) {
		struct ert_exec *x = &p->steps[i].x;
		const struct ert_node *n = x->node;

		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t m = n->inputs[k] < 0 ? -1 :
				ert_copies_find(p, n->inputs[k], p->steps[i].arena,
						ert_step_reads_fp16(p, i, n->inputs[k]));

			if (m >= 0)
				x->in[k] = &p->mirrors[m].v;
		}
	}
	return plan_staging(p);
}

/* Widen @n float16 values at the start of @buf to float32 over the whole of it, from the end. */
static void widen_in_place(void *buf, size_t n)
{
	const uint16_t *h = buf;
	float *f = buf;

	for (size_t i = n; i-- > 0;)
		f[i] = ert_fp16_to_fp32(h[i]);
}

/* Fill mirror @m: a copy between host and device memory, or a conversion in device memory. */
static ert_status fill_mirror(struct ert_session *s, struct ert_plan *p,
			      const struct ert_plan_mirror *m, struct ert_err *err)
{
	const struct ert_plan_tensor *pt = &p->t[m->tensor];
	const struct ert_arena_buf *dst = &p->arenas[m->arena];
	size_t n = pt->v.nbytes;

	if (pt->kind == ERT_PT_ARENA && pt->arena == m->arena)
		return ert_backend_buffer_convert(s->backends[dst->backend], &dst->buf,
						  p->t[pt->root].offset,
						  pt->fp16 ? ERT_DTYPE_FLOAT16 : ERT_DTYPE_FLOAT32,
						  m->offset,
						  m->fp16 ? ERT_DTYPE_FLOAT16 : ERT_DTYPE_FLOAT32,
						  (size_t)pt->v.numel, err);
	if (!dst->visible) {
		/* into device memory: the source is host-visible (planned so) */
		const void *src = pt->kind != ERT_PT_ARENA ? pt->v.data :
			(const uint8_t *)p->arenas[pt->arena].buf.host + p->t[pt->root].offset;

		if (m->fp16) {
			uint16_t *h = p->staging;
			const float *f = src;

			for (size_t i = 0; i < (size_t)pt->v.numel; i++)
				h[i] = ert_fp32_to_fp16(f[i]);
			src = h;
			n = (size_t)pt->v.numel * 2;
		}
		return ert_backend_buffer_write(s->backends[dst->backend], &dst->buf, m->offset,
						src, n, err);
	}
	const struct ert_arena_buf *from = &p->arenas[pt->arena];
	uint8_t *to = (uint8_t *)dst->buf.host + m->offset;
	ert_status st = ert_backend_buffer_read(s->backends[from->backend], &from->buf,
						p->t[pt->root].offset, to,
						ert_plan_stored_bytes(&pt->v, pt->fp16), err);

	if (st == ERT_OK && pt->fp16)
		widen_in_place(to, (size_t)pt->v.numel);
	return st;
}

ert_status ert_copies_run(struct ert_session *s, struct ert_plan *p, uint32_t step,
			  uint32_t *cursor, struct ert_err *err)
{
	for (; *cursor < p->n_mirrors && p->mirrors[*cursor].first == (int32_t)step; (*cursor)++) {
		const struct ert_plan_mirror *m = &p->mirrors[*cursor];
		const struct ert_plan_tensor *pt = &p->t[m->tensor];
		ert_status st;

		if (!pt->v.nbytes || m->share >= 0)
			continue;
		ert_probe_copy(step, pt->v.nbytes, pt->kind != ERT_PT_ARENA ? "host" :
			       s->backends[p->arenas[pt->arena].backend]->ops->name,
			       s->backends[p->arenas[m->arena].backend]->ops->name);
		st = fill_mirror(s, p, m, err);
		if (st != ERT_OK)
			return st;
	}
	return ERT_OK;
}

/*
 * Sharing arenas. A mirror in device memory of a tensor whose home is
 * host-visible memory of another backend (the NPU's GEM arena read by a GPU
 * step) is a copy the GPU need not make when its API can map the home's
 * buffer: the home's backend exports the arena as a dma-buf, the reader's
 * imports it, and the readers bind the import at the home's offset. Only
 * float32 storage on both sides (a float16 mirror converts). Nothing else
 * changes: the split's synchronize() orders the writer's work before the
 * reader's, as it does for steps reading host memory in place. The other
 * way (a device tensor read by an NPU step) never happens today: the GPU
 * backends write no int8 tensor, and NPU ops read only int8.
 */
static bool may_share(const struct ert_session *s, const struct ert_plan *p,
		      const struct ert_plan_mirror *m)
{
	const struct ert_plan_tensor *pt = &p->t[m->tensor];

	return pt->kind == ERT_PT_ARENA && pt->arena != m->arena && !m->fp16 && !pt->fp16 &&
	       p->arenas[pt->arena].visible && !p->arenas[m->arena].visible &&
	       ert_backend_can_share(s->backends[p->arenas[pt->arena].backend],
				     s->backends[p->arenas[m->arena].backend]);
}

static void share_note(const struct ert_session *s, const struct ert_plan *p,
		       const struct ert_plan_share *sh, const char *why)
{
	const char *dbg = getenv("ERT_DEBUG_SHARING");

	if (!dbg || !*dbg || !strcmp(dbg, "0"))
		return;
	fprintf(stderr, "edgert: sharing arena '%s' (%s) with %s: %s\n", p->arenas[sh->from].type,
		s->backends[p->arenas[sh->from].backend]->ops->name,
		s->backends[p->arenas[sh->to].backend]->ops->name, why);
}

/* Export arena @sh->from and import it into @sh->to's backend. */
static void share_try(struct ert_session *s, struct ert_plan *p, struct ert_plan_share *sh)
{
	const struct ert_arena_buf *from = &p->arenas[sh->from];
	struct ert_backend *to = s->backends[p->arenas[sh->to].backend];
	struct ert_err err = { "" };
	char why[sizeof(err.msg) + 64];
	int fd = -1;

	if (ert_backend_buffer_export_fd(s->backends[from->backend], &from->buf, &fd, &err) != ERT_OK) {
		snprintf(why, sizeof(why), "no dma-buf to export (%s); tensors crossing are copied",
			 err.msg);
		share_note(s, p, sh, why);
		return;
	}
	sh->ok = ert_backend_buffer_import_fd(to, fd, from->buf.size, &sh->buf, &err) == ERT_OK;
	close(fd);
	if (!sh->ok) {
		snprintf(why, sizeof(why), "import failed (%s); tensors crossing are copied", err.msg);
		share_note(s, p, sh, why);
		return;
	}
	share_note(s, p, sh, "imported; tensors crossing are read in place");
}

void ert_copies_share(struct ert_session *s, struct ert_plan *p)
{
	if (!p->n_mirrors)
		return;
	for (uint32_t i = 0; i < p->n_mirrors; i++) {
		struct ert_plan_mirror *m = &p->mirrors[i];
		uint32_t from = p->t[m->tensor].arena, k;

		if (!may_share(s, p, m))
			continue;
		for (k = 0; k < p->n_shares; k++)
			if (p->shares[k].from == from && p->shares[k].to == m->arena)
				break;
		if (k == p->n_shares) {
			/* at most one per pair of arenas */
			struct ert_plan_share *sh = realloc(p->shares, (k + 1) * sizeof(*sh));

			if (!sh)
				return;   /* the copies stay */
			p->shares = sh;
			sh[k] = (struct ert_plan_share){ .from = from, .to = m->arena };
			p->n_shares++;
			share_try(s, p, &sh[k]);
		}
		if (p->shares[k].ok)
			m->share = (int32_t)k;
	}
}

void ert_copies_unshare(struct ert_session *s, struct ert_plan *p)
{
	for (uint32_t k = 0; k < p->n_shares; k++)
		if (p->shares[k].ok)
			ert_backend_buffer_free(s->backends[p->arenas[p->shares[k].to].backend],
						&p->shares[k].buf);
	free(p->shares);
	p->shares = NULL;
	p->n_shares = 0;
}

bool ert_copies_shared_loc(const struct ert_plan *p, int32_t m, struct ert_tensor_loc *loc)
{
	const struct ert_plan_tensor *pt;

	if (m < 0 || p->mirrors[m].share < 0)
		return false;
	pt = &p->t[p->mirrors[m].tensor];
	*loc = (struct ert_tensor_loc){ &p->shares[p->mirrors[m].share].buf,
					p->t[pt->root].offset, 0 };
	return true;
}
