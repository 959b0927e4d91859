/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * enpu: DRM accel uAPI of the edgert virtual NPU.
 *
 * Copyright (C) 2026 The edgert authors
 */
#ifndef _UAPI_DRM_ENPU_ACCEL_H_
#define _UAPI_DRM_ENPU_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: enpu uAPI conventions and errors
 *
 * Every structure is made of fixed-size types with explicit padding; padding
 * and every reserved field must be zero. Every @flags field is checked
 * against the mask of flags this version knows. User pointers are __u64.
 * Arrays are passed as pointer + count + element size (stride), so that the
 * element structures can grow: the kernel accepts a stride at least as large
 * as the first version of the element, and a larger stride only if the bytes
 * it does not know are zero. Timeouts are absolute CLOCK_MONOTONIC times in
 * nanoseconds (__s64).
 *
 * Versions: &drm_enpu_query_device.uapi_version (and the DRM driver version)
 * is (major << 16) | minor. Minor versions only add: new flags, new fields
 * at the end of a structure, new QUERY types. A major version may change
 * layouts, and a caller must check it before anything else. uAPI 2.0
 * replaced the 1.x &struct drm_enpu_job (48 bytes, in-syncobjs a bare
 * __u32 array without element size, binary syncobjs only) by the 64-byte
 * layout with an array of &struct drm_enpu_syncobj (pointer + count +
 * stride, timeline points) and a timeline point for the out-syncobj.
 * Mainline's rule is that released uAPI never breaks; the 1.x layout had
 * no user outside this repository and no release, so it was replaced
 * rather than kept as a second, legacy parse path. It cannot be misread:
 * its 48-byte @job_stride is below %ENPU_JOB_V2_SIZE and is %EINVAL. From
 * 2.0 on, structures only grow, through their strides or sizes.
 *
 * Errors returned by the enpu ioctls:
 *
 * - %EINVAL: a flag outside the mask, non-zero padding or reserved field,
 *   zero or misaligned size, a stride below the minimum, an unknown QUERY
 *   type, a malformed command stream (bad magic or version, unknown opcode,
 *   a command size or parameter out of range), the same BO twice in one
 *   job, an in-syncobj that has no fence yet (or a timeline that has no
 *   such point yet, or a point on a binary syncobj), a timeline point for
 *   a job without out-syncobj.
 * - %E2BIG: a count or size above the device limit reported by QUERY, a
 *   command stream whose work estimate exceeds
 *   &drm_enpu_query_device.max_job_work (see ENPU_CS_MAX_WORK in
 *   enpu_cmdstream.h; split the work over several jobs), or a stride larger
 *   than the kernel knows whose extra bytes are not zero.
 * - %ERANGE: a command stream region that reaches past the end of its buffer
 *   object, or whose extent overflows 64-bit arithmetic.
 * - %ENOENT: an unknown GEM handle or syncobj handle.
 * - %EACCES: a command that writes to a buffer object the job only reads, or
 *   to a read-only userptr buffer object; also a DRM core ioctl that the
 *   accel node does not offer (see below).
 * - %EFAULT: a user pointer that cannot be read or written.
 * - %ENOMEM: the kernel ran out of memory; BO_CREATE, BO_USERPTR or SUBMIT
 *   would take the bytes charged to the calling file or to the device past
 *   &drm_enpu_query_device.file_mem_limit or .mem_limit (live BOs at their
 *   size, userptr BOs at their pinned size, queued jobs at the size of the
 *   kernel's copy; freed when the BO or job is, even after the file is
 *   closed); or BO_USERPTR would take the calling process's pinned memory
 *   past its RLIMIT_MEMLOCK (as for mlock(2) and RDMA memory registration;
 *   CAP_IPC_LOCK lifts that limit, not the driver's).
 * - %EINTR: a signal arrived while SUBMIT waited for a buffer object's
 *   lock; nothing was queued and the call can simply be repeated.
 * - %ETIMEDOUT: BO_WAIT reached its deadline with the buffer still busy.
 * - %EPERM: a test-hook flag while the module parameter test_hooks is off.
 * - %EBUSY: BO_USERPTR over memory that cannot be pinned long-term.
 *
 * DRM core ioctls on the accel node: only %DRM_IOCTL_VERSION,
 * %DRM_IOCTL_GET_CAP, %DRM_IOCTL_GEM_CLOSE, %DRM_IOCTL_PRIME_HANDLE_TO_FD,
 * %DRM_IOCTL_PRIME_FD_TO_HANDLE and the %DRM_IOCTL_SYNCOBJ_* family (the
 * core ioctls a render node offers) reach the DRM core; every other number
 * of the core ranges (0x00-0x3f, 0xa0-0xff) fails with %EACCES, and an
 * ioctl that is not of DRM's type ('d') with %ENOTTY, from 64-bit and
 * 32-bit (compat) callers alike.
 *
 * A job that the engine has to abort (it stopped making progress within the
 * job timeout) signals its out-syncobj with an error; waiting on the syncobj
 * succeeds, and the error is visible through the fence (sync_file status).
 */

/** ENPU_UAPI_VERSION_MAJOR - incompatible uAPI changes bump this */
#define ENPU_UAPI_VERSION_MAJOR 2
/** ENPU_UAPI_VERSION_MINOR - compatible additions bump this */
#define ENPU_UAPI_VERSION_MINOR 1

#define DRM_ENPU_QUERY			0x00
#define DRM_ENPU_BO_CREATE		0x01
#define DRM_ENPU_BO_MMAP_OFFSET		0x02
#define DRM_ENPU_BO_INFO		0x03
#define DRM_ENPU_BO_USERPTR		0x04
#define DRM_ENPU_BO_WAIT		0x05
#define DRM_ENPU_SUBMIT			0x06

#define DRM_IOCTL_ENPU_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_ENPU_QUERY, struct drm_enpu_query)
#define DRM_IOCTL_ENPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_ENPU_BO_CREATE, struct drm_enpu_bo_create)
#define DRM_IOCTL_ENPU_BO_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_ENPU_BO_MMAP_OFFSET, struct drm_enpu_bo_mmap_offset)
#define DRM_IOCTL_ENPU_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_ENPU_BO_INFO, struct drm_enpu_bo_info)
#define DRM_IOCTL_ENPU_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_ENPU_BO_USERPTR, struct drm_enpu_bo_userptr)
#define DRM_IOCTL_ENPU_BO_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_ENPU_BO_WAIT, struct drm_enpu_bo_wait)
#define DRM_IOCTL_ENPU_SUBMIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_ENPU_SUBMIT, struct drm_enpu_submit)

/**
 * enum drm_enpu_query_type - what DRM_IOCTL_ENPU_QUERY reports
 * @DRM_ENPU_QUERY_DEVICE: &struct drm_enpu_query_device
 */
enum drm_enpu_query_type {
	DRM_ENPU_QUERY_DEVICE = 0,
};

/**
 * struct drm_enpu_query - size-negotiating query (DRM_IOCTL_ENPU_QUERY)
 *
 * The kernel copies min(@size, its own size of the reply) bytes to @ptr and
 * always writes its own size of the reply back to @size. Calling with
 * @size == 0 asks for the size only. A caller built against an older header
 * gets the prefix it knows; a newer caller sees the kernel's smaller size.
 */
struct drm_enpu_query {
	/** @type: one of &enum drm_enpu_query_type. */
	__u32 type;
	/** @size: in: bytes available at @ptr; out: size of the full reply. */
	__u32 size;
	/** @ptr: user pointer to the reply buffer; may be 0 when @size is 0. */
	__u64 ptr;
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_enpu_query_device - reply to %DRM_ENPU_QUERY_DEVICE
 *
 * The reply only grows at its end, by fields whose offset and size keep
 * the structure a multiple of 8 bytes with no implicit padding. A field
 * past the @size the kernel returns was not known to that kernel: treat
 * it as absent (uAPI 1.0 replies end after @job_timeout_ms, 48 bytes;
 * 2.0 replies after @max_job_work, 56 bytes).
 */
struct drm_enpu_query_device {
	/** @uapi_version: (major << 16) | minor of this uAPI. */
	__u32 uapi_version;
	/** @num_cores: number of NPU cores (one job queue each). */
	__u32 num_cores;
	/** @cs_version: command stream version (ENPU_CS_VERSION). */
	__u32 cs_version;
	/** @max_jobs_per_submit: most jobs in one SUBMIT. */
	__u32 max_jobs_per_submit;
	/** @opcode_mask: bit n set when opcode n is supported. */
	__u64 opcode_mask;
	/**
	 * @max_bo_size: largest buffer object in bytes: 1 GiB, or
	 * @file_mem_limit if that is smaller (since uAPI 2.1).
	 */
	__u64 max_bo_size;
	/** @max_cs_size: largest command stream of one job in bytes. */
	__u32 max_cs_size;
	/** @max_bos_per_job: most buffer objects (regions) one job may use. */
	__u32 max_bos_per_job;
	/** @max_in_syncobjs: most in-syncobjs of one job. */
	__u32 max_in_syncobjs;
	/** @job_timeout_ms: time a job may go without progress before reset. */
	__u32 job_timeout_ms;
	/**
	 * @max_job_work: most work one job's command stream may ask for, in the
	 * units of ENPU_CS_MAX_WORK (about one multiply-accumulate each); a
	 * stream over it is refused with %E2BIG. Since uAPI 1.1.
	 */
	__u64 max_job_work;
	/**
	 * @mem_limit: most bytes of BOs and queued jobs on the device, all
	 * files together (module parameter mem_limit_mb); going over it is
	 * %ENOMEM. Since uAPI 2.1, as are the three fields after it.
	 */
	__u64 mem_limit;
	/**
	 * @file_mem_limit: most bytes of BOs and queued jobs of one open file
	 * (module parameter file_mem_limit_mb, at most @mem_limit).
	 */
	__u64 file_mem_limit;
	/** @mem_used: bytes charged on the device at the time of the call. */
	__u64 mem_used;
	/** @file_mem_used: bytes charged to the calling file at the time of the call. */
	__u64 file_mem_used;
};

/**
 * struct drm_enpu_bo_create - create a shmem buffer object (DRM_IOCTL_ENPU_BO_CREATE)
 */
struct drm_enpu_bo_create {
	/** @size: in: bytes wanted (> 0); out: size rounded up to pages. */
	__u64 size;
	/** @flags: must be zero. */
	__u32 flags;
	/** @handle: out: GEM handle of the new buffer object. */
	__u32 handle;
};

/**
 * struct drm_enpu_bo_mmap_offset - fake offset to mmap a BO (DRM_IOCTL_ENPU_BO_MMAP_OFFSET)
 *
 * Userptr buffer objects cannot be mapped this way (the caller owns the
 * memory already): %EINVAL.
 */
struct drm_enpu_bo_mmap_offset {
	/** @handle: GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @offset: out: offset to pass to mmap() on the device fd. */
	__u64 offset;
};

/** ENPU_BO_USERPTR - the BO wraps pinned user memory */
#define ENPU_BO_USERPTR		0x1u
/** ENPU_BO_READONLY - the NPU may only read the BO */
#define ENPU_BO_READONLY	0x2u
/** ENPU_BO_IMPORTED - the BO was imported from a dma-buf */
#define ENPU_BO_IMPORTED	0x4u

/**
 * struct drm_enpu_bo_info - describe a BO (DRM_IOCTL_ENPU_BO_INFO)
 */
struct drm_enpu_bo_info {
	/** @handle: GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @size: out: size in bytes. */
	__u64 size;
	/** @bo_flags: out: ENPU_BO_USERPTR, ENPU_BO_READONLY, ENPU_BO_IMPORTED. */
	__u32 bo_flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/** ENPU_USERPTR_READONLY - pin for NPU reads only; the pages may be read-only */
#define ENPU_USERPTR_READONLY	0x1u
/** ENPU_USERPTR_FLAGS - every flag DRM_IOCTL_ENPU_BO_USERPTR knows */
#define ENPU_USERPTR_FLAGS	ENPU_USERPTR_READONLY

/**
 * struct drm_enpu_bo_userptr - wrap user memory as a BO (DRM_IOCTL_ENPU_BO_USERPTR)
 *
 * The pages are pinned long-term (FOLL_LONGTERM) until the BO is freed.
 * Without %ENPU_USERPTR_READONLY the pages are pinned writable and jobs may
 * write them.
 *
 * Pinned pages are charged to the calling process's pinned memory (VmPin
 * in /proc/PID/status), which may not exceed RLIMIT_MEMLOCK unless the
 * caller has CAP_IPC_LOCK: over the limit the call fails with %ENOMEM. The
 * charge is released when the BO is freed (its last handle, job and
 * reference gone), even if the process has exited by then.
 */
struct drm_enpu_bo_userptr {
	/** @user_ptr: page-aligned start of the user memory. */
	__u64 user_ptr;
	/** @size: bytes, a non-zero multiple of the page size. */
	__u64 size;
	/** @flags: ENPU_USERPTR_*. */
	__u32 flags;
	/** @handle: out: GEM handle of the new buffer object. */
	__u32 handle;
};

/**
 * struct drm_enpu_bo_wait - wait for a BO to be idle (DRM_IOCTL_ENPU_BO_WAIT)
 *
 * Waits for every job that reads or writes the BO. A deadline in the past
 * polls.
 */
struct drm_enpu_bo_wait {
	/** @handle: GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @timeout_ns: absolute CLOCK_MONOTONIC deadline in nanoseconds. */
	__s64 timeout_ns;
};

/** ENPU_JOB_BO_READ - the job reads the BO */
#define ENPU_JOB_BO_READ	0x1u
/** ENPU_JOB_BO_WRITE - the job writes the BO (implies read ordering) */
#define ENPU_JOB_BO_WRITE	0x2u
/** ENPU_JOB_BO_FLAGS - every flag of &struct drm_enpu_job_bo */
#define ENPU_JOB_BO_FLAGS	(ENPU_JOB_BO_READ | ENPU_JOB_BO_WRITE)

/**
 * struct drm_enpu_job_bo - one buffer object (region) of a job
 *
 * Its index in the job's list is the region number that the command stream
 * uses. The job holds a reference on the BO until its fence signals, and
 * orders itself after the BO's fences (implicit sync): a writer waits for
 * everything, a reader for writers.
 */
struct drm_enpu_job_bo {
	/** @handle: GEM handle. */
	__u32 handle;
	/** @flags: ENPU_JOB_BO_READ and/or ENPU_JOB_BO_WRITE, at least one. */
	__u32 flags;
};

/**
 * ENPU_JOB_TEST_HANG - test hook: the engine stalls on this job (needs test_hooks=1)
 *
 * The job's timeout treats it as hung whatever its progress: the engine is
 * reset at the first timeout, while it still executes the command stream
 * (polling for the reset as usual) or after, when it stalls waiting for it.
 */
#define ENPU_JOB_TEST_HANG	0x80000000u
/** ENPU_JOB_FLAGS - every flag of &struct drm_enpu_job */
#define ENPU_JOB_FLAGS		ENPU_JOB_TEST_HANG

/** ENPU_SYNCOBJ_FLAGS - every flag of &struct drm_enpu_syncobj (none yet) */
#define ENPU_SYNCOBJ_FLAGS	0x0u

/**
 * struct drm_enpu_syncobj - one in-syncobj of a job
 *
 * Names a binary syncobj (@point 0) or a point on a timeline syncobj. The
 * job runs after the fence found there when SUBMIT is called: the fence a
 * binary syncobj holds, or the fence of timeline point @point (the first
 * point at or after it). A syncobj without a fence, or a timeline that has
 * no such point yet, is %EINVAL: SUBMIT does not wait for a point to be
 * submitted. A non-zero @point on a binary syncobj is %EINVAL too.
 */
struct drm_enpu_syncobj {
	/** @handle: DRM syncobj handle. */
	__u32 handle;
	/** @flags: ENPU_SYNCOBJ_*; none is defined yet, so must be zero. */
	__u32 flags;
	/** @point: 0 for a binary syncobj, else the timeline point to wait for. */
	__u64 point;
};

/** ENPU_SYNCOBJ_V1_SIZE - size of the first version of &struct drm_enpu_syncobj */
#define ENPU_SYNCOBJ_V1_SIZE	16

/**
 * struct drm_enpu_job - one job of a SUBMIT
 *
 * This is the uAPI 2.0 layout. uAPI 1.x had a 48-byte job whose
 * in-syncobjs were a bare array of __u32 handles with no element size and
 * no timeline points; it was never used outside this repository and is
 * gone, not kept beside this one: the QUERY and DRM version major is 2,
 * and a SUBMIT with a @job_stride below %ENPU_JOB_V2_SIZE (such as a 1.x
 * caller's 48) is %EINVAL, so an old caller fails cleanly instead of being
 * misread.
 */
struct drm_enpu_job {
	/** @cs_ptr: user pointer to the command stream (see enpu_cmdstream.h). */
	__u64 cs_ptr;
	/** @cs_size: bytes of the command stream. */
	__u32 cs_size;
	/** @flags: ENPU_JOB_*. */
	__u32 flags;
	/** @bos_ptr: user pointer to an array of &struct drm_enpu_job_bo. */
	__u64 bos_ptr;
	/** @bo_count: number of entries at @bos_ptr. */
	__u32 bo_count;
	/** @bo_stride: bytes between entries, >= 8. */
	__u32 bo_stride;
	/**
	 * @in_syncobjs_ptr: user pointer to an array of &struct
	 * drm_enpu_syncobj. The job runs after the fence each entry names
	 * when SUBMIT is called. All in-syncobjs of a SUBMIT are read before
	 * any of its jobs is queued, so naming the out-syncobj (or point) of
	 * an earlier job of the same SUBMIT waits for the fence that syncobj
	 * held before the call (or fails with %EINVAL if the point did not
	 * exist yet), not for that job. No such wait is needed: the jobs of
	 * one file run one after the other in the order they were submitted.
	 */
	__u64 in_syncobjs_ptr;
	/**
	 * @in_syncobj_count: number of entries at @in_syncobjs_ptr, at most
	 * &drm_enpu_query_device.max_in_syncobjs (else %E2BIG).
	 */
	__u32 in_syncobj_count;
	/**
	 * @in_syncobj_stride: bytes between entries at @in_syncobjs_ptr, >=
	 * %ENPU_SYNCOBJ_V1_SIZE; bytes past the kernel's &struct
	 * drm_enpu_syncobj must be zero (else %E2BIG). Ignored when
	 * @in_syncobj_count is 0.
	 */
	__u32 in_syncobj_stride;
	/** @out_syncobj: syncobj to receive the job's fence, 0 for none. */
	__u32 out_syncobj;
	/** @pad: must be zero. */
	__u32 pad;
	/**
	 * @out_syncobj_point: 0: @out_syncobj is binary and its fence is
	 * replaced by the job's; else @out_syncobj is a timeline and the job's
	 * fence is added to it as this point. Must be 0 when @out_syncobj is 0.
	 */
	__u64 out_syncobj_point;
};

/** ENPU_JOB_V2_SIZE - size of &struct drm_enpu_job in uAPI 2.0, the least @job_stride */
#define ENPU_JOB_V2_SIZE	64

/**
 * struct drm_enpu_submit - queue jobs (DRM_IOCTL_ENPU_SUBMIT)
 *
 * SUBMIT is all or nothing. Every job is validated completely (command
 * streams decoded and every region checked against its BO), its BOs and
 * syncobjs looked up, the BOs of all jobs locked together with room
 * reserved for the new fences, and every dependency recorded, before any
 * job is queued; on error (including %EINTR) nothing is queued and no
 * syncobj or BO fence changes. Jobs of one SUBMIT are queued in order on
 * the file's queue; the jobs of one file run one at a time in that order,
 * on whichever core is free, after their in-syncobjs' fences and (implicit
 * sync) the fences of the BOs they use. In-syncobjs are read at the start
 * of the call: see &drm_enpu_job.in_syncobjs_ptr. Out-syncobjs (binary
 * fences replaced, timeline points added) change only once every job of
 * the call is sure to be queued.
 */
struct drm_enpu_submit {
	/** @jobs_ptr: user pointer to an array of &struct drm_enpu_job. */
	__u64 jobs_ptr;
	/** @job_count: number of jobs, 1..max_jobs_per_submit. */
	__u32 job_count;
	/**
	 * @job_stride: bytes between jobs, >= %ENPU_JOB_V2_SIZE; bytes past the
	 * kernel's &struct drm_enpu_job must be zero (else %E2BIG).
	 */
	__u32 job_stride;
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRM_ENPU_ACCEL_H_ */
