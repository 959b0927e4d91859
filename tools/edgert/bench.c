/* SPDX-License-Identifier: MIT */
/* edgert bench: time a model's runs; min, median, max and peak memory. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "commands.h"
#include "inputs.h"

static const char usage[] =
	"USAGE: edgert bench MODEL [--threads N] [--warmup N] [--loops N] [--json]\n"
	"                    [--backend LIST] [--max-memory BYTES]\n"
	"                    [--memory LEVEL] [--precision LEVEL]\n"
	"                    [--cache FILE] [--tune MODE]\n"
	"       edgert bench --suite [...]   (see 'edgert bench --suite --help')\n"
	"\n"
	"Time ert_session_create() (planning, kernels prepared) once, then\n"
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
	"                      between backends), max_rss_bytes, loops, threads\n"
	"      --cache FILE    ert_config.cache_path: where GPU backends keep\n"
	"                      prepared kernels between runs (OpenCL: program\n"
	"                      binaries); compare create with a cold and a warm file\n"
	CLI_HELP_SESSION_LEVELS
	CLI_HELP_TUNE
	"  -h, --help          show this help\n"
	"\n"
	"EXAMPLES:\n"
	"  edgert bench mnv2.ert\n"
	"  edgert bench r50.ert --threads 1 --loops 100\n"
	"  edgert bench vit.ert --json > vit.json\n"
	"  edgert bench r50-w8.ert --memory low  # quantised weights, int8 kernels\n"
	"  edgert bench --suite              # peak, bandwidth and the zoo models\n";

struct bench_opts {
	const char *model;
	uint32_t warmup, loops;
	bool json;
	ert_config cfg;
};

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
	struct bench_opts o = { .warmup = 3, .loops = 20 };
	ert_model *model = NULL;
	ert_session *sess = NULL;
	double *times = NULL, median, t_create;
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
		printf(", \"create_ms\": %.4f", t_create);
		printf(", \"threads\": %u, \"loops\": %u, \"warmup\": %u, \"min_ms\": %.4f, "
		       "\"median_ms\": %.4f, \"max_ms\": %.4f, \"peak_bytes\": %zu, "
		       "\"copied_bytes\": %llu, \"max_rss_bytes\": %llu}\n",
		       cli_thread_count(&o.cfg), o.loops, o.warmup, times[0], median,
		       times[o.loops - 1], peak, (unsigned long long)copied, (unsigned long long)rss);
	} else {
		printf("model    %s\n", o.model);
		printf("threads  %u\n", cli_thread_count(&o.cfg));
		printf("create   %.3f ms (ert_session_create)\n", t_create);
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
	ert_session_destroy(sess);
	ert_model_unref(model);
	free(times);
	return ret;
}
