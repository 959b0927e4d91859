/* SPDX-License-Identifier: MIT */
/* Helpers shared by the edgert subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "format/ert-format.h"
#include "gpu-common/gpu-tune.h"
#include "onnx/onnx-import.h"

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "edgert %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "edgert %s: warning: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Digits only: strtoll alone would accept spaces, '+', hex prefixes and trailing junk. */
static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

bool cli_parse_int(const char *cmd, const char *opt, const char *arg, long long lo,
		   long long hi, long long *out)
{
	const char *digits = arg;
	long long v;

	if (lo < 0 && *digits == '-')
		digits++;
	if (strlen(digits) > 18 || !all_digits(digits))
		goto bad;
	errno = 0;
	v = strtoll(arg, NULL, 10);
	if (errno || v < lo || v > hi)
		goto bad;
	*out = v;
	return true;
bad:
	cli_error(cmd, "%s must be %lld..%lld, got '%s'", opt, lo, hi, arg);
	return false;
}

bool cli_parse_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	unsigned long long v;

	errno = 0;
	if (!all_digits(arg) || strlen(arg) > 20 || (v = strtoull(arg, NULL, 10), errno)) {
		cli_error(cmd, "%s must be a non-negative integer below 2^64, got '%s'", opt, arg);
		return false;
	}
	*out = v;
	return true;
}

bool cli_parse_bytes(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	size_t len = strspn(arg, "0123456789");
	const char *unit = len && arg[len] && !arg[len + 1] ? strchr(suffixes, arg[len] & ~0x20) : NULL;
	unsigned long long v;
	uint64_t scale = 1;

	if (!len || len > 20 || (arg[len] && !unit))
		goto bad;
	errno = 0;
	v = strtoull(arg, NULL, 10);
	if (errno)
		goto bad;
	if (unit)
		scale = (uint64_t)1 << (10 * (unit - suffixes + 1));
	if (__builtin_mul_overflow((uint64_t)v, scale, out))
		goto bad;
	return true;
bad:
	cli_error(cmd, "%s must be a byte count below 2^64 with an optional K, M, G or T suffix, got '%s'",
		  opt, arg);
	return false;
}

bool cli_parse_level(const char *cmd, const char *opt, const char *arg, ert_level *out)
{
	if (strcmp(arg, "low") == 0)
		*out = ERT_LEVEL_LOW;
	else if (strcmp(arg, "normal") == 0)
		*out = ERT_LEVEL_NORMAL;
	else if (strcmp(arg, "high") == 0)
		*out = ERT_LEVEL_HIGH;
	else
		return cli_error(cmd, "%s must be low, normal or high, got '%s'", opt, arg), false;
	return true;
}

bool cli_parse_tune(const char *cmd, const char *opt, const char *arg, ert_tune *out)
{
	if (!ert_tune_mode_parse(arg, out))
		return cli_error(cmd, "%s must be none, fast, normal or wide, got '%s'", opt, arg),
		       false;
	return true;
}

int cli_config_option(const char *cmd, int c, const char *arg, ert_config *cfg)
{
	long long v;
	bool ok = true;

	switch (c) {
	case 't':
		ok = cli_parse_int(cmd, "--threads", arg, 1, ERT_MAX_THREADS, &v);
		if (ok)
			cfg->num_threads = (uint32_t)v;
		break;
	case 'b': ok = cli_parse_backends(cmd, arg, cfg); break;
	case CLI_OPT_MAX_MEMORY: ok = cli_parse_bytes(cmd, "--max-memory", arg, &cfg->max_memory); break;
	case CLI_OPT_MEMORY: ok = cli_parse_level(cmd, "--memory", arg, &cfg->memory); break;
	case CLI_OPT_PRECISION: ok = cli_parse_level(cmd, "--precision", arg, &cfg->precision); break;
	case CLI_OPT_CACHE: cfg->cache_path = arg; break;
	case CLI_OPT_TUNE: ok = cli_parse_tune(cmd, "--tune", arg, &cfg->tune); break;
	case CLI_OPT_FP16_GUARD:
		if (strcmp(arg, "on") == 0)
			cfg->fp16_guard = ERT_FP16_GUARD_ON;
		else if (strcmp(arg, "off") == 0)
			cfg->fp16_guard = ERT_FP16_GUARD_OFF;
		else
			return cli_error(cmd, "--fp16-guard wants on or off, got '%s'", arg), -1;
		break;
	default: return 0;
	}
	return ok ? 1 : -1;
}

int cli_getopt_error(const char *cmd, char **argv, int c)
{
	const char *arg = argv[optind - 1];
	bool is_long = arg[0] == '-' && arg[1] == '-';
	int len = (int)strcspn(arg, "=");

	if (c == ':') {
		if (is_long || !optopt)
			return cli_error(cmd, "option '%.*s' needs a value", len, arg);
		return cli_error(cmd, "option '-%c' needs a value", optopt);
	}
	if (optopt && !is_long)
		return cli_error(cmd, "unknown option '-%c' (see 'edgert %s --help')", optopt, cmd);
	return cli_error(cmd, "unknown option '%.*s' (see 'edgert %s --help')", len, arg, cmd);
}

int cli_model_operand(const char *cmd, int argc, char **argv, const char **model)
{
	if (optind >= argc)
		return cli_error(cmd, "missing model (see 'edgert %s --help')", cmd);
	if (optind + 1 < argc)
		return cli_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	*model = argv[optind];
	return 0;
}

bool cli_print_cpu(const char *cmd, FILE *f)
{
	const char *env = getenv("ERT_CPU_ISA");
	ert_cpu_level level;
	char line[512];

	ert_cpu_describe(line, sizeof(line));
	fprintf(f, "cpu         %s\n", line);
	if (ert_cpu_level_resolve(ERT_CPU_LEVEL_AUTO, &level) != ERT_OK) {
		cli_error(cmd, "%s", ert_last_error());
		return false;
	}
	fprintf(f, "cpu level   %s%s%s%s\n", ert_cpu_level_name(level),
		env && *env ? " (ERT_CPU_ISA=" : "", env && *env ? env : "", env && *env ? ")" : "");
	return true;
}

bool cli_parse_backends(const char *cmd, const char *list, ert_config *cfg)
{
	static const struct {
		const char *name;
		ert_backend_type type;
	} names[] = {
		{ "cpu", ERT_BACKEND_CPU },       { "opencl", ERT_BACKEND_OPENCL },
		{ "vulkan", ERT_BACKEND_VULKAN }, { "npu", ERT_BACKEND_NPU },
		{ "auto", ERT_BACKEND_AUTO },
	};
	const char *p = list;
	uint32_t n = 0;

	for (;;) {
		size_t len = strcspn(p, ",");
		size_t i;

		if (len == 0) {
			cli_error(cmd, "empty backend name in --backend '%s'", list);
			return false;
		}
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len && strncmp(names[i].name, p, len) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			cli_error(cmd, "unknown backend '%.*s' in --backend (cpu, opencl, vulkan, npu, auto)",
				  (int)len, p);
			return false;
		}
		if (n == ERT_MAX_BACKENDS) {
			cli_error(cmd, "--backend lists more than %d backends", ERT_MAX_BACKENDS);
			return false;
		}
		cfg->backends[n++] = names[i].type;
		p += len;
		if (*p == '\0')
			break;
		p++; /* the comma: another name must follow */
	}
	cfg->num_backends = n;
	return true;
}

static bool check_readable(const char *cmd, const char *path)
{
	struct ert_err err = { "" };
	struct stat st;
	int fd = ert_file_open_regular(path, &st, &err);

	if (fd < 0)
		return cli_error(cmd, "%s", err.msg), false;
	close(fd);
	if (st.st_size == 0)
		return cli_error(cmd, "cannot load '%s': the file is empty", path), false;
	return true;
}

bool cli_load_model(const char *cmd, const char *path, ert_model **model_out)
{
	char err[512] = "";
	ert_status st;

	if (!check_readable(cmd, path))
		return false;
	st = ert_model_load_file(path, model_out, err, sizeof(err));
	if (st != ERT_OK) {
		cli_error(cmd, "failed to load '%s': %s", path, err[0] ? err : ert_status_string(st));
		return false;
	}
	return true;
}

/*
 * The header's version field: magic (8 bytes) then a little-endian u32, as
 * docs/model-format.md lays it out.
 */
static uint32_t ert_header_version(const void *data, size_t size)
{
	const uint8_t *p = data;

	if (size < 12)
		return 0;
	return (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
}

bool cli_graph_load(const char *cmd, const char *path, bool optimize, struct cli_graph *out)
{
	struct ert_err err = { "" };
	uint8_t head[16];
	struct stat st;
	ert_status status;
	ssize_t got;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = ert_file_open_regular(path, &st, &err);
	if (fd < 0)
		return cli_error(cmd, "%s", err.msg), false;
	if (st.st_size == 0) {
		close(fd);
		return cli_error(cmd, "cannot load '%s': the file is empty", path), false;
	}
	got = pread(fd, head, sizeof(head), 0);
	if (got > 0 && ert_format_probe(head, (size_t)got)) {
		/* map, as the runtime does: the graph's constants point into the file */
		out->is_ert = true;
		out->image_size = (size_t)st.st_size;
		out->image = mmap(NULL, out->image_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (out->image == MAP_FAILED) {
			out->image = NULL;
			cli_error(cmd, "cannot map '%s': %s", path, strerror(errno));
			close(fd);
			return false;
		}
		close(fd);
		out->format_version = ert_header_version(out->image, out->image_size);
		status = ert_format_load(out->image, out->image_size, &out->graph, &err);
	} else {
		struct ert_onnx_options opt = { .optimize = optimize };

		close(fd);
		status = ert_onnx_import_file(path, &opt, &out->graph, &err);
	}
	if (status != ERT_OK) {
		cli_error(cmd, "failed to load '%s': %s", path,
			  err.msg[0] ? err.msg : ert_status_string(status));
		cli_graph_free(out);
		return false;
	}
	return true;
}

void cli_graph_free(struct cli_graph *cg)
{
	ert_graph_destroy(cg->graph);
	if (cg->image)
		munmap(cg->image, cg->image_size);
	memset(cg, 0, sizeof(*cg));
}

uint32_t cli_thread_count(const ert_config *cfg)
{
	long n;

	if (cfg->num_threads)
		return cfg->num_threads;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > ERT_MAX_THREADS ? ERT_MAX_THREADS : (uint32_t)n;
}

double cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void cli_file_name(const char *name, const char *fallback, char *buf, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++) {
		char ch = name[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';

		buf[i] = ok ? ch : '_';
	}
	buf[i] = '\0';
	if (i == 0 || strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0)
		snprintf(buf, size, "%s", fallback);
}

bool cli_progress_enabled(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO) && !getenv("ERT_NO_PROGRESS");
	return tty;
}

void cli_progress(const char *cmd, const char *what, unsigned done, unsigned total)
{
	if (!cli_progress_enabled())
		return;
	if (total)
		fprintf(stderr, "\r\033[Kedgert %s: %s %u/%u", cmd, what, done, total);
	else
		fprintf(stderr, "\r\033[Kedgert %s: %s", cmd, what);
	fflush(stderr);
}

void cli_progress_done(void)
{
	if (cli_progress_enabled())
		fputs("\r\033[K", stderr);
}

void cli_rng_seed(struct cli_rng *r, uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	r->s = z ? z : 0x2545f4914f6cdd1dull; /* xorshift must not start at 0 */
}

uint64_t cli_rng_next(struct cli_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

double cli_rng_uniform(struct cli_rng *r)
{
	return (double)(cli_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

bool cli_fill_random(struct cli_rng *r, ert_dtype dtype, void *data, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		double u = cli_rng_uniform(r);
		int64_t k = (int64_t)(u * 10.0);

		switch (dtype) {
		case ERT_DTYPE_FLOAT32: ((float *)data)[i] = (float)u; break;
		case ERT_DTYPE_FLOAT64: ((double *)data)[i] = u; break;
		case ERT_DTYPE_FLOAT16: ((uint16_t *)data)[i] = ert_fp32_to_fp16((float)u); break;
		case ERT_DTYPE_BFLOAT16: ((uint16_t *)data)[i] = ert_fp32_to_bf16((float)u); break;
		case ERT_DTYPE_INT8: ((int8_t *)data)[i] = (int8_t)k; break;
		case ERT_DTYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)k; break;
		case ERT_DTYPE_INT16: ((int16_t *)data)[i] = (int16_t)k; break;
		case ERT_DTYPE_UINT16: ((uint16_t *)data)[i] = (uint16_t)k; break;
		case ERT_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)k; break;
		case ERT_DTYPE_UINT32: ((uint32_t *)data)[i] = (uint32_t)k; break;
		case ERT_DTYPE_INT64: ((int64_t *)data)[i] = k; break;
		case ERT_DTYPE_UINT64: ((uint64_t *)data)[i] = (uint64_t)k; break;
		case ERT_DTYPE_BOOL: ((uint8_t *)data)[i] = u >= 0.5; break;
		default: return false;
		}
	}
	return true;
}

void cli_format_shape(char *buf, size_t size, int32_t rank, const int64_t *dims,
		      const char *const *names)
{
	size_t n = 0;

	if (rank < 0) {
		snprintf(buf, size, "unknown");
		return;
	}
	n += (size_t)snprintf(buf, size, "[");
	for (int32_t i = 0; i < rank && n < size; i++) {
		const char *sep = i ? "," : "";

		if (dims[i] >= 0)
			n += (size_t)snprintf(buf + n, size - n, "%s%lld", sep, (long long)dims[i]);
		else if (names && names[i])
			n += (size_t)snprintf(buf + n, size - n, "%s%s", sep, names[i]);
		else
			n += (size_t)snprintf(buf + n, size - n, "%s?", sep);
	}
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

void cli_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}
