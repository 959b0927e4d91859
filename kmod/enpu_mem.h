/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 */
#ifndef _ENPU_MEM_H_
#define _ENPU_MEM_H_

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/types.h>

struct enpu_device;

/**
 * struct enpu_mem - the memory charged to one open file
 * @ref: held by the file and by everything charged to it, so that a BO or
 *	a job that outlives its file still finds its account at free
 * @edev: the device whose total the charges also count in
 * @used: bytes charged: live BOs (shmem BOs at their full size, userptr
 *	BOs at their pinned size) and the kernel's copy of queued jobs
 */
struct enpu_mem {
	struct kref ref;
	struct enpu_device *edev;
	atomic64_t used;
};

void enpu_mem_init_limits(void);
u64 enpu_mem_limit(void);
u64 enpu_file_mem_limit(void);
u64 enpu_mem_max_bo_size(void);

struct enpu_mem *enpu_mem_create(struct enpu_device *edev);
void enpu_mem_put(struct enpu_mem *mem);
int enpu_mem_charge(struct enpu_mem *mem, u64 bytes);
void enpu_mem_uncharge(struct enpu_mem *mem, u64 bytes);

#endif /* _ENPU_MEM_H_ */
