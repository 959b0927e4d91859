/* SPDX-License-Identifier: MIT */
/*
 * gpu-share.h — device objects the GPU backends' sessions share (OpenCL's
 * programs, Vulkan's pipelines, both's uploaded constants), neither depending on
 * the API: a table per open device of entries found by a key of bytes and
 * counted, and a session's holds on a table's entries, counted by its steps.
 *
 * A session asks its holds first (no lock: a session is prepared on one
 * thread), then the device's table under the table's lock, which is held
 * while a missing entry is made: two sessions asking for one object at once
 * make it once, the second waiting. Each session holds an entry once, however
 * many of its steps use it; the last session to let go frees it (outside the
 * lock: nothing can find it any more).
 */
#ifndef ERT_GPU_SHARE_H
#define ERT_GPU_SHARE_H

#include <pthread.h>
#include <stddef.h>

#include "ert-backend-impl.h"

/* Keys are compared byte for byte: zero the padding of a key struct. */
#define ERT_GPU_SHARE_KEY_MAX 32

/* An entry: the backend's object (obj, the table's obj_size bytes), its key and holders. */
struct ert_gpu_shared {
	struct ert_gpu_shared *next;     /* the table's (under its lock) */
	uint32_t refs;                   /* sessions holding it (under the table's lock) */
	uint32_t key_len;
	unsigned char key[ERT_GPU_SHARE_KEY_MAX];
	size_t bytes;                    /* device memory it takes, as make() said (0: none) */
	_Alignas(max_align_t) unsigned char obj[];
};

/* What a backend's make() fills: @obj (obj_size bytes, zeroed) and *@bytes. */
typedef ert_status (*ert_gpu_make_fn)(void *arg, void *obj, size_t *bytes, struct ert_err *err);

struct ert_gpu_share {
	/* protects head and every entry's refs; held while an entry is made */
	pthread_mutex_t lock;
	struct ert_gpu_shared *head;
	size_t obj_size;
	void (*free_obj)(void *ctx, void *obj);
	void *ctx;                       /* free_obj's first argument (the device) */
};

/* An empty table of objects of @obj_size bytes freed with @free_obj(@ctx, obj). False: no lock. */
bool ert_gpu_share_init(struct ert_gpu_share *t, size_t obj_size,
			void (*free_obj)(void *ctx, void *obj), void *ctx);
/* Free what is left (nothing unless a session leaked a hold) and the lock. */
void ert_gpu_share_fini(struct ert_gpu_share *t);
/* Entries in the table (for tests). */
uint32_t ert_gpu_share_count(struct ert_gpu_share *t);

/* A session's hold on an entry, counted by its steps. */
struct ert_gpu_hold {
	struct ert_gpu_hold *next;
	struct ert_gpu_shared *e;
	uint32_t refs;
};

/* A session's holds on one table's entries. */
struct ert_gpu_holds {
	struct ert_gpu_hold *head;
	size_t bytes;                    /* the entries' bytes (the session's resident bytes) */
};

/* Where ert_gpu_hold_get() found the object. */
enum ert_gpu_found {
	ERT_GPU_HELD,                    /* the session held it already */
	ERT_GPU_SHARED,                  /* another session of the device had made it */
	ERT_GPU_MADE,                    /* nobody had it: made now by make() */
};

/*
 * The session's hold on the object of @key (@key_len bytes, at most
 * ERT_GPU_SHARE_KEY_MAX), one more reference on it: the session's own,
 * else the table's, else made by @make(@arg, ...) and kept in the table.
 * *@found_out says which. @make's failure is returned, nothing kept.
 */
ert_status ert_gpu_hold_get(struct ert_gpu_holds *h, struct ert_gpu_share *t, const void *key,
			    size_t key_len, ert_gpu_make_fn make, void *arg,
			    struct ert_gpu_hold **out, enum ert_gpu_found *found_out,
			    struct ert_err *err);
/* Drop a reference (NULL: nothing); the session's last lets the table's entry go. */
void ert_gpu_hold_put(struct ert_gpu_holds *h, struct ert_gpu_share *t, struct ert_gpu_hold *k);
/* Let go of every hold of the session (when it goes: what its steps still hold). */
void ert_gpu_holds_drop(struct ert_gpu_holds *h, struct ert_gpu_share *t);

/* The backend's object of hold @k. */
static inline void *ert_gpu_hold_obj(const struct ert_gpu_hold *k)
{
	return k->e->obj;
}

/* ---- uploaded constants, the two backends' ---- */

/*
 * The key of a constant's upload: its host bytes' address and size, and its
 * storage (float16 of float32 data, or as is). A safe key for the same
 * reason as the CPU's packed weights: a constant's bytes (the mapped model,
 * or a plan's folded value) outlive every step that reads them, and an
 * upload lives only as long as such steps hold it, in any session: while it
 * is held its host bytes are alive, so no other bytes can have their address.
 */
struct ert_gpu_const_key {
	const void *data;
	uint64_t size;
	uint32_t f16;
	uint32_t zero;                   /* padding, zero */
};

static inline struct ert_gpu_const_key ert_gpu_const_key(const void *data, size_t size, bool f16)
{
	return (struct ert_gpu_const_key){ data, size, f16, 0 };
}

/*
 * The bytes to upload for a constant: @data itself, or with @f16 (float32
 * data stored as float16) a converted copy in *@half_out to free after
 * the upload; *@stored_out bytes. NULL when out of memory.
 */
const void *ert_gpu_const_stored(const void *data, size_t size, bool f16, void **half_out,
				 size_t *stored_out);

#endif
