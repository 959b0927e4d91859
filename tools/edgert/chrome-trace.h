/* SPDX-License-Identifier: MIT */
/*
 * chrome-trace.h — writing the Chrome trace event format (JSON object form,
 * "traceEvents"), which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 * edgert profile --trace and edgert trace write it; docs/tracing.md
 * describes the tracks and the events.
 *
 * Times are nanoseconds on CLOCK_MONOTONIC, written as microseconds relative
 * to @t0_ns with nanosecond precision. The writer emits events in the order
 * it is given them: callers give them sorted by time, so that the file's
 * timestamps never go back (the tests check it).
 */
#ifndef ERT_CHROME_TRACE_H
#define ERT_CHROME_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ct_writer {
	FILE *f;          /* an open stream (a memory stream in the CLI); not owned */
	uint64_t t0_ns;   /* the time written as 0 */
	bool first;       /* no event written yet */
};

/* One argument of an event: a string (@s non-NULL) or else a number. */
struct ct_arg {
	const char *key;
	const char *s;
	double num;
};

void ct_begin(struct ct_writer *w, FILE *f, uint64_t t0_ns);
/* Ends the event list; returns false when the stream reported an error. */
bool ct_end(struct ct_writer *w);

/* Track names: the process, and a thread (or a synthetic track) with its sort order. */
void ct_process_name(struct ct_writer *w, uint32_t pid, const char *name);
void ct_thread_name(struct ct_writer *w, uint32_t pid, uint32_t tid, const char *name,
		    int sort_index);

/* A complete event (ph "X"): a span from @ts_ns lasting @dur_ns. */
void ct_span(struct ct_writer *w, uint32_t pid, uint32_t tid, const char *cat, const char *name,
	     uint64_t ts_ns, uint64_t dur_ns, const struct ct_arg *args, uint32_t n_args);
/* An instant event (ph "i", thread scope). */
void ct_instant(struct ct_writer *w, uint32_t pid, uint32_t tid, const char *cat,
		const char *name, uint64_t ts_ns, const struct ct_arg *args, uint32_t n_args);
/*
 * One end of a flow arrow (ph "s" at the start, "f" at the finish, bound to
 * the enclosing slice at that time on that track); the two ends share @id.
 */
void ct_flow(struct ct_writer *w, uint32_t pid, uint32_t tid, bool start, const char *cat,
	     const char *name, uint64_t id, uint64_t ts_ns);

/*
 * One end of an async span (ph "b" at @begin, else "e"): spans of one @cat
 * and @name that may overlap, told apart by @id; viewers draw them on a
 * track of the process named after @name.
 */
void ct_async(struct ct_writer *w, uint32_t pid, bool begin, const char *cat, const char *name,
	      uint64_t id, uint64_t ts_ns, const struct ct_arg *args, uint32_t n_args);

#endif /* ERT_CHROME_TRACE_H */
