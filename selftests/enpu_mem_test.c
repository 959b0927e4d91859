// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Memory limits and accounting (issue 13). Every byte a file makes the
 * driver hold (shmem BOs at their size, userptr BOs at their pinned size,
 * queued jobs) is charged to the file and to the device, against the
 * module's file_mem_limit_mb and mem_limit_mb (defaults RAM/4 for the
 * device and half that per file); going over is ENOMEM, a BO larger than
 * QUERY's max_bo_size is E2BIG. The charge goes when the BO or job is
 * freed, also after its process died. The test that fills the device to
 * its limit with touched BOs referenced by jobs in flight, then kills the
 * processes, is the scenario (the 1 GiB test VM used to die of it).
 * BO pages are charged to the memory cgroup of the process that makes
 * shmem allocate them. Tests change the limits at run time and restore
 * them.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define PAGE 4096
#define MiB (1024ull * 1024)
#define SEC 1000000000ll

static int query(int fd, struct drm_enpu_query_device *dev)
{
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE, .size = sizeof(*dev),
				    .ptr = (uintptr_t)dev };

	memset(dev, 0, sizeof(*dev));
	return enpu_query_raw(fd, &q);
}

/* a /proc/meminfo field in bytes, or -1 */
static long long meminfo(const char *key)
{
	char line[128];
	long long kb = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			kb = atoll(line + n + 1);
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* wait until nothing is charged (earlier tests' jobs are freed asynchronously) */
static uint64_t wait_uncharged(int fd)
{
	struct drm_enpu_query_device dev;
	int64_t t0 = enpu_now_ns();

	do {
		if (query(fd, &dev))
			return ~0ull;
		if (!dev.mem_used)
			break;
		usleep(10000);
	} while (enpu_now_ns() - t0 < 5 * SEC);
	return dev.mem_used;
}

static int set_uint_param(const char *name, unsigned int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", v);
	return enpu_set_param(name, buf);
}

FIXTURE(mem) {
	int fd;
	int saved_mem, saved_file, saved_delay;
	struct drm_enpu_query_device dev;
	pid_t pids[3];	/* children that must not outlive the test */
};

FIXTURE_SETUP(mem)
{
	self->saved_mem = self->saved_file = self->saved_delay = -1;
	memset(self->pids, 0, sizeof(self->pids));
	self->fd = enpu_open();
	if (self->fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
	self->saved_mem = enpu_get_param("mem_limit_mb");
	self->saved_file = enpu_get_param("file_mem_limit_mb");
	self->saved_delay = enpu_get_param("test_delay_us");
	if (self->saved_mem <= 0 || self->saved_file <= 0)
		SKIP(return, "no mem_limit_mb / file_mem_limit_mb parameters");
	ASSERT_EQ(0, query(self->fd, &self->dev));
}

FIXTURE_TEARDOWN(mem)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (self->pids[i] > 0) {
			kill(self->pids[i], SIGKILL);
			waitpid(self->pids[i], NULL, 0);
		}
	}
	if (self->saved_mem > 0)
		set_uint_param("mem_limit_mb", self->saved_mem);
	if (self->saved_file > 0)
		set_uint_param("file_mem_limit_mb", self->saved_file);
	if (self->saved_delay >= 0)
		set_uint_param("test_delay_us", self->saved_delay);
	if (self->fd >= 0)
		close(self->fd);
}

/* the defaults come from the RAM size; QUERY reports what is in force */
TEST_F(mem, query_reports_the_limits)
{
	long long ram = meminfo("MemTotal");
	uint64_t ram_mb = ram / MiB;

	ASSERT_GT(ram, 0);
	ASSERT_EQ((uint64_t)self->saved_mem * MiB, self->dev.mem_limit);
	ASSERT_EQ((uint64_t)self->saved_file * MiB, self->dev.file_mem_limit);
	/* the module is loaded without limits: the defaults */
	ASSERT_EQ(ram_mb / 4, (uint64_t)self->saved_mem);
	ASSERT_EQ(ram_mb / 8, (uint64_t)self->saved_file);
	ASSERT_LE(self->dev.max_bo_size, self->dev.file_mem_limit);
	ASSERT_LE(self->dev.max_bo_size, self->dev.mem_limit);
	ASSERT_EQ(0, self->dev.file_mem_used);

	/* a per-file limit above the device's counts as the device's */
	ASSERT_EQ(0, set_uint_param("mem_limit_mb", 16));
	ASSERT_EQ(0, set_uint_param("file_mem_limit_mb", 32));
	ASSERT_EQ(0, query(self->fd, &self->dev));
	ASSERT_EQ(16 * MiB, self->dev.mem_limit);
	ASSERT_EQ(16 * MiB, self->dev.file_mem_limit);
	ASSERT_EQ(16 * MiB, self->dev.max_bo_size);
	/* out of range: refused, the limit stays */
	ASSERT_NE(0, set_uint_param("mem_limit_mb", 0));
	ASSERT_NE(0, set_uint_param("file_mem_limit_mb", ram_mb + 1));
	ASSERT_EQ(16, enpu_get_param("mem_limit_mb"));
}

/* BOs, userptr BOs and jobs all count against the file's limit */
TEST_F(mem, file_limit_is_enomem)
{
	struct drm_enpu_bo_create big = { .size = 8 * MiB + 1 };
	struct drm_enpu_bo_userptr u = { .size = PAGE };
	uint32_t h[8], extra;
	void *mem = aligned_alloc(PAGE, PAGE);
	int i, fd2;

	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, set_uint_param("file_mem_limit_mb", 8));
	ASSERT_EQ(0, query(self->fd, &self->dev));
	ASSERT_EQ(8 * MiB, self->dev.max_bo_size);
	/* one BO larger than max_bo_size: E2BIG, whatever is free */
	enpu_bo_create_err(self->fd, &big, E2BIG);

	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, enpu_bo_new(self->fd, MiB, &h[i]));
	ASSERT_EQ(0, query(self->fd, &self->dev));
	ASSERT_EQ(8 * MiB, self->dev.file_mem_used);
	ASSERT_GE(self->dev.mem_used, 8 * MiB);
	ASSERT_EQ(-ENOMEM, enpu_bo_new(self->fd, PAGE, &extra));
	u.user_ptr = (uintptr_t)mem;
	enpu_bo_userptr_err(self->fd, &u, ENOMEM);
	/* a job's own memory is charged too: no room for one */
	ASSERT_EQ(-ENOMEM, enpu_submit_nops(self->fd, 1, 0, 0));

	/* freeing gives the room back, to BOs and jobs alike */
	ASSERT_EQ(0, enpu_bo_close(self->fd, h[7]));
	enpu_bo_userptr_ok(self->fd, &u);
	ASSERT_EQ(0, enpu_submit_nops(self->fd, 1, 0, 0));
	ASSERT_EQ(0, enpu_bo_close(self->fd, u.handle));
	ASSERT_EQ(0, enpu_bo_new(self->fd, MiB - PAGE, &h[7]));
	/* another file has its own allowance */
	fd2 = enpu_open();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, enpu_bo_new(fd2, 8 * MiB, &extra));
	ASSERT_EQ(-ENOMEM, enpu_bo_new(fd2, PAGE, &extra));
	close(fd2);
	/* closing the file frees its BOs and its charge */
	close(self->fd);
	self->fd = enpu_open();
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, query(self->fd, &self->dev));
	ASSERT_EQ(0, self->dev.file_mem_used);
	free(mem);
}

TEST_F(mem, device_limit_is_shared_by_files)
{
	struct drm_enpu_query_device d2;
	int fd2 = enpu_open();
	uint32_t h;

	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, wait_uncharged(self->fd));	/* nothing else alive */
	ASSERT_EQ(0, set_uint_param("mem_limit_mb", 8));
	ASSERT_EQ(0, set_uint_param("file_mem_limit_mb", 6));
	ASSERT_EQ(0, enpu_bo_new(self->fd, 5 * MiB, &h));
	ASSERT_EQ(-ENOMEM, enpu_bo_new(fd2, 4 * MiB, &h));
	ASSERT_EQ(0, enpu_bo_new(fd2, 3 * MiB, &h));
	ASSERT_EQ(-ENOMEM, enpu_bo_new(fd2, PAGE, &h));
	ASSERT_EQ(0, query(fd2, &d2));
	ASSERT_EQ(8 * MiB, d2.mem_used);
	ASSERT_EQ(3 * MiB, d2.file_mem_used);
	/* a lower limit refuses new charges and takes nothing back */
	ASSERT_EQ(0, set_uint_param("mem_limit_mb", 4));
	ASSERT_EQ(0, query(fd2, &d2));
	ASSERT_EQ(8 * MiB, d2.mem_used);
	close(fd2);
	ASSERT_EQ(0, query(self->fd, &self->dev));
	ASSERT_EQ(5 * MiB, self->dev.mem_used);
}

/*
 * One child: BOs of 8 MiB, each mapped and written (every page really
 * allocated), until a BO is refused; then, after giving back one BO for
 * room, jobs in flight that hold all the others. Reports the errno, whether
 * it was the device's limit (the file had room), and how many BOs it kept,
 * then waits to be killed.
 */
#define FILL_BO (8 * MiB)

static void fill_child(int wfd)
{
	static struct enpu_cs cs;
	uint32_t handles[256];
	uint8_t *maps[256];
	int n = 0, err = 0, i, r, fd = enpu_open();
	struct enpu_job_desc d = { .cs = cs.buf };
	struct drm_enpu_query_device dev;
	int report[3];

	if (fd < 0)
		_exit(2);
	while (n < 256) {
		err = enpu_bo_new(fd, FILL_BO, &handles[n]);
		if (err)
			break;
		maps[n] = enpu_bo_map(fd, handles[n], FILL_BO);
		if (!maps[n]) {
			err = -EFAULT;
			break;
		}
		memset(maps[n], 0xa5, FILL_BO);
		n++;
	}
	if (query(fd, &dev))
		_exit(4);
	report[1] = dev.file_mem_used + FILL_BO <= dev.file_mem_limit;
	report[2] = n;
	/* jobs are charged too: make room for them (a mapping holds the BO) */
	if (n && (munmap(maps[n - 1], FILL_BO) || enpu_bo_close(fd, handles[n - 1])))
		_exit(5);
	n -= !!n;
	/* slow NOP jobs referencing every BO (64 per job), four of each */
	enpu_cs_begin(&cs);
	for (i = 0; i < 20; i++)
		enpu_cs_add(&cs, ENPU_OP_NOP, sizeof(struct enpu_cs_cmd));
	d.cs_size = enpu_cs_end(&cs);
	for (r = 0; r < 4; r++) {
		for (i = 0; i < n; i += 64) {
			d.handles = &handles[i];
			d.bo_count = n - i < 64 ? n - i : 64;
			if (enpu_submit_one(fd, &d))
				_exit(6);
		}
	}
	report[0] = err;
	if (write(wfd, report, sizeof(report)) != sizeof(report))
		_exit(3);
	pause();
	_exit(0);
}

/* minutes: touching a quarter of the RAM is slow under TCG on a loaded host */
TEST_F_TIMEOUT(mem, fill_to_the_limit_then_die, 300)
{
	long long avail0 = meminfo("MemAvailable"), avail1, avail2;
	long bos0 = enpu_stat("bos_alive");
	int total = 0, device_refused = 0, i, status, pfd[2];
	pid_t *pids = self->pids;
	int64_t t0, dt;
	void *probe;

	ASSERT_GT(avail0, 0);
	ASSERT_EQ(0, wait_uncharged(self->fd));	/* nothing else alive */
	/* 100 ms per NOP, 20 NOPs: each job runs for about 2 s */
	ASSERT_EQ(0, set_uint_param("test_delay_us", 100000));
	/* one after the other, so that the last one meets the device's limit */
	for (i = 0; i < 3; i++) {
		int report[3];

		ASSERT_EQ(0, pipe(pfd));
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (pids[i] == 0) {
			close(pfd[0]);
			fill_child(pfd[1]);
		}
		/* a child that dies before its report ends the read */
		close(pfd[1]);
		if (read(pfd[0], report, sizeof(report)) != sizeof(report)) {
			waitpid(pids[i], &status, 0);
			pids[i] = 0;
			TH_LOG("process %d died before its report (wait status 0x%x)", i, status);
			ASSERT_TRUE(0);
		}
		close(pfd[0]);
		TH_LOG("process %d: %d BOs of 8 MiB, then %s (%s limit)", i, report[2],
		       strerror(-report[0]), report[1] ? "the device's" : "its file's");
		ASSERT_EQ(-ENOMEM, report[0]);
		total += report[2] ? report[2] - 1 : 0;
		device_refused |= report[1];
		/* a file alone never gets more than its limit */
		ASSERT_LE(report[2] * FILL_BO, self->dev.file_mem_limit);
	}
	ASSERT_EQ(0, query(self->fd, &self->dev));
	avail1 = meminfo("MemAvailable");
	TH_LOG("%d BOs, %llu MiB charged of %llu MiB; MemAvailable %lld -> %lld MiB",
	       total, (unsigned long long)(self->dev.mem_used / MiB),
	       (unsigned long long)(self->dev.mem_limit / MiB), avail0 / (long long)MiB,
	       avail1 / (long long)MiB);
	ASSERT_TRUE(device_refused);
	ASSERT_LE(self->dev.mem_used, self->dev.mem_limit);
	/* each process gave one BO back for its jobs */
	ASSERT_GE((uint64_t)(total + 3) * FILL_BO, self->dev.mem_limit - 2 * FILL_BO - 2 * MiB);
	/* the pages are really there, and the machine still has room */
	ASSERT_LT(avail1, avail0 - (long long)(total * FILL_BO) / 2);
	probe = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	ASSERT_TRUE(probe != MAP_FAILED);
	memset(probe, 1, 32 * MiB);
	munmap(probe, 32 * MiB);
	/* jobs hold the BOs */
	ASSERT_GT(enpu_stat("jobs_alive"), 0);

	t0 = enpu_now_ns();
	for (i = 0; i < 3; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], NULL, 0));
		pids[i] = 0;
	}
	do {
		ASSERT_EQ(0, query(self->fd, &self->dev));
		if (!self->dev.mem_used && (bos0 < 0 || enpu_stat("bos_alive") == bos0))
			break;
		usleep(20000);
	} while (enpu_now_ns() - t0 < 60 * SEC);
	dt = enpu_now_ns() - t0;
	ASSERT_EQ(0, self->dev.mem_used);
	ASSERT_LT(dt, 60 * SEC);
	/* the shmem files go a little later (fput from a worker is deferred) */
	do {
		avail2 = meminfo("MemAvailable");
		if (avail2 > avail0 - 32 * (long long)MiB)
			break;
		usleep(20000);
	} while (enpu_now_ns() - t0 < 60 * SEC);
	TH_LOG("charges released %lld ms after SIGKILL (jobs in flight), MemAvailable back to %lld MiB after %lld ms",
	       (long long)dt / 1000000, avail2 / (long long)MiB,
	       (long long)(enpu_now_ns() - t0) / 1000000);
	ASSERT_GT(avail2, avail0 - 32 * (long long)MiB);
}

/* the cgroup v2 hierarchy, mounted here if the system has not */
static const char *cgroup_root(void)
{
	static const char *root = "/sys/fs/cgroup";
	struct stat st;
	char path[128];

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (!stat(path, &st))
		return root;
	if (mount("none", root, "cgroup2", 0, NULL))
		return NULL;
	return root;
}

static int write_file(const char *dir, const char *name, const char *val)
{
	char path[192];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

static long long read_ll(const char *dir, const char *name)
{
	char path[192], buf[32] = { 0 };
	int fd, n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoll(buf) : -1;
}

/* BO pages count in the memory cgroup of the process that maps them */
TEST_F(mem, bo_pages_are_charged_to_the_memcg)
{
	const char *root = cgroup_root();
	char cg[160], pid[16], c;
	long long before, during, after;
	int go[2], done[2], status;
	pid_t child;

	if (!root || write_file(root, "cgroup.subtree_control", "+memory"))
		SKIP(return, "no cgroup v2 memory controller");
	snprintf(cg, sizeof(cg), "%s/enpu-memcg-test", root);
	rmdir(cg);
	ASSERT_EQ(0, mkdir(cg, 0755));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		uint32_t h;
		uint8_t *p;
		int fd;

		if (read(go[0], &c, 1) != 1)
			_exit(2);
		fd = enpu_open();
		if (fd < 0 || enpu_bo_new(fd, 16 * MiB, &h))
			_exit(3);
		p = enpu_bo_map(fd, h, 16 * MiB);
		if (!p)
			_exit(4);
		memset(p, 0x3c, 16 * MiB);
		if (write(done[1], "x", 1) != 1)
			_exit(5);
		/* wait for the parent's reading, then free everything */
		if (read(go[0], &c, 1) != 1)
			_exit(6);
		_exit(0);
	}
	self->pids[0] = child;
	close(go[0]);
	close(done[1]);
	snprintf(pid, sizeof(pid), "%d", child);
	ASSERT_EQ(0, write_file(cg, "cgroup.procs", pid));
	before = read_ll(cg, "memory.current");
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(1, read(done[0], &c, 1));
	during = read_ll(cg, "memory.current");
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	self->pids[0] = 0;
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* the BO is freed with the file; its pages leave the cgroup */
	usleep(200000);
	after = read_ll(cg, "memory.current");
	TH_LOG("memory.current: %lld KiB before, %lld KiB with a 16 MiB BO, %lld KiB after",
	       before / 1024, during / 1024, after / 1024);
	ASSERT_GE(during - before, (long long)(16 * MiB));
	ASSERT_LT(after, during - (long long)(15 * MiB));
	rmdir(cg);
}

TEST_HARNESS_MAIN
