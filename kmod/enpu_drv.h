/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 */
#ifndef _ENPU_DRV_H_
#define _ENPU_DRV_H_

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/gpu_scheduler.h>

#define ENPU_MAX_CORES		8
#define ENPU_MAX_JOBS_PER_SUBMIT 64
#define ENPU_MAX_BOS_PER_JOB	64
#define ENPU_MAX_IN_SYNCOBJS	32
#define ENPU_MAX_CS_SIZE	(256 * 1024)
#define ENPU_MAX_BO_SIZE	SZ_1G
/* module parameter ranges */
#define ENPU_MIN_TIMEOUT_MS	10
#define ENPU_MAX_TIMEOUT_MS	600000
#define ENPU_MAX_TEST_DELAY_US	10000000

struct enpu_core;
struct enpu_hw_ops;
struct enpu_mem;
struct kernel_param;

/* module parameters (enpu_drv.c) */
extern unsigned int enpu_job_timeout_ms;
extern bool enpu_test_hooks;
extern unsigned int enpu_test_delay_us;
int enpu_param_set_range(const char *val, const struct kernel_param *kp,
			 unsigned int min, unsigned int max);

/**
 * struct enpu_device - one virtual NPU
 * @drm: the DRM accel device
 * @hw: the engine behind the driver (virtual NPU, or a real block)
 * @cores: @num_cores engine cores, one drm_sched scheduler each
 * @num_cores: number of cores
 * @scheds: the cores' schedulers, for the per-file entities
 * @jobs_alive: jobs created and not yet freed
 * @jobs_wq: woken when @jobs_alive drops to zero
 * @job_seqno: source of job ids for tracing
 * @bos_alive: buffer objects created or imported and not yet freed
 * @resets: jobs the engine had to abandon (no progress within the timeout)
 * @mem_used: bytes charged to all files (see enpu_mem.c)
 * @free_wq: drops finished jobs' references, off the schedulers' workqueues
 */
struct enpu_device {
	struct drm_device drm;
	const struct enpu_hw_ops *hw;
	struct enpu_core *cores;
	u32 num_cores;
	struct drm_gpu_scheduler *scheds[ENPU_MAX_CORES];
	atomic_t jobs_alive;
	wait_queue_head_t jobs_wq;
	atomic64_t job_seqno;
	atomic_t bos_alive;
	atomic_t resets;
	atomic64_t mem_used;
	struct workqueue_struct *free_wq;
};

/**
 * struct enpu_file - per-open-file context
 * @edev: the device
 * @entity: this file's job queue, balanced over every core
 * @submit_lock: protects the arm + push order of jobs on @entity
 * @mem: what this file's BOs and jobs are charged to
 */
struct enpu_file {
	struct enpu_device *edev;
	struct drm_sched_entity entity;
	struct mutex submit_lock; /* protects arm + push order on entity */
	struct enpu_mem *mem;
};

static inline struct enpu_device *to_enpu_device(struct drm_device *drm)
{
	return container_of(drm, struct enpu_device, drm);
}

#endif /* _ENPU_DRV_H_ */
