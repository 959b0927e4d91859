/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The edgert authors
 *
 * The few types and constants the freestanding command stream code needs,
 * from the kernel when built into enpu.ko, from the compiler and the uAPI
 * headers when built in userspace (selftests, simulator, fuzzing).
 */
#ifndef _ENPU_CS_COMPAT_H_
#define _ENPU_CS_COMPAT_H_

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/limits.h>
#else
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __s8 s8;
typedef __u16 u16;
typedef __s16 s16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#ifndef S32_MAX
#define S32_MAX INT32_MAX
#define S32_MIN INT32_MIN
#endif
#endif

#endif /* _ENPU_CS_COMPAT_H_ */
