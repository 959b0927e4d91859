/* SPDX-License-Identifier: MIT */
/* edgert bench: time a model's runs; min, median, max and peak memory. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "commands.h"
#include "create-times.h"
#include "inputs.h"

static const char usage[] =
	"USAGE: edgert bench MODEL [--threads N] [--warmup N] [--loops N] [--json]\n"
	"                    [--backend LIST] [--max-memory BYTES]\n"
	"                    [--memory LEVEL] [--precision LEVEL]\n"
	"                    [--cache FILE] [--tune MODE] [--sessions N]\n"
	"       edgert bench --suite [...]   (see 'edgert bench --suite --help')\n"
	"\n"
	"Time ert_session_create() (planning, kernels prepared) once, by phase, then\n"
	"ert_session_run() on seeded random inputs: after the warm-up runs,\n"
	"report the minimum, median and maximum of the timed runs in milliseconds\n"
	"the peak bytes of the session's memory plan and the process's peak\n"
	"resident memory (getrusage ru_maxrss: model pages read, decoded weights,\n"
	"packed weights, arenas).\n"
	"\n"
	"OPTIONS:\n"
	"  -t, --threads N     worker threads, 1..32 (default: one per CPU)\n"
	"  -w, --warmup N      untimed runs first, 0..10000 (default 3)\n"
	"  -n, --loops N       timed runs, 1..100000 (default 20)\n"
	"  -b, --backend LIST  backends in order (cpu, opencl, vulkan, npu, auto)\n"
	"  -j, --json          one JSON object: create_ms, min_ms, median_ms, max_ms,\n"
	"                      peak_bytes, copied_bytes (most bytes one run copied\n"
	"                      between backends), max_rss_bytes, loops, threads,\n"
	"                      create_phases (ms by phase, the counts)\n"
	"      --cache FILE    ert_config.cache_path: where GPU backends keep\n"
	"                      prepared kernels between runs (OpenCL: program\n"
	"                      binaries; Vulkan: the pipeline cache; both: tuned\n"
	"                      launches); compare create with a cold and a warm file\n"
	"      --sessions N    create N sessions of the model in turn, 1..16\n"
	"                      (default 1), each kept open while the next is\n"
	"                      created: the later ones share what the process\n"
	"                      holds (OpenCL: the context, built programs and\n"
	"                      uploaded weights; Vulkan: the device and queue,\n"
	"                      pipelines and uploaded weights) and find the\n"
	"                      cache file warm; each creation is printed with\n"
	"                      what it took from the others (JSON:\n"
	"                      create_next_ms, create_next_phases); runs are\n"
	"                      timed on the first\n"
	CLI_HELP_SESSION_LEVELS
	CLI_HELP_TUNE
	"  -h, --help          show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert bench mnv2.ert\n"
	"  edgert bench r50.ert --threads 1 --loops 100\n"
	"  edgert bench r50.ert --backend opencl --cache r50.cache --sessions 2\n"
	"  edgert bench vit.ert --json > vit.json\n"
	"  edgert bench r50-w8.ert --memory low  # quantised weights, int8 kernels\n"
	"  edgert bench --suite              # peak, bandwidth and the zoo models\n";

struct bench_opts {
	const char *model;
	uint32_t warmup, loops, sessions;
	bool json;
	ert_config cfg;
};

enum { OPT_SESSIONS = CLI_OPT_LOCAL };

#define MAX_SESSIONS 16

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		CLI_LONGOPT_THREADS,
		{ "warmup", required_argument, NULL, 'w' },
		{ "loops", required_argument, NULL, 'n' },
		CLI_LONGOPT_BACKEND,
		{ "json", no_argument, NULL, 'j' },
		CLI_LONGOPT_MAX_MEMORY,
		CLI_LONGOPT_MEMORY,
		CLI_LONGOPT_PRECISION,
		CLI_LONGOPT_CACHE,
		CLI_LONGOPT_TUNE,
		{ "sessions", required_argument, NULL, OPT_SESSIONS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:w:n:b:jh", longopts, NULL)) != -1) {
		int r = cli_config_option("bench", c, optarg, &o->cfg);

		if (r < 0)
			return 1;
		if (r > 0)
			continue;
		switch (c) {
		case 'w':
			if (!cli_parse_int("bench", "--warmup", optarg, 0, 10000, &v))
				return 1;
			o->warmup = (uint32_t)v;
			break;
		case 'n':
			if (!cli_parse_int("bench", "--loops", optarg, 1, 100000, &v))
				return 1;
			o->loops = (uint32_t)v;
			break;
		case 'j': o->json = true; break;
		case OPT_SESSIONS:
			if (!cli_parse_int("bench", "--sessions", optarg, 1, MAX_SESSIONS, &v))
				return 1;
			o->sessions = (uint32_t)v;
			break;
		case 'h': fputs(usage, stdout); return -1;
		default: return cli_getopt_error("bench", argv, c);
		}
	}
	return cli_model_operand("bench", argc, argv, &o->model);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int ert_cmd_bench(int argc, char **argv)
{
	struct bench_opts o = { .warmup = 3, .loops = 20, .sessions = 1 };
	ert_model *model = NULL;
	ert_session *sess = NULL, *more[MAX_SESSIONS] = { NULL };
	double *times = NULL, median, t_create, t_more[MAX_SESSIONS] = { 0 };
	uint64_t copied = 0, rss = 0;
	struct rusage ru;
	size_t peak;
	int ret;

	/* the suite has options of its own (and no model) */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--suite") == 0)
			return ert_cmd_bench_suite(argc, argv);
	ert_config_init(&o.cfg);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = 1;
	times = calloc(o.loops, sizeof(*times));
	if (!times) {
		cli_error("bench", "out of memory");
		goto cleanup;
	}
	if (!cli_load_model("bench", o.model, &model))
		goto cleanup;
	t_create = cli_now_ms();
	if (ert_session_create(model, &o.cfg, &sess) != ERT_OK) {
		cli_error("bench", "%s", ert_last_error());
		goto cleanup;
	}
	t_create = cli_now_ms() - t_create;
	/* the later sessions, while the earlier ones stay open */
	for (uint32_t k = 1; k < o.sessions; k++) {
		double t0 = cli_now_ms();

		if (ert_session_create(model, &o.cfg, &more[k]) != ERT_OK) {
			cli_error("bench", "session %u: %s", k + 1, ert_last_error());
			goto cleanup;
		}
		t_more[k] = cli_now_ms() - t0;
	}
	if (!cli_inputs_random("bench", sess, 0))
		goto cleanup;
	for (uint32_t i = 0; i < o.warmup + o.loops; i++) {
		double t0 = cli_now_ms();

		if (ert_session_run(sess) != ERT_OK) {
			cli_progress_done();
			cli_error("bench", "failed to run '%s': %s", o.model, ert_session_error(sess));
			goto cleanup;
		}
		if (i >= o.warmup)
			times[i - o.warmup] = cli_now_ms() - t0;
		if (ert_session_copied_bytes(sess) > copied)
			copied = ert_session_copied_bytes(sess);
		cli_progress("bench", i < o.warmup ? "warm-up" : "run", i + 1, o.warmup + o.loops);
	}
	cli_progress_done();
	qsort(times, o.loops, sizeof(*times), cmp_double);
	median = o.loops % 2 ? times[o.loops / 2]
			     : (times[o.loops / 2 - 1] + times[o.loops / 2]) / 2;
	peak = ert_session_peak_bytes(sess);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		rss = (uint64_t)ru.ru_maxrss * 1024;  /* Linux reports KiB */
	if (o.json) {
		printf("{\"model\": ");
		cli_json_string(stdout, o.model);
		printf(", \"create_ms\": %.4f, \"create_phases\": ", t_create);
		cli_create_times_json(stdout, sess);
		if (o.sessions > 1) {
			printf(", \"create_next_ms\": [");
			for (uint32_t k = 1; k < o.sessions; k++)
				printf("%s%.4f", k > 1 ? ", " : "", t_more[k]);
			printf("], \"create_next_phases\": [");
			for (uint32_t k = 1; k < o.sessions; k++) {
				printf("%s", k > 1 ? ", " : "");
				cli_create_times_json(stdout, more[k]);
			}
			printf("]");
		}
		printf(", \"threads\": %u, \"loops\": %u, \"warmup\": %u, \"min_ms\": %.4f, "
		       "\"median_ms\": %.4f, \"max_ms\": %.4f, \"peak_bytes\": %zu, "
		       "\"copied_bytes\": %llu, \"max_rss_bytes\": %llu}\n",
		       cli_thread_count(&o.cfg), o.loops, o.warmup, times[0], median,
		       times[o.loops - 1], peak, (unsigned long long)copied, (unsigned long long)rss);
	} else {
		printf("model    %s\n", o.model);
		printf("threads  %u\n", cli_thread_count(&o.cfg));
		printf("create   %.3f ms (ert_session_create)\n", t_create);
		cli_create_times_print(stdout, sess);
		for (uint32_t k = 1; k < o.sessions; k++) {
			printf("create   %.3f ms (session %u, the earlier ones open)\n", t_more[k],
			       k + 1);
			cli_create_times_print(stdout, more[k]);
		}
		printf("runs     %u (after %u warm-up)\n", o.loops, o.warmup);
		printf("min      %.3f ms\nmedian   %.3f ms\nmax      %.3f ms\n", times[0], median,
		       times[o.loops - 1]);
		printf("peak     %.2f MiB (%zu bytes)\n", (double)peak / (1024.0 * 1024.0), peak);
		printf("copied   %llu bytes per run between backends (most of any run)\n",
		       (unsigned long long)copied);
		printf("rss      %.2f MiB peak resident memory of the process\n",
		       (double)rss / (1024.0 * 1024.0));
	}
	ret = 0;
cleanup:
	for (uint32_t k = MAX_SESSIONS; k-- > 1;)
		ert_session_destroy(more[k]);
	ert_session_destroy(sess);
	ert_model_unref(model);
	free(times);
	return ret;
}
