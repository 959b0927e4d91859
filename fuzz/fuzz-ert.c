/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the .ert loader: any input must give a graph or a status
 * with a message, never a crash, a leak or undefined behaviour.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ert-format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	/* Alternate between the in-place path (64-byte aligned image, as a mapping)
	 * and the copying path (misaligned image) so both are exercised. */
	uint8_t *buf = aligned_alloc(64, ((size + 1 + 63) & ~(size_t)63) + 64);

	if (!buf)
		return 0;
	uint8_t *img = buf + (size & 1);

	if (size)
		memcpy(img, data, size);
	ert_status st = ert_format_load(img, size, &g, &err);

	if (st == ERT_OK) {
		/* touch every constant so ASan sees any pointer outside the image */
		volatile uint8_t sink = 0;

		for (uint32_t t = 0; t < g->n_tensors; t++)
			if (g->tensors[t].nbytes)
				sink ^= ((const uint8_t *)g->tensors[t].data)[g->tensors[t].nbytes - 1];
		(void)sink;
		ert_graph_destroy(g);
	} else if (!err.msg[0] || g) {
		fprintf(stderr, "status %d without a message or with an output graph\n", st);
		abort();
	}
	free(buf);
	return 0;
}
