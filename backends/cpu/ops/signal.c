/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: DFT, STFT, the Hann/Hamming/Blackman windows and
 * MelWeightMatrix. Transforms run in double: a radix-2 FFT for power-of-two
 * lengths, Bluestein's chirp transform (on radix-2 FFTs) otherwise.
 */
#include <math.h>

#include "cpu/ops/value-store.h"
#include "ops/signal.h"

struct cplx {
	double re, im;
};

static bool is_pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

/* tw[k] = exp(-2 pi i k / n) */
static void twiddles(struct cplx *tw, int64_t n)
{
	for (int64_t k = 0; k < n; k++) {
		double a = -2.0 * M_PI * (double)k / (double)n;

		tw[k].re = cos(a);
		tw[k].im = sin(a);
	}
}

/* In-place radix-2 FFT of @a (n a power of two), forward or inverse (no scaling). */
static void fft_pow2(struct cplx *a, const struct cplx *tw, int64_t n, bool inverse)
{
	double sgn = inverse ? -1.0 : 1.0;

	for (int64_t i = 1, j = 0; i < n; i++) {
		int64_t bit = n >> 1;

		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			struct cplx t = a[i];

			a[i] = a[j];
			a[j] = t;
		}
	}
	for (int64_t len = 2; len <= n; len <<= 1) {
		int64_t step = n / len;

		for (int64_t s = 0; s < n; s += len)
			for (int64_t k = 0; k < len / 2; k++) {
				struct cplx w = tw[k * step], u = a[s + k], v = a[s + k + len / 2];
				double vr = v.re * w.re - sgn * v.im * w.im;
				double vi = v.re * sgn * w.im + v.im * w.re;

				a[s + k].re = u.re + vr;
				a[s + k].im = u.im + vi;
				a[s + k + len / 2].re = u.re - vr;
				a[s + k + len / 2].im = u.im - vi;
			}
	}
}

/*
 * A transform of length n in O(n log n) for any n: a radix-2 FFT when n is a
 * power of two, else Bluestein's: with the chirp c[k] = exp(-pi i k^2 / n),
 * X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]), a convolution done by FFTs of
 * length m, the power of two >= 2n - 1. (A direct sum would take n^2 steps:
 * a model asking for a DFT of a large odd length would hold the CPU for days.)
 */
struct fft {
	int64_t n, m;
	struct cplx *tw;      /* m twiddles of length m */
	struct cplx *chirp;   /* n (Bluestein) */
	struct cplx *bf;      /* m: the FFT of conj(c) laid out circularly (Bluestein) */
	struct cplx *work;    /* m (Bluestein) */
};

static int64_t fft_len(int64_t n)
{
	int64_t m = 1;

	if (is_pow2(n))
		return n;
	while (m < 2 * n - 1)
		m <<= 1;
	return m;
}

/* cplx values of work area fft_init() needs for length @n */
static size_t fft_ws(int64_t n)
{
	int64_t m = fft_len(n);

	return is_pow2(n) ? (size_t)n : 3 * (size_t)m + (size_t)n;
}

static void fft_init(struct fft *f, int64_t n, struct cplx *ws)
{
	f->n = n;
	f->m = fft_len(n);
	f->tw = ws;
	twiddles(f->tw, f->m);
	if (f->m == n)
		return;
	f->chirp = ws + f->m;
	f->bf = f->chirp + n;
	f->work = f->bf + f->m;
	for (int64_t k = 0; k < n; k++) {
		/* k^2 mod 2n keeps the angle small: k^2 < 2^62 for n < 2^31 */
		double a = -M_PI * (double)((k * k) % (2 * n)) / (double)n;

		f->chirp[k].re = cos(a);
		f->chirp[k].im = sin(a);
	}
	for (int64_t k = 0; k < f->m; k++)
		f->bf[k].re = f->bf[k].im = 0;
	for (int64_t k = 0; k < n; k++) {
		struct cplx c = { f->chirp[k].re, -f->chirp[k].im };

		f->bf[k] = c;
		if (k)
			f->bf[f->m - k] = c;
	}
	fft_pow2(f->bf, f->tw, f->m, false);
}

/* In-place transform of @a (n values), forward or inverse (no scaling). */
static void transform(const struct fft *f, struct cplx *a, bool inverse)
{
	int64_t n = f->n, m = f->m;
	struct cplx *w = f->work;
	double sgn = inverse ? -1.0 : 1.0;   /* inverse: conj(F(conj(a))) */

	if (m == n) {
		fft_pow2(a, f->tw, n, inverse);
		return;
	}
	for (int64_t k = 0; k < n; k++) {
		struct cplx x = { a[k].re, sgn * a[k].im }, c = f->chirp[k];

		w[k].re = x.re * c.re - x.im * c.im;
		w[k].im = x.re * c.im + x.im * c.re;
	}
	for (int64_t k = n; k < m; k++)
		w[k].re = w[k].im = 0;
	fft_pow2(w, f->tw, m, false);
	for (int64_t k = 0; k < m; k++) {
		struct cplx x = w[k], b = f->bf[k];

		w[k].re = x.re * b.re - x.im * b.im;
		w[k].im = x.re * b.im + x.im * b.re;
	}
	fft_pow2(w, f->tw, m, true);
	for (int64_t k = 0; k < n; k++) {
		struct cplx x = w[k], c = f->chirp[k];
		double re = (x.re * c.re - x.im * c.im) / (double)m;
		double im = (x.re * c.im + x.im * c.re) / (double)m;

		a[k].re = re;
		a[k].im = sgn * im;
	}
}

static size_t dft_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct ert_dft_params p;
	struct ert_err e = { 0 };

	if (ert_dft_params(x->node, (const struct ert_value *const *)x->in, x->n_in, &p, &e))
		return 0;
	return ((size_t)p.n + fft_ws(p.n)) * sizeof(struct cplx);
}

static ert_status dft_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	struct ert_dft_params p;
	ert_status st = ert_dft_params(x->node, (const struct ert_value *const *)x->in, x->n_in, &p,
				       err);

	if (st == ERT_OK)
		st = ert_cpu_ws_check(x, dft_workspace(cpu, x), err);
	if (st != ERT_OK)
		return st;
	int64_t n = p.n, m = in->dims[p.axis], outer = 1, inner = 1;
	int64_t cin = in->dims[in->rank - 1], cout = out->dims[out->rank - 1];
	int64_t m_out = out->dims[p.axis];
	struct cplx *a = x->workspace;
	struct fft f;
	bool irfft = p.inverse && p.onesided;

	for (int32_t d = 0; d < p.axis; d++)
		outer *= in->dims[d];
	for (int32_t d = p.axis + 1; d < in->rank - 1; d++)
		inner *= in->dims[d];
	fft_init(&f, n, a + n);
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t i = 0; i < inner; i++) {
			int64_t keep = irfft ? n / 2 + 1 : n;

			for (int64_t j = 0; j < n; j++)
				a[j].re = a[j].im = 0;
			for (int64_t j = 0; j < m && j < keep; j++) {
				int64_t e = ((o * m + j) * inner + i) * cin;

				a[j].re = ert_value_get_float(in, e);
				a[j].im = cin == 2 ? ert_value_get_float(in, e + 1) : 0;
			}
			if (irfft) {
				/* the spectrum of a real signal: X[n - k] = conj(X[k]) */
				for (int64_t k = n / 2 + 1; k < n; k++) {
					a[k].re = a[n - k].re;
					a[k].im = -a[n - k].im;
				}
			}
			transform(&f, a, p.inverse);
			for (int64_t k = 0; k < m_out; k++) {
				int64_t e = ((o * m_out + k) * inner + i) * cout;
				double s = p.inverse ? 1.0 / (double)n : 1.0;

				ert_cpu_store_f64(out, e, a[k].re * s);
				if (cout == 2)
					ert_cpu_store_f64(out, e + 1, a[k].im * s);
			}
		}
	}
	return ERT_OK;
}

static size_t stft_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct ert_stft_params p;
	struct ert_err e = { 0 };

	if (ert_stft_params(x->node, (const struct ert_value *const *)x->in, x->n_in, &p, &e))
		return 0;
	return ((size_t)p.length + fft_ws(p.length)) * sizeof(struct cplx);
}

static ert_status stft_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *sig = x->in[0], *win = x->n_in > 2 ? x->in[2] : NULL;
	struct ert_value *out = x->out[0];
	struct ert_stft_params p;
	ert_status st = ert_stft_params(x->node, (const struct ert_value *const *)x->in, x->n_in, &p,
					err);

	if (st == ERT_OK)
		st = ert_cpu_ws_check(x, stft_workspace(cpu, x), err);
	if (st != ERT_OK)
		return st;
	int64_t len = sig->dims[1], c = sig->dims[2], l = p.length;
	struct cplx *a = x->workspace;
	struct fft ft;

	fft_init(&ft, l, a + l);
	for (int64_t b = 0; b < sig->dims[0]; b++) {
		for (int64_t f = 0; f < p.frames; f++) {
			for (int64_t t = 0; t < l; t++) {
				int64_t e = (b * len + f * p.step + t) * c;
				double w = win ? ert_value_get_float(win, t) : 1.0;

				a[t].re = ert_value_get_float(sig, e) * w;
				a[t].im = c == 2 ? ert_value_get_float(sig, e + 1) * w : 0;
			}
			transform(&ft, a, false);
			for (int64_t k = 0; k < p.bins; k++) {
				int64_t e = ((b * p.frames + f) * p.bins + k) * 2;

				ert_cpu_store_f64(out, e, a[k].re);
				ert_cpu_store_f64(out, e + 1, a[k].im);
			}
		}
	}
	return ERT_OK;
}

static bool window_supports(const struct ert_exec *x)
{
	return ert_cpu_storable(x->out[0]->dtype);
}

static ert_status window_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value *out = x->out[0];
	int64_t n = out->dims[0];
	/* periodic: one period of an n + 1 window without its last point */
	double d = ert_attr_int(x->node, "periodic", 1) ? (double)n : (double)(n - 1);

	for (int64_t i = 0; i < n; i++) {
		double t = d > 0 ? 2.0 * M_PI * (double)i / d : 0, v;

		switch (x->node->op) {
		case ERT_OP_HannWindow: v = 0.5 - 0.5 * cos(t); break;
		case ERT_OP_HammingWindow: v = 25.0 / 46.0 - 21.0 / 46.0 * cos(t); break;
		default: v = 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t); break;
		}
		/* a symmetric window of one point is [1], as numpy's */
		ert_cpu_store_f64(out, i, d > 0 ? v : 1.0);
	}
	return ERT_OK;
}

static double hz_to_mel(double hz)
{
	return 2595.0 * log10(1.0 + hz / 700.0);
}

static ert_status mel_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value *out = x->out[0];
	int64_t nbins = out->dims[0], nmel = out->dims[1];
	int64_t dft = ert_value_get_int(x->in[1], 0), rate = ert_value_get_int(x->in[2], 0);
	double lo = ert_value_get_float(x->in[3], 0), hi = ert_value_get_float(x->in[4], 0);
	double lo_mel, step;
	int64_t prev[3];

	if (rate <= 0 || !(lo >= 0) || !(hi > lo) || !isfinite(hi))
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
				     "needs sample_rate > 0 and 0 <= lower_edge_hertz < "
				     "upper_edge_hertz (finite), got %lld, %g, %g", (long long)rate,
				     lo, hi);
	for (int64_t i = 0; i < out->numel; i++)
		ert_cpu_store_f64(out, i, 0);
	lo_mel = hz_to_mel(lo);
	step = (hz_to_mel(hi) - lo_mel) / (double)(nmel + 2);
	/*
	 * Triangles between consecutive points of nmel + 2 equally spaced on the
	 * mel scale, each at spectrogram bin floor((dft + 1) * hz / rate). Bins
	 * past the spectrogram's (upper edge above rate / 2) are left out.
	 */
	for (int64_t i = 0; i < nmel + 2; i++) {
		double hz = 700.0 * (pow(10.0, (lo_mel + (double)i * step) / 2595.0) - 1.0);
		double b = floor((double)(dft + 1) * hz / (double)rate);
		int64_t bin = b >= (double)ERT_DFT_MAX ? ERT_DFT_MAX : (int64_t)b;

		if (i < 2) {
			prev[i] = bin;
			continue;
		}
		prev[2] = bin;
		int64_t l = prev[0], c = prev[1], r = prev[2], m = i - 2;

		if (c == l) {
			if (c < nbins)
				ert_cpu_store_f64(out, c * nmel + m, 1.0);
		} else {
			for (int64_t j = l; j <= c && j < nbins; j++)
				ert_cpu_store_f64(out, j * nmel + m, (double)(j - l) / (double)(c - l));
		}
		for (int64_t j = c; j < r && j < nbins; j++)
			ert_cpu_store_f64(out, j * nmel + m, (double)(r - j) / (double)(r - c));
		prev[0] = prev[1];
		prev[1] = prev[2];
	}
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_signal[] = {
	{ .op = ERT_OP_DFT, .workspace = dft_workspace, .compute = dft_compute },
	{ .op = ERT_OP_STFT, .workspace = stft_workspace, .compute = stft_compute },
	{ .op = ERT_OP_HannWindow, .supports = window_supports, .compute = window_compute },
	{ .op = ERT_OP_HammingWindow, .supports = window_supports, .compute = window_compute },
	{ .op = ERT_OP_BlackmanWindow, .supports = window_supports, .compute = window_compute },
	{ .op = ERT_OP_MelWeightMatrix, .supports = window_supports, .compute = mel_compute },
	{ .compute = NULL },
};
