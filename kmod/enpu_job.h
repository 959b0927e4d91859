/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 */
#ifndef _ENPU_JOB_H_
#define _ENPU_JOB_H_

#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>
#include "enpu_cs.h"

struct enpu_device;
struct enpu_mem;
struct drm_device;
struct drm_file;
struct drm_gem_object;

/**
 * struct enpu_job - one command stream queued on the NPU
 * @base: drm_sched job
 * @edev: the device
 * @id: id for tracing
 * @flags: ENPU_JOB_* from userspace
 * @cs: kernel copy of the validated command stream
 * @cs_size: bytes at @cs
 * @info: what validation learnt (opcode counts, written regions)
 * @bo_count: number of buffer objects
 * @bos: referenced buffer objects; the references are dropped at free
 * @vaddr: the BOs' kernel mappings (they live as long as the BOs) for the
 *	executor
 * @writes: bit i set when the job writes @bos[i]
 * @hw_fence: signalled by the engine when the job completes
 * @hw_fence_init: @hw_fence was initialised (it is then freed by its refcount)
 * @ran: run_job was called for the job (else it was killed unrun)
 * @out_syncobj: receives the finished fence, or NULL
 * @out_point: timeline point of @out_syncobj, 0 when it is binary
 * @out_chain: preallocated chain node for @out_point, so that publishing the
 *	fence cannot fail; owned by the syncobj once added, else freed with
 *	the job
 * @last_progress: engine progress when the job started, then at the
 *	previous timeout
 * @start_ns: when the engine started the job
 * @free_work: drops the job's references off the scheduler's workqueue
 * @mem: the account of the submitting file, charged @charged bytes
 * @charged: the job's own memory (structure, stream copy, BO arrays)
 */
struct enpu_job {
	struct drm_sched_job base;
	struct enpu_device *edev;
	u64 id;
	u32 flags;
	void *cs;
	u32 cs_size;
	struct enpu_cs_info info;
	u32 bo_count;
	struct drm_gem_object **bos;
	void **vaddr;
	u64 writes;
	struct dma_fence *hw_fence;
	bool hw_fence_init;
	bool ran;
	struct drm_syncobj *out_syncobj;
	u64 out_point;
	struct dma_fence_chain *out_chain;
	u64 last_progress;
	u64 start_ns;
	struct work_struct free_work;
	struct enpu_mem *mem;
	u64 charged;
};

static inline struct enpu_job *to_enpu_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct enpu_job, base);
}

extern const struct drm_sched_backend_ops enpu_sched_ops;

int enpu_job_init(struct enpu_device *edev);
int enpu_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

#endif /* _ENPU_JOB_H_ */
