/* SPDX-License-Identifier: MIT */
/*
 * Work items [0, count) cut into one home part per thread. A thread takes
 * items from the front of its own part and, when that is empty, from the
 * back of the others' (stealing what their owners would have reached
 * last). Thread i takes part i of every job, so what a thread wrote in one
 * op is mostly what it reads in the next, from its own cache, and the
 * scratch it overwrites is mostly its own: on Sapphire Rapids a thread
 * working on lines another core had last written spent 5-15 % longer on
 * the same work (docs/performance.md, "Where two threads lose"). Handing
 * out items from one shared counter instead gave each thread a different
 * share every op. Stealing keeps the balance the shared counter had.
 *
 * A part is its [lo, hi) in one 64-bit word (lo in the low half), changed
 * by compare-and-swap: the owner moves lo up, a thief moves hi down.
 */
#ifndef ERT_CPU_WORK_PARTS_H
#define ERT_CPU_WORK_PARTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ert_work_part {
	_Alignas(64) atomic_uint_fast64_t lohi;
};

/* In a loop that spins on what another thread will write: a pause for the core. */
static inline void ert_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Most items a job can be cut into (they are counted in 32 bits). */
#define ERT_WORK_ITEMS_MAX UINT32_MAX

/* Part i of n gets items [i * count / n, (i + 1) * count / n). */
static inline void ert_work_parts_split(struct ert_work_part *parts, uint32_t n, uint64_t count)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t lo = count * i / n, hi = count * (i + 1) / n;

		atomic_store_explicit(&parts[i].lohi, hi << 32 | lo, memory_order_relaxed);
	}
}

/*
 * An item of @part: the owner's next, from its front (@back false), or a
 * thief's, from its back; false once the part is empty.
 */
static inline bool ert_work_take_end(struct ert_work_part *part, bool back, uint32_t *item)
{
	uint_fast64_t v = atomic_load_explicit(&part->lohi, memory_order_relaxed);

	for (;;) {
		uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);

		if (lo >= hi)
			return false;
		if (atomic_compare_exchange_weak(&part->lohi, &v,
						 back ? (uint_fast64_t)(hi - 1) << 32 | lo
						      : (uint_fast64_t)hi << 32 | (lo + 1))) {
			*item = back ? hi - 1 : lo;
			return true;
		}
	}
}

/*
 * Thread @self's next item of a job cut into @n parts: its own part's front
 * first, then the other parts' backs, nearest first. false: none left.
 */
static inline bool ert_work_take(struct ert_work_part *parts, uint32_t n, uint32_t self,
				 uint32_t *item)
{
	if (self < n && ert_work_take_end(&parts[self], false, item))
		return true;
	for (uint32_t k = 1; k <= n; k++)
		if (ert_work_take_end(&parts[(self + k) % n], true, item))
			return true;
	return false;
}

#endif /* ERT_CPU_WORK_PARTS_H */
