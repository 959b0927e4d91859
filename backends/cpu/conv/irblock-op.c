/* SPDX-License-Identifier: MIT */
/*
 * The CPU's InvertedResidual op (opt/fuse-irblock.c makes it): the block of
 * cpu/conv/irblock.h, its two 1x1 convs' weights packed at plan time as the
 * Conv packs them.
 */
#include <stdlib.h>

#include "cpu/conv/irblock.h"
#include "cpu/gemm/sgemm.h"

/* The weights packed at plan time: the expand conv's (or NULL), the project conv's. */
struct irb_state {
	struct ert_cpu_packed *ex, *pj;
};

/* @a from @x's inputs, geometry into @g; false where its shape is not one the block takes. */
static bool args_of(const struct ert_exec *x, struct ert_conv_geom *g, struct ert_irb_args *a)
{
	const struct ert_value *xv = x->in[0], *wd = x->in[1];
	const struct irb_state *s = x->state;
	struct ert_err err;

	if (ert_geom_conv(x->node, 2, xv->dims + 2, wd->dims + 2, false, g, &err) != ERT_OK)
		return false;
	*a = (struct ert_irb_args){
		.n_img = xv->dims[0], .c_in = xv->dims[1], .c_mid = wd->dims[0],
		.c_out = x->in[3]->dims[0], .g = g, .expand = x->n_in >= 7,
		.dw_w = wd->data, .dw_bias = x->in[2]->data,
		.dw_act = ert_node_act_named(x->node, "ert.dw_act", "ert.dw_act_params"),
		.pj = {
			.w = x->in[3]->data, .bias = x->in[4]->data,
			.w_packed = s && s->pj ? ert_cpu_packed_data(s->pj) : NULL,
			.act = ert_node_act(x->node),
		},
		.x = xv->data, .res = x->n_in > 7 ? x->in[7]->data : NULL,
		.y = x->out[0]->data,
	};
	if (a->expand)
		a->ex = (struct ert_irb_pw){
			.w = x->in[5]->data, .bias = x->in[6]->data,
			.w_packed = s && s->ex ? ert_cpu_packed_data(s->ex) : NULL,
			.act = ert_node_act_named(x->node, "ert.ex_act", "ert.ex_act_params"),
		};
	return true;
}

static size_t irb_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct ert_conv_geom g;
	struct ert_irb_args a;

	return args_of(x, &g, &a) ? ert_irb_workspace(cpu, &a) : 0;
}

/* W [m, k, 1, 1] packed as the Conv packs it (ert_cpu_conv_prepare()); NULL where it does not. */
static ert_status pack_w(struct ert_cpu *cpu, const struct ert_exec *x, uint32_t i,
			 struct ert_cpu_packed **out)
{
	const struct ert_value *w = x->in[i];
	struct ert_cpu_pack_key key = {
		.src = w->data, .kind = cpu->gemm_low ? ERT_CPU_PACK_A_BF16 : ERT_CPU_PACK_A,
		.rows = w->dims[0], .cols = w->dims[1], .rs = w->dims[1], .cs = 1,
		.count = 1, .src_stride = w->dims[0] * w->dims[1],
	};

	*out = NULL;
	return x->in_const[i] ? ert_cpu_pack_get(cpu, &key, out) : ERT_OK;
}

static const char *kernel_name(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512 ? "f32-irblock-avx512"
	       : isa >= ERT_ISA_AVX2 ? "f32-irblock-avx2" : "f32-irblock-scalar";
}

static void irb_release(struct ert_exec *x)
{
	struct irb_state *s = x->state;

	if (s) {
		ert_cpu_pack_put(s->ex);
		ert_cpu_pack_put(s->pj);
		free(s);
	}
	x->state = NULL;
}

static ert_status irb_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_conv_geom g;
	struct ert_irb_args a;
	struct irb_state *s;
	ert_status st;

	if (!args_of(x, &g, &a) || !ert_irb_ok(cpu, &g))
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "the depthwise conv's window is not one the fused block takes");
	x->kernel = kernel_name(cpu->isa);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	x->state = s;
	st = pack_w(cpu, x, 3, &s->pj);
	if (st == ERT_OK && a.expand)
		st = pack_w(cpu, x, 5, &s->ex);
	if (st != ERT_OK)
		return ert_node_fail(x->node, err, st, "out of memory packing weights");
	return ERT_OK;
}

static ert_status irb_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_conv_geom g;
	struct ert_irb_args a;
	ert_status st;

	if (!args_of(x, &g, &a) || !ert_irb_ok(cpu, &g))
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "the depthwise conv's window is not one the fused block takes");
	st = ert_cpu_ws_check(x, ert_irb_workspace(cpu, &a), err);
	if (st != ERT_OK)
		return st;
	ert_irb_run(cpu, &a, x->workspace);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_irblock[] = {
	{ .op = ERT_OP_InvertedResidual, .workspace = irb_workspace, .prepare = irb_prepare,
	  .compute = irb_compute, .release = irb_release },
	{ .compute = NULL },
};
