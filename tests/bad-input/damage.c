/* SPDX-License-Identifier: MIT */
/* Damage kinds: truncation, seeded bit flips, hostile values, runs of 0xff. */
#include <stdlib.h>
#include <string.h>

#include "bad-input.h"
#include "format/format-priv.h"

uint64_t bi_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* The checksum would otherwise stop nearly all damage before the table parsers. */
void bi_ert_reseal(uint8_t *img, size_t size)
{
	if (size < FMT_HEADER_V1 || memcmp(img, FMT_MAGIC, FMT_MAGIC_LEN) != 0)
		return;
	uint32_t hs = fmt_get32(img + FMT_OFF_HEADER_SIZE), ns = fmt_get32(img + FMT_OFF_NSECTIONS);

	if (hs < FMT_HEADER_V1 || hs > size || ns > FMT_MAX_SECTIONS ||
	    (uint64_t)ns * FMT_SECTION_ENTRY > size - hs)
		return;
	for (uint32_t s = 0; s < ns; s++) {
		const uint8_t *e = img + hs + s * FMT_SECTION_ENTRY;
		uint64_t off = fmt_get64(e + 8), len = fmt_get64(e + 16);

		if (fmt_get32(e) != FMT_SEC_WEIGHTS && (off > size || len > size - off))
			return;
	}
	fmt_put32(img + FMT_OFF_CHECKSUM, fmt_checksum(img, hs, ns));
}

size_t bi_ert_tables_end(const uint8_t *img, size_t size)
{
	/* the writer's images: 5 sections up to version 3, 6 from version 4 on */
	uint32_t ns = fmt_get32(img + FMT_OFF_NSECTIONS) > FMT_SEC_COUNT_V1 ? FMT_SEC_MAX
									     : FMT_SEC_COUNT_V1;
	size_t end = FMT_HEADER_V1 + ns * FMT_SECTION_ENTRY;

	for (uint32_t s = 0; s < ns; s++) {
		const uint8_t *e = img + FMT_HEADER_V1 + s * FMT_SECTION_ENTRY;
		uint64_t off = fmt_get64(e + 8), len = fmt_get64(e + 16);

		if (fmt_get32(e) != FMT_SEC_WEIGHTS && off + len > end && off + len <= size)
			end = (size_t)(off + len);
	}
	return end;
}

void bi_truncations(struct bi_run *run, const char *src, bi_load_fn load, const uint8_t *img,
		    size_t size, long max_cases)
{
	struct bi_group grp;
	size_t step = max_cases > 0 && (size_t)max_cases < size ? size / (size_t)max_cases : 1;

	bi_group_begin(&grp, run, "%s: truncations", src);
	/* every short length, then spread out; each case gets a buffer of exactly that
	 * size so ASan sees any read past the end */
	for (size_t len = 0; len < size; len += len < 256 ? 1 : step) {
		uint8_t *c = malloc(len ? len : 1);

		if (!c)
			continue;
		memcpy(c, img, len);
		bi_case(&grp, load, c, len, "truncated to", (long)len);
		free(c);
	}
	bi_group_end(&grp);
}

void bi_bit_flips(struct bi_run *run, const char *src, bi_load_fn load, const uint8_t *img,
		  size_t size, long cases, bool reseal)
{
	struct bi_group grp;
	uint8_t *buf = malloc(size ? size : 1);
	uint64_t rs = run->seed ^ (uint64_t)size;

	bi_group_begin(&grp, run, "%s: bit flips%s (seed %llu)", src, reseal ? ", resealed" : "",
		       (unsigned long long)run->seed);
	for (long i = 0; buf && size && i < cases; i++) {
		int nflips = 1 + (int)(bi_rand(&rs) % 4);
		size_t first = 0;

		memcpy(buf, img, size);
		for (int f = 0; f < nflips; f++) {
			size_t at = (size_t)(bi_rand(&rs) % size);

			buf[at] ^= (uint8_t)(1u << (bi_rand(&rs) % 8));
			if (!f)
				first = at;
		}
		if (reseal)
			bi_ert_reseal(buf, size);
		bi_case(&grp, load, buf, size, "bit flips from offset", (long)first);
	}
	free(buf);
	bi_group_end(&grp);
}

static const uint32_t hostile32[] = {
	0xffffffffu, 0x7fffffffu, 0x80000000u, 0xfffffff0u, 0x10000u, 0x1001u, 9, 0,
};

static const uint64_t hostile64[] = {
	UINT64_MAX, 0x7fffffffffffffffull, 0x8000000000000000ull, 1ull << 62, 1ull << 32,
	(uint64_t)-2,
};

void bi_hostile_values(struct bi_run *run, const char *src, bi_load_fn load,
		       const uint8_t *img, size_t size, size_t end, size_t step, bool reseal)
{
	struct bi_group grp;
	uint8_t *buf = malloc(size ? size : 1);

	bi_group_begin(&grp, run, "%s: hostile values%s", src, reseal ? ", resealed" : "");
	if (end > size)
		end = size;
	for (size_t at = 0; buf && at + 4 <= end; at += step ? step : 1) {
		size_t n32 = sizeof(hostile32) / sizeof(hostile32[0]);
		size_t n64 = sizeof(hostile64) / sizeof(hostile64[0]);

		for (size_t v = 0; v < n32 + n64 + 2; v++) {
			memcpy(buf, img, size);
			if (v < n32) {
				fmt_put32(buf + at, hostile32[v]);
			} else if (v < n32 + n64) {
				if (at + 8 > size)
					continue;
				fmt_put64(buf + at, hostile64[v - n32]);
			} else {
				/* sizes just past the end of the file */
				fmt_put32(buf + at, (uint32_t)size + (uint32_t)(v - n32 - n64));
			}
			if (reseal)
				bi_ert_reseal(buf, size);
			bi_case(&grp, load, buf, size, "hostile value at", (long)at);
		}
	}
	free(buf);
	bi_group_end(&grp);
}

void bi_hostile_runs(struct bi_run *run, const char *src, bi_load_fn load, const uint8_t *img,
		     size_t size, long cases)
{
	struct bi_group grp;
	uint8_t *buf = malloc(size ? size : 1);
	uint64_t rs = run->seed * 31 + size;

	bi_group_begin(&grp, run, "%s: runs of 0xff", src);
	for (long i = 0; buf && size && i < cases; i++) {
		/* half the runs land in the first 4 KiB, where the graph structure lives */
		size_t range = i % 2 && size > 4096 ? 4096 : size;
		size_t at = (size_t)(bi_rand(&rs) % range), len = 1 + (size_t)(bi_rand(&rs) % 12);

		memcpy(buf, img, size);
		memset(buf + at, 0xff, at + len > size ? size - at : len);
		bi_case(&grp, load, buf, size, "0xff run at", (long)at);
	}
	free(buf);
	bi_group_end(&grp);
}
