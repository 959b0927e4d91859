/* SPDX-License-Identifier: MIT */
/* edgert profile --trace and --svg: the files (see profile.h). */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "chart-svg.h"
#include "chrome-trace.h"
#include "cli.h"
#include "ert-file.h"
#include "profile.h"

/* The track of the ops' device times (a synthetic thread id no Linux thread has). */
#define DEVICE_TID 0x7ffffff0u

uint64_t profile_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool profile_check_output(const char *cmd, const char *path)
{
	char dir[4096];
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return cli_error(cmd, "failed to write '%s': it is a directory", path), false;
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return cli_error(cmd, "failed to write '%s': the path is too long", path), false;
	if (access(dirname(dir), W_OK | X_OK) != 0)
		return cli_error(cmd, "failed to write '%s': %s", path, strerror(errno)), false;
	return true;
}

bool profile_write_stream(const char *cmd, const char *path, FILE *f, char **buf, size_t *len)
{
	struct ert_err err = { "" };
	bool ok = !ferror(f);

	if (fclose(f) != 0)
		ok = false;
	if (!ok) {
		free(*buf);
		return cli_error(cmd, "failed to write '%s': out of memory", path), false;
	}
	struct iovec iov = { .iov_base = *buf, .iov_len = *len };

	if (ert_file_write_atomic(path, &iov, 1, &err) != ERT_OK) {
		free(*buf);
		return cli_error(cmd, "failed to write '%s': %s", path, err.msg), false;
	}
	free(*buf);
	return true;
}

bool profile_write_trace(const char *path, const char *model, const struct profiler *p,
			 uint32_t loops)
{
	uint32_t pid = (uint32_t)getpid();
	struct ct_writer w;
	char *buf = NULL, name[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint32_t e = 0;

	if (!f)
		return cli_error("profile", "failed to write '%s': out of memory", path), false;
	ct_begin(&w, f, loops ? p->run_t0[0] : 0);
	ct_process_name(&w, pid, model);
	snprintf(name, sizeof(name), "edgert (thread %u)", p->tid);
	ct_thread_name(&w, pid, p->tid, name, 0);
	if (p->n_device)
		ct_thread_name(&w, pid, DEVICE_TID, "device time (timestamps; ends where the op's span ends)", 1);
	/* events are stored in time order: runs in order, each run's ops in order */
	for (uint32_t r = 0; r < loops; r++) {
		struct ct_arg rargs[] = { { .key = "run", .num = r + 1 } };

		ct_span(&w, pid, p->tid, "run", "run", p->run_t0[r], p->run_t1[r] - p->run_t0[r],
			rargs, 1);
		for (; e < p->n_ev && p->ev[e].t1 <= p->run_t1[r]; e++) {
			const struct prof_event *ev = &p->ev[e];
			const struct op_stat *s = &p->ops[ev->op];
			struct ct_arg args[] = {
				{ .key = "index", .num = ev->op },
				{ .key = "name", .s = s->name },
				{ .key = "backend", .s = s->backend },
				{ .key = "kernel", .s = s->kernel },
				{ .key = "run", .num = r + 1 },
			};

			ct_span(&w, pid, p->tid, "op", s->type, ev->t0, ev->t1 - ev->t0, args, 5);
			if (ev->device) {
				/*
				 * The device's clock is not the host's: its span is
				 * drawn to end where the host saw the op end (the
				 * wait returned), within the op's span.
				 */
				uint64_t d = ev->device_ns < ev->t1 - ev->t0 ? ev->device_ns
									 : ev->t1 - ev->t0;
				struct ct_arg dargs[] = {
					{ .key = "index", .num = ev->op },
					{ .key = "name", .s = s->name },
					{ .key = "backend", .s = s->backend },
					{ .key = "device_ms", .num = (double)ev->device_ns / 1e6 },
					{ .key = "run", .num = r + 1 },
				};

				ct_span(&w, pid, DEVICE_TID, "device", s->type, ev->t1 - d, d, dargs, 5);
			}
		}
	}
	ct_end(&w);
	return profile_write_stream("profile", path, f, &buf, &len);
}

bool profile_write_svg(const char *path, const char *model, const struct profiler *p,
		       double total_ms, uint32_t loops)
{
	struct chart_bar *bars = calloc(p->n ? p->n : 1, sizeof(*bars));
	const struct op_stat *slow = NULL;
	struct chart_op slowest;
	char *buf = NULL, title[512];
	size_t len = 0;
	uint32_t nb = 0;
	FILE *f;

	if (!bars)
		return cli_error("profile", "failed to write '%s': out of memory", path), false;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct op_stat *s = &p->ops[i];
		uint32_t b = 0;

		while (b < nb && (strcmp(bars[b].type, s->type) || strcmp(bars[b].backend, s->backend)))
			b++;
		if (b == nb)
			bars[nb++] = (struct chart_bar){ .type = s->type, .backend = s->backend };
		bars[b].ms += s->total_ms;
		bars[b].ops++;
		if (!slow || s->total_ms > slow->total_ms)
			slow = s;
	}
	if (slow)
		slowest = (struct chart_op){ slow->name, slow->type, slow->backend, slow->total_ms };
	snprintf(title, sizeof(title), "edgert profile %s: %u ops, mean of %u runs", model, p->n,
		 loops);
	f = open_memstream(&buf, &len);
	if (!f) {
		free(bars);
		return cli_error("profile", "failed to write '%s': out of memory", path), false;
	}
	chart_svg_write(f, title, bars, nb, total_ms, slow ? &slowest : NULL);
	free(bars);
	return profile_write_stream("profile", path, f, &buf, &len);
}
