// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * enpu_bench: submit -> fence-signalled latency of an empty job and of a
 * small CONV2D job, and buffer object create / map / destroy costs, as
 * median and p99 in microseconds. Every row also shows its ratio to a
 * reference measured in the same run: a trivial ioctl (QUERY) round trip.
 * The conv job is also run through the shared executor in this process,
 * so the device-side overhead can be read off as a ratio too.
 *
 * USAGE: enpu_bench [-n iterations]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "enpu_lib.h"
#include "enpu_cs.h"

#define BO_SIZE (64 * 1024)

struct stat_row {
	const char *what;
	double median, p99;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct stat_row summarize(const char *what, double *us, int n)
{
	struct stat_row r = { .what = what };

	qsort(us, n, sizeof(*us), cmp_double);
	r.median = us[n / 2];
	r.p99 = us[(int)((n - 1) * 0.99)];
	return r;
}

static double since_us(int64_t t0)
{
	return (enpu_now_ns() - t0) / 1000.0;
}

static uint32_t build_conv(struct enpu_cs *cs)
{
	struct enpu_cs_conv2d *c;

	enpu_cs_begin(cs);
	c = enpu_cs_add(cs, ENPU_OP_CONV2D, sizeof(*c));
	c->in = enpu_tensor(0, 0, 1, 8, 8, 8);
	c->weights = enpu_tensor(0, 1024, 8, 3, 3, 8);
	c->bias = enpu_tensor_none();
	c->requant = enpu_tensor_none();
	c->out = enpu_tensor(0, 4096, 1, 8, 8, 8);
	c->quant = enpu_quant_identity();
	c->quant.out_shift = -6;
	c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
	c->pad_top = c->pad_left = c->pad_bottom = c->pad_right = 1;
	c->groups = 1;
	return enpu_cs_end(cs);
}

int main(int argc, char **argv)
{
	static struct enpu_cs cs;
	struct drm_enpu_query_device dev;
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE, .size = sizeof(dev),
				    .ptr = (uintptr_t)&dev };
	struct stat_row rows[8];
	int n = 1000, nrows = 0, fd, i, opt, err = 1;
	uint32_t syncobj, bo, handles[1];
	struct enpu_job_desc d = { 0 };
	double *us = NULL, *us2 = NULL, *us3 = NULL;
	uint8_t *host = NULL;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		if (opt == 'n') {
			n = atoi(optarg);
		} else {
			fprintf(stderr, "USAGE: %s [-n iterations]\n"
				"EXAMPLES:\n  %s -n 2000   # 2000 samples per row\n",
				argv[0], argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 10)
		n = 10;
	fd = enpu_open();
	if (fd < 0) {
		fprintf(stderr, "enpu_bench: failed to open device: no enpu accel node\n");
		return 1;
	}
	us = calloc(n, sizeof(*us));
	us2 = calloc(n, sizeof(*us2));
	us3 = calloc(n, sizeof(*us3));
	host = aligned_alloc(4096, 8192);
	if (!us || !us2 || !us3 || !host || enpu_syncobj_new(fd, 0, &syncobj) ||
	    enpu_query_raw(fd, &q) || enpu_bo_new(fd, 8192, &bo)) {
		fprintf(stderr, "enpu_bench: failed to set up: %s\n", strerror(errno));
		goto out;
	}

	/* reference: a trivial ioctl round trip */
	for (i = 0; i < n; i++) {
		int64_t t0 = enpu_now_ns();

		enpu_query_raw(fd, &q);
		us[i] = since_us(t0);
	}
	rows[nrows++] = summarize("reference: QUERY ioctl", us, n);

	/* empty job: no commands, no buffers */
	d.out_syncobj = syncobj;
	for (i = 0; i < n; i++) {
		int64_t t0 = enpu_now_ns();

		if (enpu_submit_nops(fd, 0, 0, syncobj) ||
		    enpu_syncobj_wait(fd, syncobj, 10000000000ll))
			goto out_errno;
		us[i] = since_us(t0);
	}
	rows[nrows++] = summarize("empty job submit->fence", us, n);

	/* small conv: 1x8x8x8 input, 8 3x3x8 filters, same padding */
	handles[0] = bo;
	d.cs = cs.buf;
	d.cs_size = build_conv(&cs);
	d.handles = handles;
	d.bo_count = 1;
	for (i = 0; i < n; i++) {
		int64_t t0 = enpu_now_ns();

		if (enpu_submit_one(fd, &d) || enpu_syncobj_wait(fd, syncobj, 10000000000ll))
			goto out_errno;
		us[i] = since_us(t0);
	}
	rows[nrows++] = summarize("conv 8x8x8->8 3x3 submit->fence", us, n);

	/* the same stream on the shared executor in this process */
	{
		void *regions[1] = { host };
		u64 size[1] = { 8192 };

		memset(host, 3, 8192);
		if (enpu_cs_validate(cs.buf, d.cs_size, size, 1, NULL)) {
			fprintf(stderr, "enpu_bench: failed to validate the conv stream\n");
			goto out;
		}
		for (i = 0; i < n; i++) {
			int64_t t0 = enpu_now_ns();

			enpu_cs_execute(cs.buf, regions, 1, NULL, NULL);
			us[i] = since_us(t0);
		}
		rows[nrows++] = summarize("conv same stream, in-process executor", us, n);
	}

	/* BO create / map+touch / destroy */
	for (i = 0; i < n; i++) {
		int64_t t0 = enpu_now_ns();
		uint32_t h;
		uint8_t *p;

		if (enpu_bo_new(fd, BO_SIZE, &h))
			goto out_errno;
		us[i] = since_us(t0);
		t0 = enpu_now_ns();
		p = enpu_bo_map(fd, h, BO_SIZE);
		if (!p)
			goto out_errno;
		p[0] = 1;
		p[BO_SIZE - 1] = 1;
		munmap(p, BO_SIZE);
		us2[i] = since_us(t0);
		t0 = enpu_now_ns();
		enpu_bo_close(fd, h);
		us3[i] = since_us(t0);
	}
	rows[nrows++] = summarize("BO create 64 KiB", us, n);
	rows[nrows++] = summarize("BO mmap+touch+munmap 64 KiB", us2, n);
	rows[nrows++] = summarize("BO destroy 64 KiB", us3, n);

	printf("enpu_bench: %d samples per row, %u cores, job timeout %u ms\n", n,
	       dev.num_cores, dev.job_timeout_ms);
	printf("%-40s %10s %10s %8s\n", "what", "median_us", "p99_us", "x_ref");
	for (i = 0; i < nrows; i++)
		printf("%-40s %10.1f %10.1f %8.1f\n", rows[i].what, rows[i].median, rows[i].p99,
		       rows[i].median / rows[0].median);
	err = 0;
	goto out;

out_errno:
	fprintf(stderr, "enpu_bench: failed to run: %s\n", strerror(errno));
out:
	free(us);
	free(us2);
	free(us3);
	free(host);
	close(fd);
	return err;
}
