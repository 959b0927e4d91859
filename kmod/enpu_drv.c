// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * enpu: DRM accel driver for the edgert virtual NPU. The module registers
 * a platform device standing in for the NPU block, and binds to it.
 */
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/seq_file.h>
#include <drm/drm_accel.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/enpu_accel.h>

#include "enpu_drv.h"
#include "enpu_engine.h"
#include "enpu_gem.h"
#include "enpu_job.h"
#include "enpu_mem.h"

/*
 * Numeric parameters are checked against their range when set, at load
 * time or through sysfs: a value out of range is refused with -EINVAL and a
 * message (and a module load with it fails), rather than becoming, say, a
 * zero-jiffy job timeout.
 */
int enpu_param_set_range(const char *val, const struct kernel_param *kp,
			 unsigned int min, unsigned int max)
{
	int ret = param_set_uint_minmax(val, kp, min, max);

	/* a value written through sysfs usually ends with a newline */
	if (ret && val)
		pr_err("enpu: %s=%.*s refused: must be an integer in %u..%u\n",
		       kp->name, (int)strcspn(val, "\n"), val, min, max);
	return ret;
}

#define ENPU_PARAM_RANGE(name, min, max)					\
static int enpu_param_set_##name(const char *val, const struct kernel_param *kp) \
{									\
	return enpu_param_set_range(val, kp, min, max);			\
}									\
static const struct kernel_param_ops enpu_param_ops_##name = {		\
	.set = enpu_param_set_##name,					\
	.get = param_get_uint,						\
}

static unsigned int enpu_cores = 2;
ENPU_PARAM_RANGE(cores, 1, ENPU_MAX_CORES);
module_param_cb(cores, &enpu_param_ops_cores, &enpu_cores, 0444);
MODULE_PARM_DESC(cores, "Number of virtual NPU cores (1-8, default 2)");

unsigned int enpu_job_timeout_ms = 2000;
ENPU_PARAM_RANGE(job_timeout_ms, ENPU_MIN_TIMEOUT_MS, ENPU_MAX_TIMEOUT_MS);
module_param_cb(job_timeout_ms, &enpu_param_ops_job_timeout_ms, &enpu_job_timeout_ms, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "Time a job may go without progress before reset (ms, 10-600000, default 2000)");

bool enpu_test_hooks;
module_param_named(test_hooks, enpu_test_hooks, bool, 0644);
MODULE_PARM_DESC(test_hooks, "Allow test hooks such as ENPU_JOB_TEST_HANG (default off)");

unsigned int enpu_test_delay_us;
ENPU_PARAM_RANGE(test_delay_us, 0, ENPU_MAX_TEST_DELAY_US);
module_param_cb(test_delay_us, &enpu_param_ops_test_delay_us, &enpu_test_delay_us, 0644);
MODULE_PARM_DESC(test_delay_us,
		 "Test hook: engine sleeps this long per unit of work (us, 0-10000000)");

static struct platform_device *enpu_pdev;

static int enpu_query_device(struct enpu_device *edev, struct enpu_file *fpriv,
			     struct drm_enpu_query *args)
{
	struct drm_enpu_query_device q = {
		.uapi_version = ENPU_UAPI_VERSION_MAJOR << 16 | ENPU_UAPI_VERSION_MINOR,
		.num_cores = edev->num_cores,
		.cs_version = ENPU_CS_VERSION,
		.max_jobs_per_submit = ENPU_MAX_JOBS_PER_SUBMIT,
		.opcode_mask = GENMASK_ULL(ENPU_OP_COUNT - 1, 0),
		.max_bo_size = enpu_mem_max_bo_size(),
		.max_cs_size = ENPU_MAX_CS_SIZE,
		.max_bos_per_job = ENPU_MAX_BOS_PER_JOB,
		.max_in_syncobjs = ENPU_MAX_IN_SYNCOBJS,
		.job_timeout_ms = enpu_job_timeout_ms,
		.max_job_work = ENPU_CS_MAX_WORK,
		.mem_limit = enpu_mem_limit(),
		.file_mem_limit = enpu_file_mem_limit(),
		.mem_used = atomic64_read(&edev->mem_used),
		.file_mem_used = atomic64_read(&fpriv->mem->used),
	};
	u32 len = min_t(u32, args->size, sizeof(q));

	if (len && copy_to_user(u64_to_user_ptr(args->ptr), &q, len))
		return -EFAULT;
	args->size = sizeof(q);
	return 0;
}

static int enpu_query_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_enpu_query *args = data;

	if (args->flags || args->pad)
		return -EINVAL;
	switch (args->type) {
	case DRM_ENPU_QUERY_DEVICE:
		return enpu_query_device(to_enpu_device(dev), file->driver_priv, args);
	default:
		return -EINVAL;
	}
}

static int enpu_open(struct drm_device *dev, struct drm_file *file)
{
	struct enpu_device *edev = to_enpu_device(dev);
	struct enpu_file *fpriv;
	int ret;

	fpriv = kzalloc(sizeof(*fpriv), GFP_KERNEL);
	if (!fpriv)
		return -ENOMEM;
	fpriv->edev = edev;
	mutex_init(&fpriv->submit_lock);
	fpriv->mem = enpu_mem_create(edev);
	if (!fpriv->mem) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = drm_sched_entity_init(&fpriv->entity, DRM_SCHED_PRIORITY_NORMAL,
				    edev->scheds, edev->num_cores, NULL);
	if (ret)
		goto err_put_mem;
	file->driver_priv = fpriv;
	return 0;

err_put_mem:
	enpu_mem_put(fpriv->mem);
err_free:
	mutex_destroy(&fpriv->submit_lock);
	kfree(fpriv);
	return ret;
}

static void enpu_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct enpu_file *fpriv = file->driver_priv;

	/* waits for queued jobs, or kills them when the process is exiting */
	drm_sched_entity_destroy(&fpriv->entity);
	mutex_destroy(&fpriv->submit_lock);
	/* BOs and jobs still alive keep the account until they are freed */
	enpu_mem_put(fpriv->mem);
	kfree(fpriv);
}

static int enpu_stats_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct enpu_device *edev = to_enpu_device(entry->dev);

	seq_printf(m, "jobs_alive %d\n", atomic_read(&edev->jobs_alive));
	seq_printf(m, "bos_alive %d\n", atomic_read(&edev->bos_alive));
	seq_printf(m, "jobs_submitted %lld\n", atomic64_read(&edev->job_seqno));
	seq_printf(m, "resets %d\n", atomic_read(&edev->resets));
	seq_printf(m, "mem_used %lld\n", atomic64_read(&edev->mem_used));
	return 0;
}

static const struct drm_ioctl_desc enpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(ENPU_QUERY, enpu_query_ioctl, 0),
	DRM_IOCTL_DEF_DRV(ENPU_BO_CREATE, enpu_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(ENPU_BO_MMAP_OFFSET, enpu_bo_mmap_offset_ioctl, 0),
	DRM_IOCTL_DEF_DRV(ENPU_BO_INFO, enpu_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(ENPU_BO_USERPTR, enpu_bo_userptr_ioctl, 0),
	DRM_IOCTL_DEF_DRV(ENPU_BO_WAIT, enpu_bo_wait_ioctl, 0),
	DRM_IOCTL_DEF_DRV(ENPU_SUBMIT, enpu_submit_ioctl, 0),
};

/*
 * The DRM core ioctls an accel file may reach. drm_ioctl() checks core
 * ioctls against the rights of a primary-node client, but an accel file
 * has no drm_master: on 6.12 GET_MAGIC and GET_UNIQUE dereference the
 * missing master, and the other core ioctls are legacy (DRI1, drawables,
 * busid), authentication and master handling, KMS, or global GEM names
 * (FLINK/OPEN), none of which an accel device has. What is left is what
 * the core offers render nodes (DRM_RENDER_ALLOW in the 6.12 table): the
 * version, capabilities, closing GEM handles, PRIME and syncobjs.
 */
static bool enpu_core_ioctl_allowed(unsigned int nr)
{
	switch (nr) {
	case DRM_IOCTL_NR(DRM_IOCTL_VERSION):
	case DRM_IOCTL_NR(DRM_IOCTL_GET_CAP):
	case DRM_IOCTL_NR(DRM_IOCTL_GEM_CLOSE):
	case DRM_IOCTL_NR(DRM_IOCTL_PRIME_HANDLE_TO_FD):
	case DRM_IOCTL_NR(DRM_IOCTL_PRIME_FD_TO_HANDLE):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_CREATE):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_DESTROY):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TRANSFER):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_WAIT):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_EVENTFD):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_RESET):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_SIGNAL):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL):
	case DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_QUERY):
		return true;
	default:
		return false;
	}
}

/*
 * The core dispatches by number alone (the size and direction bits only
 * say how much to copy), so the number is what is checked. An ioctl of
 * another type is -ENOTTY, as drm_ioctl() answers it: drm_compat_ioctl()
 * does not look at the type, and would run its GET_UNIQUE handler for any
 * command numbered 1. The driver's own range goes to the core unchanged.
 */
static int enpu_ioctl_check(unsigned int cmd)
{
	unsigned int nr = DRM_IOCTL_NR(cmd);

	if (DRM_IOCTL_TYPE(cmd) != DRM_IOCTL_BASE)
		return -ENOTTY;
	if (nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END)
		return 0;
	return enpu_core_ioctl_allowed(nr) ? 0 : -EACCES;
}

static long enpu_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	int ret = enpu_ioctl_check(cmd);

	return ret ? ret : drm_ioctl(filp, cmd, arg);
}

#ifdef CONFIG_COMPAT
/* drm_compat_ioctl() runs some core handlers (GET_UNIQUE...) itself */
static long enpu_compat_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	int ret = enpu_ioctl_check(cmd);

	return ret ? ret : drm_compat_ioctl(filp, cmd, arg);
}
#else
#define enpu_compat_ioctl NULL
#endif

/* DRM_ACCEL_FOPS spelled out, with the two ioctl entries filtered */
static const struct file_operations enpu_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = enpu_ioctl,
	.compat_ioctl = enpu_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
	.fop_flags = FOP_UNSIGNED_OFFSET,
};

static const struct drm_driver enpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = enpu_open,
	.postclose = enpu_postclose,
	.ioctls = enpu_ioctls,
	.num_ioctls = ARRAY_SIZE(enpu_ioctls),
	.fops = &enpu_fops,
	.gem_create_object = enpu_gem_create_object,
	.gem_prime_import_sg_table = enpu_gem_prime_import_sg_table,
	.name = "enpu",
	.desc = "edgert virtual NPU",
	.major = ENPU_UAPI_VERSION_MAJOR,
	.minor = ENPU_UAPI_VERSION_MINOR,
};

static int enpu_probe(struct platform_device *pdev)
{
	struct enpu_device *edev;
	int ret;

	edev = devm_drm_dev_alloc(&pdev->dev, &enpu_drm_driver, struct enpu_device, drm);
	if (IS_ERR(edev))
		return PTR_ERR(edev);
	platform_set_drvdata(pdev, edev);
	init_waitqueue_head(&edev->jobs_wq);

	/* exported dma-bufs are mapped for other devices through this device */
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	ret = enpu_job_init(edev);
	if (ret)
		return ret;
	ret = enpu_engine_init(edev, clamp_t(u32, enpu_cores, 1, ENPU_MAX_CORES));
	if (ret)
		return ret;
	drm_debugfs_add_file(&edev->drm, "stats", enpu_stats_show, NULL);
	ret = drm_dev_register(&edev->drm, 0);
	if (ret) {
		enpu_engine_fini(edev);
		return ret;
	}
	return 0;
}

static void enpu_remove(struct platform_device *pdev)
{
	struct enpu_device *edev = platform_get_drvdata(pdev);

	drm_dev_unregister(&edev->drm);
	enpu_engine_fini(edev);
}

static struct platform_driver enpu_platform_driver = {
	.probe = enpu_probe,
	.remove = enpu_remove,
	.driver = {
		.name = "enpu",
		/*
		 * No unbind through sysfs: hardware fences that outlive their
		 * files hold module references, so the cores they ran on go
		 * only when the module does.
		 */
		.suppress_bind_attrs = true,
	},
};

static int __init enpu_init(void)
{
	int ret;

	/* uAPI structs: sizes are ABI, and multiples of 8 so arrays of them align */
	BUILD_BUG_ON(sizeof(struct drm_enpu_job) != ENPU_JOB_V2_SIZE);
	BUILD_BUG_ON(offsetof(struct drm_enpu_job, out_syncobj_point) != 56);
	BUILD_BUG_ON(sizeof(struct drm_enpu_syncobj) != ENPU_SYNCOBJ_V1_SIZE);
	BUILD_BUG_ON(sizeof(struct drm_enpu_job_bo) != 8);
	BUILD_BUG_ON(sizeof(struct drm_enpu_query) != 24);
	BUILD_BUG_ON(sizeof(struct drm_enpu_query_device) != 88);
	BUILD_BUG_ON(offsetof(struct drm_enpu_query_device, max_job_work) != 48);
	BUILD_BUG_ON(offsetof(struct drm_enpu_query_device, mem_limit) != 56);
	BUILD_BUG_ON(sizeof(struct drm_enpu_submit) != 24);
	BUILD_BUG_ON(sizeof(struct enpu_cs_tensor) != 48);
	BUILD_BUG_ON(sizeof(struct enpu_cs_conv2d) % 8 || sizeof(struct enpu_cs_pool) % 8 ||
		     sizeof(struct enpu_cs_eltwise) % 8 || sizeof(struct enpu_cs_matmul) % 8);

	enpu_mem_init_limits();
	ret = platform_driver_register(&enpu_platform_driver);
	if (ret)
		return ret;
	enpu_pdev = platform_device_register_simple("enpu", PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(enpu_pdev)) {
		platform_driver_unregister(&enpu_platform_driver);
		return PTR_ERR(enpu_pdev);
	}
	return 0;
}

static void __exit enpu_exit(void)
{
	platform_device_unregister(enpu_pdev);
	platform_driver_unregister(&enpu_platform_driver);
}

module_init(enpu_init);
module_exit(enpu_exit);

MODULE_DESCRIPTION("edgert virtual NPU (DRM accel)");
MODULE_AUTHOR("The edgert authors");
MODULE_LICENSE("GPL");
