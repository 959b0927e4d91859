/* SPDX-License-Identifier: MIT */
/*
 * ert-test-malloc-count.h — count allocations while a test says so: malloc,
 * calloc, realloc, aligned_alloc and posix_memalign are interposed (through
 * glibc's __libc_* entry points) and add to `allocations` while `counting`
 * is set. Under ASan, which owns malloc, nothing is interposed
 * (HOOK_MALLOC 0) and tests check only their results. Include from one
 * test program's .c file (it defines malloc and friends).
 */
#ifndef ERT_TEST_MALLOC_COUNT_H
#define ERT_TEST_MALLOC_COUNT_H

#include <stdatomic.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define HOOK_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOOK_MALLOC 0
#endif
#endif
#ifndef HOOK_MALLOC
#define HOOK_MALLOC 1
#endif

static atomic_int counting, allocations;

#if HOOK_MALLOC
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void __libc_free(void *p);

static void count(void)
{
	if (atomic_load(&counting))
		atomic_fetch_add(&allocations, 1);
}

void *malloc(size_t size)
{
	count();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	count();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	count();
	return __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count();
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	count();
	*out = __libc_memalign(align, size);
	return *out ? 0 : 12;
}

void free(void *p)
{
	__libc_free(p);
}
#endif

#endif /* ERT_TEST_MALLOC_COUNT_H */
