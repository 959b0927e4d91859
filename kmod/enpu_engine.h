/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 */
#ifndef _ENPU_ENGINE_H_
#define _ENPU_ENGINE_H_

#include <linux/dma-fence.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>

struct enpu_device;
struct enpu_job;

/**
 * struct enpu_core - one NPU core: a job queue and the engine behind it
 * @edev: the device
 * @index: core number
 * @name: timeline and scheduler name
 * @sched: drm_sched scheduler of this core
 * @fence_context: dma_fence context of the hardware fences
 * @fence_seqno: last hardware fence seqno
 * @lock: protects @current_job; completion and the timeout handler take it
 *	so that a job cannot complete while the handler looks at it
 * @current_job: job on the engine, or NULL
 * @progress: units of work done, advanced by the engine as it executes
 * @abort: non-zero asks the engine to abandon @current_job
 * @wq: the engine's "hardware" thread
 * @exec_work: executes @current_job
 */
struct enpu_core {
	struct enpu_device *edev;
	u32 index;
	char name[16];
	struct drm_gpu_scheduler sched;
	u64 fence_context;
	atomic64_t fence_seqno;
	struct mutex lock; /* protects current_job vs. timeout handler */
	struct enpu_job *current_job;
	atomic64_t progress;
	atomic_t abort;
	struct workqueue_struct *wq;
	struct work_struct exec_work;
};

/**
 * struct enpu_hw_ops - what the driver asks of the NPU hardware
 * @init: bring up core @core (its lock, fences and queue are set up)
 * @fini: shut down a core; no job is on it
 * @submit: start @job on @core; the core has no current job. Completion is
 *	reported through enpu_engine_complete() (the "interrupt").
 * @reset: called with @core's lock held: make the core abandon its current
 *	job promptly, which it then completes with -ETIMEDOUT through
 *	enpu_engine_complete(); must not sleep waiting for that
 * @progress: monotonic count of work the core has done
 */
struct enpu_hw_ops {
	int (*init)(struct enpu_core *core);
	void (*fini)(struct enpu_core *core);
	void (*submit)(struct enpu_core *core, struct enpu_job *job);
	void (*reset)(struct enpu_core *core);
	u64 (*progress)(struct enpu_core *core);
};

extern const struct enpu_hw_ops enpu_virtual_hw_ops;

int enpu_engine_init(struct enpu_device *edev, u32 num_cores);
void enpu_engine_fini(struct enpu_device *edev);
struct dma_fence *enpu_engine_fence_alloc(void);
void enpu_engine_fence_init(struct enpu_core *core, struct dma_fence *fence);
void enpu_engine_complete(struct enpu_core *core, int error);

static inline struct enpu_core *to_enpu_core(struct drm_gpu_scheduler *sched)
{
	return container_of(sched, struct enpu_core, sched);
}

#endif /* _ENPU_ENGINE_H_ */
