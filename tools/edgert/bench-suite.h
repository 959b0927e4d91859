/* SPDX-License-Identifier: MIT */
/*
 * bench-suite.h — `edgert bench --suite`: the machine's own ceilings (FMA
 * peak, memory bandwidth) and the zoo models measured against them in one run.
 *
 *   bench-suite.c          the command: options, the order of the work, timing
 *   bench-report.c         the table, the JSON and the targets of issue 8
 *   bench-peak.c           peak and bandwidth: threads, timing, the SSE loop
 *   bench-peak-avx2.c      independent ymm FMA chains (built with -mavx2 -mfma)
 *   bench-peak-avx512.c    independent zmm FMA chains (built with -mavx512f)
 *
 * The per-level loops are called only when sessions run at that level
 * (ert_cpu_level_resolve), so the CLI still runs on any x86-64.
 */
#ifndef ERT_BENCH_SUITE_H
#define ERT_BENCH_SUITE_H

#include <stdbool.h>
#include <stdint.h>

#include "edgert.h"

/* ---- bench-peak-<level>.c ----------------------------------------------- */

/*
 * @iters rounds of independent multiply-add chains on registers: enough
 * chains to cover the FMA latency times the FMA ports of current cores. The
 * chains' sum goes to *@sink so that the work cannot be dropped. Returns the
 * floating-point operations done (an FMA counts 2 per lane).
 */
uint64_t bench_fma_chains_avx2(uint64_t iters, float *sink);
uint64_t bench_fma_chains_avx512(uint64_t iters, float *sink);

/* ---- bench-peak.c ------------------------------------------------------- */

struct bench_peak {
	const char *kernel;     /* what was timed, e.g. "16 zmm FMA chains (AVX-512)" */
	double single_gflops;   /* one thread alone */
	double all_gflops;      /* one thread per online CPU, all at once */
	uint32_t all_threads;
};

/*
 * The fp32 peak at kernel level @level: AVX-512 zmm FMAs at avx512 and up,
 * AVX2 ymm FMAs at avx2, SSE mulps + addps at scalar (what the reference
 * kernels compile to). Best of a few repeats of about 0.1 s each, on one
 * thread and on @threads threads together. With @cpu_clock the one-thread
 * repeats are timed in the thread's CPU time (time other work took the CPU
 * from it does not count); several threads always in wall time. False (with
 * an error printed) when a thread cannot be started.
 */
bool bench_peak_measure(const char *cmd, ert_cpu_level level, uint32_t threads, bool cpu_clock,
			struct bench_peak *out);

struct bench_mem {
	size_t buffer_bytes;    /* each of the two buffers */
	double single_gbs;      /* one thread */
	double all_gbs;         /* @threads threads, each on its slice */
	uint32_t all_threads;
};

/*
 * Memory bandwidth of a read + write stream (b[i] = s * a[i]) over two buffers
 * of 8x the L3 cache (at least 256 MiB, at most 1 GiB or an eighth of the
 * memory); bytes read plus bytes written per second, best of a few passes.
 * @cpu_clock as for bench_peak_measure().
 */
bool bench_mem_measure(const char *cmd, uint32_t threads, bool cpu_clock, struct bench_mem *out);

/* Seconds on CLOCK_MONOTONIC. */
double bench_now_s(void);

/* ---- bench-suite.c / bench-report.c -------------------------------------- */

#define SUITE_MAX_MODELS 8
#define SUITE_MAX_THREADS 8

/* One timed measurement: a model at a thread count. */
struct suite_time {
	uint32_t threads;
	uint32_t warmup, runs;  /* runs taken (the time limit may cut them short) */
	double min_ms, median_ms;
};

struct suite_model {
	const char *name;
	uint64_t macs;                            /* as `edgert info` counts them */
	struct suite_time t[SUITE_MAX_THREADS];   /* per thread count of the list */
};

/* Conv layer classes of the per-class table. */
enum suite_class {
	SC_FIRST,       /* the first Conv of the graph (the stem) */
	SC_1X1,         /* 1x1, group 1 */
	SC_3X3,         /* 3x3, group 1 (Winograd where the kernels use it) */
	SC_DEPTHWISE,   /* group = input channels = output channels */
	SC_OTHER_CONV,  /* any other Conv (other kernel sizes, grouped) */
	SC_OTHER_OPS,   /* everything that is not a Conv */
	SC_COUNT,
};

struct suite_class_row {
	uint32_t layers;
	uint64_t macs;
	double min_ms[SUITE_MAX_THREADS], median_ms[SUITE_MAX_THREADS];
};

struct suite_int8 {
	bool done;
	const char *model;
	const char *method;
	uint32_t calib;
	uint32_t quantized, nodes;  /* nodes quantised of the float graph's */
	double prepare_s;           /* calibration and rewrite */
	struct suite_time fp32, q8; /* at 1 thread */
};

struct suite_opts {
	uint32_t threads[SUITE_MAX_THREADS];
	uint32_t n_threads;
	const char *models[SUITE_MAX_MODELS];
	uint32_t n_models;
	uint32_t warmup, loops, max_time_s, calib;
	bool int8, json;
	bool cpu_clock;  /* --clock cpu: 1-thread figures in CPU time */
};

struct suite_result {
	char cpu[512];
	ert_cpu_level level;
	uint32_t online;
	uint32_t cpus;          /* those this process may run on (affinity), <= online */
	double load_start, load_end;  /* 1-minute load average (-1: unknown) */
	double elapsed_s;
	struct bench_peak peak;
	struct bench_mem mem;
	struct suite_model models[SUITE_MAX_MODELS];
	uint32_t n_models;
	const char *class_model;      /* NULL: no per-class table */
	struct suite_class_row classes[SC_COUNT];
	struct suite_int8 int8;
};

extern const char *const suite_class_names[SC_COUNT];

/* The peak @threads threads can reach: the 1-thread peak, or the all-core peak scaled. */
double suite_peak_for(const struct suite_result *r, uint32_t threads);

void suite_print_text(const struct suite_opts *o, const struct suite_result *r);
void suite_print_json(const struct suite_opts *o, const struct suite_result *r);

#endif /* ERT_BENCH_SUITE_H */
