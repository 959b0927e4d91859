/* SPDX-License-Identifier: MIT */
/* The vector kernel tables by level, window setup, and the activation entry point. */
#include "cpu/vec/vec.h"

const struct ert_vec_kernels *ert_vec_kernels_for(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512 ? &ert_vec_kernels_avx512
	       : isa >= ERT_ISA_AVX2 ? &ert_vec_kernels_avx2 : NULL;
}

void ert_cpu_act_apply(const struct ert_cpu *cpu, const struct ert_act_desc *act, float *x,
		       int64_t n)
{
	const struct ert_vec_kernels *vk = cpu ? ert_vec_kernels_for(cpu->isa) : NULL;
	bool approx = ert_act_is_approx(act->type);

	if (act->type == ERT_ACT_NONE)
		return;
	/* precision HIGH keeps libm's expf/tanhf, as the unary ops do */
	if (vk && !(approx && cpu->precision == ERT_LEVEL_HIGH))
		vk->act(act, x, n);
	else
		ert_act_apply(act, x, n);
}

bool ert_vec_win_init(struct ert_vec_win *w, const struct ert_conv_geom *g)
{
	int64_t ow = g->out[2], iw = g->in[2], s = g->stride[2];

	w->g = g;
	w->in_lo = 0;
	w->in_hi = ow - 1;
	/* lane offsets i * stride are 32-bit in the gathers */
	if (g->k[2] > ERT_VEC_WIN_MAX || g->k[0] * g->k[1] > ERT_VEC_WIN_MAX || s > (1 << 20))
		return false;
	for (int64_t kw = 0; kw < g->k[2]; kw++) {
		int64_t off = kw * g->dil[2] - g->pad_b[2], lo, hi;

		/* output columns c with 0 <= c * s + off < iw */
		lo = off >= 0 ? 0 : (-off + s - 1) / s;
		hi = iw - 1 - off < 0 ? -1 : (iw - 1 - off) / s;
		hi = hi < ow - 1 ? hi : ow - 1;
		w->off[kw] = off;
		w->lo[kw] = lo;
		w->hi[kw] = hi;
		w->in_lo = lo > w->in_lo ? lo : w->in_lo;
		w->in_hi = hi < w->in_hi ? hi : w->in_hi;
	}
	return true;
}
