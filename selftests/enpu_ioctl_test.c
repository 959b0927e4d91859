// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * enpu uAPI: every ioctl on its success path and on each validation failure
 * with otherwise valid input; mmap coherency, userptr, PRIME.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define PAGE 4096

FIXTURE(enpu) {
	int fd;
};

FIXTURE_SETUP(enpu)
{
	self->fd = enpu_open();
	if (self->fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
}

FIXTURE_TEARDOWN(enpu)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- QUERY --------------------------------------------------------------- */

TEST_F(enpu, query_device)
{
	struct drm_enpu_query_device dev;
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE, .size = sizeof(dev),
				    .ptr = (uintptr_t)&dev };

	memset(&dev, 0xff, sizeof(dev));
	enpu_query_ok(self->fd, &q);
	ASSERT_EQ(sizeof(dev), q.size);
	ASSERT_EQ(ENPU_UAPI_VERSION_MAJOR << 16 | ENPU_UAPI_VERSION_MINOR, dev.uapi_version);
	ASSERT_GE(dev.num_cores, 1);
	ASSERT_EQ(ENPU_CS_VERSION, dev.cs_version);
	ASSERT_EQ((1ull << ENPU_OP_COUNT) - 1, dev.opcode_mask);
	ASSERT_GE(dev.max_bos_per_job, 8);
	ASSERT_GT(dev.job_timeout_ms, 0);
	/* uAPI 1.1: the work limit, appended at offset 48 */
	ASSERT_EQ(48, offsetof(struct drm_enpu_query_device, max_job_work));
	ASSERT_EQ(ENPU_CS_MAX_WORK, dev.max_job_work);
	/* uAPI 2.1: the memory limits and what is charged, from offset 56 */
	ASSERT_EQ(88, sizeof(dev));
	ASSERT_EQ(56, offsetof(struct drm_enpu_query_device, mem_limit));
	ASSERT_GT(dev.mem_limit, 0);
	ASSERT_GT(dev.file_mem_limit, 0);
	ASSERT_LE(dev.file_mem_limit, dev.mem_limit);
	ASSERT_LE(dev.max_bo_size, dev.file_mem_limit);
	ASSERT_EQ(0, dev.file_mem_used);	/* a new file */
	ASSERT_LE(dev.mem_used, dev.mem_limit);
}

TEST_F(enpu, query_size_negotiation)
{
	uint8_t buf[sizeof(struct drm_enpu_query_device) + 16];
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE };
	struct drm_enpu_query_device full;

	/* size 0 asks for the size */
	enpu_query_ok(self->fd, &q);
	ASSERT_EQ(sizeof(struct drm_enpu_query_device), q.size);
	/* short buffer: only the prefix is written */
	memset(buf, 0xaa, sizeof(buf));
	q.size = 4;
	q.ptr = (uintptr_t)buf;
	enpu_query_ok(self->fd, &q);
	ASSERT_EQ(sizeof(struct drm_enpu_query_device), q.size);
	ASSERT_EQ(ENPU_UAPI_VERSION_MAJOR, buf[2] | buf[3] << 8);
	ASSERT_EQ(0xaa, buf[4]);
	/* a uAPI 1.0 caller's 48-byte reply: the old fields, nothing past them */
	q.size = sizeof(full);
	q.ptr = (uintptr_t)&full;
	enpu_query_ok(self->fd, &q);
	memset(buf, 0xaa, sizeof(buf));
	q.size = offsetof(struct drm_enpu_query_device, max_job_work);
	q.ptr = (uintptr_t)buf;
	enpu_query_ok(self->fd, &q);
	ASSERT_EQ(sizeof(struct drm_enpu_query_device), q.size);
	ASSERT_EQ(0, memcmp(buf, &full, 48));
	ASSERT_EQ(0xaa, buf[48]);
	/* larger buffer than the kernel's reply: the tail is untouched */
	memset(buf, 0xaa, sizeof(buf));
	q.size = sizeof(buf);
	enpu_query_ok(self->fd, &q);
	ASSERT_EQ(sizeof(struct drm_enpu_query_device), q.size);
	ASSERT_EQ(0xaa, buf[sizeof(buf) - 1]);
}

TEST_F(enpu, query_bad_args)
{
	struct drm_enpu_query_device dev;
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE, .size = sizeof(dev),
				    .ptr = (uintptr_t)&dev };

	q.type = 99;
	enpu_query_err(self->fd, &q, EINVAL);
	q.type = DRM_ENPU_QUERY_DEVICE;
	q.flags = 1;
	enpu_query_err(self->fd, &q, EINVAL);
	q.flags = 0;
	q.pad = 1;
	enpu_query_err(self->fd, &q, EINVAL);
	q.pad = 0;
	q.ptr = 8;	/* unmapped */
	enpu_query_err(self->fd, &q, EFAULT);
}

TEST_F(enpu, ioctl_struct_size_mismatch)
{
	/* an older, shorter struct: the DRM core zero-extends it */
	struct { uint32_t type, size; uint64_t ptr; } old = { DRM_ENPU_QUERY_DEVICE, 0, 0 };
	/* a newer, longer struct: the kernel ignores what it does not know */
	struct { struct drm_enpu_bo_create c; uint64_t future; } longer = {
		.c = { .size = PAGE }, .future = ~0ull };
	unsigned long short_query = DRM_IOWR(DRM_COMMAND_BASE + DRM_ENPU_QUERY, old);
	unsigned long long_create = DRM_IOWR(DRM_COMMAND_BASE + DRM_ENPU_BO_CREATE, longer);

	ASSERT_EQ(0, enpu_ioctl(self->fd, short_query, &old));
	ASSERT_EQ(sizeof(struct drm_enpu_query_device), old.size);
	ASSERT_EQ(0, enpu_ioctl(self->fd, long_create, &longer));
	ASSERT_NE(0, longer.c.handle);
	ASSERT_EQ(0, enpu_bo_close(self->fd, longer.c.handle));
}

/* ---- BO_CREATE / INFO / MMAP_OFFSET --------------------------------------- */

TEST_F(enpu, bo_create_info)
{
	struct drm_enpu_bo_create c = { .size = 1 };
	struct drm_enpu_bo_info info = { 0 };

	enpu_bo_create_ok(self->fd, &c);
	ASSERT_NE(0, c.handle);
	ASSERT_EQ(PAGE, c.size);
	info.handle = c.handle;
	enpu_bo_info_ok(self->fd, &info);
	ASSERT_EQ(PAGE, info.size);
	ASSERT_EQ(0, info.bo_flags);
	ASSERT_EQ(0, enpu_bo_close(self->fd, c.handle));
	enpu_bo_info_err(self->fd, &info, ENOENT);
}

TEST_F(enpu, bo_create_bad_args)
{
	struct drm_enpu_bo_create c = { .size = 0 };

	enpu_bo_create_err(self->fd, &c, EINVAL);
	c.size = PAGE;
	c.flags = 1;
	enpu_bo_create_err(self->fd, &c, EINVAL);
	c.flags = 0;
	c.size = ~0ull;	/* would overflow page rounding */
	enpu_bo_create_err(self->fd, &c, E2BIG);
	c.size = (1ull << 30) + 1;
	enpu_bo_create_err(self->fd, &c, E2BIG);
}

TEST_F(enpu, bo_info_bad_args)
{
	struct drm_enpu_bo_info info = { .handle = 12345 };
	uint32_t h;

	enpu_bo_info_err(self->fd, &info, ENOENT);
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &h));
	info.handle = h;
	info.flags = 1;
	enpu_bo_info_err(self->fd, &info, EINVAL);
	info.flags = 0;
	info.pad = 1;
	enpu_bo_info_err(self->fd, &info, EINVAL);
}

TEST_F(enpu, bo_mmap_offset_bad_args)
{
	struct drm_enpu_bo_mmap_offset m = { .handle = 777 };
	uint32_t h;

	enpu_bo_mmap_offset_err(self->fd, &m, ENOENT);
	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &h));
	m.handle = h;
	m.flags = 1;
	enpu_bo_mmap_offset_err(self->fd, &m, EINVAL);
	m.flags = 0;
	enpu_bo_mmap_offset_ok(self->fd, &m);
	ASSERT_NE(0, m.offset);
}

TEST_F(enpu, bo_mmap_coherency)
{
	const uint64_t size = 16 * PAGE;
	uint8_t *a, *b;
	uint32_t h;
	uint64_t i;

	ASSERT_EQ(0, enpu_bo_new(self->fd, size, &h));
	a = enpu_bo_map(self->fd, h, size);
	b = enpu_bo_map(self->fd, h, size);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(a, b);
	for (i = 0; i < size; i++)
		ASSERT_EQ(0, a[i]);	/* new BOs are zeroed */
	for (i = 0; i < size; i++)
		a[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < size; i++)
		ASSERT_EQ((uint8_t)(i * 7 + 3), b[i]);
	/* the mapping outlives the handle */
	ASSERT_EQ(0, enpu_bo_close(self->fd, h));
	ASSERT_EQ(3, b[0]);
	munmap(a, size);
	munmap(b, size);
}

TEST_F(enpu, bo_mmap_past_end)
{
	struct drm_enpu_bo_mmap_offset m = { 0 };
	void *p;

	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &m.handle));
	enpu_bo_mmap_offset_ok(self->fd, &m);
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, self->fd, m.offset);
	ASSERT_EQ(MAP_FAILED, p);
}

/* ---- BO_USERPTR ----------------------------------------------------------- */

TEST_F(enpu, userptr_create_info)
{
	struct drm_enpu_bo_userptr u = { 0 };
	struct drm_enpu_bo_info info = { 0 };
	struct drm_enpu_bo_mmap_offset m = { 0 };
	void *mem = aligned_alloc(PAGE, 4 * PAGE);

	ASSERT_NE(NULL, mem);
	memset(mem, 1, 4 * PAGE);
	u.user_ptr = (uintptr_t)mem;
	u.size = 4 * PAGE;
	enpu_bo_userptr_ok(self->fd, &u);
	info.handle = u.handle;
	enpu_bo_info_ok(self->fd, &info);
	ASSERT_EQ(4 * PAGE, info.size);
	ASSERT_EQ(ENPU_BO_USERPTR, info.bo_flags);
	/* userptr memory is mapped already: no mmap offset */
	m.handle = u.handle;
	enpu_bo_mmap_offset_err(self->fd, &m, EINVAL);
	ASSERT_EQ(0, enpu_bo_close(self->fd, u.handle));

	u.flags = ENPU_USERPTR_READONLY;
	enpu_bo_userptr_ok(self->fd, &u);
	info.handle = u.handle;
	enpu_bo_info_ok(self->fd, &info);
	ASSERT_EQ(ENPU_BO_USERPTR | ENPU_BO_READONLY, info.bo_flags);
	ASSERT_EQ(0, enpu_bo_close(self->fd, u.handle));
	free(mem);
}

TEST_F(enpu, userptr_bad_args)
{
	struct drm_enpu_bo_userptr u = { 0 };
	uint8_t *mem = aligned_alloc(PAGE, 4 * PAGE);

	ASSERT_NE(NULL, mem);
	u.user_ptr = (uintptr_t)mem;
	u.size = 0;
	enpu_bo_userptr_err(self->fd, &u, EINVAL);
	u.size = PAGE;
	u.flags = 2;
	enpu_bo_userptr_err(self->fd, &u, EINVAL);
	u.flags = 0;
	u.user_ptr = (uintptr_t)mem + 1;	/* misaligned */
	enpu_bo_userptr_err(self->fd, &u, EINVAL);
	u.user_ptr = (uintptr_t)mem;
	u.size = PAGE + 1;
	enpu_bo_userptr_err(self->fd, &u, EINVAL);
	u.user_ptr = ~0ull & ~(uint64_t)(PAGE - 1);	/* wraps */
	u.size = 2 * PAGE;
	enpu_bo_userptr_err(self->fd, &u, EINVAL);
	u.user_ptr = (uintptr_t)mem;
	u.size = 1ull << 31;
	enpu_bo_userptr_err(self->fd, &u, E2BIG);
	free(mem);
}

TEST_F(enpu, userptr_unmapped_memory)
{
	struct drm_enpu_bo_userptr u = { .size = 4 * PAGE };
	void *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	munmap((char *)p + 2 * PAGE, PAGE);	/* a hole */
	u.user_ptr = (uintptr_t)p;
	enpu_bo_userptr_err(self->fd, &u, EFAULT);
	munmap(p, 4 * PAGE);
}

TEST_F(enpu, userptr_readonly_memory)
{
	struct drm_enpu_bo_userptr u = { .size = PAGE };
	void *p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	u.user_ptr = (uintptr_t)p;
	/* writable pin of read-only memory fails; a read-only pin works */
	enpu_bo_userptr_err(self->fd, &u, EFAULT);
	u.flags = ENPU_USERPTR_READONLY;
	enpu_bo_userptr_ok(self->fd, &u);
	ASSERT_EQ(0, enpu_bo_close(self->fd, u.handle));
	munmap(p, PAGE);
}

/* ---- BO_WAIT -------------------------------------------------------------- */

/* VmPin of this process in pages, from /proc/self/status; -1 if absent */
static long vm_pin_pages(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / (PAGE / 1024);
}

static int userptr_pages(int fd, uint8_t *mem, long pages, uint32_t *handle)
{
	struct drm_enpu_bo_userptr u = {
		.user_ptr = (uintptr_t)mem, .size = pages * PAGE,
	};
	int ret = enpu_bo_userptr_raw(fd, &u);

	if (!ret)
		*handle = u.handle;
	return ret;
}

/*
 * In a child without CAP_IPC_LOCK and with RLIMIT_MEMLOCK at 16 pages:
 * userptr pins count against the limit (VmPin), one over it is refused
 * with ENOMEM, and freeing a BO gives its pages back. Exit status: 0, or
 * the number of the step that went wrong.
 */
static int memlock_child(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];
	struct rlimit rl = { .rlim_cur = 16 * PAGE, .rlim_max = 16 * PAGE };
	uint32_t h1, h2, h3, h4;
	uint8_t *mem;
	int fd;

	if (syscall(SYS_capget, &hdr, cap))
		return 1;
	cap[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	cap[CAP_TO_INDEX(CAP_IPC_LOCK)].permitted &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	if (syscall(SYS_capset, &hdr, cap) || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	mem = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = enpu_open();
	if (mem == MAP_FAILED || fd < 0)
		return 3;
	memset(mem, 1, 64 * PAGE);
	if (vm_pin_pages() != 0)
		return 4;
	if (userptr_pages(fd, mem, 8, &h1))			/* 8 of 16 */
		return 5;
	if (vm_pin_pages() != 8)
		return 6;
	if (userptr_pages(fd, mem + 16 * PAGE, 9, &h2) != -ENOMEM)	/* 17 > 16 */
		return 7;
	if (vm_pin_pages() != 8)		/* the refused pin is not charged */
		return 8;
	if (userptr_pages(fd, mem + 16 * PAGE, 8, &h2))		/* 16 of 16 */
		return 9;
	if (userptr_pages(fd, mem + 32 * PAGE, 1, &h3) != -ENOMEM)
		return 10;
	if (vm_pin_pages() != 16)
		return 11;
	/* freeing a BO releases its charge */
	if (enpu_bo_close(fd, h1) || vm_pin_pages() != 8)
		return 12;
	if (userptr_pages(fd, mem + 32 * PAGE, 8, &h3))
		return 13;
	if (userptr_pages(fd, mem + 48 * PAGE, 1, &h4) != -ENOMEM)
		return 14;
	/* closing the file frees the rest */
	close(fd);
	if (vm_pin_pages() != 0)
		return 15;
	return 0;
}

TEST_F(enpu, userptr_rlimit_memlock)
{
	int status;
	pid_t pid;

	if (vm_pin_pages() < 0)
		SKIP(return, "no VmPin in /proc/self/status");
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(memlock_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_F(enpu, bo_wait_idle_and_bad_args)
{
	struct drm_enpu_bo_wait w = { .timeout_ns = 0 };

	ASSERT_EQ(0, enpu_bo_new(self->fd, PAGE, &w.handle));
	enpu_bo_wait_ok(self->fd, &w);	/* idle, deadline in the past */
	w.timeout_ns = enpu_now_ns() + 1000000000ll;
	enpu_bo_wait_ok(self->fd, &w);
	w.flags = 1;
	enpu_bo_wait_err(self->fd, &w, EINVAL);
	w.flags = 0;
	w.handle = 4242;
	enpu_bo_wait_err(self->fd, &w, ENOENT);
}

/* ---- PRIME ---------------------------------------------------------------- */

TEST_F(enpu, prime_export_import_mmap)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	struct drm_enpu_bo_info info = { 0 };
	uint8_t *a, *b, *c;
	uint32_t h;
	int fd2;

	ASSERT_EQ(0, enpu_bo_new(self->fd, 2 * PAGE, &h));
	a = enpu_bo_map(self->fd, h, 2 * PAGE);
	ASSERT_NE(NULL, a);
	memset(a, 0x5a, 2 * PAGE);

	exp.handle = h;
	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	ASSERT_GE(exp.fd, 0);
	/* the dma-buf itself can be mapped */
	c = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, exp.fd, 0);
	ASSERT_NE(MAP_FAILED, c);
	ASSERT_EQ(0x5a, c[PAGE + 5]);

	/* import into a second open file: a different handle, same memory */
	fd2 = enpu_open();
	ASSERT_GE(fd2, 0);
	imp.fd = exp.fd;
	ASSERT_EQ(0, enpu_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	info.handle = imp.handle;
	enpu_bo_info_ok(fd2, &info);
	ASSERT_EQ(2 * PAGE, info.size);
	b = enpu_bo_map(fd2, imp.handle, 2 * PAGE);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0x5a, b[123]);
	b[PAGE] = 0x11;
	ASSERT_EQ(0x11, a[PAGE]);
	ASSERT_EQ(0x11, c[PAGE]);
	munmap(a, 2 * PAGE);
	munmap(b, 2 * PAGE);
	munmap(c, 2 * PAGE);
	close(exp.fd);
	close(fd2);
}

TEST_F(enpu, prime_userptr_not_exportable)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
	struct drm_enpu_bo_userptr u = { .size = PAGE };
	void *mem = aligned_alloc(PAGE, PAGE);

	u.user_ptr = (uintptr_t)mem;
	enpu_bo_userptr_ok(self->fd, &u);
	exp.handle = u.handle;
	ASSERT_EQ(-EINVAL, enpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	ASSERT_EQ(0, enpu_bo_close(self->fd, u.handle));
	free(mem);
}

TEST_F(enpu, many_bos_and_handles_released_on_close)
{
	uint32_t h[256];
	int i, fd2 = enpu_open();

	ASSERT_GE(fd2, 0);
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, enpu_bo_new(fd2, (i % 8 + 1) * PAGE, &h[i]));
	for (i = 0; i < 128; i++)
		ASSERT_EQ(0, enpu_bo_close(fd2, h[i]));
	ASSERT_EQ(-EINVAL, enpu_bo_close(fd2, h[0]));
	close(fd2);	/* the rest go with the file */
}

TEST_HARNESS_MAIN
