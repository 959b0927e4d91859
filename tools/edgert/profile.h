/* SPDX-License-Identifier: MIT */
/*
 * profile.h — edgert profile's measurements, shared by profile.c (the runs,
 * the table) and profile-out.c (the --trace and --svg files).
 */
#ifndef ERT_PROFILE_H
#define ERT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * An op's time: the device's own measure where its backend gives one
 * (ert_op_info.device_timed: GPU timestamps), else the host's, between the
 * before and after op callbacks (which include queueing, submitting and
 * waiting).
 */
struct op_stat {
	char *name, *type, *backend, *kernel;
	double total_ms;     /* device_ms when every timed call had a device time, else host_ms */
	double host_ms, device_ms;
	uint32_t calls, device_calls;
};

static inline bool op_stat_device(const struct op_stat *s)
{
	return s->calls && s->device_calls == s->calls;
}

/* One op of one timed run, for --trace: CLOCK_MONOTONIC nanoseconds. */
struct prof_event {
	uint32_t op;       /* execution index (ert_op_info.index) */
	uint64_t t0, t1;
	bool device;       /* device_ns is the device's measure */
	uint64_t device_ns;
};

struct profiler {
	struct op_stat *ops; /* by execution index */
	uint32_t n, cap;
	double t_start;
	bool measuring;      /* false during the warm-up run */
	bool oom;
	/* --trace: every op of every timed run, and the runs' bounds */
	bool record;
	uint64_t op_t0;
	struct prof_event *ev;
	uint32_t n_ev, cap_ev;
	uint64_t *run_t0, *run_t1; /* [loops] */
	uint32_t tid;              /* the thread that ran the session */
	uint32_t n_device;         /* ops timed by their device */
};

uint64_t profile_now_ns(void);

/*
 * Before anything runs: false (with the error printed) when @path names a
 * directory or its directory cannot be written, so that a bad --trace or
 * --svg fails at once and leaves every other output unwritten.
 */
bool profile_check_output(const char *cmd, const char *path);
/*
 * Close the memory stream @f (which filled *@buf, *@len) and write what it
 * holds to @path atomically; frees the buffer. Prints the error as @cmd and
 * returns false.
 */
bool profile_write_stream(const char *cmd, const char *path, FILE *f, char **buf, size_t *len);

/*
 * Write the timed runs as a Chrome trace (one track: the thread that ran
 * the session; a span per run, a span per op inside it) to @path. @p->ops
 * must still be in execution order. Prints the error and returns false.
 */
bool profile_write_trace(const char *path, const char *model, const struct profiler *p,
			 uint32_t loops);
/*
 * Write the bar chart of @p's mean per-op times (total_ms already divided
 * by the runs; any order) to @path. Prints the error and returns false.
 */
bool profile_write_svg(const char *path, const char *model, const struct profiler *p,
		       double total_ms, uint32_t loops);

#endif /* ERT_PROFILE_H */
