/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * enpu: the int8 command stream the virtual NPU executes.
 *
 * Copyright (C) 2026 The edgert authors
 */
#ifndef _UAPI_DRM_ENPU_CMDSTREAM_H_
#define _UAPI_DRM_ENPU_CMDSTREAM_H_

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: enpu command stream
 *
 * A job's command stream is a &struct enpu_cs_header followed by
 * @num_cmds commands. Every command starts with &struct enpu_cs_cmd and has
 * exactly the size of its opcode's structure (a multiple of 8 bytes). All
 * fields are little-endian; reserved fields and padding must be zero.
 *
 * Tensors live in regions: a region is an index into the job's buffer
 * object list, and a &struct enpu_cs_tensor places a tensor of up to four
 * dimensions in it with a byte offset and byte strides per dimension.
 * Strides may be zero (broadcast) and need not be dense, so one COPY can
 * slice, concatenate, transpose or pad (into a pre-filled destination).
 * The extent of a tensor, offset + sum((dim[i] - 1) * stride[i]) + element
 * size, must fit in its buffer object; the kernel checks it at submit with
 * overflow-checked 64-bit arithmetic.
 *
 * Arithmetic follows the TFLite int8 reference kernels (which ONNX Runtime's
 * QLinear kernels match): accumulate in int32 with zero points subtracted,
 * add the int32 bias, requantise with a fixed-point multiplier and shift
 *
 *   requant(x, m, s) = rdivpot(srdhm(x << max(s, 0), m), max(-s, 0))
 *
 * where srdhm is the saturating rounding doubling high multiply
 * ((x * m + 2^30 rounded toward zero) >> 31 with INT32_MIN*INT32_MIN
 * saturated to INT32_MAX), rdivpot is a rounding right shift with ties away
 * from zero, and the left shift wraps modulo 2^32. Then add the output zero
 * point and clamp to [act_min, act_max] (the fused activation), which must
 * lie inside [-128, 127].
 *
 * Layouts: CONV2D and POOL use NHWC tensors (dim[0]=N, dim[1]=H, dim[2]=W,
 * dim[3]=C); CONV2D weights are OHWI (dim[0]=output channels, dim[1]=KH,
 * dim[2]=KW, dim[3]=input channels per group). MATMUL uses dim[0]=batch,
 * dim[1]=rows, dim[2]=columns (dim[3] must be 1).
 */

/** ENPU_CS_MAGIC - "ENPU" little-endian */
#define ENPU_CS_MAGIC		0x55504e45u
/** ENPU_CS_VERSION - version of this command stream format */
#define ENPU_CS_VERSION		1
/** ENPU_CS_MAX_DIM - largest extent of one tensor dimension */
#define ENPU_CS_MAX_DIM		65535
/** ENPU_CS_NO_REGION - marks an optional tensor as absent (bias) */
#define ENPU_CS_NO_REGION	0xffffffffu

/**
 * enum enpu_cs_opcode - command opcodes
 * @ENPU_OP_NOP: does nothing (&struct enpu_cs_cmd only)
 * @ENPU_OP_CONV2D: &struct enpu_cs_conv2d
 * @ENPU_OP_MATMUL: &struct enpu_cs_matmul (also FULLY_CONNECTED)
 * @ENPU_OP_ELTWISE: &struct enpu_cs_eltwise
 * @ENPU_OP_POOL: &struct enpu_cs_pool
 * @ENPU_OP_LUT: &struct enpu_cs_lut
 * @ENPU_OP_COPY: &struct enpu_cs_copy
 * @ENPU_OP_COUNT: number of opcodes
 */
enum enpu_cs_opcode {
	ENPU_OP_NOP = 0,
	ENPU_OP_CONV2D = 1,
	ENPU_OP_MATMUL = 2,
	ENPU_OP_ELTWISE = 3,
	ENPU_OP_POOL = 4,
	ENPU_OP_LUT = 5,
	ENPU_OP_COPY = 6,
	ENPU_OP_COUNT
};

/**
 * struct enpu_cs_header - start of a command stream
 */
struct enpu_cs_header {
	/** @magic: ENPU_CS_MAGIC. */
	__u32 magic;
	/** @version: ENPU_CS_VERSION. */
	__u16 version;
	/** @num_cmds: number of commands that follow, 0..ENPU_CS_MAX_CMDS. */
	__u16 num_cmds;
	/** @size: total bytes of the stream including this header. */
	__u32 size;
	/** @reserved: must be zero. */
	__u32 reserved;
};

/** ENPU_CS_MAX_CMDS - most commands in one stream */
#define ENPU_CS_MAX_CMDS	4096

/**
 * ENPU_CS_MAX_WORK - most work one stream (one job) may ask for
 *
 * Strides may be zero, so a tensor's dims say nothing about the size of its
 * buffer, and a command can ask for far more arithmetic than its buffers
 * suggest. The validator adds up an estimate of each command's work and
 * refuses a stream whose total exceeds this limit with %E2BIG, so that every
 * job finishes in bounded time: tens of milliseconds on a CPU, under half a
 * second under QEMU TCG. Larger layers must be split over several jobs.
 * QUERY reports the device's limit as &drm_enpu_query_device.max_job_work.
 *
 * The unit is about one multiply-accumulate. With OH, OW the output height
 * and width and ICg = IC / groups, a command's work is:
 *
 * - CONV2D: N * OH * OW * OC * (KH * KW * (ICg + 4) + 16)
 * - MATMUL: B * M * N * (K + 16)
 * - ELTWISE: 16 per output element
 * - POOL: N * OH * OW * C * (kernel_h * kernel_w + 16); for GLOBAL_AVG the
 *   window is H * W
 * - LUT and COPY: 4 per output element plus 16 per row of the output
 *   (dim[0] * dim[1] * dim[2] rows)
 * - NOP: 0
 */
#define ENPU_CS_MAX_WORK	33554432ull	/* 2^25 */

/**
 * struct enpu_cs_cmd - start of every command
 */
struct enpu_cs_cmd {
	/** @opcode: &enum enpu_cs_opcode. */
	__u16 opcode;
	/** @size: bytes of the whole command, exactly its opcode's struct size. */
	__u16 size;
	/** @flags: opcode-specific, must be zero where not defined. */
	__u32 flags;
};

/**
 * struct enpu_cs_tensor - a tensor in a region
 */
struct enpu_cs_tensor {
	/** @region: index into the job's BO list, or ENPU_CS_NO_REGION. */
	__u32 region;
	/** @reserved: must be zero. */
	__u32 reserved;
	/** @offset: byte offset of element (0,0,0,0) in the region. */
	__u64 offset;
	/** @dim: extents, each 1..ENPU_CS_MAX_DIM. */
	__u32 dim[4];
	/** @stride: byte stride of each dimension (0 broadcasts). */
	__u32 stride[4];
};

/**
 * struct enpu_cs_quant - zero points and output requantisation
 */
struct enpu_cs_quant {
	/** @in_zp: zero point of the (first) input, -128..127. */
	__s32 in_zp;
	/** @in2_zp: zero point of the weights or second input, -128..127. */
	__s32 in2_zp;
	/** @out_zp: zero point of the output, -128..127. */
	__s32 out_zp;
	/** @act_min: lower clamp of the output, -128..act_max. */
	__s32 act_min;
	/** @act_max: upper clamp of the output, act_min..127. */
	__s32 act_max;
	/** @out_mult: per-tensor output multiplier (>= 0) when no per-channel table. */
	__s32 out_mult;
	/** @out_shift: per-tensor output shift, -31..30. */
	__s32 out_shift;
	/** @reserved: must be zero. */
	__u32 reserved;
};

/**
 * struct enpu_cs_conv2d - grouped 2-D convolution, NHWC
 *
 * out[n,y,x,o] = requant(bias[o] + sum over ky, kx, i of
 * (in[n, y*stride_h - pad_top + ky*dil_h, x*stride_w - pad_left + kx*dil_w,
 * g*ICg + i] - in_zp) * (w[o,ky,kx,i] - in2_zp)), g = o / (OC / groups),
 * ICg = IC / groups; taps outside the input contribute nothing.
 * Depthwise is groups == IC with OC a multiple of IC. Output height is
 * (H + pad_top + pad_bottom - dil_h*(KH-1) - 1) / stride_h + 1, likewise
 * width; the output tensor's dims must equal (N, OH, OW, OC).
 */
struct enpu_cs_conv2d {
	/** @hdr: opcode ENPU_OP_CONV2D; flags must be zero. */
	struct enpu_cs_cmd hdr;
	/** @in: int8 input, NHWC. */
	struct enpu_cs_tensor in;
	/** @weights: int8 weights, OHWI with I = IC / groups. */
	struct enpu_cs_tensor weights;
	/** @bias: int32 bias, dim (OC,1,1,1), or region ENPU_CS_NO_REGION. */
	struct enpu_cs_tensor bias;
	/**
	 * @requant: per-channel table of OC pairs (__s32 mult, __s32 shift),
	 * dim (OC,1,1,1) with stride[0] >= 8, or region ENPU_CS_NO_REGION to
	 * use @quant.out_mult and @quant.out_shift.
	 */
	struct enpu_cs_tensor requant;
	/** @out: int8 output, NHWC. */
	struct enpu_cs_tensor out;
	/** @quant: zero points, clamp and per-tensor requantisation. */
	struct enpu_cs_quant quant;
	/** @stride_h: vertical stride, 1..255. */
	__u16 stride_h;
	/** @stride_w: horizontal stride, 1..255. */
	__u16 stride_w;
	/** @dil_h: vertical dilation, 1..255. */
	__u16 dil_h;
	/** @dil_w: horizontal dilation, 1..255. */
	__u16 dil_w;
	/** @pad_top: rows of implicit padding above, 0..255. */
	__u16 pad_top;
	/** @pad_left: columns of implicit padding on the left, 0..255. */
	__u16 pad_left;
	/** @pad_bottom: rows of implicit padding below, 0..255. */
	__u16 pad_bottom;
	/** @pad_right: columns of implicit padding on the right, 0..255. */
	__u16 pad_right;
	/** @groups: number of groups, divides IC and OC. */
	__u32 groups;
	/** @reserved: must be zero. */
	__u32 reserved;
};

/**
 * struct enpu_cs_matmul - batched matrix multiply / fully connected
 *
 * out[b,m,n] = requant(bias[n] + sum over k of (a[b,m,k] - in_zp) *
 * (w[b,n,k] - in2_zp)). @a has dims (B,M,K,1), @w (B,N,K,1) (a stride of 0
 * on the batch dimension shares the weights), @out (B,M,N,1). A transposed
 * right-hand side is just other strides on @w.
 */
struct enpu_cs_matmul {
	/** @hdr: opcode ENPU_OP_MATMUL; flags must be zero. */
	struct enpu_cs_cmd hdr;
	/** @a: int8 left-hand side. */
	struct enpu_cs_tensor a;
	/** @w: int8 right-hand side (weights), indexed [b, n, k]. */
	struct enpu_cs_tensor w;
	/** @bias: int32 bias, dim (N,1,1,1), or region ENPU_CS_NO_REGION. */
	struct enpu_cs_tensor bias;
	/**
	 * @requant: per-column table of N (__s32 mult, __s32 shift) pairs like
	 * CONV2D's, dim (N,1,1,1) with stride[0] >= 8, or region
	 * ENPU_CS_NO_REGION.
	 */
	struct enpu_cs_tensor requant;
	/** @out: int8 output. */
	struct enpu_cs_tensor out;
	/** @quant: zero points, clamp and per-tensor requantisation. */
	struct enpu_cs_quant quant;
};

/** ENPU_ELTWISE_ADD - out = a + b in real values */
#define ENPU_ELTWISE_ADD	0
/** ENPU_ELTWISE_MUL - out = a * b in real values */
#define ENPU_ELTWISE_MUL	1

/**
 * struct enpu_cs_eltwise - element-wise ADD or MUL with broadcast
 *
 * @a, @b and @out have the same four dims except that a dimension of @a or
 * @b may be 1 where @out's is larger (broadcast). ADD follows TFLite:
 * left shift 20, each input scaled by requant(((x - zp) << 20), in_mult,
 * in_shift), the sum scaled by requant(sum, quant.out_mult,
 * quant.out_shift). MUL: requant((a - in_zp) * (b - in2_zp), quant.out_mult,
 * quant.out_shift). Both then add out_zp and clamp.
 */
struct enpu_cs_eltwise {
	/** @hdr: opcode ENPU_OP_ELTWISE; flags must be zero. */
	struct enpu_cs_cmd hdr;
	/** @a: int8 first input. */
	struct enpu_cs_tensor a;
	/** @b: int8 second input. */
	struct enpu_cs_tensor b;
	/** @out: int8 output. */
	struct enpu_cs_tensor out;
	/** @quant: zero points, clamp and output requantisation. */
	struct enpu_cs_quant quant;
	/** @op: ENPU_ELTWISE_ADD or ENPU_ELTWISE_MUL. */
	__u32 op;
	/** @reserved: must be zero. */
	__u32 reserved;
	/** @a_mult: ADD only: multiplier of @a (>= 0); must be 0 for MUL. */
	__s32 a_mult;
	/** @a_shift: ADD only: shift of @a, -31..0; must be 0 for MUL. */
	__s32 a_shift;
	/** @b_mult: ADD only: multiplier of @b (>= 0); must be 0 for MUL. */
	__s32 b_mult;
	/** @b_shift: ADD only: shift of @b, -31..0; must be 0 for MUL. */
	__s32 b_shift;
};

/** ENPU_POOL_MAX - maximum over the window */
#define ENPU_POOL_MAX		0
/** ENPU_POOL_AVG - average over the in-bounds part of the window */
#define ENPU_POOL_AVG		1
/** ENPU_POOL_GLOBAL_AVG - average over the whole H x W plane */
#define ENPU_POOL_GLOBAL_AVG	2

/**
 * struct enpu_cs_pool - 2-D pooling, NHWC, input and output share scale and zero point
 *
 * AVG divides the sum of in-bounds taps by their count, rounding half away
 * from zero (TFLite). MAX takes the largest in-bounds tap. The result is
 * clamped to [quant.act_min, quant.act_max]; other @quant fields must be
 * zero. For GLOBAL_AVG the window is the input plane and @kernel_h,
 * @kernel_w, strides and pads must be zero; the output is (N,1,1,C).
 */
struct enpu_cs_pool {
	/** @hdr: opcode ENPU_OP_POOL; flags must be zero. */
	struct enpu_cs_cmd hdr;
	/** @in: int8 input, NHWC. */
	struct enpu_cs_tensor in;
	/** @out: int8 output, NHWC, dims (N, OH, OW, C) as for CONV2D. */
	struct enpu_cs_tensor out;
	/** @quant: only act_min and act_max are used. */
	struct enpu_cs_quant quant;
	/** @mode: ENPU_POOL_*. */
	__u32 mode;
	/** @kernel_h: window height, 1..255. */
	__u16 kernel_h;
	/** @kernel_w: window width, 1..255. */
	__u16 kernel_w;
	/** @stride_h: vertical stride, 1..255. */
	__u16 stride_h;
	/** @stride_w: horizontal stride, 1..255. */
	__u16 stride_w;
	/** @pad_top: 0..kernel_h - 1. */
	__u16 pad_top;
	/** @pad_left: 0..kernel_w - 1. */
	__u16 pad_left;
	/** @pad_bottom: 0..kernel_h - 1. */
	__u16 pad_bottom;
	/** @pad_right: 0..kernel_w - 1. */
	__u16 pad_right;
	/** @reserved: must be zero. */
	__u32 reserved;
};

/**
 * struct enpu_cs_lut - 256-entry int8 table lookup
 *
 * out[i] = table[(__u8)in[i]]: any int8 -> int8 function (sigmoid, tanh,
 * hard-swish, GELU, exp...) precomputed by the runtime.
 */
struct enpu_cs_lut {
	/** @hdr: opcode ENPU_OP_LUT; flags must be zero. */
	struct enpu_cs_cmd hdr;
	/** @in: int8 input. */
	struct enpu_cs_tensor in;
	/** @table: 256 int8 entries, dim (256,1,1,1), stride[0] 1. */
	struct enpu_cs_tensor table;
	/** @out: int8 output, same dims as @in. */
	struct enpu_cs_tensor out;
};

/**
 * struct enpu_cs_copy - strided 4-D copy of bytes
 *
 * Copies every element of @src to the same index of @dst (same dims); the
 * element size is 1 byte. When both are in the same region, the byte ranges
 * they span (offset to offset + extent) must not intersect unless the two
 * tensors are identical (same offset and strides), or the command is
 * refused with %EINVAL. Distinct buffer objects that alias the same memory
 * (two userptr BOs over the same pages) cannot be detected: copying between
 * overlapping parts of them gives an unspecified (but memory-safe) result.
 */
struct enpu_cs_copy {
	/** @hdr: opcode ENPU_OP_COPY; flags must be zero. */
	struct enpu_cs_cmd hdr;
	/** @src: source. */
	struct enpu_cs_tensor src;
	/** @dst: destination, same dims as @src. */
	struct enpu_cs_tensor dst;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRM_ENPU_CMDSTREAM_H_ */
