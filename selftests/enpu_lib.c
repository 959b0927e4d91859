// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/sync_file.h>

#include "enpu_lib.h"

int enpu_open(void)
{
	char path[64];
	int i, fd;

	for (i = 0; i < 64; i++) {
		struct drm_version v = { 0 };
		char name[32] = { 0 };

		snprintf(path, sizeof(path), "/dev/accel/accel%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "enpu"))
			return fd;
		close(fd);
	}
	return -1;
}

int enpu_set_param(const char *name, const char *value)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/module/enpu/parameters/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, value, strlen(value)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

int enpu_get_param(const char *name)
{
	char path[128], buf[32] = { 0 };
	int fd, n;

	snprintf(path, sizeof(path), "/sys/module/enpu/parameters/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	if (buf[0] == 'Y')
		return 1;
	if (buf[0] == 'N')
		return 0;
	return atoi(buf);
}

long enpu_stat(const char *key)
{
	char line[128];
	long val = -ENOENT;
	FILE *f = NULL;
	size_t i;
	glob_t g;

	/* the device's debugfs directory is named after it, not after the minor */
	if (glob("/sys/kernel/debug/accel/*/stats", 0, NULL, &g))
		return -ENOENT;
	for (i = 0; i < g.gl_pathc && !f; i++)
		f = fopen(g.gl_pathv[i], "r");
	globfree(&g);
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(key);

		if (!strncmp(line, key, n) && line[n] == ' ')
			val = atol(line + n + 1);
	}
	fclose(f);
	return val;
}

int enpu_bo_new(int fd, uint64_t size, uint32_t *handle)
{
	struct drm_enpu_bo_create c = { .size = size };
	int ret = enpu_bo_create_raw(fd, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

void *enpu_bo_map(int fd, uint32_t handle, uint64_t size)
{
	struct drm_enpu_bo_mmap_offset m = { .handle = handle };
	void *p;

	if (enpu_bo_mmap_offset_raw(fd, &m))
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, m.offset);
	return p == MAP_FAILED ? NULL : p;
}

int enpu_bo_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return enpu_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

int enpu_syncobj_new(int fd, uint32_t flags, uint32_t *handle)
{
	struct drm_syncobj_create c = { .flags = flags };
	int ret = enpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

int64_t enpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int enpu_syncobj_wait(int fd, uint32_t handle, int64_t timeout_ns)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&handle,
		.count_handles = 1,
		.timeout_nsec = enpu_now_ns() + timeout_ns,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};

	return enpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

int enpu_timeline_wait(int fd, uint32_t handle, uint64_t point, int64_t timeout_ns,
		       uint32_t flags)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.count_handles = 1,
		.timeout_nsec = enpu_now_ns() + timeout_ns,
		.flags = flags,
	};

	return enpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

int enpu_timeline_query(int fd, uint32_t handle, uint32_t flags, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)point,
		.count_handles = 1,
		.flags = flags,
	};

	*point = ~0ull;
	return enpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

int enpu_syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	return enpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

int enpu_syncobj_status(int fd, uint32_t handle)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	struct sync_file_info info = { 0 };
	int ret;

	ret = enpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	if (ret)
		return ret;
	ret = ioctl(h.fd, SYNC_IOC_FILE_INFO, &info) ? -errno : info.status;
	close(h.fd);
	return ret;
}

void enpu_cs_begin(struct enpu_cs *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->len = sizeof(struct enpu_cs_header);
}

void *enpu_cs_add(struct enpu_cs *cs, uint16_t opcode, uint16_t size)
{
	struct enpu_cs_cmd *c = (void *)(cs->buf + cs->len);

	memset(c, 0, size);
	c->opcode = opcode;
	c->size = size;
	cs->len += size;
	cs->num_cmds++;
	return c;
}

uint32_t enpu_cs_end(struct enpu_cs *cs)
{
	struct enpu_cs_header *h = (void *)cs->buf;

	h->magic = ENPU_CS_MAGIC;
	h->version = ENPU_CS_VERSION;
	h->num_cmds = cs->num_cmds;
	h->size = cs->len;
	return cs->len;
}

/* a dense tensor: innermost dimension contiguous */
struct enpu_cs_tensor enpu_tensor(uint32_t region, uint64_t offset,
				  uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3)
{
	struct enpu_cs_tensor t = {
		.region = region, .offset = offset,
		.dim = { d0, d1, d2, d3 },
		.stride = { d1 * d2 * d3, d2 * d3, d3, 1 },
	};

	return t;
}

struct enpu_cs_tensor enpu_tensor_none(void)
{
	struct enpu_cs_tensor t = { .region = ENPU_CS_NO_REGION };

	return t;
}

struct enpu_cs_quant enpu_quant_identity(void)
{
	struct enpu_cs_quant q = {
		.act_min = -128, .act_max = 127,
		.out_mult = 1 << 30, .out_shift = 1,	/* x * 2^30 * 2 / 2^31 = x */
	};

	return q;
}

/*
 * One command of every opcode, tensors in regions 0 (in), 1 (weights) and
 * 2 (out), which need at least enpu_all_ops_sizes[] bytes.
 */
const __u64 enpu_all_ops_sizes[ENPU_ALL_OPS_REGIONS] = { 144, 1024, 1024 };

uint32_t enpu_cs_build_all_ops(struct enpu_cs *cs)
{
	struct enpu_cs_conv2d *c;
	struct enpu_cs_matmul *m;
	struct enpu_cs_eltwise *e;
	struct enpu_cs_pool *p;
	struct enpu_cs_lut *l;
	struct enpu_cs_copy *cp;

	enpu_cs_begin(cs);
	enpu_cs_add(cs, ENPU_OP_NOP, sizeof(struct enpu_cs_cmd));
	c = enpu_cs_add(cs, ENPU_OP_CONV2D, sizeof(*c));
	c->in = enpu_tensor(0, 0, 1, 6, 6, 4);
	c->weights = enpu_tensor(1, 0, 4, 3, 3, 4);
	c->bias = enpu_tensor(1, 512, 4, 1, 1, 1);
	c->bias.stride[0] = 4;
	c->requant = enpu_tensor(1, 768, 4, 1, 1, 1);
	c->requant.stride[0] = 8;
	c->out = enpu_tensor(2, 0, 1, 6, 6, 4);
	c->quant = enpu_quant_identity();
	c->stride_h = c->stride_w = c->dil_h = c->dil_w = 1;
	c->pad_top = c->pad_left = c->pad_bottom = c->pad_right = 1;
	c->groups = 1;
	m = enpu_cs_add(cs, ENPU_OP_MATMUL, sizeof(*m));
	m->a = enpu_tensor(0, 0, 1, 4, 16, 1);
	m->w = enpu_tensor(1, 0, 1, 8, 16, 1);
	m->bias = enpu_tensor_none();
	m->requant = enpu_tensor_none();
	m->out = enpu_tensor(2, 256, 1, 4, 8, 1);
	m->quant = enpu_quant_identity();
	e = enpu_cs_add(cs, ENPU_OP_ELTWISE, sizeof(*e));
	e->a = enpu_tensor(0, 0, 1, 2, 4, 8);
	e->b = enpu_tensor(1, 0, 1, 1, 1, 8);
	e->out = enpu_tensor(2, 512, 1, 2, 4, 8);
	e->quant = enpu_quant_identity();
	e->op = ENPU_ELTWISE_ADD;
	e->a_mult = e->b_mult = 1 << 30;
	p = enpu_cs_add(cs, ENPU_OP_POOL, sizeof(*p));
	p->in = enpu_tensor(0, 0, 1, 6, 6, 4);
	p->out = enpu_tensor(2, 600, 1, 3, 3, 4);
	p->quant.act_min = -128;
	p->quant.act_max = 127;
	p->mode = ENPU_POOL_AVG;
	p->kernel_h = p->kernel_w = 3;
	p->stride_h = p->stride_w = 2;
	p->pad_top = p->pad_left = p->pad_bottom = p->pad_right = 1;
	l = enpu_cs_add(cs, ENPU_OP_LUT, sizeof(*l));
	l->in = enpu_tensor(0, 0, 1, 1, 8, 8);
	l->table = enpu_tensor(1, 0, 256, 1, 1, 1);
	l->table.stride[0] = 1;
	l->out = enpu_tensor(2, 700, 1, 1, 8, 8);
	cp = enpu_cs_add(cs, ENPU_OP_COPY, sizeof(*cp));
	cp->src = enpu_tensor(0, 0, 1, 2, 3, 4);
	cp->dst = enpu_tensor(2, 800, 1, 2, 3, 4);
	return enpu_cs_end(cs);
}

struct enpu_cs_tensor enpu_tensor_bcast(uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3)
{
	struct enpu_cs_tensor t = { .dim = { d0, d1, d2, d3 } };

	return t;
}

void enpu_cs_add_bcast_matmul(struct enpu_cs *cs, uint32_t m, uint32_t n, uint32_t k)
{
	struct enpu_cs_matmul *mm = enpu_cs_add(cs, ENPU_OP_MATMUL, sizeof(*mm));

	mm->a = enpu_tensor_bcast(1, m, k, 1);
	mm->w = enpu_tensor_bcast(1, n, k, 1);
	mm->out = enpu_tensor_bcast(1, m, n, 1);
	mm->bias = enpu_tensor_none();
	mm->requant = enpu_tensor_none();
	mm->quant = enpu_quant_identity();
}

int enpu_submit_one(int fd, const struct enpu_job_desc *d)
{
	struct drm_enpu_job_bo bos[64];
	struct drm_enpu_job job = {
		.cs_ptr = (uintptr_t)d->cs,
		.cs_size = d->cs_size,
		.flags = d->flags,
		.bos_ptr = (uintptr_t)bos,
		.bo_count = d->bo_count,
		.bo_stride = sizeof(bos[0]),
		.in_syncobjs_ptr = (uintptr_t)d->in_syncobjs,
		.in_syncobj_count = d->in_count,
		.in_syncobj_stride = d->in_stride ? d->in_stride : sizeof(struct drm_enpu_syncobj),
		.out_syncobj = d->out_syncobj,
		.out_syncobj_point = d->out_point,
	};
	struct drm_enpu_submit s = {
		.jobs_ptr = (uintptr_t)&job,
		.job_count = 1,
		.job_stride = sizeof(job),
	};
	uint32_t i;

	for (i = 0; i < d->bo_count && i < 64; i++) {
		bos[i].handle = d->handles[i];
		bos[i].flags = d->bo_flags ? d->bo_flags[i] : ENPU_JOB_BO_READ | ENPU_JOB_BO_WRITE;
	}
	return enpu_submit_raw(fd, &s);
}

int enpu_submit_nops(int fd, uint32_t n, uint32_t flags, uint32_t out_syncobj)
{
	static struct enpu_cs cs;
	struct enpu_job_desc d = { .cs = cs.buf, .flags = flags, .out_syncobj = out_syncobj };
	uint32_t i;

	enpu_cs_begin(&cs);
	for (i = 0; i < n; i++)
		enpu_cs_add(&cs, ENPU_OP_NOP, sizeof(struct enpu_cs_cmd));
	d.cs_size = enpu_cs_end(&cs);
	return enpu_submit_one(fd, &d);
}

uint32_t enpu_cs_copy_bytes(struct enpu_cs *cs, uint32_t src, uint64_t src_off,
			    uint32_t dst, uint64_t dst_off, uint32_t n)
{
	struct enpu_cs_copy *c;

	enpu_cs_begin(cs);
	c = enpu_cs_add(cs, ENPU_OP_COPY, sizeof(*c));
	/* rows of 64 bytes where possible: the engine yields once per row */
	if (n % 64 == 0) {
		c->src = enpu_tensor(src, src_off, 1, 1, n / 64, 64);
		c->dst = enpu_tensor(dst, dst_off, 1, 1, n / 64, 64);
	} else {
		c->src = enpu_tensor(src, src_off, 1, 1, 1, n);
		c->dst = enpu_tensor(dst, dst_off, 1, 1, 1, n);
	}
	return enpu_cs_end(cs);
}
