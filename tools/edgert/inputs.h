/* SPDX-License-Identifier: MIT */
/*
 * inputs.h — sessions for the run/bench/profile subcommands: creating one from a
 * model path and a config, and feeding inputs from .npy / TensorProto .pb files
 * or seeded random values.
 */
#ifndef ERT_CLI_INPUTS_H
#define ERT_CLI_INPUTS_H

#include "cli.h"

/* A tensor read from a file. */
struct cli_tensor {
	char name[256];   /* from a .pb file; "" for .npy */
	ert_dtype dtype;
	int32_t rank;
	int64_t dims[ERT_MAX_RANK];
	void *data;       /* malloc'd */
	size_t nbytes;
};

/* Read an .npy or TensorProto .pb file (told apart by the .npy magic). */
bool cli_tensor_read(const char *cmd, const char *path, struct cli_tensor *out);
void cli_tensor_free(struct cli_tensor *t);

/* Load @path and create a session; prints the error and returns false on failure. */
bool cli_session_open(const char *cmd, const char *path, const ert_config *cfg,
		      ert_model **model_out, ert_session **sess_out);

/*
 * Feed input @index from @t (read from @file): dtype must match; a different
 * shape resizes the input first.
 */
bool cli_input_set(const char *cmd, ert_session *sess, uint32_t index,
		   const struct cli_tensor *t, const char *file);
/* Feed input @index with seeded random values for its current shape. */
bool cli_input_random(const char *cmd, ert_session *sess, uint32_t index, struct cli_rng *rng);
/* Random values for every input. */
bool cli_inputs_random(const char *cmd, ert_session *sess, uint64_t seed);

/* Shape of a session tensor as "[1,3,224,224]". */
void cli_tensor_shape(const ert_tensor *t, char *buf, size_t size);

#endif /* ERT_CLI_INPUTS_H */
