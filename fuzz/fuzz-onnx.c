/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for ONNX import with the clean-up passes on: any input must
 * give a valid graph or a status with a message, never a crash, a leak, a hang
 * or undefined behaviour. External data is refused (no model directory), so
 * the input never reaches the file system.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "onnx/onnx-import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ert_onnx_options opt = { .optimize = true };
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	ert_status st = ert_onnx_import_memory(data, size, NULL, &opt, &g, &err);

	if (st == ERT_OK) {
		/* what import hands out must pass validation and hold its bytes */
		volatile uint8_t sink = 0;

		if (ert_graph_validate(g, &err) != ERT_OK) {
			fprintf(stderr, "imported graph does not validate: %s\n", err.msg);
			abort();
		}
		for (uint32_t t = 0; t < g->n_tensors; t++)
			if (g->tensors[t].nbytes)
				sink ^= ((const uint8_t *)g->tensors[t].data)[g->tensors[t].nbytes - 1];
		(void)sink;
		ert_graph_destroy(g);
	} else if (!err.msg[0] || g) {
		fprintf(stderr, "status %d without a message or with a graph\n", (int)st);
		abort();
	}
	return 0;
}
