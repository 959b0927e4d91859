/* SPDX-License-Identifier: MIT */
/*
 * bad-input: the damaged-file corpus (see bad-input.h). Usage:
 *   bad-input [--conformance DIR] [--seed N] [--verbose] [--write-seeds DIR]
 *             [--write-hostile DIR]
 * DIR defaults to $ERT_CONFORMANCE or ../shared/conformance/onnx-backend.
 * --write-seeds writes the valid .ert images to DIR (fuzzing seeds) and exits.
 * --write-hostile writes models that declare or infer huge tensors to DIR
 * (hostile-sizes.c; the CLI cases of 40-bad-input.sh) and exits.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bad-input.h"
#include "format/ert-format.h"
#include "onnx/onnx-import.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bi_group_begin(struct bi_group *grp, struct bi_run *run, const char *fmt, ...)
{
	va_list ap;

	memset(grp, 0, sizeof(*grp));
	grp->run = run;
	va_start(ap, fmt);
	vsnprintf(grp->name, sizeof(grp->name), fmt, ap);
	va_end(ap);
	grp->start = now();
}

void bi_group_end(struct bi_group *grp)
{
	struct bi_run *run = grp->run;

	if (grp->failures)
		run->groups_failed++;
	else
		run->groups_passed++;
	run->cases += grp->cases;
	run->cases_ok_load += grp->loaded;
	printf("%s %s: %ld cases, %ld loaded, %ld failed (%.2fs)\n", grp->failures ? "FAIL" : "ok  ",
	       grp->name, grp->cases, grp->loaded, grp->failures, now() - grp->start);
	fflush(stdout);
}

void bi_case(struct bi_group *grp, bi_load_fn load, const uint8_t *data, size_t size,
	     const char *what, long where)
{
	char msg[600] = "";
	ert_status st = load(data, size, msg, sizeof(msg));

	grp->cases++;
	if (st == ERT_OK) {
		grp->loaded++;
		return;
	}
	if (!msg[0]) {
		grp->failures++;
		if (grp->failures <= 5)
			printf("  %s: %s %ld: status %d (%s) without a message\n", grp->name, what,
			       where, st, ert_status_string(st));
	} else if (grp->run->verbose) {
		printf("  %s %ld: %s\n", what, where, msg);
	}
}

void bi_check(struct bi_group *grp, bool ok, const char *fmt, ...)
{
	va_list ap;

	grp->cases++;
	if (ok && !grp->run->verbose)
		return;
	va_start(ap, fmt);
	printf("  %s: ", ok ? "ok" : "FAILED");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!ok)
		grp->failures++;
}

/* XOR of the last byte of every constant of @g and its subgraphs (at most 16 levels deep). */
static uint8_t touch_constants(const struct ert_graph *g)
{
	uint8_t x = 0;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		size_t n;
		const uint8_t *b = ert_tensor_stored(&g->tensors[t], &n);

		if (n)
			x ^= b[n - 1];
	}
	for (uint32_t k = 0; k < g->n_subs; k++)
		x ^= touch_constants(g->subs[k]);
	return x;
}

ert_status bi_load_ert(const uint8_t *data, size_t size, char *msg, size_t msg_size)
{
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	ert_status st = ert_format_load(data, size, &g, &err);

	if (st == ERT_OK) {
		/*
		 * read the last byte of every constant, subgraphs' included: ASan
		 * catches any pointer past the image
		 */
		volatile uint8_t sink = touch_constants(g);

		(void)sink;
		ert_graph_destroy(g);
	} else if (g) {
		snprintf(msg, msg_size, "%s", ""); /* failure with an output: reported as bad */
		return st;
	}
	snprintf(msg, msg_size, "%s", err.msg);
	return st;
}

static ert_status load_onnx(const uint8_t *data, size_t size, char *msg, size_t msg_size,
			    bool optimize)
{
	struct ert_onnx_options opt = { .optimize = optimize };
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	ert_status st = ert_onnx_import_memory(data, size, NULL, &opt, &g, &err);

	if (st == ERT_OK)
		ert_graph_destroy(g);
	snprintf(msg, msg_size, "%s", err.msg);
	return st;
}

ert_status bi_load_onnx(const uint8_t *data, size_t size, char *msg, size_t msg_size)
{
	return load_onnx(data, size, msg, msg_size, false);
}

ert_status bi_load_onnx_optimized(const uint8_t *data, size_t size, char *msg, size_t msg_size)
{
	return load_onnx(data, size, msg, msg_size, true);
}

ert_status bi_load_public(const uint8_t *data, size_t size, char *msg, size_t msg_size)
{
	ert_model *m = NULL;
	ert_status st = ert_model_load_memory(data, size, 1, &m, msg, msg_size);

	ert_model_unref(m);
	return st;
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n)) && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*size = p ? (size_t)n : 0;
	return p;
}

static void ert_sources(struct bi_run *run)
{
	struct bi_image imgs[10];
	int n = bi_ert_images(imgs, 10);
	struct bi_group grp;

	bi_group_begin(&grp, run, "valid .ert images");
	bi_check(&grp, n == 10, "%d of 10 images written", n);
	for (int i = 0; i < n; i++) {
		char msg[600] = "";

		bi_check(&grp, bi_load_ert(imgs[i].data, imgs[i].size, msg, sizeof(msg)) == ERT_OK,
			 "%s loads: %s", imgs[i].name, msg);
	}
	bi_group_end(&grp);
	for (int i = 0; i < n; i++) {
		const uint8_t *d = imgs[i].data;
		size_t sz = imgs[i].size, end = bi_ert_tables_end(d, sz);

		bi_truncations(run, imgs[i].name, bi_load_ert, d, sz, 0);
		bi_bit_flips(run, imgs[i].name, bi_load_ert, d, sz, 150, false);
		bi_bit_flips(run, imgs[i].name, bi_load_ert, d, sz, 800, true);
		/* every offset of the first image's tables; a stride coprime to 4 elsewhere */
		bi_hostile_values(run, imgs[i].name, bi_load_ert, d, sz, end, i ? 3 : 1, true);
		/* string constants: their offsets and bytes lie in the weights, past the tables */
		if (strcmp(imgs[i].name, "ert strings") == 0)
			bi_hostile_values(run, "ert strings (weights)", bi_load_ert, d, sz, sz, 1, true);
		if (i == 0) {
			/* the same damage through the public API (copying loader) */
			bi_truncations(run, "public API ert mlp", bi_load_public, d, sz, 200);
			bi_bit_flips(run, "public API ert mlp", bi_load_public, d, sz, 300, true);
		}
		free(imgs[i].data);
	}
}

/*
 * @size_class 0: a node test model; 1: a real architecture; 2: the same plus
 * hostile values over its first KiB. Optimised imports (constant folding on
 * damaged values) cost far more, so only a sample takes that path.
 */
static void onnx_source(struct bi_run *run, const char *path, const char *label, int size_class)
{
	size_t size = 0;
	uint8_t *data = read_file(path, &size);
	char msg[600] = "", lbl[340];
	struct bi_group grp;

	if (!data) {
		printf("skip %s: cannot read %s\n", label, path);
		return;
	}
	bi_group_begin(&grp, run, "%s: the undamaged file", label);
	ert_status st = bi_load_onnx_optimized(data, size, msg, sizeof(msg));

	bi_check(&grp, st == ERT_OK || msg[0], "%s: status %d '%s'", path, st, msg);
	bi_group_end(&grp);
	bi_truncations(run, label, bi_load_onnx, data, size, size_class ? 100 : 50);
	bi_bit_flips(run, label, bi_load_onnx, data, size, size_class ? 100 : 40, false);
	snprintf(lbl, sizeof(lbl), "%s optimised", label);
	bi_bit_flips(run, lbl, bi_load_onnx_optimized, data, size, size_class ? 12 : 20, false);
	bi_hostile_runs(run, label, bi_load_onnx, data, size, size_class ? 100 : 40);
	if (size_class == 2)
		bi_hostile_values(run, label, bi_load_onnx, data, size, size < 1024 ? size : 1024,
				  3, false);
	free(data);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A fixed sample of the ONNX backend node tests: every 40th directory by name. */
static void onnx_sources(struct bi_run *run, const char *root)
{
	static const char *const light[] = { "test_squeezenet", "test_resnet50", "test_inception_v1" };
	char path[1024], label[300];

	for (size_t i = 0; i < sizeof(light) / sizeof(light[0]); i++) {
		snprintf(path, sizeof(path), "%s/light/%s/model.onnx", root, light[i]);
		snprintf(label, sizeof(label), "onnx %s", light[i]);
		onnx_source(run, path, label, i == 0 ? 2 : 1);
	}
	snprintf(path, sizeof(path), "%s/node", root);
	DIR *d = opendir(path);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	if (!d) {
		printf("skip onnx node models: no %s\n", path);
		return;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "test_", 5) != 0)
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 256) * sizeof(*names));

			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (i % 40 == 0) {
			snprintf(path, sizeof(path), "%s/node/%s/model.onnx", root, names[i]);
			snprintf(label, sizeof(label), "onnx node/%s", names[i]);
			onnx_source(run, path, label, 0);
		}
		free(names[i]);
	}
	free(names);
}

static int write_seeds(const char *dir)
{
	struct bi_image imgs[10];
	int n = bi_ert_images(imgs, 10), bad = 0;

	for (int i = 0; i < n; i++) {
		char path[1024];
		FILE *f;

		snprintf(path, sizeof(path), "%s/seed-%d.ert", dir, i);
		f = fopen(path, "wb");
		if (!f || fwrite(imgs[i].data, 1, imgs[i].size, f) != imgs[i].size)
			bad = 1;
		if (f && fclose(f) != 0)
			bad = 1;
		free(imgs[i].data);
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct bi_run run = { .seed = 20261121 };
	const char *root = getenv("ERT_CONFORMANCE");

	if (!root || !*root)
		root = "../shared/conformance/onnx-backend";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--conformance") && i + 1 < argc) {
			root = argv[++i];
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			run.seed = strtoull(argv[++i], NULL, 0);
			if (!run.seed)
				run.seed = 1;
		} else if (!strcmp(argv[i], "--verbose")) {
			run.verbose = true;
		} else if (!strcmp(argv[i], "--write-seeds") && i + 1 < argc) {
			return write_seeds(argv[i + 1]);
		} else if (!strcmp(argv[i], "--write-hostile") && i + 1 < argc) {
			return bi_write_hostile(argv[i + 1]);
		} else {
			fprintf(stderr, "usage: %s [--conformance DIR] [--seed N] [--verbose] "
				"[--write-seeds DIR] [--write-hostile DIR]\n", argv[0]);
			return 2;
		}
	}
	ert_sources(&run);
	bi_api_checks(&run);
	onnx_sources(&run, root);
	printf("bad-input: %ld damaged inputs, %ld of them still valid\n", run.cases,
	       run.cases_ok_load);
	printf("%d passed, %d failed\n", run.groups_passed, run.groups_failed);
	return run.groups_failed ? 1 : 0;
}
