/* SPDX-License-Identifier: MIT */
/* MaxPool, AveragePool (1-D, 2-D) and the global pools on float32, NCHW, on a GPU. */
#include "gpu-common/gpu-ops-impl.h"
#include "ops/linalg-geom.h"

static bool pool_geom(const struct ert_exec *x, struct ert_conv_geom *g)
{
	const struct ert_value *in = x->in[0];
	uint32_t nk;
	const int64_t *ks = ert_attr_ints(x->node, "kernel_shape", &nk);
	struct ert_err err;

	if (in->rank < 3 || in->rank > 4 || !ks || (int32_t)nk != in->rank - 2)
		return false;
	return ert_geom_conv(x->node, in->rank - 2, in->dims + 2, ks,
			     ert_attr_int(x->node, "ceil_mode", 0) != 0, g, &err) == ERT_OK &&
	       g->nsp <= 2;
}

bool ert_gpu_pool_supports(const struct ert_exec *x)
{
	struct ert_conv_geom g;

	/* MaxPool's Indices output stays on the CPU */
	if (x->n_out > 1 && x->out[1])
		return false;
	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) &&
	       pool_geom(x, &g);
}

ert_status ert_gpu_pool_plan(const struct ert_exec *x, struct ert_gpu_pool *p, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_conv_geom g;

	if (!pool_geom(x, &g))
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "unsupported geometry");
	*p = (struct ert_gpu_pool){
		.n = x->out[0]->numel,
		.mode = ERT_GPU_POOL_MAX,
		.geo = { g.in[1], g.in[2], g.k[1], g.k[2], g.stride[1], g.stride[2], g.pad_b[1],
			 g.pad_b[2] },
		.geob = { g.dil[1], g.dil[2], g.out[1], g.out[2], in->dims[0] * in->dims[1] },
	};
	if (x->node->op == ERT_OP_AveragePool)
		p->mode = ert_attr_int(x->node, "count_include_pad", 0) ? ERT_GPU_POOL_AVG_PAD :
			  ERT_GPU_POOL_AVG;
	return ERT_OK;
}

bool ert_gpu_global_pool_supports(const struct ert_exec *x)
{
	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) &&
	       x->in[0]->rank >= 3;
}

void ert_gpu_plane_reduce_plan(const struct ert_exec *x, struct ert_gpu_plane_reduce *p)
{
	const struct ert_value *in = x->in[0];

	p->planes = in->dims[0] * in->dims[1];
	p->len = p->planes ? in->numel / p->planes : 0;
	p->mode = x->node->op == ERT_OP_GlobalMaxPool ? ERT_GPU_POOL_MAX : ERT_GPU_POOL_AVG;
}
