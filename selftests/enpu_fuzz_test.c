// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Random-ioctl fuzzer (issue 13). Workers, each with its own file and a
 * random generator, issue random and half-valid calls: every enpu ioctl
 * with random and structure-aware arguments (BO sizes up to past the
 * limits, userptrs over good and bad memory, command streams with a valid
 * header and a valid or corrupted body over real BOs, random BO lists and
 * in/out syncobjs and points, odd strides), GEM_CLOSE, PRIME export and
 * import, the syncobj ioctls, mmaps at random offsets and lengths, random
 * DRM core ioctl numbers, and forked children killed with jobs in flight.
 * Oracles: the enpu ioctls answer 0 or an errno of the uAPI's table, core
 * ioctls 0 or an errno, nothing crashes (the VM suite also fails on any
 * kernel warning), and when the workers are gone every job, BO and charge
 * is released.
 *
 * ENPU_FUZZ_SEED: a number (default 1) or "random"; ENPU_FUZZ_SECONDS
 * (default 15); ENPU_FUZZ_WORKERS (default 3). The seed is printed, so a
 * random run can be repeated (up to the scheduling of the workers).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define PAGE 4096
#define SEC 1000000000ll
#define MAX_H 32

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

struct worker {
	struct rng r;
	int fd;
	uint32_t bo[MAX_H];
	uint64_t bo_size[MAX_H];
	uint32_t so[MAX_H];
	uint8_t *umem;		/* memory for userptr BOs */
	struct enpu_cs cs;
	long calls, bad_errno;
};

/* the enpu ioctls' errno table (uapi/drm/enpu_accel.h) */
static int documented(int err)
{
	switch (-err) {
	case 0: case EINVAL: case E2BIG: case ERANGE: case ENOENT: case EACCES:
	case EFAULT: case ENOMEM: case EINTR: case ETIMEDOUT: case EPERM: case EBUSY:
		return 1;
	default:
		return 0;
	}
}

static void enpu_call(struct worker *w, const char *what, int ret)
{
	w->calls++;
	if (!documented(ret)) {
		w->bad_errno++;
		fprintf(stderr, "# %s: undocumented errno %d\n", what, -ret);
	}
}

static uint32_t some_bo(struct worker *w)
{
	switch (below(&w->r, 8)) {
	case 0:
		return rnd(&w->r);
	case 1:
		return 0;
	default:
		return w->bo[below(&w->r, MAX_H)];
	}
}

static uint32_t some_so(struct worker *w)
{
	return below(&w->r, 8) ? w->so[below(&w->r, MAX_H)] : (uint32_t)rnd(&w->r);
}

static uint64_t some_size(struct worker *w)
{
	switch (below(&w->r, 10)) {
	case 0:
		return rnd(&w->r);		/* anything */
	case 1:
		return below(&w->r, 64ull << 20);	/* up to 64 MiB */
	case 2:
		return 0;
	default:
		return 1 + below(&w->r, 64 * 1024);
	}
}

static void do_bo_create(struct worker *w)
{
	struct drm_enpu_bo_create c = { .size = some_size(w) };
	int i = below(&w->r, MAX_H), ret;

	if (!below(&w->r, 16))
		c.flags = rnd(&w->r);
	ret = enpu_bo_create_raw(w->fd, &c);
	enpu_call(w, "BO_CREATE", ret);
	if (!ret) {
		if (w->bo[i])
			enpu_bo_close(w->fd, w->bo[i]);
		w->bo[i] = c.handle;
		w->bo_size[i] = c.size;
	}
}

static void do_userptr(struct worker *w)
{
	struct drm_enpu_bo_userptr u = {
		.user_ptr = (uintptr_t)w->umem + below(&w->r, 16) * PAGE,
		.size = (1 + below(&w->r, 16)) * PAGE,
		.flags = below(&w->r, 4) ? below(&w->r, 2) : rnd(&w->r),
	};
	int i = below(&w->r, MAX_H), ret;

	if (!below(&w->r, 8))
		u.user_ptr += below(&w->r, PAGE);	/* misaligned */
	if (!below(&w->r, 8))
		u.user_ptr = rnd(&w->r);		/* anywhere */
	ret = enpu_bo_userptr_raw(w->fd, &u);
	enpu_call(w, "BO_USERPTR", ret);
	if (!ret) {
		if (w->bo[i])
			enpu_bo_close(w->fd, w->bo[i]);
		w->bo[i] = u.handle;
		w->bo_size[i] = u.size;
	}
}

static void do_mmap(struct worker *w)
{
	struct drm_enpu_bo_mmap_offset m = { .handle = some_bo(w) };
	uint64_t len = (1 + below(&w->r, 8)) * PAGE, off;
	int ret = enpu_bo_mmap_offset_raw(w->fd, &m);
	volatile uint8_t *p;

	enpu_call(w, "BO_MMAP_OFFSET", ret);
	if (ret)
		return;
	off = m.offset + (below(&w->r, 4) ? 0 : below(&w->r, 8) * PAGE);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, off);
	if (p == MAP_FAILED)
		return;
	/* inside the BO (the kernel refused a mapping past its end) */
	p[0] = (uint8_t)rnd(&w->r);
	(void)p[len - 1];
	munmap((void *)p, len);
}

static void do_info_wait_close(struct worker *w)
{
	struct drm_enpu_bo_info info = { .handle = some_bo(w) };
	struct drm_enpu_bo_wait wt = { .handle = some_bo(w) };
	int i = below(&w->r, MAX_H);

	if (!below(&w->r, 8))
		info.flags = rnd(&w->r);
	enpu_call(w, "BO_INFO", enpu_bo_info_raw(w->fd, &info));
	wt.timeout_ns = enpu_now_ns() + below(&w->r, 3) * 1000000;
	enpu_call(w, "BO_WAIT", enpu_bo_wait_raw(w->fd, &wt));
	if (!below(&w->r, 4) && w->bo[i]) {
		enpu_bo_close(w->fd, w->bo[i]);
		w->bo[i] = 0;
	}
}

static void do_query(struct worker *w)
{
	uint8_t buf[256];
	struct drm_enpu_query q = {
		.type = below(&w->r, 4) ? 0 : rnd(&w->r),
		.size = below(&w->r, sizeof(buf)),
		.ptr = below(&w->r, 8) ? (uintptr_t)buf : rnd(&w->r),
		.flags = below(&w->r, 8) ? 0 : rnd(&w->r),
	};

	enpu_call(w, "QUERY", enpu_query_raw(w->fd, &q));
}

static void do_syncobj(struct worker *w)
{
	int i = below(&w->r, MAX_H);
	uint32_t h = some_so(w);
	uint64_t pt = below(&w->r, 4);

	switch (below(&w->r, 6)) {
	case 0:
		if (w->so[i])
			enpu_syncobj_destroy(w->fd, w->so[i]);
		w->so[i] = 0;
		enpu_syncobj_new(w->fd, below(&w->r, 2) ? DRM_SYNCOBJ_CREATE_SIGNALED : 0,
				 &w->so[i]);
		break;
	case 1:
		enpu_syncobj_wait(w->fd, h, 1000000);
		break;
	case 2:
		enpu_timeline_wait(w->fd, h, pt, 1000000,
				   below(&w->r, 2) ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT : 0);
		break;
	case 3: {
		struct drm_syncobj_timeline_array a = {
			.handles = (uintptr_t)&h, .points = (uintptr_t)&pt, .count_handles = 1,
		};

		enpu_ioctl(w->fd, below(&w->r, 2) ? DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL :
			   DRM_IOCTL_SYNCOBJ_QUERY, &a);
		break;
	}
	case 4: {
		struct drm_syncobj_array a = { .handles = (uintptr_t)&h, .count_handles = 1 };

		enpu_ioctl(w->fd, below(&w->r, 2) ? DRM_IOCTL_SYNCOBJ_SIGNAL :
			   DRM_IOCTL_SYNCOBJ_RESET, &a);
		break;
	}
	default:
		enpu_syncobj_status(w->fd, h);
		break;
	}
}

static void do_prime(struct worker *w)
{
	struct drm_prime_handle exp = { .handle = some_bo(w), .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { .fd = -1 };
	int fd2;

	if (enpu_ioctl(w->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp))
		return;
	fd2 = below(&w->r, 2) ? w->fd : enpu_open();
	imp.fd = exp.fd;
	if (fd2 >= 0 && !enpu_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp) && fd2 == w->fd)
		w->bo[below(&w->r, MAX_H)] = imp.handle;	/* the same BO: same handle */
	if (fd2 >= 0 && fd2 != w->fd)
		close(fd2);
	close(exp.fd);
}

/* a random DRM core ioctl number (refused or served), random bytes */
static void do_core(struct worker *w)
{
	static const uint8_t safe[] = { 0x00, 0x0c, 0x09, 0x2d, 0xbf, 0xc0 };
	uint8_t arg[256];
	unsigned int nr;
	size_t i;

	for (i = 0; i < sizeof(arg); i++)
		arg[i] = rnd(&w->r);
	/* never the syncobj waits: a random timeout could block for ages */
	nr = below(&w->r, 2) ? safe[below(&w->r, sizeof(safe))] : below(&w->r, 0x40);
	ioctl(w->fd, _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, nr, below(&w->r, 256)), arg);
}

/* a stream: valid (every opcode over enpu_all_ops_sizes), corrupted, or NOPs */
static uint32_t some_stream(struct worker *w)
{
	uint32_t len, i, n;

	switch (below(&w->r, 4)) {
	case 0:
		enpu_cs_begin(&w->cs);
		n = 1 + below(&w->r, 64);
		for (i = 0; i < n; i++)
			enpu_cs_add(&w->cs, ENPU_OP_NOP, sizeof(struct enpu_cs_cmd));
		return enpu_cs_end(&w->cs);
	case 1:
		return enpu_cs_copy_bytes(&w->cs, below(&w->r, 3), below(&w->r, 8192),
					  below(&w->r, 3), below(&w->r, 8192),
					  1 + below(&w->r, 8192));
	default:
		len = enpu_cs_build_all_ops(&w->cs);
		/* the header stays, the body gets a few random bytes */
		n = below(&w->r, 8);
		for (i = 0; i < n; i++)
			w->cs.buf[sizeof(struct enpu_cs_header) +
				  below(&w->r, len - sizeof(struct enpu_cs_header))] = rnd(&w->r);
		if (!below(&w->r, 16))
			len = below(&w->r, len + 64);
		return len;
	}
}

static void do_submit(struct worker *w)
{
	struct drm_enpu_job_bo bos[4];
	struct drm_enpu_syncobj in[2];
	struct drm_enpu_job job = {
		.cs_ptr = (uintptr_t)w->cs.buf,
		.bos_ptr = (uintptr_t)bos,
		.bo_count = below(&w->r, 5),
		.bo_stride = below(&w->r, 16) ? sizeof(bos[0]) : below(&w->r, 24),
		.in_syncobjs_ptr = (uintptr_t)in,
		.in_syncobj_count = below(&w->r, 3),
		.in_syncobj_stride = below(&w->r, 16) ? sizeof(in[0]) : below(&w->r, 40),
		.out_syncobj = below(&w->r, 2) ? some_so(w) : 0,
	};
	struct drm_enpu_submit s = {
		.jobs_ptr = (uintptr_t)&job, .job_count = 1,
		.job_stride = below(&w->r, 16) ? sizeof(job) : below(&w->r, 96),
	};
	uint32_t i;

	job.cs_size = some_stream(w);
	if (job.bo_stride > sizeof(bos[0]))
		job.bo_stride = sizeof(bos[0]);	/* stays inside bos[] */
	if (job.in_syncobj_stride > sizeof(in[0]))
		job.in_syncobj_stride = sizeof(in[0]);
	if (s.job_stride > sizeof(job))
		s.job_stride = sizeof(job);
	for (i = 0; i < 4; i++) {
		bos[i].handle = some_bo(w);
		bos[i].flags = below(&w->r, 8) ? 1 + below(&w->r, 3) : rnd(&w->r);
	}
	for (i = 0; i < 2; i++) {
		in[i].handle = some_so(w);
		in[i].flags = below(&w->r, 16) ? 0 : rnd(&w->r);
		in[i].point = below(&w->r, 2) ? 0 : below(&w->r, 4);
	}
	if (job.out_syncobj && !below(&w->r, 3))
		job.out_syncobj_point = 1 + below(&w->r, 8);
	if (!below(&w->r, 32))
		job.flags = rnd(&w->r) & ~ENPU_JOB_TEST_HANG;
	enpu_call(w, "SUBMIT", enpu_submit_raw(w->fd, &s));
}

/* a child with jobs in flight, killed at a random moment */
static void do_fork_kill(struct worker *w)
{
	pid_t pid = fork();

	if (pid < 0)
		return;
	if (!pid) {
		int n = 1 + below(&w->r, 8);

		w->fd = enpu_open();
		if (w->fd < 0)
			_exit(0);
		memset(w->bo, 0, sizeof(w->bo));
		memset(w->so, 0, sizeof(w->so));
		for (int i = 0; i < n; i++) {
			do_bo_create(w);
			do_submit(w);
			do_mmap(w);
		}
		pause();
		_exit(0);
	}
	usleep(below(&w->r, 20000));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int run_worker(uint64_t seed, int64_t deadline)
{
	struct worker *w = calloc(1, sizeof(*w));
	int i;

	if (!w)
		return 2;
	w->r.s = seed;
	w->fd = enpu_open();
	w->umem = mmap(NULL, 32 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (w->fd < 0 || w->umem == MAP_FAILED)
		return 2;
	for (i = 0; i < 4; i++)
		enpu_syncobj_new(w->fd, 0, &w->so[i]);
	while (enpu_now_ns() < deadline) {
		switch (below(&w->r, 20)) {
		case 0: case 1: case 2:
			do_bo_create(w);
			break;
		case 3:
			do_userptr(w);
			break;
		case 4: case 5:
			do_mmap(w);
			break;
		case 6: case 7:
			do_info_wait_close(w);
			break;
		case 8:
			do_query(w);
			break;
		case 9: case 10:
			do_syncobj(w);
			break;
		case 11:
			do_prime(w);
			break;
		case 12:
			do_core(w);
			break;
		case 13:
			if (!below(&w->r, 8))
				do_fork_kill(w);
			break;
		case 14:
			/* a new file: everything of the old one is released */
			close(w->fd);
			w->fd = enpu_open();
			if (w->fd < 0)
				return 2;
			memset(w->bo, 0, sizeof(w->bo));
			memset(w->so, 0, sizeof(w->so));
			break;
		default:
			do_submit(w);
			break;
		}
	}
	fprintf(stderr, "# worker: %ld enpu calls, %ld with an undocumented errno\n",
		w->calls, w->bad_errno);
	return w->bad_errno ? 1 : 0;
}

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

/* ENPU_FUZZ_SECONDS, plus draining: no harness timeout of its own */
TEST_F_TIMEOUT(fuzz, random_ioctls, 86400)
{
	const char *seed_env = getenv("ENPU_FUZZ_SEED");
	const char *sec_env = getenv("ENPU_FUZZ_SECONDS");
	const char *wk_env = getenv("ENPU_FUZZ_WORKERS");
	long seconds = sec_env && *sec_env ? atol(sec_env) : 15;
	int workers = wk_env && *wk_env ? atoi(wk_env) : 3;
	long jobs0 = enpu_stat("jobs_alive"), bos0 = enpu_stat("bos_alive");
	struct drm_enpu_query_device dev;
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE, .size = sizeof(dev),
				    .ptr = (uintptr_t)&dev };
	uint64_t seed = 1;
	int64_t deadline, t0;
	int fd = enpu_open(), i, status, failed = 0;
	pid_t pids[32];

	if (fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
	if (seed_env && !strcmp(seed_env, "random"))
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	else if (seed_env && *seed_env)
		seed = strtoull(seed_env, NULL, 0);
	ASSERT_LE(workers, 32);
	TH_LOG("seed %llu, %ld s, %d workers", (unsigned long long)seed, seconds, workers);
	/* the engine's test delay would make jobs crawl */
	enpu_set_param("test_delay_us", "0");
	deadline = enpu_now_ns() + seconds * SEC;
	for (i = 0; i < workers; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i])
			_exit(run_worker(seed + i * 0x1000193ull, deadline));
	}
	for (i = 0; i < workers; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("worker %d: wait status 0x%x", i, status);
			failed = 1;
		}
	}
	ASSERT_FALSE(failed);
	/* everything the workers made is released once their jobs end */
	t0 = enpu_now_ns();
	do {
		ASSERT_EQ(0, enpu_query_raw(fd, &q));
		if (!dev.mem_used && (jobs0 < 0 || enpu_stat("jobs_alive") == jobs0) &&
		    (bos0 < 0 || enpu_stat("bos_alive") == bos0))
			break;
		usleep(20000);
	} while (enpu_now_ns() - t0 < 60 * SEC);
	ASSERT_EQ(0, dev.mem_used);
	if (jobs0 >= 0)
		ASSERT_EQ(jobs0, enpu_stat("jobs_alive"));
	if (bos0 >= 0)
		ASSERT_EQ(bos0, enpu_stat("bos_alive"));
	close(fd);
}

TEST_HARNESS_MAIN
