/* SPDX-License-Identifier: MIT */
/*
 * CPU ConvTranspose: per image and group, cols = W^T x X on the SGEMM (rows
 * are output channel x kernel tap, columns input pixels), then col2im adds
 * each column into the output window it lands on.
 */
#include <string.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/ops/linalg-kernels.h"
#include "ops/linalg-geom.h"

struct convt_plan {
	struct ert_conv_geom g;
	int64_t n_img, c_in, m, group, cin_g, m_g, kk, in_sp, out_sp;
};

static ert_status convt_plan_of(const struct ert_exec *x, struct convt_plan *p,
				struct ert_err *err)
{
	const struct ert_value *xv = x->in[0], *w = x->in[1];
	ert_status st;

	memset(p, 0, sizeof(*p));
	st = ert_geom_convt(x->node, xv->rank - 2, xv->dims + 2, w->dims + 2, &p->g, err);
	if (st != ERT_OK)
		return st;
	p->n_img = xv->dims[0];
	p->c_in = xv->dims[1];
	p->group = ert_attr_int(x->node, "group", 1);
	if (p->group < 1)
		p->group = 1;
	p->cin_g = p->c_in / p->group;
	p->m_g = w->dims[1];
	p->m = p->m_g * p->group;
	p->kk = ert_geom_k_size(&p->g);
	p->in_sp = ert_geom_in_size(&p->g);
	p->out_sp = ert_geom_out_size(&p->g);
	return ERT_OK;
}

size_t ert_cpu_convt_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct convt_plan p;
	struct ert_err err;

	if (convt_plan_of(x, &p, &err) != ERT_OK)
		return 0;
	return ert_sgemm_workspace(ert_cpu_lanes(cpu), p.m_g * p.kk, p.in_sp, p.cin_g) +
	       (size_t)(p.m_g * p.kk * p.in_sp) * sizeof(float);
}

struct col2im_job {
	const struct convt_plan *p;
	const float *cols, *bias;
	float *y;                   /* first output plane of this image and group */
	int64_t m_base;             /* output channel of the first plane */
	struct ert_act_desc act;
};

static void col2im_planes(void *arg, int64_t begin, int64_t end)
{
	const struct col2im_job *job = arg;
	const struct convt_plan *p = job->p;
	const struct ert_conv_geom *g = &p->g;

	for (int64_t m = begin; m < end; m++) {
		float *yp = job->y + m * p->out_sp;
		float b = job->bias ? job->bias[job->m_base + m] : 0.0f;

		for (int64_t i = 0; i < p->out_sp; i++)
			yp[i] = b;
		/*
		 * An input with no pixels adds nothing; its other dims may still be
		 * huge (a [1, C, 2^31, 0] input): do not walk them.
		 */
		for (int64_t t = 0; p->in_sp > 0 && t < p->kk; t++) {
			int64_t kw = t % g->k[2], kh = (t / g->k[2]) % g->k[1];
			int64_t kd = t / g->k[2] / g->k[1];
			const float *col = job->cols + (m * p->kk + t) * p->in_sp;

			for (int64_t id = 0; id < g->in[0]; id++) {
				int64_t oz = id * g->stride[0] - g->pad_b[0] + kd * g->dil[0];

				if (oz < 0 || oz >= g->out[0])
					continue;
				for (int64_t ih = 0; ih < g->in[1]; ih++) {
					int64_t oy = ih * g->stride[1] - g->pad_b[1] + kh * g->dil[1];

					if (oy < 0 || oy >= g->out[1])
						continue;
					const float *crow = col + (id * g->in[1] + ih) * g->in[2];
					float *yrow = yp + (oz * g->out[1] + oy) * g->out[2];

					for (int64_t iw = 0; iw < g->in[2]; iw++) {
						int64_t ox = iw * g->stride[2] - g->pad_b[2] +
							     kw * g->dil[2];

						if (ox >= 0 && ox < g->out[2])
							yrow[ox] += crow[iw];
					}
				}
			}
		}
		ert_act_apply(&job->act, yp, p->out_sp);
	}
}

ert_status ert_cpu_convt_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *b = x->n_in > 2 ? x->in[2] : NULL;
	struct convt_plan p;
	ert_status st = convt_plan_of(x, &p, err);

	if (st != ERT_OK)
		return st;
	if (x->out[0]->numel == 0)
		return ERT_OK;
	st = ert_cpu_ws_check(x, ert_cpu_convt_workspace(cpu, x), err);
	if (st != ERT_OK)
		return st;
	size_t gws = ert_sgemm_workspace(ert_cpu_lanes(cpu), p.m_g * p.kk, p.in_sp, p.cin_g);
	float *cols = (float *)((char *)x->workspace + gws);
	const float *xd = x->in[0]->data, *wd = x->in[1]->data;
	float *yd = x->out[0]->data;

	for (int64_t n = 0; n < p.n_img; n++)
		for (int64_t gi = 0; gi < p.group; gi++) {
			struct ert_sgemm_desc d = {
				.kern = cpu->gemm, .cpu = cpu,
				.m = p.m_g * p.kk, .n = p.in_sp, .k = p.cin_g, .batch = 1,
				.a = wd + gi * p.cin_g * p.m_g * p.kk, .a_rs = 1,
				.a_cs = p.m_g * p.kk,
				.b = xd + (n * p.c_in + gi * p.cin_g) * p.in_sp,
				.b_rs = p.in_sp, .b_cs = 1,
				.c = cols, .ldc = p.in_sp, .alpha = 1.0f,
			};
			struct col2im_job job = {
				.p = &p, .cols = cols, .bias = b ? b->data : NULL,
				.y = yd + (n * p.m + gi * p.m_g) * p.out_sp,
				.m_base = gi * p.m_g, .act = ert_node_act(x->node),
			};

			if (p.in_sp > 0)
				ert_sgemm_run(cpu->pool, cpu->num_threads, &d, x->workspace, gws);
			ert_parallel_for(cpu->pool, p.m_g, 1, col2im_planes, &job);
		}
	return ERT_OK;
}
