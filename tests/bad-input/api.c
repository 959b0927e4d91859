/* SPDX-License-Identifier: MIT */
/* The public API with wrong input shapes, dtypes, indices and files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bad-input.h"
#include "format/ert-format.h"

/* x[batch,4] → MatMul(W[4,3]) → Add(b[3]) → Relu → y */
static void *small_model(size_t *size)
{
	static const float w[12] = { 1, 0, -1, 0, 1, 0, 2, 0, 1, 0, 0, 1 };
	static const float b[3] = { 0.5f, -10, 0 };
	struct ert_graph *g = ert_graph_create();
	struct ert_err err;
	void *img = NULL;

	if (!g)
		return NULL;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ -1, 4 });
	int32_t wt = ert_graph_add_tensor(g, "W", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 4, 3 });
	int32_t bt = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 3 });
	int32_t h = ert_graph_add_tensor(g, "h", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t hb = ert_graph_add_tensor(g, "hb", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);

	g->tensors[x].dim_names[0] = ert_graph_strdup(g, "batch");
	ert_graph_set_const(g, wt, w, sizeof(w), false);
	ert_graph_set_const(g, bt, b, sizeof(b), false);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_MatMul, "mm", 2, (int32_t[]){ x, wt }, 1, &h);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ h, bt }, 1, &hb);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &hb, 1, &y);
	ert_graph_add_output(g, y);
	if (ert_format_write_memory(g, NULL, &img, size, &err) != ERT_OK)
		img = NULL;
	ert_graph_destroy(g);
	return img;
}

static bool failed_with(ert_status st, ert_status want, const char *msg)
{
	return st == want && msg && msg[0];
}

static void session_checks(struct bi_group *grp, ert_model *model)
{
	ert_session *s = NULL;
	ert_config cfg;
	ert_status st;
	float x[8] = { 1, 2, 3, 4, -1, -2, -3, -4 };

	ert_config_init(&cfg);
	cfg.num_threads = 2;
	st = ert_session_create(model, &cfg, &s);
	bi_check(grp, st == ERT_OK && s, "session create: %d %s", st, ert_last_error());
	if (!s)
		return;
	st = ert_session_set_input(s, 0, ERT_DTYPE_INT32, x, 16);
	bi_check(grp, failed_with(st, ERT_STATUS_DTYPE, ert_session_error(s)),
		 "int32 data for a float32 input: %d '%s'", st, ert_session_error(s));
	st = ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x, 12);
	bi_check(grp, failed_with(st, ERT_STATUS_SHAPE, ert_session_error(s)),
		 "12 bytes for a 16-byte input: %d '%s'", st, ert_session_error(s));
	st = ert_session_set_input(s, 7, ERT_DTYPE_FLOAT32, x, 16);
	bi_check(grp, st != ERT_OK && ert_session_error(s)[0],
		 "input index 7 of 1: %d '%s'", st, ert_session_error(s));
	st = ert_session_resize_input(s, 0, 2, (const int64_t[]){ 2, 5 });
	bi_check(grp, failed_with(st, ERT_STATUS_SHAPE, ert_session_error(s)),
		 "resize fixed dim 4 to 5: %d '%s'", st, ert_session_error(s));
	st = ert_session_resize_input(s, 0, 3, (const int64_t[]){ 2, 4, 1 });
	bi_check(grp, failed_with(st, ERT_STATUS_SHAPE, ert_session_error(s)),
		 "resize to rank 3: %d '%s'", st, ert_session_error(s));
	st = ert_session_resize_input(s, 0, 2, (const int64_t[]){ -3, 4 });
	bi_check(grp, st != ERT_OK && ert_session_error(s)[0],
		 "resize to a negative dim: %d '%s'", st, ert_session_error(s));
	st = ert_session_resize_input(s, 0, 2, (const int64_t[]){ INT64_MAX / 2, 4 });
	bi_check(grp, st != ERT_OK && ert_session_error(s)[0],
		 "resize to an overflowing shape: %d '%s'", st, ert_session_error(s));
	st = ert_session_resize_input(s, 0, 99, (const int64_t[]){ 1, 4 });
	bi_check(grp, st != ERT_OK && ert_session_error(s)[0],
		 "resize to rank 99: %d '%s'", st, ert_session_error(s));
	bi_check(grp, ert_session_get_input(s, 3) == NULL, "input 3 of 1 is NULL");
	bi_check(grp, ert_session_get_input_by_name(s, "nope") == NULL, "input 'nope' is NULL");
	bi_check(grp, ert_session_get_output(s, 1) == NULL, "output 1 of 1 is NULL");

	/* after all that, the session still works with a correct input */
	st = ert_session_resize_input(s, 0, 2, (const int64_t[]){ 2, 4 });
	bi_check(grp, st == ERT_OK, "resize to [2,4]: %d '%s'", st, ert_session_error(s));
	st = ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x, sizeof(x));
	bi_check(grp, st == ERT_OK, "set [2,4] input: %d '%s'", st, ert_session_error(s));
	st = ert_session_run(s);
	bi_check(grp, st == ERT_OK, "run: %d '%s'", st, ert_session_error(s));
	const ert_tensor *out = ert_session_get_output(s, 0);
	const float *y = out ? ert_tensor_data(out) : NULL;

	/* row 0: x·W = [1+6, 2, -1+3+4] = [7, 2, 6]; + b = [7.5, -8, 6]; relu */
	bi_check(grp, st == ERT_OK && y && y[0] == 7.5f && y[1] == 0.0f && y[2] == 6.0f,
		 "output row 0 = [%g %g %g], expected [7.5 0 6]", y ? y[0] : -1.0,
		 y ? y[1] : -1.0, y ? y[2] : -1.0);
	ert_session_destroy(s);
}

void bi_api_checks(struct bi_run *run)
{
	struct bi_group grp;
	char err[256] = "";
	ert_model *model = NULL;
	size_t size = 0;
	void *img = small_model(&size);
	ert_status st;

	bi_group_begin(&grp, run, "public API: wrong inputs");
	bi_check(&grp, img != NULL, "write the small model");
	if (img) {
		st = ert_model_load_memory(img, size, 0, &model, err, sizeof(err));
		bi_check(&grp, st == ERT_OK, "load the small model: %d '%s'", st, err);
		if (model)
			session_checks(&grp, model);
		ert_model_unref(model);
	}
	bi_group_end(&grp);

	bi_group_begin(&grp, run, "public API: bad files");
	model = NULL;
	err[0] = 0;
	st = ert_model_load_file("/nonexistent/model.ert", &model, err, sizeof(err));
	bi_check(&grp, st == ERT_STATUS_IO && err[0] && !model, "missing file: %d '%s'", st, err);
	err[0] = 0;
	st = ert_model_load_file("/", &model, err, sizeof(err));
	bi_check(&grp, st != ERT_OK && err[0] && !model, "a directory: %d '%s'", st, err);
	err[0] = 0;
	st = ert_model_load_memory("", 0, 0, &model, err, sizeof(err));
	bi_check(&grp, st != ERT_OK && err[0] && !model, "empty buffer: %d '%s'", st, err);

	char path[] = "/tmp/bad-input-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0) {
		/* a damaged file through the mmap path: the header claims more than is there */
		if (img && write(fd, img, size / 2) == (ssize_t)(size / 2)) {
			err[0] = 0;
			st = ert_model_load_file(path, &model, err, sizeof(err));
			bi_check(&grp, st == ERT_STATUS_INVALID_MODEL && err[0] && !model,
				 "half an .ert file: %d '%s'", st, err);
		}
		close(fd);
		unlink(path);
	}
	bi_group_end(&grp);
	free(img);
}
