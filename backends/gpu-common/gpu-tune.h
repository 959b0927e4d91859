/* SPDX-License-Identifier: MIT */
/*
 * gpu-tune.h — the part of GPU kernel autotuning that no GPU API owns, for
 * OpenCL now and Vulkan later: which launch configurations a mode tries
 * (ert_config.tune), the table of choices keyed by kernel, source and shape,
 * and its bytes in a cache file. The backend times the candidates on its
 * device (OpenCL: profiling events) and keeps the table in its cache file.
 *
 * A launch to tune is described by its space: one or more variants (kernels
 * of the same arguments computing the same thing, such as GEMM tiles), each
 * with its global and local sizes, and whether the local size is free (the
 * kernel has no required work-group size) or fixed. A candidate is a variant
 * and a local size; candidate 0 is always the built-in choice (variant 0,
 * its local size), which ERT_TUNE_NONE runs without timing anything.
 *
 * The table is keyed by (kernel name, source hash, shape hash): the source
 * hash changes when the kernel's program does, and the shape hash is the
 * backend's digest of everything about the launch but its buffers (sizes,
 * strides, flags). The device and driver are the cache file's key. Nothing
 * read from a file is trusted: an entry is used only when its choice is one
 * of the candidates this build offers for that launch (ert_tune_valid).
 */
#ifndef ERT_GPU_TUNE_H
#define ERT_GPU_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "edgert.h"

#define ERT_TUNE_MAX_VARIANTS 4
#define ERT_TUNE_MAX_CANDIDATES 32
#define ERT_TUNE_KERNEL_NAME 40      /* bytes of a kernel name, with its NUL */

struct ert_tune_variant {
	uint32_t dims;                /* 1..3 */
	size_t gws[3];                /* work-items the kernel needs, per dim */
	size_t lws[3];                /* its built-in local size */
	bool free_lws;                /* may the local size change (no reqd_work_group_size)? */
	size_t max_wg;                /* the most work-items a group of it may have */
};

struct ert_tune_space {
	struct ert_tune_variant v[ERT_TUNE_MAX_VARIANTS];
	uint32_t n;                   /* 1..ERT_TUNE_MAX_VARIANTS */
	/* the API has no "driver's choice" of local size (Vulkan): WIDE does not offer one */
	bool need_lws;
};

/* A variant and its local size (lws[0] == 0: the driver chooses, NULL to the API). */
struct ert_tune_cand {
	uint16_t variant;
	uint16_t lws[3];
};

/*
 * The candidates @mode tries for @sp, the built-in choice first; returns how
 * many (at most @max). NONE gives the built-in choice alone. FAST: every
 * variant at its built-in size, and for free 1-D sizes two doublings of it;
 * NORMAL: every power of two from 32 up to the variant's limit; WIDE:
 * NORMAL's, 16 and the driver's choice. Sizes far above the work there is
 * are left out.
 */
uint32_t ert_tune_candidates(ert_tune mode, const struct ert_tune_space *sp,
			     struct ert_tune_cand *out, uint32_t max);
/* Timed runs of each candidate (after one untimed run of the first). */
uint32_t ert_tune_repeats(ert_tune mode);
/*
 * Does @mode time candidates on a device that is (@cpu_device) or is not a
 * CPU implementation (Vulkan's PHYSICAL_DEVICE_TYPE_CPU such as lavapipe,
 * OpenCL's CL_DEVICE_TYPE_CPU such as PoCL)? The policy: NONE never times;
 * FAST, the default, does not time on a CPU device, where every candidate is
 * a JIT compile and runs at CPU speed (seconds a launch shape), so a launch
 * there takes a table entry that serves (one timed under NORMAL or WIDE) or
 * else its built-in choice; NORMAL and WIDE time on every device.
 */
bool ert_tune_times(ert_tune mode, bool cpu_device);
/* Is @c a candidate of @sp under any mode? Entries read from a file must be. */
bool ert_tune_valid(const struct ert_tune_space *sp, const struct ert_tune_cand *c);
/* The global size of @c, per dim: the variant's, rounded up to a multiple of its local size. */
void ert_tune_global(const struct ert_tune_space *sp, const struct ert_tune_cand *c,
		     size_t gws_out[3]);

/* "fast", "none", "normal", "wide"; NULL for a value out of range. */
const char *ert_tune_mode_name(ert_tune mode);
/* The mode named @name; false when there is none. */
bool ert_tune_mode_parse(const char *name, ert_tune *out);

struct ert_tune_key {
	char kernel[ERT_TUNE_KERNEL_NAME];
	uint64_t source;
	uint64_t shape;
};

struct ert_tune_entry {
	struct ert_tune_key key;
	struct ert_tune_cand best;
	uint8_t mode;                 /* the ert_tune it was chosen under */
	uint32_t ns;                  /* its time, for people reading the file */
};

struct ert_tune_table {
	struct ert_tune_entry *e;
	uint32_t n, cap;
	bool dirty;                   /* changed since it was read or written */
};

/*
 * The entry of @t for @k that serves @mode for @sp, or NULL: none, one chosen
 * under a narrower mode (to be tuned again), or one whose choice is not a
 * candidate of @sp under any mode (a damaged or foreign entry: *@refused is
 * then set, else cleared).
 */
const struct ert_tune_entry *ert_tune_lookup(const struct ert_tune_table *t,
					     const struct ert_tune_key *k,
					     const struct ert_tune_space *sp, ert_tune mode,
					     bool *refused);
/* The entry for @k, or NULL. */
struct ert_tune_entry *ert_tune_find(const struct ert_tune_table *t, const struct ert_tune_key *k);
/* Add or replace @k's entry; false when out of memory (the table is unchanged). */
bool ert_tune_put(struct ert_tune_table *t, const struct ert_tune_key *k,
		  const struct ert_tune_cand *best, ert_tune mode, uint32_t ns);
void ert_tune_table_free(struct ert_tune_table *t);

/*
 * The table as bytes (host order; the file around it carries the checksum
 * and the device key): u32 count, then per entry u32 name length + name,
 * u64 source, u64 shape, u32 mode, u32 variant, u32 lws x3, u32 ns.
 * Writes into @buf when @cap is enough; returns the size either way.
 */
size_t ert_tune_serialize(const struct ert_tune_table *t, unsigned char *buf, size_t cap);
/*
 * Read a table written by ert_tune_serialize from @size bytes at @buf into
 * @t (entries added or replaced); sets *@used to the bytes it took. NULL, or
 * the reason the bytes are not a table ("damaged (tuning entry)", "out of
 * memory"); then @t holds what it held before (bar an out-of-memory
 * while merging, which leaves some of the entries added).
 */
const char *ert_tune_parse(struct ert_tune_table *t, const unsigned char *buf, size_t size,
			   size_t *used);

/* FNV-1a (64 bits) of @size bytes at @data, continuing from @h (ERT_HASH64_INIT to start). */
#define ERT_HASH64_INIT 0xcbf29ce484222325ull
uint64_t ert_hash64(uint64_t h, const void *data, size_t size);

/*
 * A reader over bytes read from a file (the tuning table, OpenCL's cache
 * file): every take checks what is left. Taking more than is left sets @bad
 * and returns NULL (the numbers: 0), as does every take after it, so a parser
 * may take a run of fields and check @bad once. Numbers are in host order.
 */
struct ert_rd {
	const unsigned char *p;
	size_t left;
	bool bad;
};

/* The next @n bytes, or NULL (and @bad) when fewer are left. */
const void *ert_rd_take(struct ert_rd *r, size_t n);
uint32_t ert_rd_u32(struct ert_rd *r);
uint64_t ert_rd_u64(struct ert_rd *r);

#endif /* ERT_GPU_TUNE_H */
