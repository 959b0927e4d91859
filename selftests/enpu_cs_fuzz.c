// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * libFuzzer target for the shared command stream code (kmod/enpu_cs.c).
 * Input: four little-endian u16 region sizes, then the stream. Every stream
 * the validator accepts is executed on heap buffers of exactly those sizes,
 * so AddressSanitizer reports any access the validator should have refused.
 *
 *   make enpu-cs-fuzz FUZZ_SECONDS=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enpu_cs.h"

#define NREG 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *region[NREG] = { 0 };
	u64 region_size[NREG];
	uint8_t *stream;
	int r;

	if (size < 2 * NREG)
		return 0;
	for (r = 0; r < NREG; r++)
		region_size[r] = data[2 * r] | data[2 * r + 1] << 8;
	data += 2 * NREG;
	size -= 2 * NREG;
	/* the executor expects the bytes it validated: give it a private copy */
	stream = malloc(size ? size : 1);
	if (!stream)
		return 0;
	memcpy(stream, data, size);
	if (!enpu_cs_validate(stream, size, region_size, NREG, NULL)) {
		for (r = 0; r < NREG; r++)
			region[r] = calloc(1, region_size[r] ? region_size[r] : 1);
		if (region[0] && region[1] && region[2] && region[3])
			enpu_cs_execute(stream, region, NREG, NULL, NULL);
		for (r = 0; r < NREG; r++)
			free(region[r]);
	}
	free(stream);
	return 0;
}
