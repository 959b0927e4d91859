/* SPDX-License-Identifier: MIT */
/*
 * CPU QLinearAdd and QLinearMul (com.microsoft), numpy broadcast, both
 * requantisation rules (docs/int8.md):
 *
 *   float rule (onnxruntime): the multipliers A_s / C_s, B_s / C_s (Add) or
 *   A_s * B_s / C_s (Mul) are computed in float32, applied in double, and the
 *   result rounded half to even;
 *   fixed rule: TFLite's ADD (inputs shifted left 20 bits, each scaled, the
 *   sum scaled) and MUL, exactly as the enpu ELTWISE command. The fixed
 *   rule's Add is ert_q8_add_run(), which QLinearConv's fused residual
 *   stage shares.
 *
 * An input byte has only 256 values, so Add looks each input's scaled
 * contribution up in a table built once per run. Above the scalar level the
 * runs go through the level's lanes (qlinear-ew-<level>.c), which compute
 * the same values.
 */
#include <string.h>

#include "cpu/ops/elementwise.h"
#include "cpu/ops/qlinear-kernels.h"

struct qbin_job {
	bool mul;
	struct ert_qout qo;
	ert_dtype dt;
	const uint8_t *a, *b;
	void *y;
	int32_t azp, bzp;
	/* Mul: one multiplier */
	int32_t m, s;
	double f;
	/* Add: the fixed rule's, or the float rule's reals indexed by the input byte */
	struct ert_q8_add add;
	double fa[256], fb[256];
	/* the SIMD level's kernel and its parameters, or NULL */
	ert_q8_bin_fn vec;
	struct ert_q8_bin vp;
};

/* The value of input byte @byte in type @dt. */
static int32_t byte_value(ert_dtype dt, int byte)
{
	return dt == ERT_DTYPE_UINT8 ? byte : (int32_t)(int8_t)(uint8_t)byte;
}

static void qbin_run(void *ctx, const int64_t *off, const int64_t *step, int64_t out_off, int64_t n)
{
	const struct qbin_job *j = ctx;
	const uint8_t *a = j->a + off[0], *b = j->b + off[1];
	int64_t sa = step[0], sb = step[1];

	if (!j->mul && j->qo.fixed) {
		ert_q8_add_run(&j->add, a, sa, b, sb, (uint8_t *)j->y + out_off, n);
		return;
	}
	if (j->vec) {
		j->vec(&j->vp, a, sa, b, sb, (uint8_t *)j->y + out_off, n);
		return;
	}
	for (int64_t k = 0; k < n; k++) {
		uint8_t va = a[k * sa], vb = b[k * sb];
		int32_t q;

		if (j->mul) {
			int32_t p = (byte_value(j->dt, va) - j->azp) * (byte_value(j->dt, vb) - j->bzp);

			q = j->qo.fixed ? ert_qout_fixed(&j->qo, p, j->m, j->s)
					: ert_qout_float(&j->qo, (double)p * j->f);
		} else {
			q = ert_qout_float(&j->qo, j->fa[va] + j->fb[vb]);
		}
		ert_q8_store(j->y, j->dt, out_off + k, q);
	}
}

/*
 * The level's lanes for QLinearAdd/QLinearMul runs and the name edgert
 * profile shows for them; NULL at the scalar level.
 */
static ert_q8_bin_fn level_bin(enum ert_cpu_isa isa, const char **name)
{
	if (name)
		*name = isa >= ERT_ISA_AVX512 ? "q8-ew-avx512" : isa >= ERT_ISA_AVX2 ? "q8-ew-avx2"
											: NULL;
	return isa >= ERT_ISA_AVX512 ? ert_q8_bin_avx512 : isa >= ERT_ISA_AVX2 ? ert_q8_bin_avx2
										  : NULL;
}

/* The clamps ert_requant_fixed() applies, which the SIMD lanes assume done. */
static int32_t clamp_mult(int32_t m)
{
	return m < 0 ? 0 : m;
}

static int32_t clamp_shift(int32_t s)
{
	return s > ERT_QUANT_SHIFT_MAX ? ERT_QUANT_SHIFT_MAX
	       : s < ERT_QUANT_SHIFT_MIN ? ERT_QUANT_SHIFT_MIN : s;
}

bool ert_q8_add_init(struct ert_q8_add *p, enum ert_cpu_isa isa, const struct ert_qout *qo,
		     double as, int32_t azp, double bs, int32_t bzp, double cs)
{
	struct ert_quant_add q;

	memset(p, 0, sizeof(*p));
	if (!ert_quant_add_params(as, bs, cs, &q))
		return false;
	p->qo = *qo;
	p->out_m = q.out_mult;
	p->out_s = q.out_shift;
	for (int v = 0; v < 256; v++) {
		int32_t da = byte_value(qo->dtype, v) - azp, db = byte_value(qo->dtype, v) - bzp;

		p->ta[v] = ert_requant_fixed(da * (1 << ERT_QUANT_ADD_LEFT_SHIFT), q.a_mult,
					     q.a_shift);
		p->tb[v] = ert_requant_fixed(db * (1 << ERT_QUANT_ADD_LEFT_SHIFT), q.b_mult,
					     q.b_shift);
	}
	p->vec = level_bin(isa, NULL);
	p->vp = (struct ert_q8_bin){
		.fixed = true, .u8 = qo->dtype == ERT_DTYPE_UINT8, .azp = azp, .bzp = bzp,
		.am = clamp_mult(q.a_mult), .as = clamp_shift(q.a_shift),
		.bm = clamp_mult(q.b_mult), .bs = clamp_shift(q.b_shift),
		.m = clamp_mult(q.out_mult), .s = clamp_shift(q.out_shift),
		.zp = qo->zp, .lo = qo->lo, .hi = qo->hi,
	};
	return true;
}

void ert_q8_add_run(const struct ert_q8_add *p, const uint8_t *a, int64_t sa, const uint8_t *b,
		    int64_t sb, uint8_t *y, int64_t n)
{
	if (p->vec) {
		p->vec(&p->vp, a, sa, b, sb, y, n);
		return;
	}
	for (int64_t k = 0; k < n; k++) {
		int32_t sum = (int32_t)((uint32_t)p->ta[a[k * sa]] + (uint32_t)p->tb[b[k * sb]]);

		ert_q8_store(y, p->qo.dtype, k, ert_qout_fixed(&p->qo, sum, p->out_m, p->out_s));
	}
}

static ert_status qbin_params(struct ert_cpu *cpu, const struct ert_exec *x, struct qbin_job *j,
			      struct ert_err *err)
{
	double as = ert_qparam_float(x->in[1], 0), bs = ert_qparam_float(x->in[4], 0);
	double cs = ert_qparam_float(x->in[6], 0);

	if (j->mul) {
		if (j->qo.fixed)
			return ert_quant_product_multiplier(as, bs, cs, &j->m, &j->s)
				       ? ERT_OK : ERT_STATUS_UNSUPPORTED;
		j->f = (double)((float)as * (float)bs / (float)cs);
		return ERT_OK;
	}
	if (j->qo.fixed)
		return ert_q8_add_init(&j->add, cpu->isa, &j->qo, as, j->azp, bs, j->bzp, cs)
			       ? ERT_OK : ERT_STATUS_UNSUPPORTED;
	float ra = (float)as / (float)cs, rb = (float)bs / (float)cs;

	j->vp.ra = ra;
	j->vp.rb = rb;

	for (int v = 0; v < 256; v++) {
		j->fa[v] = (double)(byte_value(j->dt, v) - j->azp) * ra;
		j->fb[v] = (double)(byte_value(j->dt, v) - j->bzp) * rb;
	}
	(void)err;
	return ERT_OK;
}

static ert_status qbin_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in[2] = { x->in[0], x->in[3] };
	struct ert_value *y = x->out[0];
	struct ert_bcast bc;
	struct qbin_job j;
	ert_status st;

	memset(&j, 0, sizeof(j));
	j.mul = x->node->op == ERT_OP_QLinearMul;
	j.dt = y->dtype;
	j.a = in[0]->data;
	j.b = in[1]->data;
	j.y = y->data;
	j.azp = ert_qparam_int(x->n_in > 2 ? x->in[2] : NULL, 0);
	j.bzp = ert_qparam_int(x->n_in > 5 ? x->in[5] : NULL, 0);
	if ((st = ert_qout_init(&j.qo, x, y, x->n_in > 7 ? x->in[7] : NULL, err)) != ERT_OK)
		return st;
	if ((st = qbin_params(cpu, x, &j, err)) != ERT_OK)
		return ert_node_fail(x->node, err, st, "multipliers cannot be represented");
	if (y->numel == 0)
		return ERT_OK;
	j.vec = level_bin(cpu->isa, NULL);
	j.vp.mul = j.mul;
	j.vp.fixed = j.qo.fixed;
	j.vp.u8 = j.dt == ERT_DTYPE_UINT8;
	j.vp.azp = j.azp;
	j.vp.bzp = j.bzp;
	j.vp.m = clamp_mult(j.m);
	j.vp.s = clamp_shift(j.s);
	j.vp.f = j.f;
	j.vp.zp = j.qo.zp;
	j.vp.lo = j.qo.lo;
	j.vp.hi = j.qo.hi;
	if (ert_bcast_init(&bc, y, in, 2, err) != ERT_OK)
		return ERT_STATUS_INTERNAL;
	ert_bcast_run(cpu, &bc, qbin_run, &j);
	return ERT_OK;
}

/* Plan time: name the kernel compute() will run (every rule and broadcast takes the lanes). */
static ert_status qbin_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	(void)err;
	level_bin(cpu->isa, &x->kernel);
	return ERT_OK;
}

/* QLinearLookup: y = table[(uint8)x]. */
static ert_status lookup_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const uint8_t *in = x->in[0]->data, *table = x->in[1]->data;
	uint8_t *out = x->out[0]->data;
	int64_t n = x->out[0]->numel;

	for (int64_t i = 0; i < n; i++)
		out[i] = table[in[i]];
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_qlinear_ew[] = {
	{ .op = ERT_OP_QLinearAdd, .prepare = qbin_prepare, .compute = qbin_compute },
	{ .op = ERT_OP_QLinearMul, .prepare = qbin_prepare, .compute = qbin_compute },
	{ .op = ERT_OP_QLinearLookup, .compute = lookup_compute },
	{ .compute = NULL },
};
