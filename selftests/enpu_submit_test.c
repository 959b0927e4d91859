// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * DRM_IOCTL_ENPU_SUBMIT: the success path and every validation failure with
 * otherwise valid input (struct sizes, flags, padding, handles, limits, and
 * command streams that are malformed or reach past their buffers).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define PAGE 4096
#define WAIT_NS 10000000000ll

FIXTURE(submit) {
	int fd;
	uint32_t bo[2];
	uint8_t *map[2];
	uint32_t syncobj;
	struct enpu_cs cs;
	struct drm_enpu_job_bo bos[2];
	struct drm_enpu_job job;
	struct drm_enpu_submit sub;
};

FIXTURE_SETUP(submit)
{
	int i;

	self->fd = enpu_open();
	if (self->fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &self->bo[i]));
		self->map[i] = enpu_bo_map(self->fd, self->bo[i], PAGE);
		ASSERT_NE(NULL, self->map[i]);
		self->bos[i].handle = self->bo[i];
		self->bos[i].flags = ENPU_JOB_BO_READ | ENPU_JOB_BO_WRITE;
	}
	memset(self->map[0], 0x42, PAGE);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &self->syncobj));
	/* a valid job: copy 255 bytes (one row) from BO 0 to BO 1 */
	self->job.cs_ptr = (uintptr_t)self->cs.buf;
	self->job.cs_size = enpu_cs_copy_bytes(&self->cs, 0, 0, 1, 0, 255);
	self->job.bos_ptr = (uintptr_t)self->bos;
	self->job.bo_count = 2;
	self->job.bo_stride = sizeof(self->bos[0]);
	self->job.in_syncobj_stride = sizeof(struct drm_enpu_syncobj);
	self->job.out_syncobj = self->syncobj;
	self->sub.jobs_ptr = (uintptr_t)&self->job;
	self->sub.job_count = 1;
	self->sub.job_stride = sizeof(self->job);
}

FIXTURE_TEARDOWN(submit)
{
	if (self->fd >= 0)
		close(self->fd);
}

static struct enpu_cs_copy *first_copy(struct enpu_cs *cs)
{
	return (void *)(cs->buf + sizeof(struct enpu_cs_header));
}

TEST_F(submit, copy_job_runs)
{
	enpu_submit_ok(self->fd, &self->sub);
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, WAIT_NS));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, self->syncobj));
	ASSERT_EQ(0x42, self->map[1][0]);
	ASSERT_EQ(0x42, self->map[1][254]);
	ASSERT_EQ(0, self->map[1][255]);
}

TEST_F(submit, empty_stream_and_no_bos)
{
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 0, 0, self->syncobj));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, WAIT_NS));
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 100, 0, self->syncobj));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, WAIT_NS));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, self->syncobj));
}

TEST_F(submit, several_jobs_grown_stride)
{
	uint8_t jobs[3][sizeof(struct drm_enpu_job) + 16];
	int i;

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < 3; i++)
		memcpy(jobs[i], &self->job, sizeof(self->job));
	self->sub.jobs_ptr = (uintptr_t)jobs;
	self->sub.job_count = 3;
	self->sub.job_stride = sizeof(jobs[0]);
	/* a larger stride whose unknown tail is zero is accepted */
	enpu_submit_ok(self->fd, &self->sub);
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, WAIT_NS));
	/* ... and refused when the tail is not zero */
	jobs[1][sizeof(struct drm_enpu_job) + 3] = 1;
	enpu_submit_err(self->fd, &self->sub, E2BIG);
}

TEST_F(submit, bad_submit_args)
{
	self->sub.flags = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->sub.flags = 0;
	self->sub.pad = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->sub.pad = 0;
	self->sub.job_count = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->sub.job_count = 1000;
	enpu_submit_err(self->fd, &self->sub, E2BIG);
	self->sub.job_count = 1;
	self->sub.job_stride = ENPU_JOB_V2_SIZE - 8;	/* short struct */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->sub.job_stride = 48;	/* the uAPI 1.x job: refused, never misread */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->sub.job_stride = sizeof(self->job);
	self->sub.jobs_ptr = 16;
	enpu_submit_err(self->fd, &self->sub, EFAULT);
}

TEST_F(submit, bad_job_args)
{
	self->job.flags = 0x10;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->job.flags = 0;
	self->job.bo_stride = 4;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->job.bo_stride = sizeof(self->bos[0]);
	self->job.bo_count = 65;
	enpu_submit_err(self->fd, &self->sub, E2BIG);
	self->job.bo_count = 2;
	self->job.in_syncobj_count = 33;
	enpu_submit_err(self->fd, &self->sub, E2BIG);
	self->job.in_syncobj_count = 0;
	self->job.cs_size = 1 << 20;
	enpu_submit_err(self->fd, &self->sub, E2BIG);
	self->job.cs_size = 8;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->job.cs_size = self->cs.len;
	self->job.cs_ptr = 64;
	enpu_submit_err(self->fd, &self->sub, EFAULT);
	self->job.cs_ptr = (uintptr_t)self->cs.buf;
	self->job.bos_ptr = 64;
	enpu_submit_err(self->fd, &self->sub, EFAULT);
	self->job.bos_ptr = (uintptr_t)self->bos;
	enpu_submit_ok(self->fd, &self->sub);
}

TEST_F(submit, bad_bo_entries)
{
	self->bos[1].handle = 9999;
	enpu_submit_err(self->fd, &self->sub, ENOENT);
	self->bos[1].handle = self->bo[0];	/* the same BO twice */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->bos[1].handle = self->bo[1];
	self->bos[1].flags = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->bos[1].flags = 0x8;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	/* the copy writes region 1, which the job only declares as read */
	self->bos[1].flags = ENPU_JOB_BO_READ;
	enpu_submit_err(self->fd, &self->sub, EACCES);
	self->bos[1].flags = ENPU_JOB_BO_WRITE;
	enpu_submit_ok(self->fd, &self->sub);
}

TEST_F(submit, write_to_readonly_userptr)
{
	struct drm_enpu_bo_userptr u = { .size = PAGE, .flags = ENPU_USERPTR_READONLY };
	void *mem = aligned_alloc(PAGE, PAGE);

	u.user_ptr = (uintptr_t)mem;
	enpu_bo_userptr_ok(self->fd, &u);
	self->bos[1].handle = u.handle;
	enpu_submit_err(self->fd, &self->sub, EACCES);
	/* reading from it is fine */
	self->bos[0].handle = u.handle;
	self->bos[0].flags = ENPU_JOB_BO_READ;
	self->bos[1].handle = self->bo[1];
	enpu_submit_ok(self->fd, &self->sub);
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, WAIT_NS));
	free(mem);
}

TEST_F(submit, bad_syncobjs)
{
	struct drm_enpu_syncobj in[2] = { { 0 }, { .handle = 7777 } };

	ASSERT_EQ(0, enpu_syncobj_new(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &in[0].handle));
	self->job.out_syncobj = 8888;
	enpu_submit_err(self->fd, &self->sub, ENOENT);
	self->job.out_syncobj = self->syncobj;
	self->job.in_syncobjs_ptr = (uintptr_t)in;
	self->job.in_syncobj_count = 2;
	enpu_submit_err(self->fd, &self->sub, ENOENT);
	self->job.in_syncobj_count = 1;
	enpu_submit_ok(self->fd, &self->sub);
	/* a syncobj that never got a fence cannot be waited for */
	ASSERT_EQ(0, enpu_syncobj_destroy(self->fd, self->syncobj));
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &in[0].handle));
	self->job.out_syncobj = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->job.in_syncobjs_ptr = 32;
	enpu_submit_err(self->fd, &self->sub, EFAULT);
}

/*
 * A rejected SUBMIT queued nothing: no job was counted, the out-syncobj
 * (fresh, so without fence) got none, and the output BO is untouched.
 */
static int queued_nothing(int fd, long submitted0, uint32_t out, uint32_t bo,
			  const uint8_t *map)
{
	struct drm_enpu_bo_wait w = { .handle = bo, .timeout_ns = 0 };

	if (submitted0 >= 0 && enpu_stat("jobs_submitted") != submitted0)
		return 1;
	if (enpu_syncobj_status(fd, out) != -EINVAL)
		return 2;
	if (enpu_bo_wait_raw(fd, &w))
		return 3;
	if (map[0] || map[254])
		return 4;
	return 0;
}

/* Every malformed in-syncobj entry is refused with its errno, and queues nothing. */
TEST_F(submit, bad_syncobj_entries)
{
	struct {
		struct drm_enpu_syncobj s;
		uint8_t tail[8];
	} in[2];
	struct drm_enpu_syncobj many[33];
	long submitted = enpu_stat("jobs_submitted");
	uint32_t sig;
	int i;

	memset(in, 0, sizeof(in));
	memset(many, 0, sizeof(many));
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &sig));
	in[0].s.handle = sig;
	in[1].s.handle = sig;
	self->job.in_syncobjs_ptr = (uintptr_t)in;
	self->job.in_syncobj_count = 2;

	/* a flag outside ENPU_SYNCOBJ_FLAGS (none is defined) */
	self->job.in_syncobj_stride = sizeof(in[0]);
	in[1].s.flags = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	in[1].s.flags = 0x80000000u;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	in[1].s.flags = 0;
	/* a grown entry whose unknown tail is not zero */
	in[1].tail[5] = 1;
	enpu_submit_err(self->fd, &self->sub, E2BIG);
	in[1].tail[5] = 0;
	/* strides below the first version of the entry */
	self->job.in_syncobj_stride = ENPU_SYNCOBJ_V1_SIZE - 8;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->job.in_syncobj_stride = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	/* more entries than max_in_syncobjs */
	for (i = 0; i < 33; i++)
		many[i].handle = sig;
	self->job.in_syncobjs_ptr = (uintptr_t)many;
	self->job.in_syncobj_count = 33;
	self->job.in_syncobj_stride = sizeof(many[0]);
	enpu_submit_err(self->fd, &self->sub, E2BIG);
	/* a point on a binary syncobj */
	self->job.in_syncobj_count = 1;
	many[0].point = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	many[0].point = 0;
	/* a timeline point without out-syncobj, and non-zero job padding */
	self->job.out_syncobj_point = 1;
	self->job.out_syncobj = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->job.out_syncobj_point = 0;
	self->job.out_syncobj = self->syncobj;
	self->job.pad = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	self->job.pad = 0;
	ASSERT_EQ(0, queued_nothing(self->fd, submitted, self->syncobj, self->bo[1],
				    self->map[1]));

	/* the same entries, well formed: 32 of them, then grown with zero tails */
	self->job.in_syncobj_count = 32;
	enpu_submit_ok(self->fd, &self->sub);
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, WAIT_NS));
	self->job.in_syncobjs_ptr = (uintptr_t)in;
	self->job.in_syncobj_count = 2;
	self->job.in_syncobj_stride = sizeof(in[0]);
	enpu_submit_ok(self->fd, &self->sub);
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, WAIT_NS));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, self->syncobj));
	ASSERT_EQ(0x42, self->map[1][254]);
}

/*
 * The out-syncobj as a timeline: the job's fence is added as the given
 * point, visible through DRM_IOCTL_SYNCOBJ_QUERY and TIMELINE_WAIT, and a
 * later job can wait for it by point; a point not yet on the timeline is
 * EINVAL and queues nothing.
 */
TEST_F(submit, timeline_out_point)
{
	struct drm_get_cap cap = { .capability = DRM_CAP_SYNCOBJ_TIMELINE };
	struct drm_enpu_syncobj in;
	uint32_t tl;
	uint64_t pt;
	long submitted;

	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_GET_CAP, &cap));
	ASSERT_EQ(1, cap.value);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &tl));
	ASSERT_EQ(0, enpu_timeline_query(self->fd, tl, 0, &pt));
	ASSERT_EQ(0, pt);
	self->job.out_syncobj = tl;
	self->job.out_syncobj_point = 5;
	enpu_submit_ok(self->fd, &self->sub);
	ASSERT_EQ(0, enpu_timeline_query(self->fd, tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED,
					 &pt));
	ASSERT_EQ(5, pt);
	ASSERT_EQ(0, enpu_timeline_wait(self->fd, tl, 5, WAIT_NS, 0));
	ASSERT_EQ(0, enpu_timeline_query(self->fd, tl, 0, &pt));
	ASSERT_EQ(5, pt);
	ASSERT_EQ(0x42, self->map[1][254]);
	/* points up to 5 are signalled; 6 does not exist */
	ASSERT_EQ(0, enpu_timeline_wait(self->fd, tl, 3, WAIT_NS, 0));
	ASSERT_EQ(-EINVAL, enpu_timeline_wait(self->fd, tl, 6, 0, 0));

	/* job 2 waits for point 5 and signals point 7 */
	memset(self->map[1], 0, PAGE);
	in = enpu_in(tl, 5);
	self->job.in_syncobjs_ptr = (uintptr_t)&in;
	self->job.in_syncobj_count = 1;
	self->job.out_syncobj_point = 7;
	enpu_submit_ok(self->fd, &self->sub);
	ASSERT_EQ(0, enpu_timeline_wait(self->fd, tl, 7, WAIT_NS, 0));
	ASSERT_EQ(0, enpu_timeline_query(self->fd, tl, 0, &pt));
	ASSERT_EQ(7, pt);
	ASSERT_EQ(0x42, self->map[1][254]);

	/* waiting for a point nobody submitted yet: EINVAL, nothing queued */
	memset(self->map[1], 0, PAGE);
	in = enpu_in(tl, 8);
	self->job.out_syncobj = self->syncobj;	/* fresh: no fence yet */
	self->job.out_syncobj_point = 0;
	submitted = enpu_stat("jobs_submitted");
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	ASSERT_EQ(0, queued_nothing(self->fd, submitted, self->syncobj, self->bo[1],
				    self->map[1]));
	ASSERT_EQ(0, enpu_timeline_query(self->fd, tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED,
					 &pt));
	ASSERT_EQ(7, pt);
}

TEST_F(submit, test_hang_needs_hooks)
{
	int hooks = enpu_get_param("test_hooks");

	if (hooks < 0)
		SKIP(return, "no /sys/module/enpu/parameters/test_hooks");
	if (enpu_set_param("test_hooks", "0"))
		SKIP(return, "cannot change test_hooks");
	self->job.flags = ENPU_JOB_TEST_HANG;
	enpu_submit_err(self->fd, &self->sub, EPERM);
	enpu_set_param("test_hooks", hooks ? "1" : "0");
}

/* ---- command stream validation -------------------------------------------- */

TEST_F(submit, cs_bad_header)
{
	struct enpu_cs_header *h = (void *)self->cs.buf;

	h->magic ^= 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	h->magic ^= 1;
	h->version = 2;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	h->version = ENPU_CS_VERSION;
	h->reserved = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	h->reserved = 0;
	h->size += 8;	/* disagrees with cs_size */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	h->size -= 8;
	h->num_cmds = 2;	/* runs past the end */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	h->num_cmds = 0;	/* trailing bytes */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	h->num_cmds = 1;
	enpu_submit_ok(self->fd, &self->sub);
}

TEST_F(submit, cs_bad_command)
{
	struct enpu_cs_copy *c = first_copy(&self->cs);

	c->hdr.opcode = ENPU_OP_COUNT;	/* unknown opcode */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->hdr.opcode = 0xffff;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->hdr.opcode = ENPU_OP_COPY;
	c->hdr.size -= 8;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->hdr.size += 8;
	c->hdr.flags = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->hdr.flags = 0;
	c->src.reserved = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->src.reserved = 0;
	c->src.dim[2] = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->src.dim[2] = ENPU_CS_MAX_DIM + 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->src.dim[2] = 1;
	c->dst.dim[3] = 254;	/* dims differ */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->dst.dim[3] = 255;
	c->src.region = 2;	/* no such region */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->src.region = ENPU_CS_NO_REGION;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->src.region = 0;
	enpu_submit_ok(self->fd, &self->sub);
}

TEST_F(submit, cs_region_past_bo_end)
{
	struct enpu_cs_copy *c = first_copy(&self->cs);

	c->dst.offset = PAGE - 254;	/* last byte one past the end */
	enpu_submit_err(self->fd, &self->sub, ERANGE);
	c->dst.offset = PAGE - 255;	/* exactly fits */
	enpu_submit_ok(self->fd, &self->sub);
	c->dst.offset = 0;
	c->src.stride[3] = 17;		/* strided read past the end */
	enpu_submit_err(self->fd, &self->sub, ERANGE);
	c->src.stride[3] = 1;
	c->src.dim[0] = 2;		/* a second block past the end */
	c->src.stride[0] = PAGE;
	c->dst.dim[0] = 2;
	c->dst.stride[0] = 0;
	enpu_submit_err(self->fd, &self->sub, ERANGE);
}

TEST_F(submit, cs_extent_overflow)
{
	struct enpu_cs_copy *c = first_copy(&self->cs);

	c->src.offset = ~0ull - 100;	/* offset + extent wraps */
	enpu_submit_err(self->fd, &self->sub, ERANGE);
	c->src.offset = 0;
	c->src.dim[0] = ENPU_CS_MAX_DIM;
	c->src.dim[1] = ENPU_CS_MAX_DIM;
	c->src.dim[2] = ENPU_CS_MAX_DIM;
	c->src.dim[3] = ENPU_CS_MAX_DIM;
	c->src.stride[0] = c->src.stride[1] = c->src.stride[2] = c->src.stride[3] = ~0u;
	memcpy(c->dst.dim, c->src.dim, sizeof(c->dst.dim));
	enpu_submit_err(self->fd, &self->sub, ERANGE);
}

TEST_F(submit, cs_bad_params)
{
	struct enpu_cs *cs = &self->cs;
	struct enpu_cs_pool *p;
	struct enpu_cs_eltwise *e;

	enpu_cs_begin(cs);
	p = enpu_cs_add(cs, ENPU_OP_POOL, sizeof(*p));
	p->in = enpu_tensor(0, 0, 1, 4, 4, 8);
	p->out = enpu_tensor(1, 0, 1, 2, 2, 8);
	p->quant.act_min = -128;
	p->quant.act_max = 127;
	p->mode = ENPU_POOL_MAX;
	p->kernel_h = p->kernel_w = 2;
	p->stride_h = p->stride_w = 2;
	self->job.cs_size = enpu_cs_end(cs);
	enpu_submit_ok(self->fd, &self->sub);
	p->mode = 7;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	p->mode = ENPU_POOL_MAX;
	p->stride_h = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	p->stride_h = 2;
	p->pad_top = 2;	/* a window entirely in padding */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	p->pad_top = 0;
	p->out.dim[1] = 3;	/* wrong output shape */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	p->out.dim[1] = 2;
	p->quant.act_min = 10;
	p->quant.act_max = 5;	/* empty clamp */
	enpu_submit_err(self->fd, &self->sub, EINVAL);

	enpu_cs_begin(cs);
	e = enpu_cs_add(cs, ENPU_OP_ELTWISE, sizeof(*e));
	e->a = enpu_tensor(0, 0, 1, 1, 4, 8);
	e->b = enpu_tensor(0, 0, 1, 1, 1, 8);	/* broadcast */
	e->out = enpu_tensor(1, 0, 1, 1, 4, 8);
	e->quant = enpu_quant_identity();
	e->op = ENPU_ELTWISE_MUL;
	self->job.cs_size = enpu_cs_end(cs);
	enpu_submit_ok(self->fd, &self->sub);
	e->b.dim[3] = 4;	/* neither equal nor 1 */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	e->b.dim[3] = 8;
	e->quant.out_shift = 31;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	e->quant.out_shift = 0;
	e->quant.out_mult = -1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	e->quant.out_mult = 1 << 30;
	e->quant.in_zp = 128;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	e->quant.in_zp = 0;
	e->a_mult = 5;	/* ADD-only field on MUL */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	e->a_mult = 0;
	e->op = 2;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
}

TEST_F(submit, cs_bad_conv_shapes)
{
	struct enpu_cs *cs = &self->cs;
	struct enpu_cs_conv2d *c;

	enpu_cs_begin(cs);
	c = enpu_cs_add(cs, ENPU_OP_CONV2D, sizeof(*c));
	c->in = enpu_tensor(0, 0, 1, 5, 5, 4);
	c->weights = enpu_tensor(0, 128, 8, 3, 3, 2);
	c->bias = enpu_tensor_none();
	c->requant = enpu_tensor_none();
	c->out = enpu_tensor(1, 0, 1, 3, 3, 8);
	c->quant = enpu_quant_identity();
	c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
	c->groups = 2;
	self->job.cs_size = enpu_cs_end(cs);
	enpu_submit_ok(self->fd, &self->sub);
	c->groups = 3;	/* does not divide the channels */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->groups = 0;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->groups = 2;
	c->dil_h = 3;	/* kernel larger than the input */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->dil_h = 1;
	c->bias = enpu_tensor(0, 0, 7, 1, 1, 1);	/* wrong bias length */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->bias = enpu_tensor(0, PAGE - 16, 8, 1, 1, 1);
	c->bias.stride[0] = 4;	/* 32 bytes of bias do not fit */
	enpu_submit_err(self->fd, &self->sub, ERANGE);
	c->bias = enpu_tensor_none();
	c->bias.offset = 4;	/* absent but not zeroed */
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	c->bias = enpu_tensor_none();
	c->reserved = 1;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
}

TEST_F(submit, bad_input_queues_nothing)
{
	struct drm_enpu_job jobs[2];
	struct drm_enpu_bo_wait w = { .handle = self->bo[1] };

	/* job 0 is valid, job 1 is not: nothing runs */
	jobs[0] = self->job;
	jobs[1] = self->job;
	jobs[1].bo_count = 1;	/* its copy needs region 1 */
	self->sub.jobs_ptr = (uintptr_t)jobs;
	self->sub.job_count = 2;
	enpu_submit_err(self->fd, &self->sub, EINVAL);
	w.timeout_ns = enpu_now_ns() + WAIT_NS;
	enpu_bo_wait_ok(self->fd, &w);
	ASSERT_EQ(0, self->map[1][0]);
}

TEST_HARNESS_MAIN
