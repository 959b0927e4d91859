// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Job submission: copy and validate command streams, take references on
 * BOs, wire fences (syncobjs and implicit dma_resv sync), and the drm_sched
 * backend that hands jobs to the engine and handles timeouts.
 */
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <drm/drm_exec.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_syncobj.h>
#include <drm/enpu_accel.h>

#include "enpu_drv.h"
#include "enpu_engine.h"
#include "enpu_gem.h"
#include "enpu_job.h"
#include "enpu_mem.h"
#include "enpu_trace.h"

static unsigned int enpu_test_fail_submit;
module_param_named(test_fail_submit, enpu_test_fail_submit, uint, 0644);
MODULE_PARM_DESC(test_fail_submit,
		 "Test hook: SUBMIT fails with ENOMEM after job N is fully prepared (0: off; needs test_hooks)");

static void enpu_job_free(struct enpu_job *job)
{
	struct enpu_device *edev = job->edev;
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		if (!job->bos[i])
			break;
		drm_gem_object_put(job->bos[i]);
	}
	if (job->out_syncobj)
		drm_syncobj_put(job->out_syncobj);
	dma_fence_chain_free(job->out_chain);
	if (job->hw_fence_init)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	kfree(job->bos);
	kfree(job->vaddr);
	kvfree(job->cs);
	if (job->mem)
		enpu_mem_uncharge(job->mem, job->charged);
	kfree(job);
	if (atomic_dec_and_test(&edev->jobs_alive))
		wake_up_all(&edev->jobs_wq);
}

static int enpu_job_lookup_bos(struct drm_file *file, struct enpu_job *job,
			       const struct drm_enpu_job *uj, u64 *sizes)
{
	u64 __user *uptr = u64_to_user_ptr(uj->bos_ptr);
	u32 i, j;
	int ret;

	for (i = 0; i < job->bo_count; i++) {
		struct drm_enpu_job_bo ub;
		struct drm_gem_object *obj;

		ret = copy_struct_from_user(&ub, sizeof(ub),
					    (u8 __user *)uptr + (u64)i * uj->bo_stride,
					    uj->bo_stride);
		if (ret)
			return ret;
		if (!ub.flags || (ub.flags & ~ENPU_JOB_BO_FLAGS))
			return -EINVAL;
		obj = drm_gem_object_lookup(file, ub.handle);
		if (!obj)
			return -ENOENT;
		job->bos[i] = obj;
		for (j = 0; j < i; j++)
			if (job->bos[j] == obj)
				return -EINVAL;
		sizes[i] = obj->size;
		if (ub.flags & ENPU_JOB_BO_WRITE) {
			if (enpu_gem_is_readonly(obj))
				return -EACCES;
			job->writes |= 1ull << i;
		}
	}
	return 0;
}

/*
 * Each entry names a binary syncobj (point 0) or a timeline point. The
 * scheduler helper drm_sched_job_add_syncobj_dependency() takes a u32
 * point, so the fence is looked up here with the full 64-bit point.
 */
static int enpu_job_add_in_syncobjs(struct drm_file *file, struct enpu_job *job,
				    const struct drm_enpu_job *uj)
{
	u8 __user *uptr = u64_to_user_ptr(uj->in_syncobjs_ptr);
	struct dma_fence *fence;
	u32 i;
	int ret;

	for (i = 0; i < uj->in_syncobj_count; i++) {
		struct drm_enpu_syncobj us;

		ret = copy_struct_from_user(&us, sizeof(us),
					    uptr + (u64)i * uj->in_syncobj_stride,
					    uj->in_syncobj_stride);
		if (ret)
			return ret;
		if (us.flags & ~ENPU_SYNCOBJ_FLAGS)
			return -EINVAL;
		ret = drm_syncobj_find_fence(file, us.handle, us.point, 0, &fence);
		if (ret)
			return ret;
		/* consumes the reference, also on error */
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The first stage of a SUBMIT, one job at a time and with no lock held:
 * check the job, copy and validate its stream, look up its BOs and syncobjs
 * and collect its explicit dependencies. Nothing is visible to anyone else.
 */
static int enpu_job_create(struct drm_file *file, const struct drm_enpu_job *uj,
			   struct enpu_job **job_out)
{
	struct enpu_file *fpriv = file->driver_priv;
	struct enpu_device *edev = fpriv->edev;
	bool sched_init = false;
	struct enpu_job *job;
	u64 *sizes = NULL;
	u64 charge;
	int ret;

	if (uj->flags & ~ENPU_JOB_FLAGS)
		return -EINVAL;
	if ((uj->flags & ENPU_JOB_TEST_HANG) && !enpu_test_hooks)
		return -EPERM;
	if (uj->cs_size < sizeof(struct enpu_cs_header) ||
	    uj->bo_stride < sizeof(struct drm_enpu_job_bo) ||
	    (uj->in_syncobj_count &&
	     uj->in_syncobj_stride < sizeof(struct drm_enpu_syncobj)) ||
	    uj->pad || (uj->out_syncobj_point && !uj->out_syncobj))
		return -EINVAL;
	if (uj->cs_size > ENPU_MAX_CS_SIZE || uj->bo_count > ENPU_MAX_BOS_PER_JOB ||
	    uj->in_syncobj_count > ENPU_MAX_IN_SYNCOBJS)
		return -E2BIG;

	/* what the job keeps until it is freed, whatever becomes of the file */
	charge = sizeof(*job) + uj->cs_size +
		 (u64)uj->bo_count * (sizeof(*job->bos) + sizeof(*job->vaddr));
	ret = enpu_mem_charge(fpriv->mem, charge);
	if (ret)
		return ret;
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job) {
		enpu_mem_uncharge(fpriv->mem, charge);
		return -ENOMEM;
	}
	job->edev = edev;
	job->mem = fpriv->mem;
	job->charged = charge;
	atomic_inc(&edev->jobs_alive);
	job->flags = uj->flags;
	job->cs_size = uj->cs_size;
	job->bo_count = uj->bo_count;
	job->cs = kvmalloc(uj->cs_size, GFP_KERNEL_ACCOUNT);
	job->bos = kcalloc(uj->bo_count, sizeof(*job->bos), GFP_KERNEL_ACCOUNT);
	job->vaddr = kcalloc(uj->bo_count, sizeof(*job->vaddr), GFP_KERNEL_ACCOUNT);
	sizes = kcalloc(uj->bo_count, sizeof(*sizes), GFP_KERNEL);
	job->hw_fence = enpu_engine_fence_alloc();
	if (!job->cs || !job->hw_fence ||
	    (uj->bo_count && (!job->bos || !job->vaddr || !sizes))) {
		ret = -ENOMEM;
		goto err_free;
	}
	if (copy_from_user(job->cs, u64_to_user_ptr(uj->cs_ptr), uj->cs_size)) {
		ret = -EFAULT;
		goto err_free;
	}
	ret = enpu_job_lookup_bos(file, job, uj, sizes);
	if (ret)
		goto err_free;
	ret = enpu_cs_validate(job->cs, job->cs_size, sizes, job->bo_count, &job->info);
	if (ret)
		goto err_free;
	if (job->info.write_mask & ~job->writes) {
		ret = -EACCES;
		goto err_free;
	}
	ret = drm_sched_job_init(&job->base, &fpriv->entity, 1, fpriv, file->client_id);
	if (ret)
		goto err_free;
	sched_init = true;
	ret = enpu_job_add_in_syncobjs(file, job, uj);
	if (ret)
		goto err_free;
	if (uj->out_syncobj) {
		job->out_syncobj = drm_syncobj_find(file, uj->out_syncobj);
		if (!job->out_syncobj) {
			ret = -ENOENT;
			goto err_free;
		}
	}
	if (uj->out_syncobj_point) {
		job->out_point = uj->out_syncobj_point;
		job->out_chain = dma_fence_chain_alloc();
		if (!job->out_chain) {
			ret = -ENOMEM;
			goto err_free;
		}
	}
	kfree(sizes);
	*job_out = job;
	return 0;

err_free:
	kfree(sizes);
	if (sched_init)
		drm_sched_job_cleanup(&job->base);
	enpu_job_free(job);
	return ret;
}

static int enpu_obj_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct drm_gem_object * const *)a;
	uintptr_t y = (uintptr_t)*(struct drm_gem_object * const *)b;

	return x < y ? -1 : x > y;
}

/*
 * The second stage: lock the BOs of every job of the SUBMIT in one drm_exec
 * context, with one fence slot per job that uses the BO, map them for the
 * engine and add the implicit dependencies. Any failure here (a signal
 * while waiting for a lock, no memory) leaves nothing queued, so a
 * restarted ioctl runs no job twice.
 */
static int enpu_submit_prepare(struct drm_exec *exec, struct enpu_job **jobs, u32 count)
{
	struct drm_gem_object **objs;
	u32 total = 0, i, j, k;
	int ret = 0;

	for (i = 0; i < count; i++)
		total += jobs[i]->bo_count;
	objs = kvmalloc_array(total, sizeof(*objs), GFP_KERNEL);
	if (total && !objs)
		return -ENOMEM;
	for (i = 0, k = 0; i < count; i++)
		for (j = 0; j < jobs[i]->bo_count; j++)
			objs[k++] = jobs[i]->bos[j];
	/* a BO used by n jobs appears n times: it needs n fence slots */
	sort(objs, total, sizeof(*objs), enpu_obj_cmp, NULL);

	drm_exec_until_all_locked(exec) {
		for (i = 0; i < total; i = j) {
			j = i + 1;
			while (j < total && objs[j] == objs[i])
				j++;
			ret = drm_exec_prepare_obj(exec, objs[i], j - i);
			drm_exec_retry_on_contention(exec);
			if (ret)
				goto out_free;
		}
	}

	for (i = 0; i < count; i++) {
		struct enpu_job *job = jobs[i];

		for (j = 0; j < job->bo_count; j++) {
			ret = enpu_gem_kmap(job->bos[j], &job->vaddr[j]);
			if (ret)
				goto out_free;
			ret = drm_sched_job_add_implicit_dependencies(&job->base, job->bos[j],
								      job->writes & BIT_ULL(j));
			if (ret)
				goto out_free;
		}
		if (enpu_test_hooks && READ_ONCE(enpu_test_fail_submit) == i + 1) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
out_free:
	kvfree(objs);
	return ret;
}

/*
 * The last stage, which cannot fail: called with every BO of the SUBMIT
 * locked and the file's submit_lock held, so jobs are armed in queue order.
 * The job may run and be freed as soon as it is pushed.
 */
static void enpu_job_commit(struct enpu_job *job)
{
	struct dma_fence *done;
	u32 i;

	job->id = atomic64_inc_return(&job->edev->job_seqno);
	drm_sched_job_arm(&job->base);
	done = &job->base.s_fence->finished;
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, done,
				   job->writes & BIT_ULL(i) ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	if (job->out_chain) {
		drm_syncobj_add_point(job->out_syncobj, job->out_chain, done, job->out_point);
		job->out_chain = NULL;	/* the syncobj's now */
	} else if (job->out_syncobj) {
		drm_syncobj_replace_fence(job->out_syncobj, done);
	}
	trace_enpu_job_submit(job);
	drm_sched_entity_push_job(&job->base);
}

int enpu_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct enpu_file *fpriv = file->driver_priv;
	struct drm_enpu_submit *args = data;
	struct enpu_job **jobs;
	struct drm_exec exec;
	u32 i, created = 0;
	int ret = 0;

	if (args->flags || args->pad || !args->job_count || args->job_stride < ENPU_JOB_V2_SIZE)
		return -EINVAL;
	if (args->job_count > ENPU_MAX_JOBS_PER_SUBMIT)
		return -E2BIG;

	jobs = kcalloc(args->job_count, sizeof(*jobs), GFP_KERNEL);
	if (!jobs)
		return -ENOMEM;
	for (i = 0; i < args->job_count; i++) {
		struct drm_enpu_job uj;

		ret = copy_struct_from_user(&uj, sizeof(uj),
					    u64_to_user_ptr(args->jobs_ptr +
							    (u64)i * args->job_stride),
					    args->job_stride);
		if (ret)
			goto out_put;
		ret = enpu_job_create(file, &uj, &jobs[i]);
		if (ret)
			goto out_put;
		created++;
	}

	drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT, 0);
	ret = enpu_submit_prepare(&exec, jobs, created);
	if (!ret) {
		mutex_lock(&fpriv->submit_lock);
		for (i = 0; i < created; i++)
			enpu_job_commit(jobs[i]);
		mutex_unlock(&fpriv->submit_lock);
		/* the jobs belong to the scheduler now */
		created = 0;
	}
	/* drm_exec holds its own references on the BOs it unlocks */
	drm_exec_fini(&exec);

out_put:
	for (i = 0; i < created; i++) {
		drm_sched_job_cleanup(&jobs[i]->base);
		enpu_job_free(jobs[i]);
	}
	kfree(jobs);
	return ret;
}

/* ---- drm_sched backend --------------------------------------------------- */

static struct dma_fence *enpu_sched_run_job(struct drm_sched_job *sched_job)
{
	struct enpu_job *job = to_enpu_job(sched_job);
	struct enpu_core *core = to_enpu_core(sched_job->sched);

	job->ran = true;
	/* a dependency failed or the file went away: do not run */
	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;
	enpu_engine_fence_init(core, job->hw_fence);
	job->hw_fence_init = true;
	/* the core's counter is cumulative: a hang is no progress since now */
	job->last_progress = job->edev->hw->progress(core);
	job->edev->hw->submit(core, job);
	return dma_fence_get(job->hw_fence);
}

/*
 * drm_sched_job_timedout() takes the job off the pending list before it
 * calls us and only puts it back through drm_sched_stop(), which would
 * cancel it. Linux 6.12 has no DRM_GPU_SCHED_STAT_NO_HANG, so a job that is
 * not to be reset goes back to the head of the list here (as later kernels
 * do in the core), and the free worker is kicked in case it completed
 * meanwhile.
 */
static void enpu_sched_reinsert(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;

	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
	drm_sched_wqueue_start(sched);
}

static enum drm_gpu_sched_stat enpu_sched_timedout_job(struct drm_sched_job *sched_job)
{
	struct enpu_job *job = to_enpu_job(sched_job);
	struct enpu_core *core = to_enpu_core(sched_job->sched);
	const struct enpu_hw_ops *hw = job->edev->hw;
	bool hung = false;
	u64 progress;

	mutex_lock(&core->lock);
	if (job->hw_fence_init && !dma_fence_is_signaled(job->hw_fence) &&
	    core->current_job == job) {
		progress = hw->progress(core);
		/* a long job that keeps making progress is not a hang */
		if (progress == job->last_progress || (job->flags & ENPU_JOB_TEST_HANG)) {
			hung = true;
			hw->reset(core);
		}
		job->last_progress = progress;
	}
	mutex_unlock(&core->lock);

	if (hung) {
		atomic_inc(&job->edev->resets);
		drm_info(&job->edev->drm, "job %llu on core %u made no progress, reset\n",
			 job->id, core->index);
		/* reset makes the engine complete the job with -ETIMEDOUT */
		if (dma_fence_wait_timeout(job->hw_fence, false, 10 * HZ) <= 0)
			drm_err(&job->edev->drm, "core %u did not recover\n", core->index);
	}
	enpu_sched_reinsert(sched_job);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void enpu_job_free_work(struct work_struct *work)
{
	enpu_job_free(container_of(work, struct enpu_job, free_work));
}

/*
 * free_job runs on the scheduler's ordered workqueue, which also runs
 * run_job. Dropping the last reference on a BO takes its dma_resv lock
 * (and an imported BO's is its exporter's), and whoever holds that lock
 * may be waiting for our next job: so the references are dropped on a
 * workqueue of their own.
 */
static void enpu_sched_free_job(struct drm_sched_job *sched_job)
{
	struct enpu_job *job = to_enpu_job(sched_job);

	/*
	 * A job that never reached run_job was killed with its entity (its
	 * file went away). drm_sched (6.12) counted it in the core's score at
	 * push and uncounts jobs only when they complete, so each killed job
	 * would raise the core's score for good, and every new file would be
	 * put on the other cores.
	 */
	if (!job->ran)
		atomic_dec(sched_job->sched->score);

	drm_sched_job_cleanup(sched_job);
	INIT_WORK(&job->free_work, enpu_job_free_work);
	queue_work(job->edev->free_wq, &job->free_work);
}

static void enpu_job_fini(struct drm_device *drm, void *wq)
{
	/* every job is freed by now (enpu_engine_fini() waits); flush anyway */
	destroy_workqueue(wq);
}

/**
 * enpu_job_init() - set up job handling for a device
 * @edev: the device
 *
 * Return: 0 or -ENOMEM. The workqueue goes with the DRM device.
 */
int enpu_job_init(struct enpu_device *edev)
{
	edev->free_wq = alloc_workqueue("enpu-free", WQ_UNBOUND, 0);
	if (!edev->free_wq)
		return -ENOMEM;
	return drmm_add_action_or_reset(&edev->drm, enpu_job_fini, edev->free_wq);
}

const struct drm_sched_backend_ops enpu_sched_ops = {
	.run_job = enpu_sched_run_job,
	.timedout_job = enpu_sched_timedout_job,
	.free_job = enpu_sched_free_job,
};
