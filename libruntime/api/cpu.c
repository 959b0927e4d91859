/* SPDX-License-Identifier: MIT */
/*
 * The public CPU queries of edgert.h (ert_cpu_level_*, ert_cpu_describe),
 * over the CPU backend's detection in backends/cpu/isa.c.
 */
#include <stdio.h>
#include <string.h>

#include "cpu/isa.h"
#include "session/session-impl.h"

/* ert_cpu_level counts from AUTO = 0, SCALAR = 1: one above enum ert_cpu_isa. */

ERT_API const char *ert_cpu_level_name(ert_cpu_level level)
{
	if (level == ERT_CPU_LEVEL_AUTO)
		return "auto";
	return (unsigned)level <= ERT_ISA_COUNT ? ert_cpu_isa_name((enum ert_cpu_isa)(level - 1)) : "unknown";
}

ERT_API ert_status ert_cpu_level_resolve(ert_cpu_level requested, ert_cpu_level *out)
{
	struct ert_err err = { "" };
	enum ert_cpu_isa isa;
	ert_status st;

	if (!out)
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT,
					  "ert_cpu_level_resolve: NULL argument");
	if ((unsigned)requested > ERT_CPU_LEVEL_AMX)
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT,
					  "cpu level %d is not an ert_cpu_level", requested);
	st = ert_cpu_isa_choose((int)requested, &isa, &err);
	if (st != ERT_OK)
		return ert_set_last_error(st, "%s", err.msg);
	*out = (ert_cpu_level)(isa + 1);
	return ERT_OK;
}

ERT_API size_t ert_cpu_describe(char *buf, size_t size)
{
	const struct ert_cpu_features *f = ert_cpu_features();
	const struct { bool on; const char *name; } feats[] = {
		{ f->sse41, "sse4.1" }, { f->avx, "avx" }, { f->avx2, "avx2" }, { f->fma, "fma" },
		{ f->f16c, "f16c" }, { f->avx512f, "avx512f" }, { f->avx512bw, "avx512bw" },
		{ f->avx512vl, "avx512vl" }, { f->avx512dq, "avx512dq" },
		{ f->avx512vnni, "avx512vnni" }, { f->avx512bf16, "avx512bf16" },
		{ f->avx512fp16, "avx512fp16" }, { f->avxvnni, "avxvnni" },
		{ f->amx_tile, "amx-tile" }, { f->amx_int8, "amx-int8" }, { f->amx_bf16, "amx-bf16" },
	};
	char line[512];
	size_t n;

	n = (size_t)snprintf(line, sizeof(line), "%s %s; best level %s; features",
			     f->vendor[0] ? f->vendor : "unknown", f->brand[0] ? f->brand : "x86-64",
			     ert_cpu_isa_name(ert_cpu_isa_best()));
	for (size_t i = 0; i < sizeof(feats) / sizeof(feats[0]) && n < sizeof(line); i++)
		if (feats[i].on)
			n += (size_t)snprintf(line + n, sizeof(line) - n, " %s", feats[i].name);
	if (n < sizeof(line) && f->amx_tile && !f->os_tile)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " (AMX tile data not permitted)");
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	if (buf && size) {
		size_t c = n < size - 1 ? n : size - 1;

		memcpy(buf, line, c);
		buf[c] = '\0';
	}
	return n;
}
