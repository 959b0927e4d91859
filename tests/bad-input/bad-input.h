/* SPDX-License-Identifier: MIT */
/*
 * bad-input — feeds damaged .ert and .onnx files and wrong inputs to libedgert
 * and requires a clean failure (a status with a message) or a clean success,
 * never a crash. Built and run under ASan+UBSan (make SAN=1 bad-input), which
 * abort the run on any invalid access, leak or undefined behaviour.
 *
 * A "group" is one damage kind applied to one source (e.g. "truncations of
 * squeezenet"); it passes when every one of its cases does. Groups are what the
 * summary line counts.
 */
#ifndef BAD_INPUT_H
#define BAD_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ert-graph.h"

/*
 * Load @size bytes at @data; on failure write the message to @msg. Returns the
 * status. A successful load must free what it built.
 */
typedef ert_status (*bi_load_fn)(const uint8_t *data, size_t size, char *msg, size_t msg_size);

struct bi_run {
	uint64_t seed;
	bool verbose;
	int groups_passed, groups_failed;
	long cases, cases_ok_load;
};

/* One group of cases, started by bi_group_begin() and closed by bi_group_end(). */
struct bi_group {
	struct bi_run *run;
	char name[160];
	long cases, failures, loaded;
	double start;   /* seconds, CLOCK_MONOTONIC */
};

void bi_group_begin(struct bi_group *grp, struct bi_run *run, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void bi_group_end(struct bi_group *grp);
/* Run one case: load must succeed, or fail with a non-empty message. */
void bi_case(struct bi_group *grp, bi_load_fn load, const uint8_t *data, size_t size,
	     const char *what, long where);
/* Record an explicit check (API tests): @ok false counts as a failure. */
void bi_check(struct bi_group *grp, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Deterministic generator (xorshift64*). */
uint64_t bi_rand(uint64_t *state);

/* ---- damage kinds (damage.c): each is one group over @img ---- */

/* @max_cases > 0 spreads that many truncation points over the image; 0: every length. */
void bi_truncations(struct bi_run *run, const char *src, bi_load_fn load, const uint8_t *img,
		    size_t size, long max_cases);
void bi_bit_flips(struct bi_run *run, const char *src, bi_load_fn load, const uint8_t *img,
		  size_t size, long cases, bool reseal);
/* Hostile 4- and 8-byte values written at every offset of [0, end). */
void bi_hostile_values(struct bi_run *run, const char *src, bi_load_fn load,
		       const uint8_t *img, size_t size, size_t end, size_t step, bool reseal);
/* Runs of 0xff bytes (huge varints and lengths in protobuf) at random places. */
void bi_hostile_runs(struct bi_run *run, const char *src, bi_load_fn load, const uint8_t *img,
		     size_t size, long cases);
/* Fix up the .ert checksum of a damaged image when its section table is in bounds. */
void bi_ert_reseal(uint8_t *img, size_t size);
/* End of the checksummed tables of a valid .ert image (where weights start). */
size_t bi_ert_tables_end(const uint8_t *img, size_t size);

/* ---- sources ---- */

/* Valid .ert images built with the graph API (ert-models.c); NULL-terminated names. */
struct bi_image {
	const char *name;
	uint8_t *data;
	size_t size;
};
/* Fill @out (up to @max) with images; returns how many. Caller frees ->data. */
int bi_ert_images(struct bi_image *out, int max);

ert_status bi_load_ert(const uint8_t *data, size_t size, char *msg, size_t msg_size);
ert_status bi_load_onnx(const uint8_t *data, size_t size, char *msg, size_t msg_size);
ert_status bi_load_onnx_optimized(const uint8_t *data, size_t size, char *msg, size_t msg_size);
ert_status bi_load_public(const uint8_t *data, size_t size, char *msg, size_t msg_size);

/* Write the models of hostile-sizes.c into @dir; non-zero on failure. */
int bi_write_hostile(const char *dir);

/* ---- the public API with wrong inputs (api.c) ---- */
void bi_api_checks(struct bi_run *run);

#endif
