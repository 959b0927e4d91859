/* SPDX-License-Identifier: MIT */
/* edgert trace's collector with libbpf (see tracer.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "trace.skel.h"
#include "tracer.h"

#define MAX_LINKS 32

struct tracer {
	struct trace_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[MAX_LINKS];
	uint32_t n_links;
	tracer_sink sink;
	void *user;
	bool enpu;
	char sources[160];
};

/* libbpf's last warning, for the one-line error; everything with ERT_TRACE_DEBUG=1 */
static char last_msg[256];

static int libbpf_msg(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int debug = -1;
	va_list copy;

	if (debug < 0) {
		const char *d = getenv("ERT_TRACE_DEBUG");

		debug = d && *d && strcmp(d, "0");
	}
	if (debug) {
		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level == LIBBPF_WARN) {
		size_t n;

		vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
		n = strlen(last_msg);
		while (n && (last_msg[n - 1] == '\n' || last_msg[n - 1] == ' '))
			last_msg[--n] = '\0';
	}
	return 0;
}

bool tracer_built(void)
{
	return true;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	if (size < sizeof(struct ert_trace_event))
		return 0;
	return t->sink(data, t->user);
}

static bool add_link(struct tracer *t, struct bpf_link *l)
{
	if (!l)
		return false;
	if (t->n_links == MAX_LINKS) {
		bpf_link__destroy(l);
		return false;
	}
	t->links[t->n_links++] = l;
	return true;
}

/* Attach a group of tracepoint programs; all or none. */
static bool attach_group(struct tracer *t, const char *group, struct bpf_program **progs,
			 const char *const *names, uint32_t n)
{
	uint32_t first = t->n_links;

	for (uint32_t i = 0; i < n; i++) {
		if (!add_link(t, bpf_program__attach_tracepoint(progs[i], group, names[i]))) {
			while (t->n_links > first)
				bpf_link__destroy(t->links[--t->n_links]);
			return false;
		}
	}
	return true;
}

bool tracer_open(pid_t pid, const char *exe, const char *btf, tracer_sink sink, void *user,
		 struct tracer **out, char *why, size_t why_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);
	struct tracer *t = calloc(1, sizeof(*t));
	uint32_t n_usdt = 0;
	int err;

	libbpf_set_print(libbpf_msg);
	last_msg[0] = '\0';
	if (!t) {
		snprintf(why, why_size, "out of memory");
		return false;
	}
	t->sink = sink;
	t->user = user;
	t->skel = trace_bpf__open_opts(&opts);
	if (!t->skel) {
		snprintf(why, why_size, "failed to open the BPF program: %s",
			 last_msg[0] ? last_msg : strerror(errno));
		goto error;
	}
	t->skel->rodata->target_tgid = (uint32_t)pid;
	err = trace_bpf__load(t->skel);
	if (err) {
		snprintf(why, why_size, "failed to load the BPF program: %s",
			 last_msg[0] ? last_msg : strerror(-err));
		goto error;
	}

	struct {
		struct bpf_program *prog;
		const char *probe;
	} usdt[] = {
		{ t->skel->progs.plan_start, "plan_start" },
		{ t->skel->progs.plan_end, "plan_end" },
		{ t->skel->progs.run_start, "run_start" },
		{ t->skel->progs.run_end, "run_end" },
		{ t->skel->progs.op_start, "op_start" },
		{ t->skel->progs.op_end, "op_end" },
		{ t->skel->progs.split, "split" },
		{ t->skel->progs.copy, "copy" },
		{ t->skel->progs.npu_submit, "npu_submit" },
		{ t->skel->progs.npu_wait_start, "npu_wait_start" },
		{ t->skel->progs.npu_wait_end, "npu_wait_end" },
		{ t->skel->progs.gpu_submit, "gpu_submit" },
		{ t->skel->progs.gpu_wait_start, "gpu_wait_start" },
		{ t->skel->progs.gpu_wait_end, "gpu_wait_end" },
	};
	for (size_t i = 0; i < sizeof(usdt) / sizeof(usdt[0]); i++) {
		struct bpf_link *l = bpf_program__attach_usdt(usdt[i].prog, pid, exe, "edgert",
							      usdt[i].probe, NULL);

		/* a build without a backend lacks its probes (edgert-static: no OpenCL) */
		if (!l && errno == ENOENT && strncmp(usdt[i].probe, "op_", 3) &&
		    strncmp(usdt[i].probe, "run_", 4))
			continue;
		if (!l) {
			snprintf(why, why_size, "failed to attach to USDT probe edgert:%s in '%s': %s",
				 usdt[i].probe, exe, last_msg[0] ? last_msg : strerror(errno));
			goto error;
		}
		add_link(t, l);
		n_usdt++;
	}
	snprintf(t->sources, sizeof(t->sources), "%u USDT probes", n_usdt);

	struct bpf_program *enpu[] = { t->skel->progs.enpu_job_submit, t->skel->progs.enpu_job_start,
				       t->skel->progs.enpu_job_done };
	static const char *const enpu_names[] = { "enpu_job_submit", "enpu_job_start",
						  "enpu_job_done" };
	struct bpf_program *fence[] = { t->skel->progs.dma_fence_signaled };
	static const char *const fence_names[] = { "dma_fence_signaled" };
	struct bpf_program *sched[] = { t->skel->progs.drm_run_job };
	static const char *const sched_names[] = { "drm_run_job" };
	size_t len = strlen(t->sources);

	t->enpu = attach_group(t, "enpu", enpu, enpu_names, 3);
	len += snprintf(t->sources + len, sizeof(t->sources) - len, "%s",
			t->enpu ? ", enpu tracepoints" : ", no enpu tracepoints (enpu.ko not loaded?)");
	if (attach_group(t, "dma_fence", fence, fence_names, 1) && len < sizeof(t->sources))
		len += snprintf(t->sources + len, sizeof(t->sources) - len, ", dma_fence");
	if (attach_group(t, "gpu_scheduler", sched, sched_names, 1) && len < sizeof(t->sources))
		snprintf(t->sources + len, sizeof(t->sources) - len, ", drm_sched");

	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_record, t, NULL);
	if (!t->rb) {
		snprintf(why, why_size, "failed to open the BPF ring buffer: %s", strerror(errno));
		goto error;
	}
	*out = t;
	return true;
error:
	tracer_close(t);
	return false;
}

const char *tracer_sources(const struct tracer *t)
{
	return t->sources;
}

bool tracer_has_enpu(const struct tracer *t)
{
	return t->enpu;
}

bool tracer_poll(struct tracer *t)
{
	return ring_buffer__consume(t->rb) >= 0;
}

uint64_t tracer_dropped(const struct tracer *t)
{
	uint64_t n = 0;
	uint32_t k = 0;

	if (bpf_map__lookup_elem(t->skel->maps.dropped, &k, sizeof(k), &n, sizeof(n), 0))
		return 0;
	return n;
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	while (t->n_links)
		bpf_link__destroy(t->links[--t->n_links]);
	trace_bpf__destroy(t->skel);
	free(t);
}
