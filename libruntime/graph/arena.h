/* SPDX-License-Identifier: MIT */
/* A bump allocator for objects that live as long as their owner. */
#ifndef ERT_ARENA_H
#define ERT_ARENA_H

#include <stddef.h>

struct ert_arena;

struct ert_arena *ert_arena_create(void);
/* Accepts NULL. */
void ert_arena_destroy(struct ert_arena *a);
/* 16-byte aligned, zeroed; NULL on out-of-memory. */
void *ert_arena_alloc(struct ert_arena *a, size_t size);

#endif
