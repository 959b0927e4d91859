/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 */
#ifndef _ENPU_GEM_H_
#define _ENPU_GEM_H_

#include <drm/drm_gem.h>

struct dma_buf_attachment;
struct drm_device;
struct drm_file;
struct sg_table;

bool enpu_gem_is_readonly(struct drm_gem_object *obj);
int enpu_gem_kmap(struct drm_gem_object *obj, void **vaddr);
struct drm_gem_object *enpu_gem_create_object(struct drm_device *dev, size_t size);
struct drm_gem_object *enpu_gem_prime_import_sg_table(struct drm_device *dev,
						      struct dma_buf_attachment *attach,
						      struct sg_table *sgt);

int enpu_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int enpu_bo_mmap_offset_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int enpu_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int enpu_bo_userptr_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int enpu_bo_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

#endif /* _ENPU_GEM_H_ */
