/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 *
 * enpu command stream: decoder, validator and executor.
 *
 * Written once in freestanding C (no libc, no kernel API) and compiled into
 * enpu.ko, the selftests, the NPU backend's simulator and the fuzz target.
 * The format itself is documented in uapi/drm/enpu_cmdstream.h.
 *
 * Usage: enpu_cs_validate() once on an untrusted stream with the sizes of
 * the buffers its regions name; then, as often as wanted, enpu_cs_execute()
 * on the same bytes with the buffers' base addresses. The executor trusts
 * the stream to have been validated against buffers at least as large as
 * the ones it is given, and is memory-safe for any buffer contents.
 */
#ifndef _ENPU_CS_H_
#define _ENPU_CS_H_

#include "enpu_cs_compat.h"
#include "../uapi/drm/enpu_cmdstream.h"

/** ENPU_CS_MAX_REGIONS - most regions (buffers) one stream may name */
#define ENPU_CS_MAX_REGIONS	64

/**
 * struct enpu_cs_info - what enpu_cs_validate() learnt about a stream
 * @num_cmds: number of commands
 * @op_count: commands per opcode
 * @read_mask: bit r set when region r is read
 * @write_mask: bit r set when region r is written
 * @work: estimated work, in the units of ENPU_CS_MAX_WORK (about one
 *	multiply-accumulate each); at most ENPU_CS_MAX_WORK
 */
struct enpu_cs_info {
	u32 num_cmds;
	u32 op_count[ENPU_OP_COUNT];
	u64 read_mask;
	u64 write_mask;
	u64 work;
};

/**
 * enpu_cs_validate() - decode and check a command stream
 * @stream: the stream bytes; not modified, not retained
 * @len: number of bytes at @stream
 * @region_size: byte size of each region's buffer; not retained
 * @num_regions: entries in @region_size, at most ENPU_CS_MAX_REGIONS
 * @info: filled on success; may be NULL
 *
 * Return: 0, -EINVAL for a malformed stream or parameter, -ERANGE for a
 * region past its buffer or an extent that overflows, -E2BIG for a stream
 * whose work exceeds ENPU_CS_MAX_WORK.
 */
int enpu_cs_validate(const void *stream, u64 len, const u64 *region_size,
		     u32 num_regions, struct enpu_cs_info *info);

/**
 * typedef enpu_cs_yield_fn - called between units of work by the executor
 * @arg: the caller's cookie
 *
 * Return: 0 to go on, non-zero to abort execution.
 */
typedef int (*enpu_cs_yield_fn)(void *arg);

/**
 * enpu_cs_execute() - run a validated command stream
 * @stream: a stream that enpu_cs_validate() accepted
 * @region: base address of each region's buffer, as many as validated
 * @num_regions: entries in @region
 * @yield: called after each command and each output row, and inside the
 *	inner loops whenever 64K units of work (see ENPU_CS_MAX_WORK) have
 *	accumulated since the last call, so never more than about 128K units
 *	apart whatever the tensors' shapes; may be NULL
 * @arg: passed to @yield
 *
 * Return: 0, or -ECANCELED when @yield asked to stop.
 */
int enpu_cs_execute(const void *stream, void *const *region, u32 num_regions,
		    enpu_cs_yield_fn yield, void *arg);

#endif /* _ENPU_CS_H_ */
