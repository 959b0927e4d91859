/* SPDX-License-Identifier: MIT */
/* The tile configuration of the AMX kernels (amx-tiles.h). */
#include <immintrin.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "cpu/amx-tiles.h"

/* The 64-byte operand of ldtilecfg (palette 1). */
struct tile_config {
	uint8_t palette;
	uint8_t start_row;
	uint8_t reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

__thread bool ert_amx_configured;

void ert_amx_configure(void)
{
	alignas(64) struct tile_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.palette = 1;
	for (int t = 0; t < 7; t++) {
		cfg.colsb[t] = 64;
		cfg.rows[t] = 16;
	}
	ERT_AMX_MEMORY_BARRIER();
	_tile_loadconfig(&cfg);
	ert_amx_configured = true;
}
