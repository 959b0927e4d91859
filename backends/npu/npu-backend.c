/* SPDX-License-Identifier: MIT */
/*
 * The NPU backend: int8 subgraphs lowered to enpu command streams, run on
 * /dev/accel/accelN (or on the userspace simulator when no device exists and
 * the NPU was asked for by name).
 *
 * Memory: the backend's buffer type "enpu" is GEM buffers mapped into the
 * process, so its arena is host-visible and the CPU backend reads and writes
 * the tensors that cross between the two in place (the planner puts them in
 * this arena). Constants are uploaded once per session into slab BOs; graph
 * inputs, which the session keeps in page-aligned buffers, are wrapped with
 * BO_USERPTR. Nothing is copied between the CPU and the NPU at run time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ert-probes.h"
#include "npu/npu-impl.h"

#define NPU_SLAB_SIZE ((size_t)4 << 20)
/*
 * Waits have no deadline of their own: the driver resets a job that stops
 * making progress (its job timeout) and the wait then fails with its error,
 * while a long island may legitimately take seconds (minutes under emulation).
 */
#define NPU_WAIT_NS (-1ll)

static struct ert_npu *npu_of(struct ert_backend *be)
{
	return be->ctx;
}

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

/* ---- memory ---------------------------------------------------------------- */

static struct npu_bo_entry *bo_new(struct ert_npu *npu, int kind)
{
	struct npu_bo_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->kind = kind;
	return e;
}

static void bo_link(struct ert_npu *npu, struct npu_bo_entry *e)
{
	e->next = npu->bos;
	npu->bos = e;
}

static void bo_unlink_free(struct ert_npu *npu, struct npu_bo_entry *e)
{
	for (struct npu_bo_entry **pp = &npu->bos; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	npu_bo_destroy(npu->dev, &e->bo);
	free(e);
}

const struct npu_bo *ert_npu_find(struct ert_npu *npu, const void *p, size_t nbytes,
				  uint64_t *offset)
{
	const uint8_t *q = p;

	if (!p)
		return NULL;
	for (struct npu_bo_entry *e = npu->bos; e; e = e->next) {
		const uint8_t *base = e->bo.map;

		if (base && q >= base && (size_t)(q - base) <= e->bo.size &&
		    nbytes <= e->bo.size - (size_t)(q - base)) {
			*offset = (uint64_t)(q - base);
			return &e->bo;
		}
	}
	return NULL;
}

ert_status ert_npu_upload_bytes(struct ert_npu *npu, const void *src, size_t nbytes,
				const struct npu_bo **bo, uint64_t *offset, struct ert_err *err)
{
	size_t need = (nbytes + 63) & ~(size_t)63;
	struct npu_bo_entry *e;
	ert_status st;

	for (e = npu->bos; e; e = e->next)
		if (e->kind == NPU_BO_SLAB && e->bo.size - e->used >= need)
			break;
	if (!e) {
		size_t size = need > NPU_SLAB_SIZE ? (need + page_size() - 1) & ~(page_size() - 1)
						   : NPU_SLAB_SIZE;

		e = bo_new(npu, NPU_BO_SLAB);
		if (!e)
			return ERT_STATUS_OUT_OF_MEMORY;
		st = npu_bo_create(npu->dev, size, &e->bo, err);
		if (st != ERT_OK) {
			free(e);
			return st;
		}
		bo_link(npu, e);
		npu->resident += size;
	}
	if (nbytes)
		memcpy((uint8_t *)e->bo.map + e->used, src, nbytes);
	*bo = &e->bo;
	*offset = e->used;
	e->used += need;
	return ERT_OK;
}

ert_status ert_npu_upload(struct ert_npu *npu, const void *src, size_t nbytes,
			  const struct npu_bo **bo, uint64_t *offset, struct ert_err *err)
{
	ert_status st;

	for (uint32_t i = 0; i < npu->n_consts; i++) {
		const struct npu_const *c = &npu->consts[i];

		/*
		 * Same address, size and bytes: constants computed while planning
		 * die with their plan, and a later one may reuse the address.
		 */
		if (c->src == src && c->nbytes == nbytes &&
		    !memcmp((const uint8_t *)c->bo->map + c->offset, src, nbytes)) {
			*bo = c->bo;
			*offset = c->offset;
			return ERT_OK;
		}
	}
	if (npu->n_consts == npu->cap_consts) {
		uint32_t cap = npu->cap_consts ? npu->cap_consts * 2 : 64;
		struct npu_const *c = realloc(npu->consts, cap * sizeof(*c));

		if (!c)
			return ERT_STATUS_OUT_OF_MEMORY;
		npu->consts = c;
		npu->cap_consts = cap;
	}
	st = ert_npu_upload_bytes(npu, src, nbytes, bo, offset, err);
	if (st != ERT_OK)
		return st;
	npu->consts[npu->n_consts++] = (struct npu_const){ src, nbytes, *bo, *offset };
	return ERT_OK;
}

ert_status ert_npu_wrap(struct ert_npu *npu, void *p, size_t nbytes, struct npu_bo *bo,
			struct ert_err *err)
{
	size_t pg = page_size();
	size_t size = (nbytes + pg - 1) & ~(pg - 1);

	if ((uintptr_t)p % pg) {
		ert_err_set(err, "npu: input buffer %p is not page-aligned", p);
		return ERT_STATUS_INTERNAL;
	}
	return npu_bo_userptr(npu->dev, p, size ? size : pg, true, bo, err);
}

static const char *npu_buffer_type(struct ert_backend *be)
{
	return "enpu";
}

static ert_status npu_buffer_alloc(struct ert_backend *be, size_t size, struct ert_buffer *out,
				   struct ert_err *err)
{
	struct ert_npu *npu = npu_of(be);
	size_t pg = page_size();
	struct npu_bo_entry *e = bo_new(npu, NPU_BO_ARENA);
	ert_status st;

	if (!e)
		return ERT_STATUS_OUT_OF_MEMORY;
	st = npu_bo_create(npu->dev, size ? (size + pg - 1) & ~(pg - 1) : pg, &e->bo, err);
	if (st != ERT_OK) {
		free(e);
		return st;
	}
	bo_link(npu, e);
	out->host = e->bo.map;
	out->size = size;
	out->handle = e;
	return ERT_OK;
}

static void npu_buffer_free(struct ert_backend *be, struct ert_buffer *buf)
{
	if (buf->handle)
		bo_unlink_free(npu_of(be), buf->handle);
	buf->handle = NULL;
	buf->host = NULL;
}

/* An arena's BO as a dma-buf (PRIME), for a GPU backend to import: UNSUPPORTED on the simulator. */
static ert_status npu_buffer_export_fd(struct ert_backend *be, const struct ert_buffer *buf,
				       int *fd_out, struct ert_err *err)
{
	const struct npu_bo_entry *e = buf->handle;

	if (!e) {
		ert_err_set(err, "npu: exporting a buffer that was not allocated");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (e->bo.userptr) {
		ert_err_set(err, "npu: a BO over user memory is not exported");
		return ERT_STATUS_UNSUPPORTED;
	}
	return npu_bo_export(npu_of(be)->dev, &e->bo, fd_out, err);
}

/* ---- placement and preparation --------------------------------------------- */

static bool npu_supports_op(struct ert_backend *be, const struct ert_exec *x)
{
	return ert_npu_supports(npu_of(be), x);
}

static ert_status npu_prepare(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	return ert_npu_lower(npu_of(be), x, err);
}

static void npu_release(struct ert_backend *be, struct ert_exec *x)
{
	ert_npu_op_free(npu_of(be), x->state);
	x->state = NULL;
}

/* ---- jobs --------------------------------------------------------------------- */

static struct npu_job_buf *job_open(struct ert_npu *npu)
{
	if (npu->n_jobs == npu->cap_jobs) {
		uint32_t cap = npu->cap_jobs ? npu->cap_jobs * 2 : 8;
		struct npu_job_buf *j = realloc(npu->jobs, cap * sizeof(*j));

		if (!j)
			return NULL;
		memset(j + npu->cap_jobs, 0, (cap - npu->cap_jobs) * sizeof(*j));
		npu->jobs = j;
		npu->cap_jobs = cap;
	}
	struct npu_job_buf *j = &npu->jobs[npu->n_jobs++];

	j->len = sizeof(struct enpu_cs_header);
	j->n_cmds = 0;
	j->work = 0;
	j->n_regions = 0;
	if (j->cap < j->len) {
		uint8_t *cs = realloc(j->cs, 4096);

		if (!cs) {
			npu->n_jobs--;
			return NULL;
		}
		j->cs = cs;
		j->cap = 4096;
	}
	return j;
}

/* Region of @bo in job @j (added when missing), which reads it, and writes it if @write. */
static int32_t job_region(struct npu_job_buf *j, const struct npu_bo *bo, bool write)
{
	uint32_t r = 0;

	while (r < j->n_regions && j->regions[r] != bo)
		r++;
	if (r == j->n_regions) {
		if (j->n_regions == NPU_MAX_REGIONS)
			return -1;
		j->regions[r] = bo;
		j->region_flags[r] = ENPU_JOB_BO_READ;
		j->n_regions++;
	}
	if (write)
		j->region_flags[r] |= ENPU_JOB_BO_WRITE;
	return (int32_t)r;
}

/* Regions @op needs that job @j does not have yet. */
static uint32_t missing_regions(const struct npu_job_buf *j, const struct npu_op *op)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < op->n_refs; i++) {
		bool found = false;

		for (uint32_t r = 0; r < j->n_regions && !found; r++)
			found = j->regions[r] == op->refs[i].bo;
		n += !found;
	}
	return n;
}

static bool job_fits(const struct ert_npu *npu, const struct npu_job_buf *j,
		     const struct npu_cmd_entry *c, uint32_t new_regions)
{
	return j->n_cmds < ENPU_CS_MAX_CMDS && j->work + c->work <= npu->info->max_job_work &&
	       j->n_regions + new_regions <= NPU_MAX_REGIONS &&
	       j->len + c->c.hdr.size <= npu->info->max_cs_size;
}

/*
 * Re-resolve refs to graph inputs whose buffer changed since they were
 * wrapped: the session reallocates an input's buffer when it grows, and gives
 * back the pages past a smaller shape's end when it shrinks. The wrapper pins
 * the pages it was made over, so after either it would show the device stale
 * pages even at the same address: the input's storage_gen tells.
 */
static ert_status refresh_inputs(struct ert_npu *npu, struct ert_exec *x, struct npu_op *op,
				 struct ert_err *err)
{
	for (uint32_t i = 0; i < op->n_refs; i++) {
		struct npu_ref *r = &op->refs[i];
		const struct ert_value *v;

		if (r->input < 0)
			continue;
		v = x->in[r->input];
		if (v->data == r->base && v->storage_gen == r->gen)
			continue;
		/* the old buffer is gone: drop its wrapper before wrapping the new one */
		npu_bo_destroy(npu->dev, &r->own);
		r->base = NULL;
		ert_status st = ert_npu_wrap(npu, v->data, v->nbytes, &r->own, err);

		if (st != ERT_OK)
			return st;
		r->base = v->data;
		r->gen = v->storage_gen;
	}
	return ERT_OK;
}

static ert_status npu_compute(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	struct ert_npu *npu = npu_of(be);
	struct npu_op *op = x->state;
	struct npu_job_buf *j = npu->n_jobs ? &npu->jobs[npu->n_jobs - 1] : NULL;
	ert_status st;

	if (!op) {
		ert_err_set(err, "npu: %s '%s': not prepared", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_INTERNAL;
	}
	st = refresh_inputs(npu, x, op, err);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < op->n_cmds; i++) {
		const struct npu_cmd_entry *c = &op->cmds[i];
		struct enpu_cs_tensor *t[5];
		union npu_cmd *dst;

		if (!j || !job_fits(npu, j, c, missing_regions(j, op))) {
			j = job_open(npu);
			if (!j)
				return ERT_STATUS_OUT_OF_MEMORY;
		}
		if (j->len + c->c.hdr.size > j->cap) {
			size_t cap = j->cap * 2 > j->len + c->c.hdr.size ? j->cap * 2
									: j->len + c->c.hdr.size;
			uint8_t *cs = realloc(j->cs, cap);

			if (!cs)
				return ERT_STATUS_OUT_OF_MEMORY;
			j->cs = cs;
			j->cap = cap;
		}
		dst = (union npu_cmd *)(j->cs + j->len);
		memcpy(dst, &c->c, c->c.hdr.size);
		uint32_t nt = ert_npu_cmd_tensors(dst, t);

		for (uint32_t k = 0; k < nt; k++) {
			if (t[k]->region == ENPU_CS_NO_REGION)
				continue;
			const struct npu_ref *r = &op->refs[t[k]->region];

			t[k]->region = (uint32_t)job_region(j, r->bo, k == nt - 1);
			t[k]->offset += r->offset;
		}
		j->len += c->c.hdr.size;
		j->n_cmds++;
		j->work += c->work;
	}
	return ERT_OK;
}

static ert_status npu_synchronize(struct ert_backend *be, struct ert_err *err)
{
	struct ert_npu *npu = npu_of(be);
	struct npu_job jobs[16];
	uint32_t done = 0;
	ert_status st = ERT_OK;

	while (done < npu->n_jobs && st == ERT_OK) {
		uint32_t n = 0;
		uint64_t seqno = 0;

		while (done + n < npu->n_jobs && n < 16 && n < npu->info->max_jobs_per_submit) {
			struct npu_job_buf *j = &npu->jobs[done + n];
			struct enpu_cs_header h = {
				.magic = ENPU_CS_MAGIC,
				.version = ENPU_CS_VERSION,
				.num_cmds = (uint16_t)j->n_cmds,
				.size = (uint32_t)j->len,
			};

			memcpy(j->cs, &h, sizeof(h));
			npu->submitted++;
			jobs[n] = (struct npu_job){
				.cs = j->cs,
				.cs_size = (uint32_t)j->len,
				.bos = j->regions,
				.n_bos = j->n_regions,
				.bo_flags = j->region_flags,
				.flags = npu->submitted == npu->hang_job ? ENPU_JOB_TEST_HANG : 0,
			};
			n++;
		}
		st = npu_submit(npu->dev, jobs, n, &seqno, err);
		ert_probe_npu_submit(n, seqno, st);
		if (st == ERT_OK) {
			npu->last_seqno = seqno;
			npu->in_flight = true;
		}
		done += n;
	}
	npu->n_jobs = 0;
	if (npu->in_flight) {
		/* after a refused SUBMIT, drain what went before but report the refusal */
		struct ert_err drained;
		ert_status ws;

		ert_probe_npu_wait_start(npu->last_seqno);
		ws = npu_wait(npu->dev, npu->last_seqno, NPU_WAIT_NS, st == ERT_OK ? err : &drained);
		ert_probe_npu_wait_end(npu->last_seqno, ws);
		npu->in_flight = false;
		if (st == ERT_OK)
			st = ws;
	}
	return st;
}

static size_t npu_resident_bytes(struct ert_backend *be)
{
	return npu_of(be)->resident;
}

static void npu_destroy(struct ert_backend *be)
{
	struct ert_npu *npu = npu_of(be);
	struct ert_err err;

	if (npu->in_flight)
		npu_wait(npu->dev, npu->last_seqno, NPU_WAIT_NS, &err);
	while (npu->bos)
		bo_unlink_free(npu, npu->bos);
	for (uint32_t i = 0; i < npu->cap_jobs; i++)
		free(npu->jobs[i].cs);
	free(npu->jobs);
	free(npu->consts);
	npu_dev_close(npu->dev);
	free(npu);
	free(be);
}

static const struct ert_backend_ops npu_ops = {
	.abi_version = ERT_BACKEND_ABI_VERSION,
	.name = "npu",
	.supports_op = npu_supports_op,
	.buffer_type = npu_buffer_type,
	.buffer_alloc = npu_buffer_alloc,
	.buffer_free = npu_buffer_free,
	.buffer_export_fd = npu_buffer_export_fd,
	.prepare = npu_prepare,
	.compute = npu_compute,
	.release = npu_release,
	.synchronize = npu_synchronize,
	.destroy = npu_destroy,
	.resident_bytes = npu_resident_bytes,
	/* no copied_bytes: every tensor it touches is used in place (see above) */
	/* a job costs a submission and a wait: tens of microseconds on a board */
	.min_island_macs = 200000,
};

/* Say once per process that the NPU is simulated. */
static void note_simulated(const struct npu_dev_info *info)
{
	static int said;

	if (!info->simulated || said || getenv("ERT_QUIET"))
		return;
	said = 1;
	fprintf(stderr, "edgert: no enpu device found: running NPU command streams on the userspace simulator\n");
}

static ert_status npu_create(const ert_config *cfg, enum npu_dev_mode mode,
			     struct ert_backend **out, struct ert_err *err)
{
	struct ert_backend *be = calloc(1, sizeof(*be));
	struct ert_npu *npu = calloc(1, sizeof(*npu));
	const char *hang = getenv("ERT_NPU_TEST_HANG");
	ert_status st;

	(void)cfg;
	if (!be || !npu) {
		free(be);
		free(npu);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = npu_dev_open(mode, &npu->dev, err);
	if (st != ERT_OK) {
		free(be);
		free(npu);
		return st;
	}
	npu->info = npu_dev_info(npu->dev);
	npu->hang_job = hang ? strtoull(hang, NULL, 10) : 0;
	note_simulated(npu->info);
	be->ops = &npu_ops;
	be->type = ERT_BACKEND_NPU;
	be->ctx = npu;
	*out = be;
	return ERT_OK;
}

ert_status ert_npu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err);
ert_status ert_npu_backend_probe(const ert_config *cfg, struct ert_backend **out,
				 struct ert_err *err);

ert_status ert_npu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err)
{
	return npu_create(cfg, NPU_DEV_ANY, out, err);
}

ert_status ert_npu_backend_probe(const ert_config *cfg, struct ert_backend **out,
				 struct ert_err *err)
{
	return npu_create(cfg, NPU_DEV_HW, out, err);
}
