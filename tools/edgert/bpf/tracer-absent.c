/* SPDX-License-Identifier: MIT */
/* edgert trace without the BPF tracer in the build (see tracer.h, mk/bpf.mk). */
#include <stdio.h>

#include "tracer.h"

bool tracer_built(void)
{
	return false;
}

bool tracer_open(pid_t pid, const char *exe, const char *btf, tracer_sink sink, void *user,
		 struct tracer **out, char *why, size_t why_size)
{
	snprintf(why, why_size, "this edgert was built without the BPF tracer "
		 "(it needs clang, bpftool, libbpf-dev and a kernel BTF when built)");
	return false;
}

const char *tracer_sources(const struct tracer *t)
{
	return "";
}

bool tracer_has_enpu(const struct tracer *t)
{
	return false;
}

bool tracer_poll(struct tracer *t)
{
	return false;
}

uint64_t tracer_dropped(const struct tracer *t)
{
	return 0;
}

void tracer_close(struct tracer *t)
{
}
