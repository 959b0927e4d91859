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

/* floor(@v / 2^@k) for @k in 0..62 */
static int64_t floor_shr(int64_t v, int k)
{
	return v >= 0 ? v >> k : -((-v + ((int64_t)1 << k) - 1) >> k);
}

/*
 * Input (@m, @s) (clamped) with zero point @zp in the 32-bit form: the
 * requantisation of (w - zp) << 20 is floor(((w - zp) * m + c - adj[w < zp])
 * / 2^K), K = 11 - s (the product and its rounding constants divided by
 * 2^20, docs/int8.md), split as w * A + floor((w * f + cpos or cneg) / 2^K)
 * - off with m = A * 2^K + f. cpos and cneg are raised by a multiple of 2^K
 * so that w * f + c >= 0 over the type. False where a bound fails.
 */
static bool addf_input(struct ert_q8_addf_in *in, int32_t m, int32_t s, int32_t zp, bool s8)
{
	int32_t na = -s, K = 11 + na, wmin = s8 ? -128 : 0, wmax = s8 ? 127 : 255;
	int64_t A, f, c, adj, cpos, cneg, beta, tmax, lmax;

	if (s > 0 || K > 30 || zp < wmin || zp > wmax)
		return false;
	A = m >> K;
	f = m & (((int64_t)1 << K) - 1);
	if (f && K > 22)
		return false;
	c = ((int64_t)1 << 10) + (na >= 1 ? (int64_t)1 << (10 + na) : 0);
	adj = na >= 1 ? (int64_t)1 << 11 : 0;
	cpos = c - zp * f;
	cneg = cpos - adj;
	beta = -floor_shr(wmin * f + (wmin < zp ? cneg : cpos), K);
	cpos += beta * ((int64_t)1 << K);
	cneg += beta * ((int64_t)1 << K);
	tmax = wmax * f + cpos;
	lmax = wmax * A + (tmax >> K) + (s8 ? 128 * A : 0);
	if (cneg < 0 || tmax >= ((int64_t)1 << 31) || lmax >= ((int64_t)1 << 29))
		return false;
	*in = (struct ert_q8_addf_in){ .A = (int32_t)A, .f = (int32_t)f, .cpos = (int32_t)cpos,
				       .cneg = (int32_t)cneg, .K = K, .zp = zp,
				       .off = (int32_t)(zp * A + beta) };
	return true;
}

/* The lanes' sum less @cfold is the sum of the inputs' scaled values. */
static void addf_fold(struct ert_q8_addf *r, int64_t cfold)
{
	int64_t cp = ((int64_t)1 << 30) + (r->n >= 1 ? (int64_t)1 << (30 + r->n) : 0);

	r->negc = (int32_t)-cfold;
	r->q = cfold * r->m + cp;
}

/* The 32-bit form's parameters, or p->fast left NULL (the lanes of p->vp run). */
static void addf_init(struct ert_q8_add *p, enum ert_cpu_isa isa, const struct ert_qout *qo,
		      const struct ert_quant_add *q, int32_t azp, int32_t bzp)
{
	bool s8 = qo->dtype != ERT_DTYPE_UINT8;
	int32_t s = clamp_shift(q->out_shift), sh = -1;
	struct ert_q8_addf *r = &p->fp;

	if (!addf_input(&p->in[0], clamp_mult(q->a_mult), clamp_shift(q->a_shift), azp, s8) ||
	    !addf_input(&p->in[1], clamp_mult(q->b_mult), clamp_shift(q->b_shift), bzp, s8) ||
	    s > 0 || qo->zp < (s8 ? -128 : 0) || qo->zp > (s8 ? 127 : 255))
		return;
	for (int i = 1; i >= 0; i--)
		if (!p->in[i].f && p->in[i].A > 0 && !(p->in[i].A & (p->in[i].A - 1)))
			sh = i;
	if (sh < 0)
		return;
	*r = (struct ert_q8_addf){
		.ks = __builtin_ctz((unsigned)p->in[sh].A),
		.A = p->in[!sh].A, .f = p->in[!sh].f, .cpos = p->in[!sh].cpos,
		.cneg = p->in[!sh].cneg, .K = p->in[!sh].K, .zg = p->in[!sh].zp,
		.bias = s8 ? 128 * (p->in[0].A + p->in[1].A) : 0,
		.m = clamp_mult(q->out_mult), .n = -s,
		.lo = (int16_t)(qo->lo - qo->zp), .hi = (int16_t)(qo->hi - qo->zp),
		.zp = (int16_t)qo->zp,
		/* below zero the sum's sign matters only where the clamp lets it through */
		.adj = s < 0 && qo->lo - qo->zp < 0, .s8 = s8,
	};
	addf_fold(r, -(int64_t)r->bias - p->in[0].off - p->in[1].off);
	p->shift = sh;
	p->fast = isa >= ERT_ISA_AVX512 ? ert_q8_addf_avx512 : isa >= ERT_ISA_AVX2 ? ert_q8_addf_avx2
										    : NULL;
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
	if (p->vec)
		addf_init(p, isa, qo, &q, azp, bzp);
	return true;
}

/* The scalar rule for one pair of bytes, from the tables. */
static int32_t add_one(const struct ert_q8_add *p, uint8_t a, uint8_t b)
{
	int32_t sum = (int32_t)((uint32_t)p->ta[a] + (uint32_t)p->tb[b]);

	return ert_qout_fixed(&p->qo, sum, p->out_m, p->out_s);
}

void ert_q8_add_run(const struct ert_q8_add *p, const uint8_t *a, int64_t sa, const uint8_t *b,
		    int64_t sb, uint8_t *y, int64_t n)
{
	if (n <= 0)
		return; /* a repeated input's byte is read below */
	if (p->fast && sa && sb) {
		p->fast(&p->fp, p->shift ? b : a, p->shift ? a : b, y, n);
		return;
	}
	if (p->fast && (sa || sb)) {
		/* one input repeats one byte: its scaled value joins the constant */
		int i = sa ? 1 : 0;
		const struct ert_q8_addf_in *g = &p->in[!i];
		struct ert_q8_addf r = p->fp;

		r.A = g->A;
		r.f = g->f;
		r.cpos = g->cpos;
		r.cneg = g->cneg;
		r.K = g->K;
		r.zg = g->zp;
		r.bias = r.s8 ? 128 * g->A : 0;
		addf_fold(&r, (int64_t)(i ? p->tb[b[0]] : p->ta[a[0]]) - r.bias - g->off);
		p->fast(&r, NULL, i ? a : b, y, n);
		return;
	}
	if (p->fast) {
		int32_t q = add_one(p, a[0], b[0]);

		for (int64_t k = 0; k < n; k++)
			ert_q8_store(y, p->qo.dtype, k, q);
		return;
	}
	if (p->vec) {
		p->vec(&p->vp, a, sa, b, sb, y, n);
		return;
	}
	for (int64_t k = 0; k < n; k++)
		ert_q8_store(y, p->qo.dtype, k, add_one(p, a[k * sa], b[k * sb]));
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
