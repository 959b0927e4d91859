// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Memory limits: every byte a file makes the driver hold (BOs and queued
 * jobs) is charged to the file and to the device, against a per-file and
 * a device-wide cap. The pages themselves are charged to the memory cgroup
 * of the task that makes shmem allocate them (shmem does that for every
 * page cache folio), but a BO's pages are mapped with VM_PFNMAP and belong
 * to a kernel-internal file, so no process's RSS shows them and the OOM
 * killer cannot find whom to kill: the caps keep them bounded instead.
 */
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "enpu_drv.h"
#include "enpu_mem.h"

/* MiB; 0 until enpu_mem_init_limits() sets the defaults from the RAM size */
static unsigned int enpu_mem_limit_mb;
static unsigned int enpu_file_mem_limit_mb;

static unsigned int enpu_ram_mb(void)
{
	return max_t(unsigned long, totalram_pages() >> (20 - PAGE_SHIFT), 1);
}

static int enpu_mem_param_set(const char *val, const struct kernel_param *kp)
{
	return enpu_param_set_range(val, kp, 1, enpu_ram_mb());
}

static const struct kernel_param_ops enpu_mem_param_ops = {
	.set = enpu_mem_param_set,
	.get = param_get_uint,
};

module_param_cb(mem_limit_mb, &enpu_mem_param_ops, &enpu_mem_limit_mb, 0644);
MODULE_PARM_DESC(mem_limit_mb,
		 "Most MiB of BOs and queued jobs on the device, all files together (1-RAM, default RAM/4)");
module_param_cb(file_mem_limit_mb, &enpu_mem_param_ops, &enpu_file_mem_limit_mb, 0644);
MODULE_PARM_DESC(file_mem_limit_mb,
		 "Most MiB of BOs and queued jobs of one open file (1-RAM, default mem_limit_mb/2)");

/**
 * enpu_mem_init_limits() - default the limits that were not given from the RAM size
 *
 * Called once at module load, after the parameters were parsed.
 */
void enpu_mem_init_limits(void)
{
	if (!enpu_mem_limit_mb)
		enpu_mem_limit_mb = max(enpu_ram_mb() / 4, 1u);
	if (!enpu_file_mem_limit_mb)
		enpu_file_mem_limit_mb = max(enpu_mem_limit_mb / 2, 1u);
}

/* Return: the device-wide limit in bytes */
u64 enpu_mem_limit(void)
{
	return (u64)READ_ONCE(enpu_mem_limit_mb) * SZ_1M;
}

/* Return: the per-file limit in bytes; never above the device's */
u64 enpu_file_mem_limit(void)
{
	return min((u64)READ_ONCE(enpu_file_mem_limit_mb) * SZ_1M, enpu_mem_limit());
}

/* Return: the largest BO that one file could have, page aligned */
u64 enpu_mem_max_bo_size(void)
{
	return min_t(u64, ENPU_MAX_BO_SIZE, enpu_file_mem_limit());
}

/**
 * enpu_mem_create() - the account of a new file
 * @edev: the device
 *
 * Return: the account (one reference, the file's) or NULL.
 */
struct enpu_mem *enpu_mem_create(struct enpu_device *edev)
{
	struct enpu_mem *mem = kzalloc(sizeof(*mem), GFP_KERNEL_ACCOUNT);

	if (!mem)
		return NULL;
	kref_init(&mem->ref);
	mem->edev = edev;
	atomic64_set(&mem->used, 0);
	return mem;
}

static void enpu_mem_release(struct kref *ref)
{
	kfree(container_of(ref, struct enpu_mem, ref));
}

/* drops one reference: the file's, or a charge's through enpu_mem_uncharge() */
void enpu_mem_put(struct enpu_mem *mem)
{
	kref_put(&mem->ref, enpu_mem_release);
}

/**
 * enpu_mem_charge() - charge bytes to a file and its device
 * @mem: the file's account
 * @bytes: how much
 *
 * Checked against both limits as they are now (lowering a limit refuses
 * new charges, it takes nothing back). Two charges racing at the limit may
 * both fail where one would have fitted: never both succeed past it.
 *
 * Return: 0, with a reference on @mem for the charge, or -ENOMEM over a
 * limit.
 */
int enpu_mem_charge(struct enpu_mem *mem, u64 bytes)
{
	struct enpu_device *edev = mem->edev;

	if (atomic64_add_return(bytes, &mem->used) > enpu_file_mem_limit())
		goto err_file;
	if (atomic64_add_return(bytes, &edev->mem_used) > enpu_mem_limit())
		goto err_dev;
	kref_get(&mem->ref);
	return 0;

err_dev:
	atomic64_sub(bytes, &edev->mem_used);
err_file:
	atomic64_sub(bytes, &mem->used);
	return -ENOMEM;
}

/**
 * enpu_mem_uncharge() - give back what enpu_mem_charge() took
 * @mem: the account charged
 * @bytes: the bytes charged
 *
 * Drops the charge's reference: the account may go with it.
 */
void enpu_mem_uncharge(struct enpu_mem *mem, u64 bytes)
{
	atomic64_sub(bytes, &mem->edev->mem_used);
	atomic64_sub(bytes, &mem->used);
	enpu_mem_put(mem);
}
