/* SPDX-License-Identifier: MIT */
/*
 * cli.h — helpers shared by the edgert subcommands: messages, strict number
 * parsing, getopt error reporting, backend lists, model loading, timing,
 * terminal progress and a seeded PRNG.
 *
 * Every user error is reported as one line on stderr, "edgert <cmd>: <what>",
 * and the subcommand returns 1.
 */
#ifndef ERT_CLI_H
#define ERT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ert-file.h"
#include "ert-graph.h"

/* Print "edgert @cmd: <message>" on stderr; returns 1 (the user-error exit code). */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, prefixed "warning: ", returns nothing. */
void cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Parse @arg as a decimal integer in [@lo, @hi] (digits only, optional leading
 * '-' when @lo < 0). On failure prints "edgert cmd: OPT must be LO..HI, got 'ARG'"
 * and returns false.
 */
bool cli_parse_int(const char *cmd, const char *opt, const char *arg, long long lo,
		   long long hi, long long *out);
bool cli_parse_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out);

/*
 * Parse a byte count for @opt: decimal digits with an optional suffix K, M, G
 * or T (powers of 1024, either case), below 2^64. Prints an error and returns
 * false otherwise.
 */
bool cli_parse_bytes(const char *cmd, const char *opt, const char *arg, uint64_t *out);

/* Parse "low", "normal" or "high" for @opt (ert_level); error and false otherwise. */
bool cli_parse_level(const char *cmd, const char *opt, const char *arg, ert_level *out);

/* Parse "none", "fast", "normal" or "wide" for @opt (ert_tune); error and false otherwise. */
bool cli_parse_tune(const char *cmd, const char *opt, const char *arg, ert_tune *out);

/*
 * The options that fill an ert_config, shared by the subcommands that create
 * sessions (run, bench, profile, trace, diff): -t/--threads, -b/--backend and
 * the long options below. A subcommand lists the ones it accepts in its
 * getopt_long table with the CLI_LONGOPT_* entries, numbers its own long
 * options from CLI_OPT_LOCAL, and offers every option to cli_config_option()
 * before its own switch.
 */
enum {
	CLI_OPT_MAX_MEMORY = 0x100,
	CLI_OPT_MEMORY,
	CLI_OPT_PRECISION,
	CLI_OPT_CACHE,
	CLI_OPT_TUNE,
	CLI_OPT_FP16_GUARD,
	CLI_OPT_LOCAL, /* a subcommand's own long options start here */
};
#define CLI_LONGOPT_THREADS { "threads", required_argument, NULL, 't' }
#define CLI_LONGOPT_BACKEND { "backend", required_argument, NULL, 'b' }
#define CLI_LONGOPT_MAX_MEMORY { "max-memory", required_argument, NULL, CLI_OPT_MAX_MEMORY }
#define CLI_LONGOPT_MEMORY { "memory", required_argument, NULL, CLI_OPT_MEMORY }
#define CLI_LONGOPT_PRECISION { "precision", required_argument, NULL, CLI_OPT_PRECISION }
#define CLI_LONGOPT_CACHE { "cache", required_argument, NULL, CLI_OPT_CACHE }
#define CLI_LONGOPT_TUNE { "tune", required_argument, NULL, CLI_OPT_TUNE }
#define CLI_LONGOPT_FP16_GUARD { "fp16-guard", required_argument, NULL, CLI_OPT_FP16_GUARD }

/*
 * If @c (a getopt_long result, @arg its optarg) is one of the options above,
 * store its value in @cfg and return 1, or print "edgert @cmd: ..." and
 * return -1 when the value is bad; return 0 for any other option.
 */
int cli_config_option(const char *cmd, int c, const char *arg, ert_config *cfg);

/*
 * Report a getopt_long failure (@c is '?' or ':' with an optstring starting
 * with ':'). Returns 1.
 */
int cli_getopt_error(const char *cmd, char **argv, int c);

/*
 * After getopt: exactly one operand, the model, must remain. Sets @model and
 * returns 0, or prints "missing model" / "unexpected argument" and returns 1.
 */
int cli_model_operand(const char *cmd, int argc, char **argv, const char **model);

/* Parse "cpu,opencl,..." into @cfg->backends. Prints an error and returns false. */
bool cli_parse_backends(const char *cmd, const char *list, ert_config *cfg);

/*
 * Print the CPU (model, features, best kernel level) and the level sessions
 * will run after ERT_CPU_ISA, as two aligned lines. False (with an error
 * printed) when ERT_CPU_ISA is bad or above what the CPU supports.
 */
bool cli_print_cpu(const char *cmd, FILE *f);

/*
 * Open @path for reading to check it exists, then load it as a model.
 * Messages: "cannot open 'x': <strerror>", "failed to load 'x': <reason>".
 */
bool cli_load_model(const char *cmd, const char *path, ert_model **model_out);

/*
 * A graph loaded for inspection: .ert files mapped and read through
 * ert_format_load (the mapping lives as long as the graph), anything else
 * through the ONNX importer.
 */
struct cli_graph {
	struct ert_graph *graph;
	void *image;           /* .ert mapping the graph's constants point into */
	size_t image_size;
	bool is_ert;
	uint32_t format_version; /* .ert only: version field of the header */
};
bool cli_graph_load(const char *cmd, const char *path, bool optimize, struct cli_graph *out);
void cli_graph_free(struct cli_graph *cg);

/* Threads a session with @cfg uses: num_threads, or one per online CPU (at most 32). */
uint32_t cli_thread_count(const ert_config *cfg);

/* Milliseconds on CLOCK_MONOTONIC. */
double cli_now_ms(void);

/* Progress on a terminal only: "\redgert cmd: what done/total"; total 0 clears. */
/*
 * The file name `edgert run -o` gives tensor @name: characters other than
 * letters, digits, '_', '-' and '.' become '_'; an empty name, "." or ".."
 * becomes @fallback.
 */
void cli_file_name(const char *name, const char *fallback, char *buf, size_t size);

bool cli_progress_enabled(void);
void cli_progress(const char *cmd, const char *what, unsigned done, unsigned total);
void cli_progress_done(void);

/* Deterministic PRNG (splitmix64 seeding, xorshift64*). */
struct cli_rng {
	uint64_t s;
};
void cli_rng_seed(struct cli_rng *r, uint64_t seed);
uint64_t cli_rng_next(struct cli_rng *r);
/* Uniform in [0, 1). */
double cli_rng_uniform(struct cli_rng *r);

/*
 * Fill @size bytes at @data with random values of @dtype: floats uniform in
 * [0, 1), integers in [0, 10), bools 0/1. Returns false for dtypes it cannot fill.
 */
bool cli_fill_random(struct cli_rng *r, ert_dtype dtype, void *data, size_t count);

/* Format "[1,3,224,224]" (names for symbolic dims when @names is given). */
void cli_format_shape(char *buf, size_t size, int32_t rank, const int64_t *dims,
		      const char *const *names);

/* Write @s as a JSON string literal (with quotes) to @f. */
void cli_json_string(FILE *f, const char *s);

/* Usage lines of the session options bench and profile share. */
#define CLI_HELP_SESSION_LEVELS \
	"      --max-memory BYTES\n" \
	"                      memory budget of the session: input buffers and\n" \
	"                      plans (K, M, G, T: powers of 1024; default half\n" \
	"                      the physical memory)\n" \
	"      --memory LEVEL  ert_config.memory: low, normal (default) or high; low\n" \
	"                      keeps no packed weights and, for a model converted\n" \
	"                      with --weight-bits, runs Conv/Gemm/MatMul on its\n" \
	"                      quantised weights (int8 kernels)\n" \
	"      --precision LEVEL\n" \
	"                      ert_config.precision: low, normal (default) or high;\n" \
	"                      low lets the CPU run Conv, Gemm and MatMul in bf16\n" \
	"                      with fp32 sums where it has AVX512_BF16\n"

/* Usage lines of --tune, which run, bench, profile and diff share. */
#define CLI_HELP_TUNE \
	"      --tune MODE     ert_config.tune: autotuning of GPU kernels while\n" \
	"                      planning: none, fast (default), normal or wide\n" \
	"                      (with --cache, kept in the cache file)\n"

#endif /* ERT_CLI_H */
