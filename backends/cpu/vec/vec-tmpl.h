/* SPDX-License-Identifier: MIT */
/*
 * vec-tmpl.h — one level's table of vector kernels (cpu/vec/vec.h), from the
 * templates beside it. Included by vec-<level>.c after it has defined
 * VEC_TABLE (the table's name) and VEC_LEVEL (its name as a string), and
 * ERT_SIMD_AVX512 for the AVX-512 level.
 */
#ifndef ERT_CPU_VEC_TMPL_H
#define ERT_CPU_VEC_TMPL_H

#include "cpu/vec/eltwise-tmpl.h"
#include "cpu/vec/lrn-tmpl.h"
#include "cpu/vec/pool-tmpl.h"
#include "cpu/vec/rows-tmpl.h"

const struct ert_vec_kernels VEC_TABLE = {
	.level = VEC_LEVEL,
	.name_eltwise = "f32-eltwise-" VEC_LEVEL,
	.name_softmax = "f32-softmax-" VEC_LEVEL,
	.name_norm = "f32-layernorm-" VEC_LEVEL,
	.name_reduce = "f32-reduce-" VEC_LEVEL,
	.name_pool = "f32-pool-" VEC_LEVEL,
	.name_lrn = "f32-lrn-" VEC_LEVEL,
	.unary = {
		[ERT_VEC_RELU] = un_relu,
		[ERT_VEC_CLIP] = un_clip,
		[ERT_VEC_LEAKY_RELU] = un_leaky_relu,
		[ERT_VEC_HARD_SIGMOID] = un_hard_sigmoid,
		[ERT_VEC_HARD_SWISH] = un_hard_swish,
		[ERT_VEC_SIGMOID] = un_sigmoid,
		[ERT_VEC_TANH] = un_tanh,
		[ERT_VEC_ERF] = un_erf,
		[ERT_VEC_GELU] = un_gelu,
		[ERT_VEC_GELU_TANH] = un_gelu_tanh,
		[ERT_VEC_EXP] = un_exp,
	},
	.binary = {
		[ERT_VEC_ADD] = bin_add_f32,
		[ERT_VEC_SUB] = bin_sub_f32,
		[ERT_VEC_MUL] = bin_mul_f32,
		[ERT_VEC_DIV] = bin_div_f32,
		[ERT_VEC_MIN] = bin_min_f32,
		[ERT_VEC_MAX] = bin_max_f32,
	},
	.act = act_apply,
	.softmax = row_softmax,
	.layer_norm = row_layer_norm,
	.sum = row_sum,
	.pool = pool_plane,
	.gap = gap_planes,
	.lrn = lrn_pixels,
};

#endif /* ERT_CPU_VEC_TMPL_H */
