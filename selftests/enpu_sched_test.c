// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Jobs in flight: syncobj chains, syncobj waits across files, SUBMIT is all
 * or nothing, implicit sync through shared BOs,
 * BO_WAIT, hang injection and recovery, progress-aware timeouts, closing
 * the fd and killing the process with jobs queued, many processes at once.
 * Tests that slow the engine down use the module's test_delay_us knob and
 * skip when it cannot be set (no root, or an older module).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define PAGE 4096
#define SEC 1000000000ll

FIXTURE(sched) {
	int fd;
	int slowed;
	int fail_hook;
};

FIXTURE_SETUP(sched)
{
	self->fd = enpu_open();
	if (self->fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
}

FIXTURE_TEARDOWN(sched)
{
	if (self->slowed)
		enpu_set_param("test_delay_us", "0");
	if (self->fail_hook)
		enpu_set_param("test_fail_submit", "0");
	if (self->fd >= 0)
		close(self->fd);
}

/* Make every unit of engine work take us microseconds; 0 when not possible. */
static int slow_engine(int *slowed, unsigned int us)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", us);
	if (enpu_set_param("test_delay_us", buf))
		return 0;
	*slowed = 1;
	return 1;
}

/* a job copying n bytes from src to dst, after in[] (timeline points or binary) */
static int copy_job_pt(int fd, uint32_t src, uint32_t dst, uint32_t n,
		       const struct drm_enpu_syncobj *in, uint32_t in_count,
		       uint32_t out, uint64_t out_point)
{
	static struct enpu_cs cs;
	uint32_t handles[2] = { src, dst };
	uint32_t flags[2] = { ENPU_JOB_BO_READ, ENPU_JOB_BO_WRITE };
	struct enpu_job_desc d = {
		.cs = cs.buf, .handles = handles, .bo_flags = flags, .bo_count = 2,
		.in_syncobjs = in, .in_count = in_count,
		.out_syncobj = out, .out_point = out_point,
	};

	d.cs_size = enpu_cs_copy_bytes(&cs, 0, 0, 1, 0, n);
	return enpu_submit_one(fd, &d);
}

/* the same with binary syncobjs only */
static int copy_job(int fd, uint32_t src, uint32_t dst, uint32_t n, const uint32_t *in,
		    uint32_t in_count, uint32_t out)
{
	struct drm_enpu_syncobj e[4];
	uint32_t i;

	for (i = 0; i < in_count && i < 4; i++)
		e[i] = enpu_in(in[i], 0);
	return copy_job_pt(fd, src, dst, n, e, in_count, out, 0);
}

/*
 * A child process of its own file with @n copy jobs queued, waiting to be
 * killed: its pid once the jobs are submitted, or -1.
 */
static pid_t child_with_jobs(int n)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (!pid) {
		int fd = enpu_open(), i;
		uint32_t a, b;

		if (fd < 0 || enpu_bo_new(fd, PAGE, &a) || enpu_bo_new(fd, PAGE, &b))
			_exit(1);
		for (i = 0; i < n; i++)
			copy_job(fd, a, b, PAGE, NULL, 0, 0);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

TEST_F(sched, syncobj_chain)
{
	uint32_t s[4], bo[4];
	uint8_t *m[4];
	int i;

	slow_engine(&self->slowed, 2000);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s[i]));
		ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &bo[i]));
		m[i] = enpu_bo_map(self->fd, bo[i], PAGE);
		ASSERT_NE(NULL, m[i]);
	}
	memset(m[0], 0x77, PAGE);
	/* bo0 -> bo1 -> bo2 -> bo3, each job waiting for the previous */
	ASSERT_EQ(0, copy_job(self->fd, bo[0], bo[1], PAGE, NULL, 0, s[1]));
	ASSERT_EQ(0, copy_job(self->fd, bo[1], bo[2], PAGE, &s[1], 1, s[2]));
	ASSERT_EQ(0, copy_job(self->fd, bo[2], bo[3], PAGE, &s[2], 1, s[3]));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s[3], 10 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, s[1]));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, s[2]));
	for (i = 0; i < PAGE; i += 97)
		ASSERT_EQ(0x77, m[3][i]);
}

TEST_F(sched, syncobj_orders_unrelated_jobs)
{
	uint32_t s1, s2, a, b, c, d;
	uint8_t *mb, *md;

	if (!slow_engine(&self->slowed, 20000))
		SKIP(return, "cannot set test_delay_us");
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s1));
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s2));
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &a));
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &b));
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &c));
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &d));
	mb = enpu_bo_map(self->fd, b, PAGE);
	md = enpu_bo_map(self->fd, d, PAGE);
	/* the first job is slow (64 rows, 20 ms each); the second shares no BO */
	ASSERT_EQ(0, copy_job(self->fd, a, b, PAGE, NULL, 0, s1));
	ASSERT_EQ(0, copy_job(self->fd, c, d, 16, &s1, 1, s2));
	ASSERT_EQ(0, enpu_syncobj_status(self->fd, s2));	/* still waiting */
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s2, 20 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, s1));
	(void)mb;
	(void)md;
}

/*
 * Two files with two BOs each (a and b on file A, c and d on file B; no BO
 * shared, so no implicit sync), a syncobj of file A imported into file B
 * (the syncobj itself, not a sync_file), and a syncobj of file B's own.
 */
struct two_files {
	int fd2;
	uint32_t a, b, c, d;
	uint8_t *mb, *md;
	uint32_t sa, sa_in_b, s2;
};

static int two_files_open(int fd, uint8_t fill_a, uint8_t fill_c, struct two_files *t)
{
	struct drm_syncobj_handle exp = { .flags = 0, .fd = -1 };
	struct drm_syncobj_handle imp = { .fd = -1 };
	uint8_t *ma, *mc;
	int ret;

	t->fd2 = enpu_open();
	if (t->fd2 < 0 || enpu_bo_new(fd, PAGE, &t->a) || enpu_bo_new(fd, PAGE, &t->b) ||
	    enpu_bo_new(t->fd2, PAGE, &t->c) || enpu_bo_new(t->fd2, PAGE, &t->d))
		return -1;
	ma = enpu_bo_map(fd, t->a, PAGE);
	mc = enpu_bo_map(t->fd2, t->c, PAGE);
	t->mb = enpu_bo_map(fd, t->b, PAGE);
	t->md = enpu_bo_map(t->fd2, t->d, PAGE);
	if (!ma || !mc || !t->mb || !t->md)
		return -1;
	memset(ma, fill_a, PAGE);
	memset(mc, fill_c, PAGE);
	if (enpu_syncobj_new(fd, 0, &t->sa))
		return -1;
	exp.handle = t->sa;
	if (enpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &exp))
		return -1;
	imp.fd = exp.fd;
	ret = enpu_ioctl(t->fd2, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp);
	close(exp.fd);
	if (ret)
		return -1;
	t->sa_in_b = imp.handle;
	return enpu_syncobj_new(t->fd2, 0, &t->s2);
}

/* Job 1 copied all of a into b, job 2 the first 16 bytes of c into d. */
static int two_files_copied(const struct two_files *t, uint8_t fill_a, uint8_t fill_c)
{
	for (int i = 0; i < PAGE; i += 67)
		if (t->mb[i] != fill_a)
			return 0;
	return t->mb[PAGE - 1] == fill_a && t->md[15] == fill_c;
}

/*
 * A syncobj shared between two files (two drm_sched entities, so drm_sched
 * does not drop the dependency as it does within one entity), by jobs that
 * share no BO (so there is no implicit sync): only the syncobj orders them.
 * Job 1 on file A is slow; job 2 on file B is short and waits for job 1's
 * out-syncobj. First, without the wait, job 2 finishes while job 1 still
 * runs (the two files run in parallel); then, with it, job 2 must not
 * finish before job 1.
 */
TEST_F(sched, syncobj_wait_across_files)
{
	struct two_files t;

	if (!slow_engine(&self->slowed, 20000))
		SKIP(return, "cannot set test_delay_us");
	ASSERT_EQ(0, two_files_open(self->fd, 0x4b, 0x2d, &t));

	/* control: no wait, so job 2 (one 16-byte row) overtakes job 1 (64 rows) */
	ASSERT_EQ(0, copy_job(self->fd, t.a, t.b, PAGE, NULL, 0, t.sa));
	ASSERT_EQ(0, copy_job(t.fd2, t.c, t.d, 16, NULL, 0, t.s2));
	ASSERT_EQ(0, enpu_syncobj_wait(t.fd2, t.s2, 20 * SEC));
	ASSERT_EQ(0, enpu_syncobj_status(self->fd, t.sa));	/* job 1 still running */
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, t.sa, 30 * SEC));
	memset(t.mb, 0, PAGE);
	memset(t.md, 0, PAGE);

	/* job 2 on file B waits for job 1 on file A through the shared syncobj */
	ASSERT_EQ(0, copy_job(self->fd, t.a, t.b, PAGE, NULL, 0, t.sa));
	ASSERT_EQ(0, copy_job(t.fd2, t.c, t.d, 16, &t.sa_in_b, 1, t.s2));
	ASSERT_EQ(0, enpu_syncobj_status(t.fd2, t.s2));		/* still waiting */
	ASSERT_EQ(0, enpu_syncobj_wait(t.fd2, t.s2, 30 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(t.fd2, t.s2));
	/* job 1 finished before job 2 did: its fence and its whole output */
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, t.sa));
	ASSERT_EQ(1, enpu_syncobj_status(t.fd2, t.sa_in_b));
	ASSERT_TRUE(two_files_copied(&t, 0x4b, 0x2d));
	close(t.fd2);
}

/*
 * The same across two files with timeline syncobjs: job 1 on file A
 * signals point 1 of a timeline shared with file B; job 2 on file B (no
 * shared BO) waits for that point and signals point 1 of a timeline of its
 * own. First, without the wait, job 2 finishes while job 1 still runs;
 * then, with it, job 2 must not finish before job 1.
 */
TEST_F(sched, timeline_wait_across_files)
{
	struct drm_enpu_bo_wait w = { 0 };
	struct drm_enpu_syncobj in;
	struct two_files t;
	uint64_t pt;

	if (!slow_engine(&self->slowed, 20000))
		SKIP(return, "cannot set test_delay_us");
	ASSERT_EQ(0, two_files_open(self->fd, 0x5e, 0x3f, &t));

	/* control: no wait, so job 2 (one 16-byte row) overtakes job 1 (64 rows) */
	ASSERT_EQ(0, copy_job_pt(self->fd, t.a, t.b, PAGE, NULL, 0, 0, 0));
	ASSERT_EQ(0, copy_job_pt(t.fd2, t.c, t.d, 16, NULL, 0, 0, 0));
	w.handle = t.d;
	w.timeout_ns = enpu_now_ns() + 20 * SEC;
	enpu_bo_wait_ok(t.fd2, &w);
	w.handle = t.b;
	w.timeout_ns = 0;
	enpu_bo_wait_err(self->fd, &w, ETIMEDOUT);	/* job 1 still running */
	w.timeout_ns = enpu_now_ns() + 30 * SEC;
	enpu_bo_wait_ok(self->fd, &w);
	memset(t.mb, 0, PAGE);
	memset(t.md, 0, PAGE);

	/* job 2 on file B waits for point 1, which job 1 on file A signals */
	ASSERT_EQ(0, copy_job_pt(self->fd, t.a, t.b, PAGE, NULL, 0, t.sa, 1));
	in = enpu_in(t.sa_in_b, 1);
	ASSERT_EQ(0, copy_job_pt(t.fd2, t.c, t.d, 16, &in, 1, t.s2, 1));
	ASSERT_EQ(0, enpu_timeline_query(t.fd2, t.s2, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED,
					 &pt));
	ASSERT_EQ(1, pt);
	ASSERT_EQ(0, enpu_timeline_query(t.fd2, t.s2, 0, &pt));
	ASSERT_EQ(0, pt);					/* still waiting */
	ASSERT_EQ(0, enpu_timeline_wait(t.fd2, t.s2, 1, 30 * SEC, 0));
	/* job 1 finished before job 2 did: its point and its whole output */
	ASSERT_EQ(0, enpu_timeline_query(self->fd, t.sa, 0, &pt));
	ASSERT_EQ(1, pt);
	ASSERT_EQ(0, enpu_timeline_query(t.fd2, t.sa_in_b, 0, &pt));
	ASSERT_EQ(1, pt);
	ASSERT_TRUE(two_files_copied(&t, 0x5e, 0x3f));
	close(t.fd2);
}

TEST_F(sched, implicit_sync_across_files)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
	struct drm_prime_handle imp = { 0 };
	uint32_t src, shared, dst2, s;
	uint8_t *msrc, *mdst;
	int fd2, i;

	if (!slow_engine(&self->slowed, 3000))
		SKIP(return, "cannot set test_delay_us");
	fd2 = enpu_open();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &src));
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &shared));
	msrc = enpu_bo_map(self->fd, src, PAGE);
	memset(msrc, 0x3c, PAGE);
	exp.handle = shared;
	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, enpu_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	ASSERT_EQ(0, enpu_bo_new(fd2, PAGE, &dst2));
	mdst = enpu_bo_map(fd2, dst2, PAGE);
	ASSERT_EQ(0, enpu_syncobj_new(fd2, 0, &s));
	/* writer on file 1 (slow), reader on file 2: no syncobj between them */
	ASSERT_EQ(0, copy_job(self->fd, src, shared, PAGE, NULL, 0, 0));
	ASSERT_EQ(0, copy_job(fd2, imp.handle, dst2, PAGE, NULL, 0, s));
	ASSERT_EQ(0, enpu_syncobj_wait(fd2, s, 20 * SEC));
	for (i = 0; i < PAGE; i += 61)
		ASSERT_EQ(0x3c, mdst[i]);
	close(exp.fd);
	close(fd2);
}

/* Up to three copy jobs in one SUBMIT, for the all-or-nothing tests. */
struct multi_submit {
	struct enpu_cs cs[3];
	struct drm_enpu_job_bo bos[3][2];
	struct drm_enpu_job jobs[3];
};

static void multi_copy(struct multi_submit *m, int i, uint32_t src, uint32_t dst,
		       uint32_t out)
{
	struct drm_enpu_job *j = &m->jobs[i];

	memset(j, 0, sizeof(*j));
	m->bos[i][0].handle = src;
	m->bos[i][0].flags = ENPU_JOB_BO_READ;
	m->bos[i][1].handle = dst;
	m->bos[i][1].flags = ENPU_JOB_BO_WRITE;
	j->cs_ptr = (uintptr_t)m->cs[i].buf;
	j->cs_size = enpu_cs_copy_bytes(&m->cs[i], 0, 0, 1, 0, PAGE);
	j->bos_ptr = (uintptr_t)m->bos[i];
	j->bo_count = 2;
	j->bo_stride = sizeof(m->bos[i][0]);
	j->out_syncobj = out;
}

static int multi_submit(int fd, struct multi_submit *m, uint32_t count)
{
	struct drm_enpu_submit s = {
		.jobs_ptr = (uintptr_t)m->jobs,
		.job_count = count,
		.job_stride = sizeof(m->jobs[0]),
	};

	return enpu_submit_raw(fd, &s);
}

static int all_bytes(const uint8_t *p, uint8_t v)
{
	int i;

	for (i = 0; i < PAGE; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/*
 * A failed SUBMIT left nothing behind: no job id taken, no fence in the
 * out-syncobjs or in the output BO's dma_resv, and a job queued after it on
 * the same file (so after anything queued before it) finds the output
 * untouched.
 */
static int submit_left_nothing(int fd, long submitted0, const uint32_t *outs, int n,
			       uint32_t out_bo, const uint8_t *out_map)
{
	struct drm_enpu_bo_wait w = { .handle = out_bo, .timeout_ns = 0 };
	uint32_t s;
	int i;

	if (submitted0 >= 0 && enpu_stat("jobs_submitted") != submitted0)
		return 1;
	for (i = 0; i < n; i++)
		if (enpu_syncobj_status(fd, outs[i]) != -EINVAL)	/* no fence */
			return 2;
	if (enpu_bo_wait_raw(fd, &w))
		return 3;
	if (enpu_syncobj_new(fd, 0, &s) || enpu_submit_nops(fd, 1, 0, s) ||
	    enpu_syncobj_wait(fd, s, 30 * SEC) || enpu_syncobj_status(fd, s) != 1)
		return 4;
	if (!all_bytes(out_map, 0))
		return 5;
	return 0;
}

/*
 * SUBMIT of two jobs where job 2 fails at the last step that can fail (its
 * BOs locked, fence slots reserved, mapped and its dependencies added:
 * the test_fail_submit hook); job 1 must not run.
 */
TEST_F(sched, submit_late_failure_queues_nothing)
{
	static struct multi_submit m;
	uint32_t bo[4], s[2];
	uint8_t *map[4];
	long submitted;
	int i;

	if (enpu_get_param("test_fail_submit") < 0)
		SKIP(return, "module has no test_fail_submit hook");
	if (enpu_get_param("test_hooks") != 1 && enpu_set_param("test_hooks", "1"))
		SKIP(return, "test_hooks is off and cannot be set");
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &bo[i]));
		map[i] = enpu_bo_map(self->fd, bo[i], PAGE);
		ASSERT_NE(NULL, map[i]);
	}
	memset(map[0], 0x5a, PAGE);
	memset(map[2], 0xa5, PAGE);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s[0]));
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s[1]));
	multi_copy(&m, 0, bo[0], bo[1], s[0]);
	multi_copy(&m, 1, bo[2], bo[3], s[1]);

	ASSERT_EQ(0, enpu_set_param("test_fail_submit", "2"));
	self->fail_hook = 1;
	submitted = enpu_stat("jobs_submitted");
	ASSERT_EQ(-ENOMEM, multi_submit(self->fd, &m, 2));
	ASSERT_EQ(0, submit_left_nothing(self->fd, submitted, s, 2, bo[1], map[1]));
	ASSERT_TRUE(all_bytes(map[3], 0));

	/* the same SUBMIT without the hook runs both jobs */
	ASSERT_EQ(0, enpu_set_param("test_fail_submit", "0"));
	ASSERT_EQ(0, multi_submit(self->fd, &m, 2));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s[1], 30 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, s[0]));
	ASSERT_TRUE(all_bytes(map[1], 0x5a));
	ASSERT_TRUE(all_bytes(map[3], 0xa5));
}

/* Bad handles in a later job, found without any test hook. */
TEST_F(sched, submit_bad_later_job_queues_nothing)
{
	static struct multi_submit m;
	struct drm_enpu_syncobj bad_in = { .handle = 0x7fff0000 };
	uint32_t bo[4], s[3];
	uint8_t *map[4];
	long submitted;
	int i;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &bo[i]));
		map[i] = enpu_bo_map(self->fd, bo[i], PAGE);
		ASSERT_NE(NULL, map[i]);
	}
	memset(map[0], 0x11, PAGE);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s[i]));
	multi_copy(&m, 0, bo[0], bo[1], s[0]);
	multi_copy(&m, 1, bo[0], bo[2], s[1]);
	multi_copy(&m, 2, bo[0], bo[3], s[2]);

	/* job 3 waits on a syncobj handle that does not exist */
	m.jobs[2].in_syncobjs_ptr = (uintptr_t)&bad_in;
	m.jobs[2].in_syncobj_count = 1;
	m.jobs[2].in_syncobj_stride = sizeof(bad_in);
	submitted = enpu_stat("jobs_submitted");
	ASSERT_EQ(-ENOENT, multi_submit(self->fd, &m, 3));
	ASSERT_EQ(0, submit_left_nothing(self->fd, submitted, s, 3, bo[1], map[1]));

	/* job 2's BO list names a handle that does not exist */
	m.jobs[2].in_syncobj_count = 0;
	m.bos[1][1].handle = 0x7fff0000;
	submitted = enpu_stat("jobs_submitted");
	ASSERT_EQ(-ENOENT, multi_submit(self->fd, &m, 3));
	ASSERT_EQ(0, submit_left_nothing(self->fd, submitted, s, 3, bo[1], map[1]));

	/* job 2's out-syncobj does not exist */
	m.bos[1][1].handle = bo[2];
	m.jobs[1].out_syncobj = 0x7fff0000;
	submitted = enpu_stat("jobs_submitted");
	ASSERT_EQ(-ENOENT, multi_submit(self->fd, &m, 3));
	ASSERT_EQ(0, submit_left_nothing(self->fd, submitted, s, 3, bo[1], map[1]));
	ASSERT_TRUE(all_bytes(map[2], 0));
	ASSERT_TRUE(all_bytes(map[3], 0));

	/* fixed, it runs all three jobs (bo[0] is in every job: three fence slots) */
	m.jobs[1].out_syncobj = s[1];
	ASSERT_EQ(0, multi_submit(self->fd, &m, 3));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s[2], 30 * SEC));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(1, enpu_syncobj_status(self->fd, s[i]));
	for (i = 1; i < 4; i++)
		ASSERT_TRUE(all_bytes(map[i], 0x11));
}

TEST_F(sched, bo_wait_busy_then_idle)
{
	struct drm_enpu_bo_wait w = { 0 };
	uint32_t a;

	if (!slow_engine(&self->slowed, 20000))
		SKIP(return, "cannot set test_delay_us");
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &a));
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &w.handle));
	ASSERT_EQ(0, copy_job(self->fd, a, w.handle, PAGE, NULL, 0, 0));
	w.timeout_ns = enpu_now_ns() + 1000000;
	enpu_bo_wait_err(self->fd, &w, ETIMEDOUT);
	w.timeout_ns = 0;	/* a deadline in the past polls */
	enpu_bo_wait_err(self->fd, &w, ETIMEDOUT);
	w.timeout_ns = enpu_now_ns() + 30 * SEC;
	enpu_bo_wait_ok(self->fd, &w);
}

TEST_F(sched, hang_is_reset_and_engine_recovers)
{
	struct drm_enpu_query_device dev;
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE, .size = sizeof(dev),
				    .ptr = (uintptr_t)&dev };
	int64_t t0, dt;
	uint32_t s;

	if (enpu_get_param("test_hooks") != 1 && enpu_set_param("test_hooks", "1"))
		SKIP(return, "test_hooks is off and cannot be set");
	enpu_query_ok(self->fd, &q);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s));
	t0 = enpu_now_ns();
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 1, ENPU_JOB_TEST_HANG, s));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s, 60 * SEC));
	dt = enpu_now_ns() - t0;
	/* completed with an error, after about one job timeout */
	ASSERT_EQ(-ETIMEDOUT, enpu_syncobj_status(self->fd, s));
	ASSERT_GE(dt, (int64_t)dev.job_timeout_ms * 1000000 / 2);
	/* the engine serves the next job */
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 3, 0, s));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s, 10 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, s));
}

TEST_F(sched, hang_does_not_block_other_clients)
{
	uint32_t s1, s2;
	int fd2 = enpu_open();

	if (enpu_get_param("test_hooks") != 1 && enpu_set_param("test_hooks", "1"))
		SKIP(return, "test_hooks is off and cannot be set");
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s1));
	ASSERT_EQ(0, enpu_syncobj_new(fd2, 0, &s2));
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 1, ENPU_JOB_TEST_HANG, s1));
	ASSERT_EQ(0, enpu_submit_nops(fd2, 10, 0, s2));
	ASSERT_EQ(0, enpu_syncobj_wait(fd2, s2, 30 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(fd2, s2));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s1, 60 * SEC));
	ASSERT_EQ(-ETIMEDOUT, enpu_syncobj_status(self->fd, s1));
	close(fd2);
}

TEST_F(sched, long_job_with_progress_is_not_a_hang)
{
	struct drm_enpu_query_device dev;
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE, .size = sizeof(dev),
				    .ptr = (uintptr_t)&dev };
	uint32_t s, n;
	int64_t t0;

	enpu_query_ok(self->fd, &q);
	/* 40 units, each a tenth of the timeout: four timeouts long in total */
	if (!slow_engine(&self->slowed, dev.job_timeout_ms * 100))
		SKIP(return, "cannot set test_delay_us");
	n = 40;
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s));
	t0 = enpu_now_ns();
	ASSERT_EQ(0, enpu_submit_nops(self->fd, n, 0, s));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s, 120 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, s));
	ASSERT_GT(enpu_now_ns() - t0, (int64_t)dev.job_timeout_ms * 1000000);
}

TEST_F(sched, close_fd_with_jobs_in_flight)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
	struct drm_prime_handle imp = { 0 };
	struct drm_enpu_bo_wait w = { 0 };
	uint32_t a, b;
	int fd2, i;

	slow_engine(&self->slowed, 1000);
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &b));
	exp.handle = b;
	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	fd2 = enpu_open();
	ASSERT_GE(fd2, 0);
	imp.fd = exp.fd;
	ASSERT_EQ(0, enpu_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	ASSERT_EQ(0, enpu_bo_new(fd2, PAGE, &a));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, copy_job(fd2, a, imp.handle, PAGE, NULL, 0, 0));
	/* handles, BOs and the file go away while jobs are queued */
	ASSERT_EQ(0, enpu_bo_close(fd2, a));
	close(fd2);
	close(exp.fd);
	w.handle = b;
	w.timeout_ns = enpu_now_ns() + 60 * SEC;
	enpu_bo_wait_ok(self->fd, &w);
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 1, 0, 0));
}

TEST_F(sched, kill_process_with_jobs_in_flight)
{
	uint32_t s;
	int status, r;
	pid_t pid;

	slow_engine(&self->slowed, 1000);
	for (r = 0; r < 3; r++) {
		pid = child_with_jobs(30);
		ASSERT_GT(pid, 0);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status));
	}
	/* the device still serves this process */
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s));
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 1, 0, s));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s, 60 * SEC));
	ASSERT_EQ(1, enpu_syncobj_status(self->fd, s));
}

/*
 * drm_sched (6.12) counts a job in its core's score when it is pushed and
 * uncounts it when it completes, but not when it is killed unrun because
 * its file went away; new files go to the core with the lowest score. The
 * driver uncounts killed jobs itself: after a process with dozens of queued
 * jobs is killed, two new files must still get two different cores (a long
 * job on one, a short job on the other: the short one ends first). Without
 * that, every later file went to the same core.
 */
TEST_F(sched, killed_jobs_leave_the_cores_balanced)
{
	long alive0 = enpu_stat("jobs_alive");
	struct two_files t;
	int status;
	int64_t t0;
	pid_t pid;

	slow_engine(&self->slowed, 1000);
	pid = child_with_jobs(40);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* every job ran or was killed and freed */
	t0 = enpu_now_ns();
	while (alive0 >= 0 && enpu_stat("jobs_alive") > alive0 && enpu_now_ns() - t0 < 30 * SEC)
		usleep(10000);

	ASSERT_TRUE(slow_engine(&self->slowed, 20000));
	ASSERT_EQ(0, two_files_open(self->fd, 0x11, 0x22, &t));
	ASSERT_EQ(0, copy_job(self->fd, t.a, t.b, PAGE, NULL, 0, t.sa));
	ASSERT_EQ(0, copy_job(t.fd2, t.c, t.d, 16, NULL, 0, t.s2));
	ASSERT_EQ(0, enpu_syncobj_wait(t.fd2, t.s2, 20 * SEC));
	ASSERT_EQ(0, enpu_syncobj_status(self->fd, t.sa));	/* still running */
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, t.sa, 30 * SEC));
	close(t.fd2);
}

/* Each child: its own file, BOs and a chain of jobs whose result it checks. */
static int child_worker(int id)
{
	static struct enpu_cs cs;
	uint32_t bo[2], s, handles[2];
	struct enpu_job_desc d = { .cs = cs.buf, .handles = handles, .bo_count = 2 };
	struct enpu_cs_eltwise *e;
	uint8_t *m[2];
	int fd = enpu_open(), i, j;

	if (fd < 0 || enpu_bo_new(fd, PAGE, &bo[0]) || enpu_bo_new(fd, PAGE, &bo[1]) ||
	    enpu_syncobj_new(fd, 0, &s))
		return 1;
	m[0] = enpu_bo_map(fd, bo[0], PAGE);
	m[1] = enpu_bo_map(fd, bo[1], PAGE);
	if (!m[0] || !m[1])
		return 2;
	memset(m[0], id, PAGE);
	/* out = a * b with b = the constant 1: every job copies through MUL */
	handles[0] = bo[0];
	handles[1] = bo[1];
	for (j = 0; j < 20; j++) {
		enpu_cs_begin(&cs);
		e = enpu_cs_add(&cs, ENPU_OP_ELTWISE, sizeof(*e));
		e->a = enpu_tensor(0, 0, 1, 1, 64, 16);
		e->b = enpu_tensor(0, PAGE - 1, 1, 1, 1, 1);
		e->out = enpu_tensor(1, 0, 1, 1, 64, 16);
		e->quant = enpu_quant_identity();
		e->op = ENPU_ELTWISE_MUL;
		m[0][PAGE - 1] = 1;
		d.cs_size = enpu_cs_end(&cs);
		d.out_syncobj = s;
		if (enpu_submit_one(fd, &d))
			return 3;
	}
	if (enpu_syncobj_wait(fd, s, 60 * SEC) || enpu_syncobj_status(fd, s) != 1)
		return 4;
	for (i = 0; i < 1024; i++)
		if (m[1][i] != (uint8_t)id)
			return 5;
	close(fd);
	return 0;
}

TEST_F(sched, many_processes_submitting)
{
	const int n = 8;
	pid_t pids[8];
	int i, status;

	for (i = 0; i < n; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i])
			_exit(child_worker(i + 1));
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
}

TEST_F(sched, job_holds_bo_after_handle_close)
{
	uint32_t a, b, s;
	uint8_t *mb;

	slow_engine(&self->slowed, 2000);
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &a));
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &b));
	mb = enpu_bo_map(self->fd, b, PAGE);
	ASSERT_NE(NULL, mb);
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, 0, &s));
	memset(enpu_bo_map(self->fd, a, PAGE), 0x19, PAGE);
	ASSERT_EQ(0, copy_job(self->fd, a, b, PAGE, NULL, 0, s));
	/* both handles go before the job runs; the job's references keep the BOs */
	ASSERT_EQ(0, enpu_bo_close(self->fd, a));
	ASSERT_EQ(0, enpu_bo_close(self->fd, b));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s, 30 * SEC));
	ASSERT_EQ(0x19, mb[PAGE - 1]);
}

/* After a process that used everything exits, every job and BO is freed. */
TEST_F(sched, no_leaks_after_process_exit)
{
	long jobs0 = enpu_stat("jobs_alive"), bos0 = enpu_stat("bos_alive");
	int status, i;
	pid_t pid;

	if (jobs0 < 0 || bos0 < 0)
		SKIP(return, "no debugfs accel/N/stats");
	slow_engine(&self->slowed, 500);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
		struct drm_enpu_bo_userptr u = { .size = PAGE };
		int fd = enpu_open();
		uint32_t a, b;
		void *mem = aligned_alloc(PAGE, PAGE);

		if (fd < 0 || enpu_bo_new(fd, PAGE, &a) || enpu_bo_new(fd, PAGE, &b))
			_exit(1);
		u.user_ptr = (uintptr_t)mem;
		if (enpu_bo_userptr_raw(fd, &u))
			_exit(2);
		exp.handle = a;
		if (enpu_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp))
			_exit(3);
		for (i = 0; i < 20; i++)
			copy_job(fd, i % 2 ? u.handle : a, b, PAGE, NULL, 0, 0);
		_exit(0);	/* with jobs in flight, handles and a dma-buf open */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* the child's objects go as its jobs finish; ours (none) stay */
	for (i = 0; i < 300; i++) {
		if (enpu_stat("jobs_alive") == 0 && enpu_stat("bos_alive") == bos0)
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, enpu_stat("jobs_alive"));
	ASSERT_EQ(bos0, enpu_stat("bos_alive"));
}

TEST_HARNESS_MAIN
