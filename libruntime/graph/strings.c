/* SPDX-License-Identifier: MIT */
/* String tensors: the run heap and packed constant blocks (ert-strings.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ert-strings.h"

struct str_block {
	struct str_block *next;
	size_t size, used;
	char data[];
};

struct ert_str_heap {
	struct str_block *head;   /* the block strings are cut from; older ones follow */
	size_t total;             /* bytes of every block: the next reset keeps this much */
};

struct ert_str_heap *ert_str_heap_create(void)
{
	return calloc(1, sizeof(struct ert_str_heap));
}

static void free_blocks(struct str_block *b)
{
	while (b) {
		struct str_block *next = b->next;

		free(b);
		b = next;
	}
}

void ert_str_heap_destroy(struct ert_str_heap *h)
{
	if (!h)
		return;
	free_blocks(h->head);
	free(h);
}

static struct str_block *new_block(size_t size)
{
	struct str_block *b;

	if (size > SIZE_MAX - sizeof(*b))
		return NULL;
	b = malloc(sizeof(*b) + size);
	if (b) {
		b->next = NULL;
		b->size = size;
		b->used = 0;
	}
	return b;
}

void ert_str_heap_reset(struct ert_str_heap *h)
{
	struct str_block *b;

	if (!h || !h->head)
		return;
	/* several blocks: one of their total size serves the next run like this one */
	if (h->head->next && (b = new_block(h->total))) {
		free_blocks(h->head);
		h->head = b;
	}
	for (b = h->head; b; b = b->next)
		b->used = 0;
}

char *ert_str_heap_alloc(struct ert_str_heap *h, size_t len)
{
	struct str_block *b = h->head;
	size_t need = len + 1;

	if (len == SIZE_MAX)
		return NULL;
	if (!b || b->size - b->used < need) {
		size_t size = need > 4096 ? need : 4096;

		if (b && b->size <= (SIZE_MAX - sizeof(*b)) / 2 && 2 * b->size > size)
			size = 2 * b->size;
		b = new_block(size);
		if (!b)
			return NULL;
		b->next = h->head;
		h->head = b;
		h->total += size;
	}
	char *p = b->data + b->used;

	b->used += need;
	p[len] = '\0';
	return p;
}

ert_string *ert_strings_pack(const ert_string *src, size_t n, size_t *bytes_out)
{
	size_t bytes, head;
	ert_string *out;
	char *p;

	if (n > SIZE_MAX / sizeof(*out))
		return NULL;
	head = bytes = n * sizeof(*out);
	for (size_t i = 0; i < n; i++) {
		if (src[i].len >= SIZE_MAX - bytes)
			return NULL;
		bytes += (size_t)src[i].len + 1;
	}
	out = malloc(bytes ? bytes : 1);
	if (!out)
		return NULL;
	p = (char *)out + head;
	for (size_t i = 0; i < n; i++) {
		if (src[i].len)
			memcpy(p, src[i].data, (size_t)src[i].len);
		p[src[i].len] = '\0';
		out[i].data = p;
		out[i].len = src[i].len;
		p += src[i].len + 1;
	}
	if (bytes_out)
		*bytes_out = bytes;
	return out;
}

int ert_string_cmp(const ert_string *a, const ert_string *b)
{
	size_t n = a->len < b->len ? (size_t)a->len : (size_t)b->len;
	int c = n ? memcmp(a->data, b->data, n) : 0;

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}
