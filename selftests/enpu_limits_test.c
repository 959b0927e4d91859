// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * The per-job work limit and prompt resets. Stride-0 tensors let a tiny
 * buffer stand for huge dims, so a command's cost is bounded by the work
 * limit (ENPU_CS_MAX_WORK, QUERY's max_job_work), not by its buffers: a
 * stream over it is refused with E2BIG, one at it finishes in bounded time,
 * and a reset stops even a single long command promptly because the engine
 * polls for it inside its inner loops. Also: a job that makes no progress
 * is reset at its first timeout, module parameters are range-checked, and a
 * hardware fence that outlives its file holds the module. Tests that slow
 * the engine down use the module's test_delay_us and test_hooks knobs and
 * skip without them.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define PAGE 4096
#define SEC 1000000000ll

FIXTURE(limits) {
	int fd;
	int slowed;
	uint32_t bo;
	uint8_t *map;
	uint32_t syncobj;
	struct drm_enpu_query_device dev;
	struct enpu_cs cs;
};

FIXTURE_SETUP(limits)
{
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE,
				    .size = sizeof(self->dev),
				    .ptr = (uintptr_t)&self->dev };

	self->fd = enpu_open();
	if (self->fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
	enpu_query_ok(self->fd, &q);
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &self->bo));
	self->map = enpu_bo_map(self->fd, self->bo, PAGE);
	ASSERT_NE(NULL, self->map);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &self->syncobj));
}

FIXTURE_TEARDOWN(limits)
{
	if (self->slowed)
		enpu_set_param("test_delay_us", "0");
	if (self->fd >= 0)
		close(self->fd);
}

/* one CONV2D output element over a (1, 1, kw, ic) receptive field */
static void add_conv_one_output(struct enpu_cs *cs, uint32_t kw, uint32_t ic, uint32_t oc)
{
	struct enpu_cs_conv2d *c = enpu_cs_add(cs, ENPU_OP_CONV2D, sizeof(*c));

	c->in = enpu_tensor_bcast(1, 1, kw, ic);
	c->weights = enpu_tensor_bcast(oc, 1, kw, ic);
	c->out = enpu_tensor_bcast(1, 1, 1, oc);
	c->bias = enpu_tensor_none();
	c->requant = enpu_tensor_none();
	c->quant = enpu_quant_identity();
	c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
	c->groups = 1;
}

static int submit_cs(FIXTURE_DATA(limits) *self, uint32_t len, uint32_t flags)
{
	struct enpu_job_desc d = {
		.cs = self->cs.buf, .cs_size = len, .flags = flags,
		.handles = &self->bo, .bo_count = 1, .out_syncobj = self->syncobj,
	};

	return enpu_submit_one(self->fd, &d);
}

TEST_F(limits, query_reports_the_work_limit)
{
	ASSERT_EQ(ENPU_CS_MAX_WORK, self->dev.max_job_work);
}

TEST_F(limits, over_the_limit_is_refused_with_e2big)
{
	long submitted = enpu_stat("jobs_submitted");
	struct enpu_cs *cs = &self->cs;

	/* the audit's CONV2D: about 2.8e14 MACs on a 1-byte region */
	enpu_cs_begin(cs);
	add_conv_one_output(cs, 65535, 65535, 65535);
	ASSERT_EQ(-E2BIG, submit_cs(self, enpu_cs_end(cs), 0));
	/* MATMUL N = K = 65535: 4.3e9 MACs in one output row */
	enpu_cs_begin(cs);
	enpu_cs_add_bcast_matmul(cs, 1, 65535, 65535);
	ASSERT_EQ(-E2BIG, submit_cs(self, enpu_cs_end(cs), 0));
	/* B * M * N * (K + 16): one unit over the limit */
	enpu_cs_begin(cs);
	enpu_cs_add_bcast_matmul(cs, 1, self->dev.max_job_work / 65536, 65536 - 16);
	enpu_cs_add_bcast_matmul(cs, 1, 1, 1);
	ASSERT_EQ(-E2BIG, submit_cs(self, enpu_cs_end(cs), 0));
	/* many commands, each small enough, together too much */
	enpu_cs_begin(cs);
	while (cs->num_cmds < 9)
		enpu_cs_add_bcast_matmul(cs, 1, self->dev.max_job_work / 65536 / 8, 65536 - 16);
	ASSERT_EQ(-E2BIG, submit_cs(self, enpu_cs_end(cs), 0));
	/* nothing was queued: the out-syncobj never got a fence */
	ASSERT_EQ(-EINVAL, enpu_syncobj_status(self->fd, self->syncobj));
	if (submitted >= 0)
		ASSERT_EQ(submitted, enpu_stat("jobs_submitted"));
}

/*
 * Jobs at the limit, shaped so that one command or one output row holds
 * all the work, finish in bounded time. The limit is chosen so that this
 * is well inside the default 2 s job timeout even under QEMU TCG.
 */
TEST_F(limits, jobs_at_the_limit_finish)
{
	struct enpu_cs *cs = &self->cs;
	uint64_t lim = self->dev.max_job_work;
	int64_t t0, dt, worst = 0;
	int which;

	for (which = 0; which < 4; which++) {
		struct enpu_cs_copy *cp;

		enpu_cs_begin(cs);
		switch (which) {
		case 0:	/* one output element: KW * (IC + 4) + 16 units */
			add_conv_one_output(cs, (lim - 16) / (65535 + 4), 65535, 1);
			break;
		case 1:	/* a MATMUL exactly at the limit, in one output row */
			enpu_cs_add_bcast_matmul(cs, 1, lim / 65536, 65536 - 16);
			break;
		case 2:	/* a depthwise-like kernel: one channel per tap */
			add_conv_one_output(cs, 65535, 1, (lim - 16) / (65535 * 5 + 16));
			break;
		case 3:	/* a COPY of 1-byte rows: 4 + 16 units per row */
			cp = enpu_cs_add(cs, ENPU_OP_COPY, sizeof(*cp));
			cp->src = enpu_tensor_bcast(1, lim / 20 / 65535, 65535, 1);
			cp->dst = cp->src;
			break;
		}
		t0 = enpu_now_ns();
		ASSERT_EQ(0, submit_cs(self, enpu_cs_end(cs), 0)) {
			TH_LOG("job %d", which);
		}
		ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, 60 * SEC));
		dt = enpu_now_ns() - t0;
		ASSERT_EQ(1, enpu_syncobj_status(self->fd, self->syncobj)) {
			TH_LOG("job %d failed after %lld ms", which, (long long)dt / 1000000);
		}
		TH_LOG("job %d at the limit: %lld ms", which, (long long)dt / 1000000);
		if (dt > worst)
			worst = dt;
	}
	/* generous: the VM's vCPUs share their host with other work */
	ASSERT_LT(worst, 10 * SEC);
}

/*
 * A single command just under the limit, slowed down to take tens of
 * seconds, on a job the timeout treats as hung: the reset must stop it in
 * the middle of its one output element, within about one job timeout, and
 * the engine must then serve the next job.
 */
TEST_F(limits, reset_stops_a_long_command_promptly)
{
	struct enpu_cs *cs = &self->cs;
	int64_t t0, dt, full;
	uint32_t kw;
	char buf[16];

	if (enpu_get_param("test_hooks") != 1 && enpu_set_param("test_hooks", "1"))
		SKIP(return, "test_hooks is off and cannot be set");
	/* 20 ms per poll, about one poll per 64K units: ~1000 polls */
	snprintf(buf, sizeof(buf), "%u", 20000);
	if (enpu_set_param("test_delay_us", buf))
		SKIP(return, "cannot set test_delay_us");
	self->slowed = 1;
	kw = (self->dev.max_job_work - 16) / (65535 + 4) - 1;
	full = (int64_t)kw * (65535 + 4) / 65536 * 20 * 1000000;
	memset(self->map, 0x5a, PAGE);
	enpu_cs_begin(cs);
	add_conv_one_output(cs, kw, 65535, 1);
	t0 = enpu_now_ns();
	ASSERT_EQ(0, submit_cs(self, enpu_cs_end(cs), ENPU_JOB_TEST_HANG));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, 120 * SEC));
	dt = enpu_now_ns() - t0;
	TH_LOG("reset after %lld ms (timeout %u ms; the command alone takes ~%lld ms)",
	       (long long)dt / 1000000, self->dev.job_timeout_ms, (long long)full / 1000000);
	ASSERT_EQ(-ETIMEDOUT, enpu_syncobj_status(self->fd, self->syncobj));
	/* stopped inside the command: its one output byte was never written */
	ASSERT_EQ(0x5a, self->map[0]);
	/* within a few timeouts, far sooner than the command would take */
	ASSERT_LT(dt, (int64_t)self->dev.job_timeout_ms * 1000000 * 4 + 2 * SEC);
	ASSERT_LT(dt, full / 2);

	/* the engine keeps serving */
	enpu_set_param("test_delay_us", "0");
	self->slowed = 0;
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 3, 0, self->syncobj));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, 10 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, self->syncobj));
}

/*
 * The engine's test delay comes before the unit of work counts as progress,
 * so with a delay of three timeouts a one-command job shows no progress for
 * three timeouts: it must be reset at the first one (the core's progress
 * counter is cumulative, so the job's starting point is its value when the
 * job started, not 0), and the reset cuts the delay short.
 */
TEST_F(limits, no_progress_is_reset_at_the_first_timeout)
{
	uint32_t timeout_ms = self->dev.job_timeout_ms;
	long resets = enpu_stat("resets");
	int64_t t0, dt;
	char buf[16];

	if ((uint64_t)timeout_ms * 3000 > 10000000)
		SKIP(return, "job timeout too long for this test");
	snprintf(buf, sizeof(buf), "%u", timeout_ms * 3000);
	if (enpu_set_param("test_delay_us", buf))
		SKIP(return, "cannot set test_delay_us");
	self->slowed = 1;
	/* let the core run something first, so that its counter is not 0 */
	t0 = enpu_now_ns();
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 1, 0, self->syncobj));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, 60 * SEC));
	dt = enpu_now_ns() - t0;
	TH_LOG("no-progress job reset after %lld ms (timeout %u ms)",
	       (long long)dt / 1000000, timeout_ms);
	ASSERT_EQ(-ETIMEDOUT, enpu_syncobj_status(self->fd, self->syncobj));
	/* one timeout, not two (the engine's delay would end after three) */
	ASSERT_LT(dt, (int64_t)timeout_ms * 1000000 * 3 / 2);
	if (resets >= 0)
		ASSERT_LT(resets, enpu_stat("resets"));
	enpu_set_param("test_delay_us", "0");
	self->slowed = 0;
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 2, 0, self->syncobj));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, self->syncobj, 10 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, self->syncobj));
}

TEST_F(limits, module_params_are_range_checked)
{
	if (enpu_get_param("test_delay_us") < 0)
		SKIP(return, "no /sys/module/enpu/parameters");
	if (enpu_set_param("test_delay_us", "0"))
		SKIP(return, "cannot set test_delay_us");
	ASSERT_EQ(-EINVAL, enpu_set_param("test_delay_us", "10000001"));
	ASSERT_EQ(-EINVAL, enpu_set_param("test_delay_us", "-1"));
	ASSERT_EQ(-EINVAL, enpu_set_param("test_delay_us", "fast"));
	ASSERT_EQ(0, enpu_get_param("test_delay_us"));
	/* the load-time ones are read-only, and were checked at load */
	ASSERT_GE(enpu_get_param("job_timeout_ms"), 10);
	ASSERT_GE(enpu_get_param("cores"), 1);
	ASSERT_LE(enpu_get_param("cores"), 8);
	ASSERT_EQ(-EACCES, enpu_set_param("job_timeout_ms", "0"));
}

static long module_refcnt(void)
{
	char buf[32] = { 0 };
	int fd = open("/sys/module/enpu/refcnt", O_RDONLY);
	long n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

/* wait up to 10 s for the module's reference count to settle at want (or any, -1) */
static long refcnt_settle(long want)
{
	long prev = module_refcnt(), cur;
	int i, same = 0;

	for (i = 0; i < 200; i++) {
		usleep(50000);
		cur = module_refcnt();
		if (want >= 0 && cur == want)
			return cur;
		same = cur == prev ? same + 1 : 0;
		if (want < 0 && same >= 4)
			return cur;
		prev = cur;
	}
	return module_refcnt();
}

/*
 * A sync_file exported from an out-syncobj keeps the job's fences alive
 * after the syncobj, the job and the file that ran it are gone. The
 * hardware fence among them holds a module reference until it is released,
 * so rmmod cannot pull its ops out from under it.
 */
TEST_F(limits, live_fence_holds_the_module)
{
	struct drm_syncobj_handle h = {
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE, .fd = -1,
	};
	uint32_t s;
	long r0;
	int fd2;

	if (module_refcnt() < 0)
		SKIP(return, "no /sys/module/enpu/refcnt");
	r0 = refcnt_settle(-1);
	fd2 = enpu_open();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, enpu_syncobj_new(fd2, 0, &s));
	ASSERT_EQ(0, enpu_submit_nops(fd2, 1, 0, s));
	ASSERT_EQ(0, enpu_syncobj_wait(fd2, s, 10 * SEC));
	h.handle = s;
	ASSERT_EQ(0, enpu_ioctl(fd2, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h));
	close(fd2);
	/* file, syncobj and job are gone; the hardware fence lives in the sync_file */
	ASSERT_EQ(r0 + 1, refcnt_settle(r0 + 1));
	close(h.fd);
	ASSERT_EQ(r0, refcnt_settle(r0));
}

TEST_HARNESS_MAIN
