/* SPDX-License-Identifier: MIT */
/* Sessions and their inputs for run, bench and profile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "npy.h"
#include "onnx/onnx-import.h"

bool cli_tensor_read(const char *cmd, const char *path, struct cli_tensor *out)
{
	char head[8] = { 0 };
	char err[512] = "";
	struct ert_err oerr = { "" };
	FILE *f = ert_file_fopen_regular(path, NULL, &oerr);
	size_t got;

	memset(out, 0, sizeof(*out));
	if (!f)
		return cli_error(cmd, "%s", oerr.msg), false;
	got = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (npy_probe(head, got)) {
		struct npy_array a;

		if (!npy_read_file(path, &a, err, sizeof(err)))
			return cli_error(cmd, "%s", err), false;
		out->dtype = a.dtype;
		out->rank = a.rank;
		memcpy(out->dims, a.dims, sizeof(out->dims));
		out->data = a.data;
		out->nbytes = a.nbytes;
		return true;
	}

	struct ert_value v = { 0 };
	struct ert_err e = { "" };
	ert_status st = ert_onnx_load_tensor_file(path, &v, out->name, sizeof(out->name), &e);

	if (st != ERT_OK)
		return cli_error(cmd, "cannot read tensor '%s' (neither .npy nor TensorProto): %s",
				 path, e.msg[0] ? e.msg : ert_status_string(st)),
		       false;
	out->dtype = v.dtype;
	out->rank = v.rank;
	memcpy(out->dims, v.dims, sizeof(out->dims));
	out->data = v.data;
	out->nbytes = v.nbytes;
	return true;
}

void cli_tensor_free(struct cli_tensor *t)
{
	free(t->data);
	t->data = NULL;
}

bool cli_session_open(const char *cmd, const char *path, const ert_config *cfg,
		      ert_model **model_out, ert_session **sess_out)
{
	ert_model *model = NULL;
	ert_status st;

	if (!cli_load_model(cmd, path, &model))
		return false;
	st = ert_session_create(model, cfg, sess_out);
	if (st != ERT_OK) {
		cli_error(cmd, "%s", ert_last_error()[0] ? ert_last_error() : ert_status_string(st));
		ert_model_unref(model);
		return false;
	}
	*model_out = model;
	return true;
}

void cli_tensor_shape(const ert_tensor *t, char *buf, size_t size)
{
	int64_t dims[ERT_MAX_RANK];
	uint32_t rank = ert_tensor_rank(t);

	if (rank > ERT_MAX_RANK)
		rank = ERT_MAX_RANK;
	for (uint32_t i = 0; i < rank; i++)
		dims[i] = ert_tensor_dim(t, i);
	cli_format_shape(buf, size, (int32_t)rank, dims, NULL);
}

bool cli_input_set(const char *cmd, ert_session *sess, uint32_t index,
		   const struct cli_tensor *t, const char *file)
{
	ert_tensor *in = ert_session_get_input(sess, index);
	const char *name = ert_tensor_name(in);
	char want[128], have[128];
	bool same = ert_tensor_rank(in) == (uint32_t)t->rank;

	if (ert_tensor_dtype(in) != t->dtype)
		return cli_error(cmd, "input '%s' is %s, but '%s' holds %s", name,
				 ert_dtype_name(ert_tensor_dtype(in)), file, ert_dtype_name(t->dtype)),
		       false;
	for (int32_t i = 0; same && i < t->rank; i++)
		same = ert_tensor_dim(in, (uint32_t)i) == t->dims[i];
	if (!same) {
		cli_tensor_shape(in, want, sizeof(want));
		cli_format_shape(have, sizeof(have), t->rank, t->dims, NULL);
		if (ert_session_resize_input(sess, index, (uint32_t)t->rank, t->dims) != ERT_OK)
			return cli_error(cmd, "'%s' has shape %s, input '%s' is %s: %s", file, have,
					 name, want, ert_session_error(sess)),
			       false;
	}
	if (ert_session_set_input(sess, index, t->dtype, t->data, t->nbytes) != ERT_OK)
		return cli_error(cmd, "cannot use '%s' for input '%s': %s", file, name,
				 ert_session_error(sess)),
		       false;
	return true;
}

bool cli_input_random(const char *cmd, ert_session *sess, uint32_t index, struct cli_rng *rng)
{
	ert_tensor *in = ert_session_get_input(sess, index);
	ert_dtype dt = ert_tensor_dtype(in);
	size_t count = ert_tensor_element_count(in);
	size_t bytes = ert_tensor_byte_size(in);
	void *buf = malloc(bytes ? bytes : 1);
	bool ok = false;

	if (!buf)
		return cli_error(cmd, "out of memory for input '%s'", ert_tensor_name(in)), false;
	if (!cli_fill_random(rng, dt, buf, count)) {
		cli_error(cmd, "cannot make random values of type %s for input '%s'; give it with -i",
			  ert_dtype_name(dt), ert_tensor_name(in));
		goto out;
	}
	if (ert_session_set_input(sess, index, dt, buf, bytes) != ERT_OK) {
		cli_error(cmd, "cannot set input '%s': %s", ert_tensor_name(in),
			  ert_session_error(sess));
		goto out;
	}
	ok = true;
out:
	free(buf);
	return ok;
}

bool cli_inputs_random(const char *cmd, ert_session *sess, uint64_t seed)
{
	struct cli_rng rng;

	cli_rng_seed(&rng, seed);
	for (uint32_t i = 0; i < ert_session_input_count(sess); i++)
		if (!cli_input_random(cmd, sess, i, &rng))
			return false;
	return true;
}
