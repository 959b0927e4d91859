/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>

#include "graph/arena.h"

#define CHUNK_SIZE (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct ert_arena {
	struct chunk *head;
};

struct ert_arena *ert_arena_create(void)
{
	return calloc(1, sizeof(struct ert_arena));
}

void ert_arena_destroy(struct ert_arena *a)
{
	if (!a)
		return;
	for (struct chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *ert_arena_alloc(struct ert_arena *a, size_t size)
{
	struct chunk *c = a->head;

	if (size > SIZE_MAX - 15 - sizeof(struct chunk))
		return NULL;
	size = (size + 15) & ~(size_t)15;
	if (!c || c->size - c->used < size) {
		size_t cs = size > CHUNK_SIZE ? size : CHUNK_SIZE;

		c = calloc(1, sizeof(*c) + cs);
		if (!c)
			return NULL;
		c->size = cs;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;

	c->used += size;
	return p;
}
