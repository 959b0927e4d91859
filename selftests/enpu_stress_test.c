// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Stress (issue 13): P processes x T threads submit for a bounded time.
 * Every process imports one BO shared by all of them (PRIME); each thread
 * has its own slot in it. Per iteration a thread submits job A, which
 * copies a fresh 16-byte pattern from its own source BO into its slot of
 * the shared BO (a writer: implicitly ordered after every other job on the
 * shared BO) and signals a binary syncobj, and job B, which waits for that
 * syncobj, copies the slot into the thread's result BO and signals the next
 * point of the thread's timeline syncobj. Every eight iterations the
 * thread waits for its latest point and checks that each of the eight
 * results holds its own pattern. At the end every fence has signalled
 * without error, each timeline stands at its last point, and the jobs the
 * threads counted are the jobs the device counted.
 *
 * ENPU_STRESS_SECONDS (default 8), ENPU_STRESS_PROCS (3), ENPU_STRESS_THREADS (3).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define PAGE 4096
#define SEC 1000000000ll
#define SLOT 16
#define SLOTS (PAGE / SLOT)	/* slots of a thread's source and result BOs */
#define BATCH 8
#define MAX_THREADS 16

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? atol(v) : def;
}

struct stress_proc {
	int fd;
	uint32_t shared;	/* the shared BO, imported */
	int64_t deadline;
	int id;
};

struct stress_thread {
	struct stress_proc *p;
	int tid;
	long jobs;	/* submitted */
	long iterations;
	int failed;	/* line of the first failed check, or 0 */
	char why[96];
};

static void pattern(uint8_t *out, int pid, int tid, long k)
{
	for (int i = 0; i < SLOT; i++)
		out[i] = (uint8_t)(pid * 31 + tid * 7 + k * 13 + i);
}

#define CHECK(cond, ...) do {							\
	if (!(cond)) {								\
		t->failed = __LINE__;						\
		snprintf(t->why, sizeof(t->why), __VA_ARGS__);			\
		goto out;							\
	}									\
} while (0)

static void *stress_thread(void *arg)
{
	struct stress_thread *t = arg;
	struct stress_proc *p = t->p;
	struct enpu_cs *cs = calloc(1, sizeof(*cs));
	uint32_t src, dst, bin, tl, handles[2], flags[2];
	uint8_t *msrc, *mdst, want[SLOT];
	uint32_t slot_off = (p->id * MAX_THREADS + t->tid) * SLOT;
	struct drm_enpu_syncobj in;
	long k;
	uint64_t last;
	int ret;

	CHECK(cs, "no memory");
	CHECK(!enpu_bo_new(p->fd, PAGE, &src) && !enpu_bo_new(p->fd, PAGE, &dst), "BO create");
	msrc = enpu_bo_map(p->fd, src, PAGE);
	mdst = enpu_bo_map(p->fd, dst, PAGE);
	CHECK(msrc && mdst, "BO map");
	CHECK(!enpu_syncobj_new(p->fd, 0, &bin), "syncobj create");
	CHECK(!enpu_syncobj_new(p->fd, 0, &tl), "timeline create");
	for (k = 0; enpu_now_ns() < p->deadline; k++) {
		uint32_t s = k % SLOTS;
		struct enpu_job_desc a = { .cs = cs->buf, .handles = handles, .bo_flags = flags,
					   .bo_count = 2, .out_syncobj = bin };
		struct enpu_job_desc b = a;

		pattern(msrc + s * SLOT, p->id, t->tid, k);
		/* A: source slot -> shared slot (region 0 -> 1) */
		handles[0] = src;
		handles[1] = p->shared;
		flags[0] = ENPU_JOB_BO_READ;
		flags[1] = ENPU_JOB_BO_WRITE;
		a.cs_size = enpu_cs_copy_bytes(cs, 0, s * SLOT, 1, slot_off, SLOT);
		ret = enpu_submit_one(p->fd, &a);
		CHECK(!ret, "submit A: %s", strerror(-ret));
		/* B: after A's syncobj, shared slot -> result slot, timeline point k+1 */
		in = enpu_in(bin, 0);
		handles[0] = p->shared;
		handles[1] = dst;
		flags[0] = ENPU_JOB_BO_READ;
		flags[1] = ENPU_JOB_BO_WRITE;
		b.in_syncobjs = &in;
		b.in_count = 1;
		b.out_syncobj = tl;
		b.out_point = k + 1;
		b.cs_size = enpu_cs_copy_bytes(cs, 0, slot_off, 1, s * SLOT, SLOT);
		ret = enpu_submit_one(p->fd, &b);
		CHECK(!ret, "submit B: %s", strerror(-ret));
		t->jobs += 2;
		if ((k + 1) % BATCH == 0) {
			ret = enpu_timeline_wait(p->fd, tl, k + 1, 60 * SEC, 0);
			CHECK(!ret, "timeline point %ld: %s", k + 1, strerror(-ret));
			for (long j = k + 1 - BATCH; j <= k; j++) {
				pattern(want, p->id, t->tid, j);
				CHECK(!memcmp(mdst + (j % SLOTS) * SLOT, want, SLOT),
				      "iteration %ld: wrong result", j);
			}
		}
	}
	t->iterations = k;
	if (k) {
		ret = enpu_timeline_wait(p->fd, tl, k, 60 * SEC, 0);
		CHECK(!ret, "last point %ld: %s", k, strerror(-ret));
		CHECK(!enpu_timeline_query(p->fd, tl, 0, &last) && last == (uint64_t)k,
		      "timeline at %llu, not %ld", (unsigned long long)last, k);
		CHECK(enpu_syncobj_status(p->fd, bin) == 1, "binary syncobj status");
		for (long j = k - k % BATCH; j < k; j++) {
			pattern(want, p->id, t->tid, j);
			CHECK(!memcmp(mdst + (j % SLOTS) * SLOT, want, SLOT),
			      "iteration %ld: wrong result", j);
		}
	}
out:
	free(cs);
	return NULL;
}

/* one process: its own file and threads; reports jobs (or -1) through res */
static void stress_proc(int id, int dmabuf, int nthreads, int64_t deadline, long *res)
{
	struct drm_prime_handle imp = { .fd = dmabuf };
	struct stress_thread th[MAX_THREADS] = { 0 };
	pthread_t pt[MAX_THREADS];
	struct stress_proc p = { .deadline = deadline, .id = id };
	long jobs = 0;
	int i;

	p.fd = enpu_open();
	if (p.fd < 0 || enpu_ioctl(p.fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp)) {
		*res = -1;
		_exit(1);
	}
	p.shared = imp.handle;
	for (i = 0; i < nthreads; i++) {
		th[i].p = &p;
		th[i].tid = i;
		pthread_create(&pt[i], NULL, stress_thread, &th[i]);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(pt[i], NULL);
		if (th[i].failed) {
			fprintf(stderr, "# process %d thread %d: line %d: %s\n", id, i,
				th[i].failed, th[i].why);
			*res = -1;
			_exit(1);
		}
		jobs += th[i].jobs;
	}
	*res = jobs;
	_exit(0);
}

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

/* the time is ENPU_STRESS_SECONDS, plus draining: no harness timeout of its own */
TEST_F_TIMEOUT(stress, processes_threads_syncobjs_implicit_sync, 86400)
{
	long seconds = env_long("ENPU_STRESS_SECONDS", 8);
	int nprocs = env_long("ENPU_STRESS_PROCS", 3);
	int nthreads = env_long("ENPU_STRESS_THREADS", 3);
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
	long submitted0, total = 0, *res;
	int fd = enpu_open(), i, status;
	int64_t deadline;
	uint32_t shared;
	pid_t pids[64];

	if (fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
	ASSERT_LE(nthreads, MAX_THREADS);
	ASSERT_LE(nprocs, 64);
	ASSERT_LE(nprocs * MAX_THREADS * SLOT, PAGE);
	res = mmap(NULL, nprocs * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(res != MAP_FAILED);
	ASSERT_EQ(0, enpu_bo_new(fd, PAGE, &shared));
	exp.handle = shared;
	ASSERT_EQ(0, enpu_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	submitted0 = enpu_stat("jobs_submitted");
	deadline = enpu_now_ns() + seconds * SEC;
	for (i = 0; i < nprocs; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i])
			stress_proc(i, exp.fd, nthreads, deadline, &res[i]);
	}
	for (i = 0; i < nprocs; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
		ASSERT_GT(res[i], 0);
		total += res[i];
	}
	TH_LOG("%d processes x %d threads, %ld s: %ld jobs", nprocs, nthreads, seconds, total);
	/* every job the threads submitted, and no other, reached the device */
	if (submitted0 >= 0)
		ASSERT_EQ(total, enpu_stat("jobs_submitted") - submitted0);
	close(exp.fd);
	close(fd);
}

TEST_HARNESS_MAIN
