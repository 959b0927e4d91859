/* SPDX-License-Identifier: MIT */
/* Chrome trace event JSON (see chrome-trace.h). */
#include <inttypes.h>
#include <math.h>

#include "chrome-trace.h"
#include "cli.h"

void ct_begin(struct ct_writer *w, FILE *f, uint64_t t0_ns)
{
	w->f = f;
	w->t0_ns = t0_ns;
	w->first = true;
	fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", f);
}

bool ct_end(struct ct_writer *w)
{
	fputs("\n]}\n", w->f);
	return !ferror(w->f);
}

static void head(struct ct_writer *w, const char *ph, uint32_t pid, uint32_t tid)
{
	fprintf(w->f, "%s\n{\"ph\": \"%s\", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32, w->first ? "" : ",",
		ph, pid, tid);
	w->first = false;
}

/* Microseconds since t0, exact to the nanosecond; times before t0 clamp to 0. */
static void put_us(FILE *f, const char *key, uint64_t ns, uint64_t t0)
{
	uint64_t d = ns > t0 ? ns - t0 : 0;

	fprintf(f, ", \"%s\": %" PRIu64 ".%03u", key, d / 1000, (unsigned)(d % 1000));
}

static void put_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, ", \"%s\": ", key);
	cli_json_string(f, s ? s : "");
}

static void put_args(FILE *f, const struct ct_arg *args, uint32_t n)
{
	if (!n)
		return;
	fputs(", \"args\": {", f);
	for (uint32_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		cli_json_string(f, args[i].key);
		fputs(": ", f);
		if (args[i].s)
			cli_json_string(f, args[i].s);
		else if (isfinite(args[i].num) && args[i].num == (double)(int64_t)args[i].num)
			fprintf(f, "%" PRId64, (int64_t)args[i].num);
		else if (isfinite(args[i].num))
			fprintf(f, "%.6g", args[i].num);
		else
			fputs("null", f);
	}
	fputc('}', f);
}

void ct_process_name(struct ct_writer *w, uint32_t pid, const char *name)
{
	head(w, "M", pid, 0);
	fputs(", \"name\": \"process_name\", \"args\": {\"name\": ", w->f);
	cli_json_string(w->f, name);
	fputs("}}", w->f);
}

void ct_thread_name(struct ct_writer *w, uint32_t pid, uint32_t tid, const char *name,
		    int sort_index)
{
	head(w, "M", pid, tid);
	fputs(", \"name\": \"thread_name\", \"args\": {\"name\": ", w->f);
	cli_json_string(w->f, name);
	fputs("}}", w->f);
	head(w, "M", pid, tid);
	fprintf(w->f, ", \"name\": \"thread_sort_index\", \"args\": {\"sort_index\": %d}}", sort_index);
}

void ct_span(struct ct_writer *w, uint32_t pid, uint32_t tid, const char *cat, const char *name,
	     uint64_t ts_ns, uint64_t dur_ns, const struct ct_arg *args, uint32_t n_args)
{
	head(w, "X", pid, tid);
	put_str(w->f, "cat", cat);
	put_str(w->f, "name", name);
	put_us(w->f, "ts", ts_ns, w->t0_ns);
	fprintf(w->f, ", \"dur\": %" PRIu64 ".%03u", dur_ns / 1000, (unsigned)(dur_ns % 1000));
	put_args(w->f, args, n_args);
	fputc('}', w->f);
}

void ct_instant(struct ct_writer *w, uint32_t pid, uint32_t tid, const char *cat,
		const char *name, uint64_t ts_ns, const struct ct_arg *args, uint32_t n_args)
{
	head(w, "i", pid, tid);
	fputs(", \"s\": \"t\"", w->f);
	put_str(w->f, "cat", cat);
	put_str(w->f, "name", name);
	put_us(w->f, "ts", ts_ns, w->t0_ns);
	put_args(w->f, args, n_args);
	fputc('}', w->f);
}

void ct_flow(struct ct_writer *w, uint32_t pid, uint32_t tid, bool start, const char *cat,
	     const char *name, uint64_t id, uint64_t ts_ns)
{
	head(w, start ? "s" : "f", pid, tid);
	put_str(w->f, "cat", cat);
	put_str(w->f, "name", name);
	fprintf(w->f, ", \"id\": %" PRIu64, id);
	if (!start)
		fputs(", \"bp\": \"e\"", w->f);
	put_us(w->f, "ts", ts_ns, w->t0_ns);
	fputc('}', w->f);
}

void ct_async(struct ct_writer *w, uint32_t pid, bool begin, const char *cat, const char *name,
	      uint64_t id, uint64_t ts_ns, const struct ct_arg *args, uint32_t n_args)
{
	head(w, begin ? "b" : "e", pid, 0);
	put_str(w->f, "cat", cat);
	put_str(w->f, "name", name);
	fprintf(w->f, ", \"id\": %" PRIu64, id);
	put_us(w->f, "ts", ts_ns, w->t0_ns);
	put_args(w->f, args, n_args);
	fputc('}', w->f);
}
