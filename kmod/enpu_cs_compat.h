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

typedef uint8_t u8;
typedef int8_t s8;
typedef uint16_t u16;
typedef int16_t s16;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#ifndef S32_MAX
#define S32_MAX INT32_MAX
#define S32_MIN INT32_MIN
#endif
#endif

#endif /* _ENPU_CS_COMPAT_H_ */
