/* SPDX-License-Identifier: MIT */
/*
 * strings.h — private to backends/cpu/ops: what the string kernels share
 * (strings.c, strings-regex.c) and the casts unary.c hands them.
 */
#ifndef ERT_CPU_STRINGS_H
#define ERT_CPU_STRINGS_H

#include "cpu/cpu-impl.h"
#include "ert-strings.h"

/*
 * Room for a new string of @len bytes in the run's heap (x->strings); NULL
 * with ERT_STATUS_UNSUPPORTED in *@st outside a session (plan-time folding:
 * the node then runs as a step), or OUT_OF_MEMORY.
 */
char *ert_cpu_str_alloc(const struct ert_exec *x, size_t len, ert_status *st,
			struct ert_err *err);

/* Cast and CastLike from or to strings: numbers printed and parsed. */
ert_status ert_cpu_string_cast(const struct ert_exec *x, struct ert_err *err);

/* RegexFullMatch (strings-regex.c): the pattern compiled once, at prepare. */
ert_status ert_cpu_regex_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_regex_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
void ert_cpu_regex_release(struct ert_exec *x);

#endif /* ERT_CPU_STRINGS_H */
