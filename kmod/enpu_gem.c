// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Buffer objects: shmem-backed BOs from the GEM shmem helpers, and userptr
 * BOs that wrap long-term pinned user pages.
 */
#include <linux/capability.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_prime.h>
#include <drm/drm_utils.h>
#include <drm/enpu_accel.h>

#include "enpu_drv.h"
#include "enpu_gem.h"
#include "enpu_mem.h"

/**
 * struct enpu_userptr - a BO over pinned user memory
 * @base: GEM object (private: no shmem file)
 * @pages: the pinned pages
 * @npages: number of pages
 * @readonly: pinned without FOLL_WRITE; the NPU may only read it
 * @vaddr: kernel mapping, created on first vmap under the BO's dma_resv
 *	lock (which drm_gem_vmap holds) and kept until the BO is freed
 * @mm: the address space whose pinned_vm carries @npages, held by mmgrab()
 *	so that the charge can be dropped when the BO is freed
 * @mem: the account of the file that created it, charged its size
 */
struct enpu_userptr {
	struct drm_gem_object base;
	struct page **pages;
	unsigned long npages;
	bool readonly;
	void *vaddr;
	struct mm_struct *mm;
	struct enpu_mem *mem;
};

/**
 * struct enpu_shmem - a shmem BO (created, or imported from a dma-buf)
 * @base: the shmem helpers' object; must come first, the helpers kfree() it
 * @kmap: the engine's kernel mapping, made by the first job that uses the
 *	BO (under its dma_resv lock) and kept until the BO is freed, so that
 *	finishing a job never needs the BO's lock
 * @mem: the account of the file that created it, charged its size; NULL
 *	for an imported BO (its memory is the exporter's)
 */
struct enpu_shmem {
	struct drm_gem_shmem_object base;
	struct iosys_map kmap;
	struct enpu_mem *mem;
};

static const struct drm_gem_object_funcs enpu_userptr_funcs;

static struct enpu_shmem *to_enpu_shmem(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct enpu_shmem, base);
}

/*
 * shmem BOs: the helpers' own functions, plus the engine's long-lived kernel
 * mapping and a count of live objects
 */
static void enpu_shmem_free(struct drm_gem_object *obj)
{
	struct enpu_device *edev = to_enpu_device(obj->dev);
	struct enpu_shmem *bo = to_enpu_shmem(obj);
	struct enpu_mem *mem = bo->mem;
	size_t size = obj->size;

	if (!iosys_map_is_null(&bo->kmap)) {
		dma_resv_lock(obj->resv, NULL);
		drm_gem_shmem_vunmap(&bo->base, &bo->kmap);
		dma_resv_unlock(obj->resv);
	}
	drm_gem_shmem_object_free(obj);
	/* the pages are back with shmem (or the exporter) now */
	if (mem)
		enpu_mem_uncharge(mem, size);
	atomic_dec(&edev->bos_alive);
}

static const struct drm_gem_object_funcs enpu_shmem_funcs = {
	.free = enpu_shmem_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/*
 * drm_driver.gem_create_object: every shmem BO, created or imported. Live
 * BOs are counted by the callers once the helpers succeeded: on a failure
 * after this hook the helpers kfree() the object without the free hook.
 */
struct drm_gem_object *enpu_gem_create_object(struct drm_device *dev, size_t size)
{
	struct enpu_shmem *bo;

	/* drm_gem_shmem_free() frees the object by its shmem pointer */
	BUILD_BUG_ON(offsetof(struct enpu_shmem, base) != 0);
	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &enpu_shmem_funcs;
	return &bo->base.base;
}

/* drm_driver.gem_prime_import_sg_table: a dma-buf of another device */
struct drm_gem_object *enpu_gem_prime_import_sg_table(struct drm_device *dev,
						      struct dma_buf_attachment *attach,
						      struct sg_table *sgt)
{
	struct drm_gem_object *obj = drm_gem_shmem_prime_import_sg_table(dev, attach, sgt);

	if (!IS_ERR(obj))
		atomic_inc(&to_enpu_device(dev)->bos_alive);
	return obj;
}

static struct enpu_userptr *to_enpu_userptr(struct drm_gem_object *obj)
{
	return obj->funcs == &enpu_userptr_funcs ?
	       container_of(obj, struct enpu_userptr, base) : NULL;
}

bool enpu_gem_is_readonly(struct drm_gem_object *obj)
{
	struct enpu_userptr *up = to_enpu_userptr(obj);

	return up && up->readonly;
}

/*
 * Long-term pins count against RLIMIT_MEMLOCK through mm->pinned_vm (shown
 * as VmPin in /proc/PID/status), as RDMA's umem does; CAP_IPC_LOCK lifts
 * the limit. The charge goes with the BO, so it is dropped at free from
 * whatever context frees it: hence the mm reference.
 */
static int enpu_userptr_charge(struct enpu_userptr *up, unsigned long npages)
{
	struct mm_struct *mm = current->mm;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long pinned;

	pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	up->mm = mm;
	return 0;
}

static void enpu_userptr_uncharge(struct enpu_userptr *up, unsigned long npages)
{
	atomic64_sub(npages, &up->mm->pinned_vm);
	mmdrop(up->mm);
}

static void enpu_userptr_free(struct drm_gem_object *obj)
{
	struct enpu_userptr *up = to_enpu_userptr(obj);

	if (up->vaddr)
		vunmap(up->vaddr);
	unpin_user_pages_dirty_lock(up->pages, up->npages, !up->readonly);
	enpu_userptr_uncharge(up, up->npages);
	enpu_mem_uncharge(up->mem, (u64)up->npages << PAGE_SHIFT);
	kvfree(up->pages);
	drm_gem_object_release(obj);
	atomic_dec(&to_enpu_device(obj->dev)->bos_alive);
	kfree(up);
}

static int enpu_userptr_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	struct enpu_userptr *up = to_enpu_userptr(obj);

	dma_resv_assert_held(obj->resv);
	if (!up->vaddr) {
		up->vaddr = vmap(up->pages, up->npages, VM_MAP, PAGE_KERNEL);
		if (!up->vaddr)
			return -ENOMEM;
	}
	iosys_map_set_vaddr(map, up->vaddr);
	return 0;
}

static void enpu_userptr_vunmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	/* the mapping lives as long as the pin; enpu_userptr_free() drops it */
}

static struct dma_buf *enpu_userptr_export(struct drm_gem_object *obj, int flags)
{
	/* the memory belongs to a process already; share it from there */
	return ERR_PTR(-EINVAL);
}

static const struct drm_gem_object_funcs enpu_userptr_funcs = {
	.free = enpu_userptr_free,
	.vmap = enpu_userptr_vmap,
	.vunmap = enpu_userptr_vunmap,
	.export = enpu_userptr_export,
};

/**
 * enpu_gem_kmap() - the engine's kernel mapping of a BO
 * @obj: an enpu BO (shmem, imported or userptr); its dma_resv must be held
 * @vaddr: set to the start of the mapping
 *
 * The first call maps the BO; the mapping then lives as long as the BO, so
 * the completion and cleanup of a job never need the BO's dma_resv lock.
 *
 * Return: 0, -ENOMEM, -EIO for an imported dma-buf in I/O memory (the
 * engine is a CPU), or -EINVAL for a BO that is not enpu's.
 */
int enpu_gem_kmap(struct drm_gem_object *obj, void **vaddr)
{
	struct iosys_map map;
	struct enpu_shmem *bo;
	int ret;

	dma_resv_assert_held(obj->resv);
	if (to_enpu_userptr(obj)) {
		ret = enpu_userptr_vmap(obj, &map);
		if (ret)
			return ret;
		*vaddr = map.vaddr;
		return 0;
	}
	if (obj->funcs != &enpu_shmem_funcs)
		return -EINVAL;
	bo = to_enpu_shmem(obj);
	if (iosys_map_is_null(&bo->kmap)) {
		/* an imported dma-buf in I/O memory is refused with -EIO */
		ret = drm_gem_shmem_vmap(&bo->base, &map);
		if (ret)
			return ret;
		bo->kmap = map;
	}
	*vaddr = bo->kmap.vaddr;
	return 0;
}

int enpu_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct enpu_file *fpriv = file->driver_priv;
	struct drm_enpu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	u64 size;
	int ret;

	if (args->flags || !args->size)
		return -EINVAL;
	if (args->size > enpu_mem_max_bo_size())
		return -E2BIG;
	size = PAGE_ALIGN(args->size);

	/*
	 * The whole size is charged now: mapping the BO or using it in a job
	 * makes the helpers allocate every page of it, at any time.
	 */
	ret = enpu_mem_charge(fpriv->mem, size);
	if (ret)
		return ret;
	shmem = drm_gem_shmem_create(dev, size);
	if (IS_ERR(shmem)) {
		enpu_mem_uncharge(fpriv->mem, size);
		return PTR_ERR(shmem);
	}
	/* from here on the BO's free hook gives the charge back */
	to_enpu_shmem(&shmem->base)->mem = fpriv->mem;
	atomic_inc(&to_enpu_device(dev)->bos_alive);
	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	/* the handle holds the reference now, or creation failed */
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;
	args->size = size;
	return 0;
}

int enpu_bo_mmap_offset_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_enpu_bo_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (to_enpu_userptr(obj)) {
		ret = -EINVAL;
		goto out_put;
	}
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
out_put:
	drm_gem_object_put(obj);
	return ret;
}

int enpu_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_enpu_bo_info *args = data;
	struct drm_gem_object *obj;

	if (args->flags || args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	args->size = obj->size;
	args->bo_flags = 0;
	if (to_enpu_userptr(obj))
		args->bo_flags |= ENPU_BO_USERPTR;
	if (enpu_gem_is_readonly(obj))
		args->bo_flags |= ENPU_BO_READONLY;
	if (obj->import_attach)
		args->bo_flags |= ENPU_BO_IMPORTED;
	drm_gem_object_put(obj);
	return 0;
}

int enpu_bo_userptr_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct enpu_file *fpriv = file->driver_priv;
	struct drm_enpu_bo_userptr *args = data;
	unsigned int gup_flags = FOLL_LONGTERM;
	struct enpu_userptr *up;
	unsigned long npages;
	int pinned, ret;

	if ((args->flags & ~ENPU_USERPTR_FLAGS) || !args->size ||
	    !PAGE_ALIGNED(args->user_ptr) || !PAGE_ALIGNED(args->size) ||
	    args->user_ptr + args->size < args->user_ptr)
		return -EINVAL;
	if (args->size > enpu_mem_max_bo_size())
		return -E2BIG;
	npages = args->size >> PAGE_SHIFT;

	ret = enpu_mem_charge(fpriv->mem, args->size);
	if (ret)
		return ret;
	up = kzalloc(sizeof(*up), GFP_KERNEL_ACCOUNT);
	if (!up) {
		ret = -ENOMEM;
		goto err_mem;
	}
	up->mem = fpriv->mem;
	up->readonly = args->flags & ENPU_USERPTR_READONLY;
	up->pages = kvmalloc_array(npages, sizeof(*up->pages), GFP_KERNEL_ACCOUNT);
	if (!up->pages) {
		ret = -ENOMEM;
		goto err_free_up;
	}
	if (!up->readonly)
		gup_flags |= FOLL_WRITE;
	ret = enpu_userptr_charge(up, npages);
	if (ret)
		goto err_free_pages;
	pinned = pin_user_pages_fast(args->user_ptr, npages, gup_flags, up->pages);
	if (pinned < 0) {
		ret = pinned;
		goto err_uncharge;
	}
	up->npages = pinned;
	if (pinned != npages) {
		ret = -EFAULT;
		goto err_unpin;
	}

	up->base.funcs = &enpu_userptr_funcs;
	drm_gem_private_object_init(dev, &up->base, args->size);
	atomic_inc(&to_enpu_device(dev)->bos_alive);
	ret = drm_gem_handle_create(file, &up->base, &args->handle);
	/* from here on the GEM refcount owns up: free() unpins */
	drm_gem_object_put(&up->base);
	return ret;

err_unpin:
	unpin_user_pages(up->pages, up->npages);
err_uncharge:
	enpu_userptr_uncharge(up, npages);
err_free_pages:
	kvfree(up->pages);
err_free_up:
	kfree(up);
err_mem:
	enpu_mem_uncharge(fpriv->mem, args->size);
	return ret;
}

int enpu_bo_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_enpu_bo_wait *args = data;
	struct drm_gem_object *obj;
	long ret;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ, true,
				    drm_timeout_abs_to_jiffies(args->timeout_ns));
	drm_gem_object_put(obj);
	if (ret == 0)
		return -ETIMEDOUT;
	return ret < 0 ? ret : 0;
}
