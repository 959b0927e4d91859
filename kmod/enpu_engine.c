// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * The virtual NPU: each core is an ordered workqueue that executes one
 * command stream at a time with the shared executor, advances a progress
 * counter as it goes, and "raises its interrupt" by calling
 * enpu_engine_complete(). Everything the rest of the driver needs from the
 * hardware goes through struct enpu_hw_ops.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <drm/drm_print.h>
#include <drm/enpu_accel.h>

#include "enpu_drv.h"
#include "enpu_engine.h"
#include "enpu_job.h"
#include "enpu_trace.h"

/*
 * A hardware fence can outlive its job, its core and the module: a sync_file
 * exported from an out-syncobj holds the job's scheduler fence, which holds
 * this one as its parent. So the fence carries its own lock and timeline
 * name instead of pointing into struct enpu_core (freed at unbind), and
 * holds a reference on the module from dma_fence_init() until its release,
 * so that enpu_fence_ops and its functions stay: rmmod fails with EBUSY
 * while such a fence lives.
 */
struct enpu_hw_fence {
	struct dma_fence base;
	spinlock_t lock; /* the fence's lock, for dma_fence_init() */
	char timeline[sizeof_field(struct enpu_core, name)];
};

static struct enpu_hw_fence *to_enpu_hw_fence(struct dma_fence *fence)
{
	return container_of(fence, struct enpu_hw_fence, base);
}

static const char *enpu_fence_driver_name(struct dma_fence *fence)
{
	return "enpu";
}

static const char *enpu_fence_timeline_name(struct dma_fence *fence)
{
	return to_enpu_hw_fence(fence)->timeline;
}

static void enpu_fence_release(struct dma_fence *fence)
{
	/* what dma_fence_release() does without a release op: kfree_rcu() */
	dma_fence_free(fence);
	/*
	 * Last: the module may go once this returns. (Returning from here is
	 * the one step a module cannot cover with its own reference.)
	 */
	module_put(THIS_MODULE);
}

static const struct dma_fence_ops enpu_fence_ops = {
	.get_driver_name = enpu_fence_driver_name,
	.get_timeline_name = enpu_fence_timeline_name,
	.release = enpu_fence_release,
};

/*
 * Allocated at submit: run_job is in the fence signalling path and must not
 * allocate. A fence that was never initialised is freed with kfree() (as
 * enpu_job_free() does), so the dma_fence is the first member.
 */
struct dma_fence *enpu_engine_fence_alloc(void)
{
	struct enpu_hw_fence *hf;

	BUILD_BUG_ON(offsetof(struct enpu_hw_fence, base) != 0);
	hf = kzalloc(sizeof(*hf), GFP_KERNEL);
	return hf ? &hf->base : NULL;
}

void enpu_engine_fence_init(struct enpu_core *core, struct dma_fence *fence)
{
	struct enpu_hw_fence *hf = to_enpu_hw_fence(fence);

	spin_lock_init(&hf->lock);
	strscpy(hf->timeline, core->name);
	/* the caller's device file keeps the module loaded: this cannot fail */
	__module_get(THIS_MODULE);
	dma_fence_init(fence, &enpu_fence_ops, &hf->lock, core->fence_context,
		       atomic64_inc_return(&core->fence_seqno));
}

/* The completion "interrupt": called by the engine, in its own context. */
void enpu_engine_complete(struct enpu_core *core, int error)
{
	struct enpu_job *job;

	mutex_lock(&core->lock);
	job = core->current_job;
	core->current_job = NULL;
	atomic_set(&core->abort, 0);
	if (job) {
		trace_enpu_job_done(job, core->index, error, ktime_get_ns() - job->start_ns);
		if (error)
			dma_fence_set_error(job->hw_fence, error);
		dma_fence_signal(job->hw_fence);
	}
	mutex_unlock(&core->lock);
}

/* ---- the virtual NPU behind enpu_hw_ops ---------------------------------- */

/*
 * Called by the executor after every command and output row and at least
 * every 64K units of work, so a reset is seen within that much work. The
 * test hook's delay is part of the unit of work that then counts as
 * progress; it is cut short by a reset.
 */
static int enpu_vhw_yield(void *arg)
{
	struct enpu_core *core = arg;
	unsigned int delay = READ_ONCE(enpu_test_delay_us);

	while (delay && !atomic_read(&core->abort)) {
		unsigned int us = min(delay, 5000u);

		usleep_range(us, us + us / 8 + 1);
		delay -= us;
	}
	cond_resched();
	atomic64_inc(&core->progress);
	return atomic_read(&core->abort);
}

static void enpu_vhw_exec_work(struct work_struct *work)
{
	struct enpu_core *core = container_of(work, struct enpu_core, exec_work);
	struct enpu_job *job;
	int ret;

	mutex_lock(&core->lock);
	job = core->current_job;
	mutex_unlock(&core->lock);
	if (!job)
		return;

	ret = enpu_cs_execute(job->cs, job->vaddr, job->bo_count, enpu_vhw_yield, core);
	if (!ret && (job->flags & ENPU_JOB_TEST_HANG)) {
		/* test hook: a core that stops making progress until reset */
		while (!atomic_read(&core->abort))
			usleep_range(5000, 10000);
		ret = -ECANCELED;
	}
	if (ret == -ECANCELED)
		ret = -ETIMEDOUT;
	enpu_engine_complete(core, ret);
}

static int enpu_vhw_init(struct enpu_core *core)
{
	INIT_WORK(&core->exec_work, enpu_vhw_exec_work);
	core->wq = alloc_ordered_workqueue("enpu-core%u", 0, core->index);
	return core->wq ? 0 : -ENOMEM;
}

static void enpu_vhw_fini(struct enpu_core *core)
{
	destroy_workqueue(core->wq);
}

static void enpu_vhw_submit(struct enpu_core *core, struct enpu_job *job)
{
	mutex_lock(&core->lock);
	core->current_job = job;
	job->start_ns = ktime_get_ns();
	trace_enpu_job_start(job, core->index);
	mutex_unlock(&core->lock);
	queue_work(core->wq, &core->exec_work);
}

static void enpu_vhw_reset(struct enpu_core *core)
{
	lockdep_assert_held(&core->lock);
	/* the exec work sees it at its next yield; completion clears it */
	atomic_set(&core->abort, 1);
}

static u64 enpu_vhw_progress(struct enpu_core *core)
{
	return atomic64_read(&core->progress);
}

const struct enpu_hw_ops enpu_virtual_hw_ops = {
	.init = enpu_vhw_init,
	.fini = enpu_vhw_fini,
	.submit = enpu_vhw_submit,
	.reset = enpu_vhw_reset,
	.progress = enpu_vhw_progress,
};

/* ---- cores and their schedulers ------------------------------------------ */

static void enpu_core_fini(struct enpu_core *core)
{
	drm_sched_fini(&core->sched);
	core->edev->hw->fini(core);
}

static int enpu_core_init(struct enpu_device *edev, struct enpu_core *core, u32 index)
{
	struct drm_sched_init_args args = {
		.ops = &enpu_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		/* one job on the engine at a time: the timeout applies to it alone */
		.credit_limit = 1,
		.timeout = msecs_to_jiffies(enpu_job_timeout_ms),
		.dev = edev->drm.dev,
	};
	int ret;

	core->edev = edev;
	core->index = index;
	snprintf(core->name, sizeof(core->name), "enpu-core%u", index);
	mutex_init(&core->lock);
	core->fence_context = dma_fence_context_alloc(1);

	ret = edev->hw->init(core);
	if (ret)
		return ret;
	args.name = core->name;
	ret = drm_sched_init(&core->sched, &args);
	if (ret) {
		edev->hw->fini(core);
		return ret;
	}
	return 0;
}

int enpu_engine_init(struct enpu_device *edev, u32 num_cores)
{
	u32 i;
	int ret;

	edev->hw = &enpu_virtual_hw_ops;
	edev->cores = kcalloc(num_cores, sizeof(*edev->cores), GFP_KERNEL);
	if (!edev->cores)
		return -ENOMEM;
	for (i = 0; i < num_cores; i++) {
		ret = enpu_core_init(edev, &edev->cores[i], i);
		if (ret)
			goto err_fini_cores;
		edev->scheds[i] = &edev->cores[i].sched;
	}
	edev->num_cores = num_cores;
	return 0;

err_fini_cores:
	while (i--)
		enpu_core_fini(&edev->cores[i]);
	kfree(edev->cores);
	return ret;
}

void enpu_engine_fini(struct enpu_device *edev)
{
	u32 i;

	/* every file is closed; wait for jobs still on the engine to be freed */
	if (!wait_event_timeout(edev->jobs_wq, !atomic_read(&edev->jobs_alive), 30 * HZ))
		drm_err(&edev->drm, "%d jobs still alive at unload\n",
			atomic_read(&edev->jobs_alive));
	for (i = 0; i < edev->num_cores; i++)
		enpu_core_fini(&edev->cores[i]);
	kfree(edev->cores);
}
