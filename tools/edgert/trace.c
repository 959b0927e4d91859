/* SPDX-License-Identifier: MIT */
/*
 * edgert trace: run a model under the BPF tracer (bpf/tracer.h) and write
 * one timeline of the runtime's USDT probes and the enpu driver's
 * tracepoints (trace-timeline.c).
 */
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf/tracer.h"
#include "cli.h"
#include "commands.h"
#include "inputs.h"
#include "profile.h"
#include "trace.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define FALLBACK "edgert profile --trace FILE records the runtime's side without BPF"

static const char usage[] =
	"USAGE: edgert trace MODEL -o FILE.json [--loops N] [--warmup N] [--threads N]\n"
	"                    [--backend LIST]\n"
	"                    [--max-memory BYTES] [--memory LEVEL] [--precision LEVEL]\n"
	"\n"
	"Run a model on random inputs under a BPF program attached to the runtime's\n"
	"USDT probes and the enpu driver's tracepoints (and dma_fence/drm_sched where\n"
	"present), write one timeline as Chrome trace JSON (open it in\n"
	"ui.perfetto.dev or chrome://tracing) and print a summary: time per op type,\n"
	"NPU queue wait against engine time, copies, and the gaps where no backend\n"
	"was busy. Each op waits for its backend before the next starts, so an NPU\n"
	"job lies inside the op that submitted it. Needs root, or CAP_BPF and\n"
	"CAP_PERFMON, and a kernel with BTF (ERT_TRACE_BTF=FILE names another BTF);\n"
	"without them: edgert profile --trace FILE.\n"
	"\n"
	"OPTIONS:\n"
	"  -o, --output FILE   the trace to write (required)\n"
	"  -n, --loops N       runs to trace, 1..1000 (default 1)\n"
	"  -w, --warmup N      untraced runs first, 0..1000 (default 1; the plan made\n"
	"                      when the session is created is traced)\n"
	"  -t, --threads N     worker threads, 1..32 (default: one per CPU)\n"
	"  -b, --backend LIST  backends in order (cpu, opencl, vulkan, npu, auto)\n"
	CLI_HELP_SESSION_LEVELS
	"  -h, --help          show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo edgert trace mnv2-int8.ert --backend npu -o mnv2.json\n"
	"  sudo edgert trace r18.ert --loops 3 --threads 1 -o r18.json\n"
	"  edgert profile r18.ert --trace r18.json   # without privileges: userspace only\n";

struct trace_opts {
	const char *model, *output;
	uint32_t loops, warmup;
	ert_config cfg;
};

static int parse_args(int argc, char **argv, struct trace_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "loops", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		CLI_LONGOPT_THREADS,
		CLI_LONGOPT_BACKEND,
		CLI_LONGOPT_MAX_MEMORY,
		CLI_LONGOPT_MEMORY,
		CLI_LONGOPT_PRECISION,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:w:t:b:h", longopts, NULL)) != -1) {
		int r = cli_config_option("trace", c, optarg, &o->cfg);

		if (r < 0)
			return 1;
		if (r > 0)
			continue;
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'n':
			if (!cli_parse_int("trace", "--loops", optarg, 1, 1000, &v))
				return 1;
			o->loops = (uint32_t)v;
			break;
		case 'w':
			if (!cli_parse_int("trace", "--warmup", optarg, 0, 1000, &v))
				return 1;
			o->warmup = (uint32_t)v;
			break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("trace", argv, c);
		}
	}
	if (cli_model_operand("trace", argc, argv, &o->model))
		return 1;
	if (!o->output)
		return cli_error("trace", "missing -o FILE (the trace to write)");
	return 0;
}

/* Whether the effective capabilities allow loading BPF programs and perf events. */
static bool may_trace(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return geteuid() == 0;
#define HAS(cap) ((d[(cap) / 32].effective >> ((cap) % 32)) & 1)
	return HAS(CAP_SYS_ADMIN) || (HAS(CAP_BPF) && HAS(CAP_PERFMON));
#undef HAS
}

/* The kernel BTF that CO-RE relocations need: ERT_TRACE_BTF or the running kernel's. */
static const char *btf_path(void)
{
	const char *p = getenv("ERT_TRACE_BTF");

	return p && *p ? p : "/sys/kernel/btf/vmlinux";
}

static int collect(const struct ert_trace_event *e, void *user)
{
	struct trace_log *log = user;

	if (log->n == log->cap) {
		uint32_t cap = log->cap ? log->cap * 2 : 4096;
		struct ert_trace_event *ev = realloc(log->ev, (size_t)cap * sizeof(*ev));

		if (!ev) {
			log->oom = true;
			return -1;
		}
		log->ev = ev;
		log->cap = cap;
	}
	log->ev[log->n++] = *e;
	return 0;
}

/* Op callbacks make the session wait for each op's backend before op_end. */
static int after_op(const ert_op_info *op, void *user)
{
	return 0;
}

int ert_cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .loops = 1, .warmup = 1 };
	struct trace_log log = { 0 };
	struct tracer *tr = NULL;
	ert_model *model = NULL;
	ert_session *sess = NULL;
	char why[512], exe[4096], sources[160];
	uint32_t ops = 0, kept;
	ssize_t n;
	int ret;

	ert_config_init(&o.cfg);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = 1;
	if (!profile_check_output("trace", o.output))
		goto cleanup;
	if (!tracer_built()) {
		tracer_open(0, "", NULL, collect, &log, &tr, why, sizeof(why));
		cli_error("trace", "%s; %s", why, FALLBACK);
		goto cleanup;
	}
	if (!may_trace()) {
		cli_error("trace", "loading BPF programs needs root, or CAP_BPF and CAP_PERFMON; %s",
			  FALLBACK);
		goto cleanup;
	}
	if (access(btf_path(), R_OK) != 0) {
		cli_error("trace", "no kernel BTF at %s (%s): the BPF program cannot be relocated "
			  "for this kernel; %s", btf_path(), strerror(errno), FALLBACK);
		goto cleanup;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		cli_error("trace", "cannot find this program's file (/proc/self/exe): %s",
			  strerror(errno));
		goto cleanup;
	}
	exe[n] = '\0';
	if (!tracer_open(getpid(), exe, getenv("ERT_TRACE_BTF"), collect, &log, &tr, why,
			 sizeof(why))) {
		cli_error("trace", "%s; %s", why, FALLBACK);
		goto cleanup;
	}
	snprintf(sources, sizeof(sources), "%s", tracer_sources(tr));
	o.cfg.after_op = after_op;
	if (!cli_session_open("trace", o.model, &o.cfg, &model, &sess) ||
	    !cli_inputs_random("trace", sess, 0))
		goto cleanup;
	/* the warm-up runs' records are dropped: everything before them is the plan's */
	tracer_poll(tr);
	kept = log.n;
	for (uint32_t i = 0; i < o.warmup + o.loops; i++) {
		if (ert_session_run(sess) != ERT_OK) {
			cli_progress_done();
			cli_error("trace", "failed to run '%s': %s", o.model, ert_session_error(sess));
			goto cleanup;
		}
		tracer_poll(tr);
		if (i + 1 == o.warmup)
			log.n = kept;
		cli_progress("trace", "run", i + 1, o.warmup + o.loops);
	}
	cli_progress_done();
	tracer_poll(tr);
	log.dropped = tracer_dropped(tr);
	tracer_close(tr);
	tr = NULL;
	if (log.oom) {
		cli_error("trace", "out of memory");
		goto cleanup;
	}
	for (uint32_t i = 0; i < log.n; i++)
		ops += log.ev[i].kind == TK_OP_START;
	if (!ops) {
		cli_error("trace", "no op probe fired: this edgert has no USDT probes "
			  "(built without <sys/sdt.h>?); %s", FALLBACK);
		goto cleanup;
	}
	snprintf(why, sizeof(why), "traced %u run%s of %s (%s) -> %s", o.loops,
		 o.loops == 1 ? "" : "s", o.model, sources, o.output);
	if (!trace_report(o.output, o.model, (uint32_t)getpid(), &log, stdout, why))
		goto cleanup;
	ret = 0;
cleanup:
	tracer_close(tr);
	free(log.ev);
	ert_session_destroy(sess);
	ert_model_unref(model);
	return ret;
}
