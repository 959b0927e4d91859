// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Seed inputs for enpu_cs_fuzz. Random bytes almost never get past the
 * stream header, so the fuzzer starts from valid streams instead: the
 * every-opcode stream of enpu_cs_build_all_ops(), and each of its commands
 * alone. Each file is the fuzzer's input format: four little-endian u16
 * region sizes, then the stream.
 *
 *   enpu_cs_seed DIR
 */
#include <stdio.h>
#include <string.h>

#include "enpu_lib.h"

#define FUZZ_REGIONS 4

static int write_seed(const char *dir, const char *name, const void *stream, uint32_t len)
{
	uint8_t sizes[2 * FUZZ_REGIONS] = { 0 };
	char path[4096];
	FILE *f;
	int r, ok;

	for (r = 0; r < ENPU_ALL_OPS_REGIONS; r++) {
		sizes[2 * r] = enpu_all_ops_sizes[r] & 0xff;
		sizes[2 * r + 1] = enpu_all_ops_sizes[r] >> 8;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return -1;
	}
	ok = fwrite(sizes, sizeof(sizes), 1, f) == 1 && fwrite(stream, len, 1, f) == 1;
	if (fclose(f) || !ok) {
		perror(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct enpu_cs all, one;
	uint32_t len, off = sizeof(struct enpu_cs_header), i;
	char name[32];

	if (argc != 2) {
		fprintf(stderr, "usage: enpu_cs_seed DIR\n");
		return 2;
	}
	len = enpu_cs_build_all_ops(&all);
	if (write_seed(argv[1], "all-ops", all.buf, len))
		return 1;
	for (i = 0; off < len; i++) {
		const struct enpu_cs_cmd *c = (const void *)(all.buf + off);

		enpu_cs_begin(&one);
		memcpy(enpu_cs_add(&one, c->opcode, c->size), c, c->size);
		snprintf(name, sizeof(name), "cmd-%u-op-%u", i, c->opcode);
		if (write_seed(argv[1], name, one.buf, enpu_cs_end(&one)))
			return 1;
		off += c->size;
	}
	return 0;
}
