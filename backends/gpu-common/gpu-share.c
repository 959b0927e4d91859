/* SPDX-License-Identifier: MIT */
/* Device objects shared by the sessions of a process (gpu-share.h). */
#include <stdlib.h>
#include <string.h>

#include "gpu-common/gpu-share.h"

bool ert_gpu_share_init(struct ert_gpu_share *t, size_t obj_size,
			void (*free_obj)(void *ctx, void *obj), void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->obj_size = obj_size;
	t->free_obj = free_obj;
	t->ctx = ctx;
	return pthread_mutex_init(&t->lock, NULL) == 0;
}

void ert_gpu_share_fini(struct ert_gpu_share *t)
{
	while (t->head) {
		struct ert_gpu_shared *e = t->head;

		t->head = e->next;
		t->free_obj(t->ctx, e->obj);
		free(e);
	}
	pthread_mutex_destroy(&t->lock);
}

uint32_t ert_gpu_share_count(struct ert_gpu_share *t)
{
	uint32_t n = 0;

	pthread_mutex_lock(&t->lock);
	for (const struct ert_gpu_shared *e = t->head; e; e = e->next)
		n++;
	pthread_mutex_unlock(&t->lock);
	return n;
}

static bool same_key(const struct ert_gpu_shared *e, const void *key, size_t key_len)
{
	return e->key_len == key_len && !memcmp(e->key, key, key_len);
}

/* The table's entry of @key with one more holder, made when there is none. */
static ert_status share_get(struct ert_gpu_share *t, const void *key, size_t key_len,
			    ert_gpu_make_fn make, void *arg, struct ert_gpu_shared **out,
			    bool *shared, struct ert_err *err)
{
	struct ert_gpu_shared *e;
	ert_status st;

	/* held while the object is made: a second session asking for it waits and shares it */
	pthread_mutex_lock(&t->lock);
	for (e = t->head; e; e = e->next) {
		if (same_key(e, key, key_len)) {
			e->refs++;
			pthread_mutex_unlock(&t->lock);
			*shared = true;
			*out = e;
			return ERT_OK;
		}
	}
	e = calloc(1, sizeof(*e) + t->obj_size);
	if (!e) {
		pthread_mutex_unlock(&t->lock);
		ert_err_set(err, "out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = make(arg, e->obj, &e->bytes, err);
	if (st != ERT_OK) {
		pthread_mutex_unlock(&t->lock);
		free(e);
		return st;
	}
	memcpy(e->key, key, key_len);
	e->key_len = (uint32_t)key_len;
	e->refs = 1;
	e->next = t->head;
	t->head = e;
	pthread_mutex_unlock(&t->lock);
	*shared = false;
	*out = e;
	return ERT_OK;
}

static void share_put(struct ert_gpu_share *t, struct ert_gpu_shared *e)
{
	struct ert_gpu_shared **pp;
	bool last;

	pthread_mutex_lock(&t->lock);
	last = --e->refs == 0;
	if (last) {
		for (pp = &t->head; *pp; pp = &(*pp)->next) {
			if (*pp == e) {
				*pp = e->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
	/* unlinked: no other session can find it any more */
	if (last) {
		t->free_obj(t->ctx, e->obj);
		free(e);
	}
}

ert_status ert_gpu_hold_get(struct ert_gpu_holds *h, struct ert_gpu_share *t, const void *key,
			    size_t key_len, ert_gpu_make_fn make, void *arg,
			    struct ert_gpu_hold **out, enum ert_gpu_found *found_out,
			    struct ert_err *err)
{
	struct ert_gpu_hold *k;
	bool shared = false;
	ert_status st;

	if (key_len > ERT_GPU_SHARE_KEY_MAX) {
		ert_err_set(err, "a sharing key of %zu bytes (at most %d)", key_len,
			    ERT_GPU_SHARE_KEY_MAX);
		return ERT_STATUS_INTERNAL;
	}
	for (k = h->head; k; k = k->next) {
		if (same_key(k->e, key, key_len)) {
			k->refs++;
			*found_out = ERT_GPU_HELD;
			*out = k;
			return ERT_OK;
		}
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		ert_err_set(err, "out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = share_get(t, key, key_len, make, arg, &k->e, &shared, err);
	if (st != ERT_OK) {
		free(k);
		return st;
	}
	k->refs = 1;
	k->next = h->head;
	h->head = k;
	h->bytes += k->e->bytes;
	*found_out = shared ? ERT_GPU_SHARED : ERT_GPU_MADE;
	*out = k;
	return ERT_OK;
}

void ert_gpu_hold_put(struct ert_gpu_holds *h, struct ert_gpu_share *t, struct ert_gpu_hold *k)
{
	struct ert_gpu_hold **pp;

	if (!k || --k->refs)
		return;
	for (pp = &h->head; *pp; pp = &(*pp)->next) {
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	}
	h->bytes -= k->e->bytes;
	share_put(t, k->e);
	free(k);
}

void ert_gpu_holds_drop(struct ert_gpu_holds *h, struct ert_gpu_share *t)
{
	while (h->head) {
		struct ert_gpu_hold *k = h->head;

		h->head = k->next;
		h->bytes -= k->e->bytes;
		share_put(t, k->e);
		free(k);
	}
}

const void *ert_gpu_const_stored(const void *data, size_t size, bool f16, void **half_out,
				 size_t *stored_out)
{
	size_t stored = f16 ? size / 2 : size;
	uint16_t *half;

	*half_out = NULL;
	*stored_out = stored;
	if (!f16 || !stored)
		return data;
	half = malloc(stored);
	if (!half)
		return NULL;
	for (size_t i = 0; i < stored / 2; i++)
		half[i] = ert_fp32_to_fp16(((const float *)data)[i]);
	*half_out = half;
	return half;
}
