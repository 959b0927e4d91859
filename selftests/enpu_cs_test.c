// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * The shared command stream code (kmod/enpu_cs.c) built for userspace: the
 * validator's accept/reject decisions, and a mutation fuzzer that executes
 * every stream the validator accepts on buffers followed by guard pages, so
 * that any access past a region's end crashes the test. No device needed.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"
#include "enpu_cs.h"

#define PAGE 4096
#define NREG 3

/* region r: size[r] bytes ending exactly at a PROT_NONE page */
struct guarded {
	uint8_t *base[NREG];
	void *map[NREG];
	size_t maplen[NREG];
	u64 size[NREG];
};

static int guarded_alloc(struct guarded *g, const u64 *size)
{
	int r;

	for (r = 0; r < NREG; r++) {
		size_t pages = (size[r] + PAGE - 1) / PAGE + 1;
		uint8_t *m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return -1;
		if (mprotect(m + (pages - 1) * PAGE, PAGE, PROT_NONE))
			return -1;
		g->map[r] = m;
		g->maplen[r] = pages * PAGE;
		g->base[r] = m + (pages - 1) * PAGE - size[r];
		g->size[r] = size[r];
		memset(g->base[r], 0x11 * (r + 1), size[r]);
	}
	return 0;
}

static void guarded_free(struct guarded *g)
{
	int r;

	for (r = 0; r < NREG; r++)
		munmap(g->map[r], g->maplen[r]);
}


static const u64 *const all_ops_sizes = enpu_all_ops_sizes;

TEST(validate_accepts_every_opcode)
{
	static struct enpu_cs cs;
	struct enpu_cs_info info;
	uint32_t len = enpu_cs_build_all_ops(&cs);
	int op;

	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, &info));
	ASSERT_EQ(ENPU_OP_COUNT, info.num_cmds);
	for (op = 0; op < ENPU_OP_COUNT; op++)
		ASSERT_EQ(1, info.op_count[op]);
	ASSERT_EQ(0x3, info.read_mask);
	ASSERT_EQ(0x4, info.write_mask);
	ASSERT_GT(info.work, 6 * 6 * 4 * 36);
}

TEST(validate_rejects_every_truncation)
{
	static struct enpu_cs cs;
	uint32_t len = enpu_cs_build_all_ops(&cs), cut;
	struct enpu_cs_header *h = (void *)cs.buf;

	for (cut = 0; cut < len; cut++) {
		h->size = cut;
		ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, cut, all_ops_sizes, NREG, NULL));
	}
}

TEST(validate_region_sizes_are_exact)
{
	static struct enpu_cs cs;
	uint32_t len = enpu_cs_build_all_ops(&cs);
	u64 sizes[NREG];
	int r;

	/* find the smallest size each region may have, then one byte less fails */
	for (r = 0; r < NREG; r++) {
		memcpy(sizes, all_ops_sizes, sizeof(sizes));
		while (sizes[r] && !enpu_cs_validate(cs.buf, len, sizes, NREG, NULL))
			sizes[r]--;
		ASSERT_EQ(-ERANGE, enpu_cs_validate(cs.buf, len, sizes, NREG, NULL));
		sizes[r]++;
		ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, sizes, NREG, NULL));
	}
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, all_ops_sizes, 2, NULL));
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, all_ops_sizes, ENPU_CS_MAX_REGIONS + 1,
					    NULL));
}

/* Pointers to the commands of enpu_cs_build_all_ops()'s stream, in order. */
static void *nth_cmd(struct enpu_cs *cs, int n)
{
	uint32_t pos = sizeof(struct enpu_cs_header);

	while (n--)
		pos += ((struct enpu_cs_cmd *)(cs->buf + pos))->size;
	return cs->buf + pos;
}

TEST(validate_table_strides)
{
	static struct enpu_cs cs;
	uint32_t len = enpu_cs_build_all_ops(&cs);
	struct enpu_cs_conv2d *c = nth_cmd(&cs, 1);
	struct enpu_cs_lut *l = nth_cmd(&cs, 5);

	ASSERT_EQ(ENPU_OP_CONV2D, c->hdr.opcode);
	ASSERT_EQ(ENPU_OP_LUT, l->hdr.opcode);
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, NULL));
	/* requant entries are 8 bytes: a smaller stride would overlap them */
	c->requant.stride[0] = 4;
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, NULL));
	c->requant.stride[0] = 0;
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, NULL));
	c->requant.stride[0] = 16;
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, NULL));
	c->requant.stride[0] = 8;
	/* a LUT table is 256 consecutive bytes */
	l->table.stride[0] = 2;
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, NULL));
	l->table.stride[0] = 0;
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, NULL));
	l->table.stride[0] = 1;
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, all_ops_sizes, NREG, NULL));
}

TEST(validate_copy_overlap)
{
	static struct enpu_cs cs;
	static const u64 size[2] = { 256, 256 };
	struct enpu_cs_copy *cp;
	uint32_t len;

	enpu_cs_begin(&cs);
	cp = enpu_cs_add(&cs, ENPU_OP_COPY, sizeof(*cp));
	len = enpu_cs_end(&cs);
	/* 4 x 8 bytes, spanning [0, 32) and [32, 64): adjacent, fine */
	cp->src = enpu_tensor(0, 0, 1, 1, 4, 8);
	cp->dst = enpu_tensor(0, 32, 1, 1, 4, 8);
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	/* one byte of overlap either way */
	cp->dst.offset = 31;
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	cp->src.offset = 62;
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	cp->src.offset = 63;
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	/* a transpose onto its own bytes overlaps */
	cp->src = enpu_tensor(0, 0, 1, 1, 8, 8);
	cp->dst = cp->src;
	cp->dst.stride[2] = 1;
	cp->dst.stride[3] = 8;
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	/* identical tensors: a copy onto itself, allowed */
	cp->dst = cp->src;
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	/* the same ranges in different regions do not overlap */
	cp->dst.region = 1;
	cp->dst.stride[2] = 1;
	cp->dst.stride[3] = 8;
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	/* a broadcast source inside the destination's span */
	cp->src = enpu_tensor(0, 40, 1, 1, 8, 8);
	cp->src.stride[2] = cp->src.stride[3] = 0;
	cp->dst = enpu_tensor(0, 0, 1, 1, 8, 8);
	ASSERT_EQ(-EINVAL, enpu_cs_validate(cs.buf, len, size, 2, NULL));
	cp->src.offset = 64;
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, size, 2, NULL));
}

static int abort_after(void *arg)
{
	int *left = arg;

	return --*left <= 0;
}

TEST(execute_stops_when_asked)
{
	static struct enpu_cs cs;
	struct guarded g;
	void *regions[NREG];
	int left, r;

	enpu_cs_build_all_ops(&cs);
	ASSERT_EQ(0, guarded_alloc(&g, all_ops_sizes));
	for (r = 0; r < NREG; r++)
		regions[r] = g.base[r];
	left = 1000000;
	ASSERT_EQ(0, enpu_cs_execute(cs.buf, regions, NREG, abort_after, &left));
	left = 3;
	ASSERT_EQ(-ECANCELED, enpu_cs_execute(cs.buf, regions, NREG, abort_after, &left));
	guarded_free(&g);
}

/* ---- the work limit and polling inside commands -------------------------- */

static const u64 one_byte[1] = { 1 };

TEST(validate_refuses_work_over_the_limit)
{
	static struct enpu_cs cs;
	struct enpu_cs_conv2d *c;
	struct enpu_cs_info info;
	uint32_t len;

	/* the audit's CONV2D: ~2.8e14 MACs in a 1-byte region */
	enpu_cs_begin(&cs);
	c = enpu_cs_add(&cs, ENPU_OP_CONV2D, sizeof(*c));
	c->in = enpu_tensor_bcast(1, 1, 65535, 65535);
	c->weights = enpu_tensor_bcast(65535, 1, 65535, 65535);
	c->out = enpu_tensor_bcast(1, 1, 1, 65535);
	c->bias = enpu_tensor_none();
	c->requant = enpu_tensor_none();
	c->quant = enpu_quant_identity();
	c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
	c->groups = 1;
	len = enpu_cs_end(&cs);
	ASSERT_EQ(-E2BIG, enpu_cs_validate(cs.buf, len, one_byte, 1, NULL));

	/* MATMUL N = K = 65535: 4.3e9 MACs per output row */
	enpu_cs_begin(&cs);
	enpu_cs_add_bcast_matmul(&cs, 1, 65535, 65535);
	len = enpu_cs_end(&cs);
	ASSERT_EQ(-E2BIG, enpu_cs_validate(cs.buf, len, one_byte, 1, NULL));

	/* B * M * N * (K + 16) exactly at the limit is accepted, one unit more is not */
	enpu_cs_begin(&cs);
	enpu_cs_add_bcast_matmul(&cs, 1, ENPU_CS_MAX_WORK / 65536, 65536 - 16);
	len = enpu_cs_end(&cs);
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, one_byte, 1, &info));
	ASSERT_EQ(ENPU_CS_MAX_WORK, info.work);
	enpu_cs_begin(&cs);
	enpu_cs_add_bcast_matmul(&cs, 1, ENPU_CS_MAX_WORK / 65536, 65536 - 16);
	enpu_cs_add(&cs, ENPU_OP_NOP, sizeof(struct enpu_cs_cmd));
	enpu_cs_add_bcast_matmul(&cs, 1, 1, 1);
	len = enpu_cs_end(&cs);
	ASSERT_EQ(-E2BIG, enpu_cs_validate(cs.buf, len, one_byte, 1, NULL));

	/* the limit is per stream: two halves are fine, three are not */
	enpu_cs_begin(&cs);
	enpu_cs_add_bcast_matmul(&cs, 1, ENPU_CS_MAX_WORK / 65536 / 2, 65536 - 16);
	enpu_cs_add_bcast_matmul(&cs, 1, ENPU_CS_MAX_WORK / 65536 / 2, 65536 - 16);
	len = enpu_cs_end(&cs);
	ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, one_byte, 1, NULL));
	enpu_cs_add_bcast_matmul(&cs, 1, ENPU_CS_MAX_WORK / 65536 / 2, 65536 - 16);
	len = enpu_cs_end(&cs);
	ASSERT_EQ(-E2BIG, enpu_cs_validate(cs.buf, len, one_byte, 1, NULL));
}

struct polls {
	u64 count;
	u64 stop_at;	/* ask to stop on this call; 0: never */
	u64 after_stop;	/* calls after having asked to stop */
};

static int count_polls(void *arg)
{
	struct polls *p = arg;

	if (p->stop_at && p->count >= p->stop_at)
		p->after_stop++;
	return ++p->count == p->stop_at;
}

/*
 * Streams near the limit whose commands have a single output row (or
 * element): the hook must still be called about once per 64K units of work,
 * and a stop request must end the command at once.
 */
static uint32_t one_row_stream(struct enpu_cs *cs, int which)
{
	const u64 L = ENPU_CS_MAX_WORK;
	struct enpu_cs_conv2d *c;
	struct enpu_cs_eltwise *e;
	struct enpu_cs_pool *p;
	struct enpu_cs_copy *cp;
	struct enpu_cs_lut *l;

	enpu_cs_begin(cs);
	switch (which) {
	case 0:	/* one CONV2D output over 65535-channel taps */
		c = enpu_cs_add(cs, ENPU_OP_CONV2D, sizeof(*c));
		c->in = enpu_tensor_bcast(1, 1, L / 2 / 65536, 65535);
		c->weights = enpu_tensor_bcast(1, 1, L / 2 / 65536, 65535);
		c->out = enpu_tensor_bcast(1, 1, 1, 1);
		c->bias = enpu_tensor_none();
		c->requant = enpu_tensor_none();
		c->quant = enpu_quant_identity();
		c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
		c->groups = 1;
		break;
	case 1:	/* depthwise-like: a 1 x 60000 kernel over one channel */
		c = enpu_cs_add(cs, ENPU_OP_CONV2D, sizeof(*c));
		c->in = enpu_tensor_bcast(1, 1, 60000, 1);
		c->weights = enpu_tensor_bcast(L / 2 / 300000, 1, 60000, 1);
		c->out = enpu_tensor_bcast(1, 1, 1, L / 2 / 300000);
		c->bias = enpu_tensor_none();
		c->requant = enpu_tensor_none();
		c->quant = enpu_quant_identity();
		c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
		c->groups = 1;
		break;
	case 2:	/* MATMUL: one output row, K = 65535 */
		enpu_cs_add_bcast_matmul(cs, 1, L / 2 / 65536, 65535);
		break;
	case 3:	/* ELTWISE: one row of 65535 x n elements */
		e = enpu_cs_add(cs, ENPU_OP_ELTWISE, sizeof(*e));
		e->a = enpu_tensor_bcast(1, 1, 65535, L / 2 / 16 / 65536);
		e->b = enpu_tensor_bcast(1, 1, 1, L / 2 / 16 / 65536);
		e->out = enpu_tensor_bcast(1, 1, 65535, L / 2 / 16 / 65536);
		e->quant = enpu_quant_identity();
		e->op = ENPU_ELTWISE_MUL;
		break;
	case 4:	/* POOL: one global average over 65535 x n */
		p = enpu_cs_add(cs, ENPU_OP_POOL, sizeof(*p));
		p->in = enpu_tensor_bcast(1, 65535, L / 2 / 65536, 1);
		p->out = enpu_tensor_bcast(1, 1, 1, 1);
		p->quant.act_min = -128;
		p->quant.act_max = 127;
		p->mode = ENPU_POOL_GLOBAL_AVG;
		break;
	case 5:	/* COPY and LUT, rows of 65535 */
		cp = enpu_cs_add(cs, ENPU_OP_COPY, sizeof(*cp));
		cp->src = enpu_tensor_bcast(1, 1, L / 4 / 262144, 65535);
		cp->dst = cp->src;
		l = enpu_cs_add(cs, ENPU_OP_LUT, sizeof(*l));
		l->in = cp->src;
		l->table = enpu_tensor_bcast(256, 1, 1, 1);
		l->table.stride[0] = 1;
		l->out = cp->src;
		break;
	default:
		return 0;
	}
	return enpu_cs_end(cs);
}

TEST(execute_polls_inside_long_commands)
{
	static struct enpu_cs cs;
	struct enpu_cs_info info;
	static const u64 size[1] = { 256 };
	uint8_t buf[256] = { 0 };
	void *regions[1] = { buf };
	uint32_t len;
	int which;

	for (which = 0; (len = one_row_stream(&cs, which)); which++) {
		struct polls p = { 0 };

		ASSERT_EQ(0, enpu_cs_validate(cs.buf, len, size, 1, &info)) {
			TH_LOG("stream %d", which);
		}
		ASSERT_GT(info.work, ENPU_CS_MAX_WORK / 4);
		ASSERT_EQ(0, enpu_cs_execute(cs.buf, regions, 1, count_polls, &p));
		/* about once per 64K units, never fewer than once per 128K */
		ASSERT_GE(p.count, info.work / (128 * 1024)) {
			TH_LOG("stream %d: work %llu, %llu polls", which,
			       (unsigned long long)info.work, (unsigned long long)p.count);
		}
		/* asked to stop on the 10th poll: stops there, polls no more */
		memset(&p, 0, sizeof(p));
		p.stop_at = 10;
		ASSERT_EQ(-ECANCELED, enpu_cs_execute(cs.buf, regions, 1, count_polls, &p));
		ASSERT_EQ(10, p.count);
		ASSERT_EQ(0, p.after_stop);
	}
	ASSERT_EQ(6, which);
}

TEST(fuzz_accepted_streams_stay_in_bounds)
{
	static struct enpu_cs cs, mut;
	uint32_t len = enpu_cs_build_all_ops(&cs), seed = 1, i, accepted = 0, rejected = 0;
	struct guarded g;
	void *regions[NREG];
	int r;

	ASSERT_EQ(0, guarded_alloc(&g, all_ops_sizes));
	for (r = 0; r < NREG; r++)
		regions[r] = g.base[r];
	for (i = 0; i < 30000; i++) {
		int flips = 1 + i % 4, k;

		memcpy(mut.buf, cs.buf, len);
		for (k = 0; k < flips; k++) {
			uint32_t pos, val;

			seed = seed * 1103515245u + 12345u;
			pos = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			val = seed >> 16;
			/* small integers hit the interesting boundaries more often */
			mut.buf[pos] = (k & 1) ? (uint8_t)val : (uint8_t)(val % 8) - 2;
		}
		if (enpu_cs_validate(mut.buf, len, all_ops_sizes, NREG, NULL)) {
			rejected++;
			continue;
		}
		accepted++;
		/* must not fault on the guard pages */
		ASSERT_EQ(0, enpu_cs_execute(mut.buf, regions, NREG, NULL, NULL));
	}
	TH_LOG("%u mutated streams accepted and executed, %u rejected", accepted, rejected);
	ASSERT_GT(accepted, 100);
	ASSERT_GT(rejected, 100);
	guarded_free(&g);
}

TEST_HARNESS_MAIN
