/* SPDX-License-Identifier: MIT */
/*
 * DFT on the CPU against a direct sum in long double: every length from 1 to
 * 40 and some larger odd, prime and power-of-two ones (radix-2 and Bluestein
 * paths), real and complex input, forward and inverse, zero padding and
 * truncation by dft_length; and a large odd length that a direct sum would
 * take minutes for, checked on an impulse whose transform is known.
 */
#include <math.h>

#include "ert-op-test.h"
#include "ert-test.h"

static uint32_t seed = 12345;

static float frand(void)
{
	seed = seed * 1103515245u + 12345u;
	return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* DFT of x[0..m) (complex when @cplx) at length n along axis 1 of [1, m, c]. */
static bool run_dft(int *ert_test_failed_, int64_t m, int64_t n, bool cplx, bool inverse,
		    const float *x, float *y)
{
	struct one o;
	int64_t xd[3] = { 1, m, cplx ? 2 : 1 }, len = n;
	bool ok;

	one_init(&o, ERT_OP_DFT, 20, 2, 1);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 3, xd, (void *)x);
	set_in(&o, 1, ERT_DTYPE_INT64, 0, NULL, &len);
	ert_node_set_attr_int(o.g, o.n, "inverse", inverse);
	ok = one_run(&o) == ERT_OK;
	if (!ok)
		fprintf(stderr, "DFT m %lld n %lld: %s\n", (long long)m, (long long)n, o.err.msg);
	CHECK(ok);
	if (ok) {
		CHECK_EQ_INT(o.out[0].rank, 3);
		CHECK_EQ_INT(o.out[0].dims[1], n);
		CHECK_EQ_INT(o.out[0].dims[2], 2);
		memcpy(y, o.out[0].data, (size_t)n * 2 * sizeof(float));
	}
	one_fini(&o);
	return ok;
}

ERT_TEST(dft_matches_direct_sum)
{
	static const int64_t extra[] = { 45, 64, 97, 100, 127, 128, 243, 257, 1000 };
	enum { MAXN = 1000 };
	static float x[2 * (MAXN + 3)], y[2 * MAXN];

	for (int64_t i = 0; i < 40 + (int64_t)(sizeof(extra) / sizeof(extra[0])); i++) {
		int64_t n = i < 40 ? i + 1 : extra[i - 40];

		for (int v = 0; v < 4; v++) {
			bool cplx = v & 1, inverse = v & 2;
			/* the signal: shorter than n (zero padding) or longer (truncated) */
			int64_t m = v == 1 ? n + 3 : v == 2 && n > 2 ? n - 2 : n;
			double err = 0, mag = 0;

			for (int64_t j = 0; j < m * (cplx ? 2 : 1); j++)
				x[j] = frand();
			if (!run_dft(ert_test_failed_, m, n, cplx, inverse, x, y))
				return;
			for (int64_t k = 0; k < n; k++) {
				long double re = 0, im = 0;

				for (int64_t j = 0; j < n && j < m; j++) {
					long double a = (inverse ? 2 : -2) * M_PI * (long double)((j * k) % n) / n;
					long double xr = cplx ? x[2 * j] : x[j];
					long double xi = cplx ? x[2 * j + 1] : 0;

					re += xr * cosl(a) - xi * sinl(a);
					im += xr * sinl(a) + xi * cosl(a);
				}
				if (inverse) {
					re /= n;
					im /= n;
				}
				err = fmax(err, fmax(fabs((double)(y[2 * k] - re)),
						     fabs((double)(y[2 * k + 1] - im))));
				mag = fmax(mag, fmax(fabs((double)re), fabs((double)im)));
			}
			if (!(err <= 1e-6 * fmax(mag, 1.0))) {
				fprintf(stderr, "DFT n %lld m %lld complex %d inverse %d: error %g of %g\n",
					(long long)n, (long long)m, cplx, inverse, err, mag);
				CHECK(0);
				return;
			}
		}
	}
}

/*
 * n = 3^11 = 177147: a direct sum is 3.1e10 complex products a transform. An
 * impulse at 1 has X[k] = exp(-2 pi i k / n).
 */
ERT_TEST(dft_large_odd_length)
{
	enum { N = 177147 };
	float *x = calloc(N, sizeof(float)), *y = malloc(2 * (size_t)N * sizeof(float));
	double err = 0;

	REQUIRE(x && y);
	x[1] = 1.0f;
	if (run_dft(ert_test_failed_, N, N, false, false, x, y)) {
		for (int64_t k = 0; k < N; k++) {
			double a = -2.0 * M_PI * (double)k / N;

			err = fmax(err, fmax(fabs(y[2 * k] - cos(a)), fabs(y[2 * k + 1] - sin(a))));
		}
		CHECK(err < 1e-6);
	}
	free(x);
	free(y);
}

int main(int argc, char **argv)
{
	static const struct ert_test_case cases[] = {
		ERT_TEST_ENTRY(dft_matches_direct_sum),
		ERT_TEST_ENTRY(dft_large_odd_length),
	};

	return ert_test_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
