/* SPDX-License-Identifier: MIT */
/*
 * The memory planner: every arena tensor (or group of tensors sharing storage)
 * and every step's workspace is a block with a lifetime [first, last] in steps.
 * Blocks are placed largest first at the lowest offset that overlaps no placed
 * block alive at the same time ("greedy by size"), which keeps the arena close
 * to the peak of live bytes. Each arena (buffer type) is planned on its own:
 * blocks of different arenas never share bytes, whatever their lifetimes.
 * A tensor's mirror in another arena (a copy at a split, copies.c) is a block
 * of that arena, alive from the step before which it is filled to its last
 * reader.
 */
#include <stdint.h>
#include <stdlib.h>

#include "session/session-impl.h"

#define ALIGN 64

struct block {
	size_t size;
	size_t offset;
	int32_t first, last;
	enum { BLOCK_TENSOR, BLOCK_WORKSPACE, BLOCK_MIRROR } kind;
	uint32_t index;   /* root tensor, step or mirror */
	uint32_t arena;
};

static int by_size_desc(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->first - y->first;
}

static int by_offset(const void *a, const void *b)
{
	const struct block *x = *(const struct block *const *)a;
	const struct block *y = *(const struct block *const *)b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* false when @v rounded up does not fit a size_t */
static bool align_up(size_t v, size_t *out)
{
	if (v > SIZE_MAX - (ALIGN - 1))
		return false;
	*out = (v + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	return true;
}

ert_status ert_memplan_run(struct ert_session *s, struct ert_plan *p, struct ert_err *err)
{
	const struct ert_graph *g = s->model->graph;
	uint32_t nb = 0, cap = g->n_tensors + p->n_steps + p->n_mirrors;
	struct block *blocks = calloc(cap ? cap : 1, sizeof(*blocks));
	struct block **live = calloc(cap ? cap : 1, sizeof(*live));

	if (!blocks || !live) {
		free(blocks);
		free(live);
		ert_err_set(err, "out of memory planning memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	for (uint32_t a = 0; a < p->n_arenas; a++)
		p->arenas[a].size = 0;
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ert_plan_tensor *pt = &p->t[t];

		if (pt->kind != ERT_PT_ARENA || pt->root != (int32_t)t)
			continue;
		blocks[nb] = (struct block){ 0, 0, pt->first, pt->last, BLOCK_TENSOR, t, pt->arena };
		size_t bytes = ert_plan_stored_bytes(&pt->v, pt->fp16);

		if (!align_up(bytes ? bytes : 1, &blocks[nb++].size))
			goto overflow;
	}
	/* A tensor aliased by a later view lives until the view's last reader. */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ert_plan_tensor *pt = &p->t[t];

		if (pt->kind != ERT_PT_ARENA || pt->root == (int32_t)t)
			continue;
		for (uint32_t b = 0; b < nb; b++)
			if (blocks[b].index == (uint32_t)pt->root && pt->last > blocks[b].last)
				blocks[b].last = pt->last;
	}
	for (uint32_t i = 0; i < p->n_steps; i++) {
		if (!p->steps[i].x.workspace_size)
			continue;
		blocks[nb] = (struct block){ 0, 0, (int32_t)i, (int32_t)i, BLOCK_WORKSPACE, i,
					     p->steps[i].arena };
		if (!align_up(p->steps[i].x.workspace_size, &blocks[nb++].size))
			goto overflow;
	}
	for (uint32_t m = 0; m < p->n_mirrors; m++) {
		const struct ert_plan_mirror *mr = &p->mirrors[m];

		blocks[nb] = (struct block){ 0, 0, mr->first, mr->last, BLOCK_MIRROR, m, mr->arena };
		size_t bytes = ert_plan_stored_bytes(&mr->v, mr->fp16);

		if (!align_up(bytes ? bytes : 1, &blocks[nb++].size))
			goto overflow;
	}

	qsort(blocks, nb, sizeof(*blocks), by_size_desc);
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t n_live = 0;
		size_t offset = 0;

		for (uint32_t o = 0; o < b; o++)
			if (blocks[o].arena == blocks[b].arena && blocks[o].first <= blocks[b].last &&
			    blocks[b].first <= blocks[o].last)
				live[n_live++] = &blocks[o];
		qsort(live, n_live, sizeof(*live), by_offset);
		/* placed blocks end within SIZE_MAX: only the new end can overflow */
		for (uint32_t o = 0; o < n_live; o++) {
			if (live[o]->offset >= offset && live[o]->offset - offset >= blocks[b].size)
				break;
			if (live[o]->offset + live[o]->size > offset)
				offset = live[o]->offset + live[o]->size;
		}
		if (offset > SIZE_MAX - blocks[b].size)
			goto overflow;
		blocks[b].offset = offset;
		if (offset + blocks[b].size > p->arenas[blocks[b].arena].size)
			p->arenas[blocks[b].arena].size = offset + blocks[b].size;
	}
	for (uint32_t b = 0; b < nb; b++) {
		if (blocks[b].kind == BLOCK_TENSOR)
			p->t[blocks[b].index].offset = blocks[b].offset;
		else if (blocks[b].kind == BLOCK_WORKSPACE)
			p->steps[blocks[b].index].ws_offset = blocks[b].offset;
		else
			p->mirrors[blocks[b].index].offset = blocks[b].offset;
	}
	free(blocks);
	free(live);
	return ERT_OK;
overflow:
	free(blocks);
	free(live);
	ert_err_set(err, "the memory plan needs more than %zu bytes", SIZE_MAX);
	return ERT_STATUS_OUT_OF_MEMORY;
}
