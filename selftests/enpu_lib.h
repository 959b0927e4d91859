/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Helpers shared by the enpu selftests: device discovery, three helpers per
 * ioctl (raw call returning -errno, expect success, expect an errno), and a
 * small command stream builder.
 */
#ifndef ENPU_LIB_H
#define ENPU_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>

#include "drm.h"
#include "drm/enpu_accel.h"
#include "drm/enpu_cmdstream.h"

/* Open the first /dev/accel/accel* whose driver is enpu; -1 if none. */
int enpu_open(void);
/* true when the enpu module's test_hooks parameter is on (or could be set) */
int enpu_set_param(const char *name, const char *value);
int enpu_get_param(const char *name);
/* a counter from debugfs accel/N/stats (jobs_alive, bos_alive, resets...); <0 if absent */
long enpu_stat(const char *key);

static inline int enpu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

/* raw helpers: return 0 or -errno */
#define ENPU_RAW(name, REQ, type) \
	static inline int enpu_##name##_raw(int fd, type *a) { return enpu_ioctl(fd, REQ, a); }
ENPU_RAW(query, DRM_IOCTL_ENPU_QUERY, struct drm_enpu_query)
ENPU_RAW(bo_create, DRM_IOCTL_ENPU_BO_CREATE, struct drm_enpu_bo_create)
ENPU_RAW(bo_mmap_offset, DRM_IOCTL_ENPU_BO_MMAP_OFFSET, struct drm_enpu_bo_mmap_offset)
ENPU_RAW(bo_info, DRM_IOCTL_ENPU_BO_INFO, struct drm_enpu_bo_info)
ENPU_RAW(bo_userptr, DRM_IOCTL_ENPU_BO_USERPTR, struct drm_enpu_bo_userptr)
ENPU_RAW(bo_wait, DRM_IOCTL_ENPU_BO_WAIT, struct drm_enpu_bo_wait)
ENPU_RAW(submit, DRM_IOCTL_ENPU_SUBMIT, struct drm_enpu_submit)

/* expect-success and expect-errno helpers (need the harness's _metadata) */
#define ENPU_OK(name, fd, a)		ASSERT_EQ(0, enpu_##name##_raw((fd), (a)))
#define ENPU_ERR(name, fd, a, err)	ASSERT_EQ(-(err), enpu_##name##_raw((fd), (a)))
#define enpu_query_ok(fd, a)		ENPU_OK(query, fd, a)
#define enpu_query_err(fd, a, e)	ENPU_ERR(query, fd, a, e)
#define enpu_bo_create_ok(fd, a)	ENPU_OK(bo_create, fd, a)
#define enpu_bo_create_err(fd, a, e)	ENPU_ERR(bo_create, fd, a, e)
#define enpu_bo_mmap_offset_ok(fd, a)	ENPU_OK(bo_mmap_offset, fd, a)
#define enpu_bo_mmap_offset_err(fd, a, e) ENPU_ERR(bo_mmap_offset, fd, a, e)
#define enpu_bo_info_ok(fd, a)		ENPU_OK(bo_info, fd, a)
#define enpu_bo_info_err(fd, a, e)	ENPU_ERR(bo_info, fd, a, e)
#define enpu_bo_userptr_ok(fd, a)	ENPU_OK(bo_userptr, fd, a)
#define enpu_bo_userptr_err(fd, a, e)	ENPU_ERR(bo_userptr, fd, a, e)
#define enpu_bo_wait_ok(fd, a)		ENPU_OK(bo_wait, fd, a)
#define enpu_bo_wait_err(fd, a, e)	ENPU_ERR(bo_wait, fd, a, e)
#define enpu_submit_ok(fd, a)		ENPU_OK(submit, fd, a)
#define enpu_submit_err(fd, a, e)	ENPU_ERR(submit, fd, a, e)

/* plain-function conveniences (return 0 / -errno, never assert) */
int enpu_bo_new(int fd, uint64_t size, uint32_t *handle);
void *enpu_bo_map(int fd, uint32_t handle, uint64_t size);
int enpu_bo_close(int fd, uint32_t handle);
int enpu_syncobj_new(int fd, uint32_t flags, uint32_t *handle);
int enpu_syncobj_wait(int fd, uint32_t handle, int64_t timeout_ns);
int enpu_syncobj_destroy(int fd, uint32_t handle);
/* status of the fence in a syncobj: 1 signalled ok, 0 pending, <0 its error */
int enpu_syncobj_status(int fd, uint32_t handle);
int64_t enpu_now_ns(void);
/* timeline syncobjs: wait for a point (relative timeout; flags DRM_SYNCOBJ_WAIT_FLAGS_*) */
int enpu_timeline_wait(int fd, uint32_t handle, uint64_t point, int64_t timeout_ns,
		       uint32_t flags);
/* the last signalled point (or with DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED, submitted) */
int enpu_timeline_query(int fd, uint32_t handle, uint32_t flags, uint64_t *point);

/* command stream builder */
struct enpu_cs {
	uint8_t buf[64 * 1024];
	uint32_t len;
	uint16_t num_cmds;
};

void enpu_cs_begin(struct enpu_cs *cs);
void *enpu_cs_add(struct enpu_cs *cs, uint16_t opcode, uint16_t size);
uint32_t enpu_cs_end(struct enpu_cs *cs);
struct enpu_cs_tensor enpu_tensor(uint32_t region, uint64_t offset,
				  uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3);
struct enpu_cs_tensor enpu_tensor_none(void);
struct enpu_cs_quant enpu_quant_identity(void);
/* one command of every opcode over 3 regions of enpu_all_ops_sizes[] bytes */
#define ENPU_ALL_OPS_REGIONS 3
extern const __u64 enpu_all_ops_sizes[ENPU_ALL_OPS_REGIONS];
uint32_t enpu_cs_build_all_ops(struct enpu_cs *cs);
/* every stride 0: any dims fit in one byte of region 0 (for the work limit) */
struct enpu_cs_tensor enpu_tensor_bcast(uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3);
/* a MATMUL of (m, k) x (k, n) over broadcast tensors, identity requantisation */
void enpu_cs_add_bcast_matmul(struct enpu_cs *cs, uint32_t m, uint32_t n, uint32_t k);

/* one-job submit */
struct enpu_job_desc {
	const void *cs;
	uint32_t cs_size;
	uint32_t flags;
	const uint32_t *handles;
	const uint32_t *bo_flags;	/* NULL: every BO read+write */
	uint32_t bo_count;
	const struct drm_enpu_syncobj *in_syncobjs;
	uint32_t in_count;
	uint32_t in_stride;	/* 0: sizeof(struct drm_enpu_syncobj) */
	uint32_t out_syncobj;
	uint64_t out_point;	/* 0: out_syncobj is binary */
};

int enpu_submit_one(int fd, const struct enpu_job_desc *d);
/* an in-syncobj entry: binary syncobj (point 0) or timeline point */
static inline struct drm_enpu_syncobj enpu_in(uint32_t handle, uint64_t point)
{
	struct drm_enpu_syncobj s = { .handle = handle, .point = point };

	return s;
}
/* submit a stream of n NOP commands */
int enpu_submit_nops(int fd, uint32_t n, uint32_t flags, uint32_t out_syncobj);

#endif

#ifndef ENPU_LIB_H_EXTRA
#define ENPU_LIB_H_EXTRA
/* a stream with one COPY of n bytes from region src to region dst */
uint32_t enpu_cs_copy_bytes(struct enpu_cs *cs, uint32_t src, uint64_t src_off,
			    uint32_t dst, uint64_t dst_off, uint32_t n);
#endif
