/* SPDX-License-Identifier: MIT */
/*
 * placement.h — which backend runs each op of a session's plan, and the
 * splits: maximal runs of consecutive ops on one backend, with the tensors
 * that cross from one backend to another (`edgert info --placement`,
 * `edgert run --explain`).
 */
#ifndef ERT_PLACEMENT_H
#define ERT_PLACEMENT_H

#include <stdio.h>

#include "edgert.h"

/* Print the placement of @sess's current plan (planning first); false on error. */
bool cli_print_placement(const char *cmd, ert_model *model, ert_session *sess, FILE *out);

#endif /* ERT_PLACEMENT_H */
