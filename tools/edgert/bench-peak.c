/* SPDX-License-Identifier: MIT */
/* The machine's ceilings for edgert bench --suite: fp32 peak and memory bandwidth. */
#include <emmintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-suite.h"
#include "cli.h"

/* Repeats of each measurement; the best one counts (others lost the CPU). */
#define REPEATS 3
/* Seconds one peak repeat should take. */
#define PEAK_REPEAT_S 0.1
/* Passes over the buffers per bandwidth repeat. */
#define MEM_PASSES 2


/*
 * The scalar level's peak: the reference kernels are portable C that the
 * compiler turns into SSE mulps and addps (no FMA in baseline x86-64). 12
 * chains of a dependent multiply then add keep two multiply and two add
 * ports busy at 3-4 cycles of latency each.
 */
static uint64_t fma_chains_sse(uint64_t iters, float *sink)
{
	const __m128 m = _mm_set1_ps(0.999f), c = _mm_set1_ps(0.001f);
	__m128 a[12];
	float out[4];
	__m128 sum;

	for (int k = 0; k < 12; k++)
		a[k] = _mm_set1_ps(1.0f + 0.01f * (float)k);
	for (uint64_t i = 0; i < iters; i++) {
		a[0] = _mm_add_ps(_mm_mul_ps(a[0], m), c);
		a[1] = _mm_add_ps(_mm_mul_ps(a[1], m), c);
		a[2] = _mm_add_ps(_mm_mul_ps(a[2], m), c);
		a[3] = _mm_add_ps(_mm_mul_ps(a[3], m), c);
		a[4] = _mm_add_ps(_mm_mul_ps(a[4], m), c);
		a[5] = _mm_add_ps(_mm_mul_ps(a[5], m), c);
		a[6] = _mm_add_ps(_mm_mul_ps(a[6], m), c);
		a[7] = _mm_add_ps(_mm_mul_ps(a[7], m), c);
		a[8] = _mm_add_ps(_mm_mul_ps(a[8], m), c);
		a[9] = _mm_add_ps(_mm_mul_ps(a[9], m), c);
		a[10] = _mm_add_ps(_mm_mul_ps(a[10], m), c);
		a[11] = _mm_add_ps(_mm_mul_ps(a[11], m), c);
	}
	sum = a[0];
	for (int k = 1; k < 12; k++)
		sum = _mm_add_ps(sum, a[k]);
	_mm_storeu_ps(out, sum);
	*sink = out[0] + out[3];
	return iters * 12 * 4 * 2;
}

/* b[i] = s * a[i] over @n floats (a multiple of 16, 16-byte aligned). */
static void scale_stream(float *b, const float *a, size_t n, float s)
{
	const __m128 k = _mm_set1_ps(s);

	for (size_t i = 0; i < n; i += 16) {
		__m128 x0 = _mm_load_ps(a + i), x1 = _mm_load_ps(a + i + 4);
		__m128 x2 = _mm_load_ps(a + i + 8), x3 = _mm_load_ps(a + i + 12);

		_mm_store_ps(b + i, _mm_mul_ps(x0, k));
		_mm_store_ps(b + i + 4, _mm_mul_ps(x1, k));
		_mm_store_ps(b + i + 8, _mm_mul_ps(x2, k));
		_mm_store_ps(b + i + 12, _mm_mul_ps(x3, k));
	}
}

/* The start line: workers wait for @go (or @cancel) before they run. */
struct start_gate {
	pthread_mutex_t lock; /* protects go and cancel */
	pthread_cond_t cond;
	bool go, cancel;
};

double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One thread's share of a measurement. */
struct worker {
	pthread_t tid;
	struct start_gate *gate;
	/* peak */
	uint64_t (*chains)(uint64_t iters, float *sink);
	uint64_t iters;
	uint64_t flops;
	float sink;
	/* bandwidth */
	float *a, *b;
	size_t n;
	/* when it ran, on @clock */
	clockid_t clock;
	double t0, t1;
};

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void worker_body(struct worker *w)
{
	w->t0 = clock_s(w->clock);
	if (w->chains) {
		w->flops = w->chains(w->iters, &w->sink);
	} else {
		for (int p = 0; p < MEM_PASSES; p++)
			scale_stream(w->b, w->a, w->n, p & 1 ? 2.0f : 0.5f);
	}
	w->t1 = clock_s(w->clock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	bool run;

	/* all start together, so that the threads share the machine throughout */
	pthread_mutex_lock(&w->gate->lock);
	while (!w->gate->go && !w->gate->cancel)
		pthread_cond_wait(&w->gate->cond, &w->gate->lock);
	run = w->gate->go;
	pthread_mutex_unlock(&w->gate->lock);
	if (run)
		worker_body(w);
	return NULL;
}

/*
 * Run @n workers at once (the first in the calling thread); returns the
 * seconds from the first start to the last end, or a negative value (after
 * an error message) when a thread could not be started.
 */
static double run_workers(const char *cmd, struct worker *w, uint32_t n)
{
	struct start_gate gate = {
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	};
	uint32_t started = 1;
	double t0, t1;
	int err = 0;

	for (uint32_t i = 1; i < n && !err; i++) {
		w[i].gate = &gate;
		err = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (!err)
			started++;
	}
	pthread_mutex_lock(&gate.lock);
	gate.go = !err;
	gate.cancel = err != 0;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	if (!err)
		worker_body(&w[0]);
	for (uint32_t i = 1; i < started; i++)
		pthread_join(w[i].tid, NULL);
	if (err) {
		cli_error(cmd, "failed to start thread %u of %u: %s", started + 1, n, strerror(err));
		return -1;
	}
	t0 = w[0].t0;
	t1 = w[0].t1;
	for (uint32_t i = 1; i < n; i++) {
		t0 = w[i].t0 < t0 ? w[i].t0 : t0;
		t1 = w[i].t1 > t1 ? w[i].t1 : t1;
	}
	return t1 - t0;
}

/* GFLOP/s of @n threads running @iters rounds each, best of REPEATS. */
static double peak_rate(const char *cmd, uint64_t (*chains)(uint64_t, float *), uint64_t iters,
			uint32_t n, clockid_t clock)
{
	struct worker *w = calloc(n, sizeof(*w));
	double best = 0;

	if (!w)
		return cli_error(cmd, "out of memory"), -1;
	for (int r = 0; r < REPEATS; r++) {
		uint64_t flops = 0;
		double dt;

		for (uint32_t i = 0; i < n; i++) {
			memset(&w[i], 0, sizeof(w[i]));
			w[i].chains = chains;
			w[i].iters = iters;
			w[i].clock = clock;
		}
		dt = run_workers(cmd, w, n);
		if (dt < 0) {
			free(w);
			return -1;
		}
		for (uint32_t i = 0; i < n; i++)
			flops += w[i].flops;
		if (dt > 0 && (double)flops / dt * 1e-9 > best)
			best = (double)flops / dt * 1e-9;
	}
	free(w);
	return best;
}

bool bench_peak_measure(const char *cmd, ert_cpu_level level, uint32_t threads, bool cpu_clock,
			struct bench_peak *out)
{
	uint64_t (*chains)(uint64_t, float *) = fma_chains_sse;
	uint64_t iters = 1024;
	float sink;
	double dt;

	memset(out, 0, sizeof(*out));
	out->kernel = "12 SSE mulps+addps chains (scalar level)";
	if (level >= ERT_CPU_LEVEL_AVX512) {
		chains = bench_fma_chains_avx512;
		out->kernel = "16 zmm FMA chains (AVX-512)";
	} else if (level == ERT_CPU_LEVEL_AVX2) {
		chains = bench_fma_chains_avx2;
		out->kernel = "12 ymm FMA chains (AVX2)";
	}
	/* size a repeat to about PEAK_REPEAT_S; the doubling also warms the core up */
	for (;;) {
		double t0 = bench_now_s();

		chains(iters, &sink);
		dt = bench_now_s() - t0;
		if (dt >= PEAK_REPEAT_S / 4 || iters >= UINT64_MAX / 4)
			break;
		iters *= 2;
	}
	iters = (uint64_t)((double)iters * PEAK_REPEAT_S / (dt > 0 ? dt : PEAK_REPEAT_S));
	iters = iters ? iters : 1;
	out->single_gflops = peak_rate(cmd, chains, iters, 1,
				       cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC);
	out->all_threads = threads;
	out->all_gflops = peak_rate(cmd, chains, iters, threads, CLOCK_MONOTONIC);
	return out->single_gflops > 0 && out->all_gflops > 0;
}

/*
 * The L3 of the first CPU, from sysfs ("32768K"); sysconf's figure where sysfs
 * has none (glibc may report the whole package's L3, or the host's in a VM).
 */
static uint64_t l3_bytes(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
	unsigned long long v = 0;
	char unit = 0;
	long sc;

	if (f) {
		int n = fscanf(f, "%llu%c", &v, &unit);

		fclose(f);
		if (n >= 1 && v > 0)
			return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
	}
	sc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	return sc > 0 ? (uint64_t)sc : 0;
}

/* Bytes per buffer: 8x the L3, within [256 MiB, min(1 GiB, memory / 8)]. */
static size_t mem_buffer_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t want = 8 * l3_bytes();
	uint64_t cap = UINT64_C(1) << 30;

	if (pages > 0 && psize > 0 && (uint64_t)pages * (uint64_t)psize / 8 < cap)
		cap = (uint64_t)pages * (uint64_t)psize / 8;
	if (want < (UINT64_C(256) << 20))
		want = UINT64_C(256) << 20;
	if (want > cap)
		want = cap;
	return (size_t)(want & ~(uint64_t)4095);
}

/* GB/s of @n threads streaming their slices, best of REPEATS. */
static double mem_rate(const char *cmd, float *a, float *b, size_t n_floats, uint32_t n,
		       clockid_t clock)
{
	struct worker *w = calloc(n, sizeof(*w));
	size_t per = n_floats / n / 16 * 16;
	double best = 0;

	if (!w)
		return cli_error(cmd, "out of memory"), -1;
	for (int r = 0; r < REPEATS; r++) {
		double dt;

		for (uint32_t i = 0; i < n; i++) {
			memset(&w[i], 0, sizeof(w[i]));
			w[i].a = a + i * per;
			w[i].b = b + i * per;
			w[i].n = per;
			w[i].clock = clock;
		}
		dt = run_workers(cmd, w, n);
		if (dt < 0) {
			free(w);
			return -1;
		}
		/* each pass reads one buffer and writes the other */
		if (dt > 0 && 2.0 * MEM_PASSES * (double)(per * n * sizeof(float)) / dt * 1e-9 > best)
			best = 2.0 * MEM_PASSES * (double)(per * n * sizeof(float)) / dt * 1e-9;
	}
	free(w);
	return best;
}

bool bench_mem_measure(const char *cmd, uint32_t threads, bool cpu_clock, struct bench_mem *out)
{
	size_t bytes = mem_buffer_bytes();
	size_t n = bytes / sizeof(float);
	void *a = NULL, *b = NULL;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (posix_memalign(&a, 4096, bytes) || posix_memalign(&b, 4096, bytes)) {
		cli_error(cmd, "out of memory for two %zu MiB bandwidth buffers", bytes >> 20);
		goto out;
	}
	/* fault every page in first: the timed passes measure memory, not the kernel */
	for (size_t i = 0; i < n; i++)
		((float *)a)[i] = (float)(i & 1023);
	memset(b, 0, bytes);
	out->buffer_bytes = bytes;
	out->all_threads = threads;
	out->single_gbs = mem_rate(cmd, a, b, n, 1,
				   cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC);
	out->all_gbs = mem_rate(cmd, a, b, n, threads, CLOCK_MONOTONIC);
	ok = out->single_gbs > 0 && out->all_gbs > 0;
out:
	free(a);
	free(b);
	return ok;
}
