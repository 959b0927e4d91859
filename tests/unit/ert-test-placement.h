/* SPDX-License-Identifier: MIT */
/*
 * ert-test-placement.h — where a session's current plan put things: which
 * backend runs each step, and how many of its copies at splits are shared
 * in place instead (session/copies.c, "Sharing arenas").
 */
#ifndef ERT_TEST_PLACEMENT_H
#define ERT_TEST_PLACEMENT_H

#include <stdio.h>
#include <string.h>

#include "session/session-impl.h"

struct placement_line {
	char *buf;
	size_t len;
};

static inline void placement_step(const struct ert_node *node, const struct ert_value *const *in,
				  uint32_t n_in, const struct ert_value *const *out,
				  uint32_t n_out, const char *backend, void *user)
{
	struct placement_line *pl = user;
	size_t n = strlen(pl->buf);

	if (n < pl->len)
		snprintf(pl->buf + n, pl->len - n, "%s%s=%s", n ? " " : "", node->name, backend);
}

/* "name=backend name=backend ..." for @s's steps in order, into @buf (@len bytes); false on failure. */
static inline bool session_placement(ert_session *s, char *buf, size_t len)
{
	struct placement_line pl = { buf, len };

	buf[0] = 0;
	return ert_session_visit_steps(s, placement_step, &pl) == ERT_OK;
}

/* Copies at splits of @s's current plan that are shared through an import, not filled. */
static inline uint32_t session_shared_mirrors(const ert_session *s)
{
	const struct ert_plan *p = s->plan;
	uint32_t n = 0;

	for (uint32_t m = 0; p && m < p->n_mirrors; m++)
		n += p->mirrors[m].share >= 0;
	return n;
}

#endif
