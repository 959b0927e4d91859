/* SPDX-License-Identifier: MIT */
/*
 * create-times.h — where ert_session_create() spent its time, by phase
 * (session-impl.h: struct ert_create_times), for `edgert bench`.
 *
 * Phases: device (and queue), cache file (read, written),
 * programs (loaded, built, or taken from another session of the process),
 * kernels (objects of the launches), tuning, uploads (constants to the
 * device), calibration (the fp16 guard's CPU run), memory (the memory plan,
 * the arenas) and planning: what no other phase claims (shapes, constant
 * folding, placement, kernel arguments, the CPU backend's weight packing).
 * The phases add up to the total.
 */
#ifndef ERT_CREATE_TIMES_H
#define ERT_CREATE_TIMES_H

#include <stdio.h>

#include "edgert.h"

/* One line per phase, indented under bench's "create" line. */
void cli_create_times_print(FILE *out, const ert_session *sess);
/* The phases as a JSON object ({"total_ms": .., "device_ms": .., ...}). */
void cli_create_times_json(FILE *out, const ert_session *sess);

#endif /* ERT_CREATE_TIMES_H */
