/* SPDX-License-Identifier: MIT */
/*
 * trace.h — edgert trace: the records collected by the BPF tracer
 * (bpf/tracer.h) during the runs, turned into one Chrome trace timeline and
 * a summary by trace-timeline.c. docs/tracing.md describes both.
 */
#ifndef ERT_TRACE_H
#define ERT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/trace-event.h"

struct trace_log {
	struct ert_trace_event *ev;
	uint32_t n, cap;
	bool oom;
	uint64_t dropped;   /* records the BPF side lost */
};

/*
 * Sort @log by time, write its timeline to @path as Chrome trace JSON
 * (process @pid named @model), then print @headline and the summary to
 * @summary. Prints
 * the error as "trace" and returns false when the file cannot be written.
 */
bool trace_report(const char *path, const char *model, uint32_t pid, struct trace_log *log,
		  FILE *summary, const char *headline);

#endif /* ERT_TRACE_H */
