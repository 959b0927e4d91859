/* SPDX-License-Identifier: MIT */
/*
 * tap-check.h — the checks' tally of the GPU backends' test programs that
 * print one line per check (cache-test.h's, test-vk-import.c): "ok - WHAT"
 * or "not ok - WHAT: WHY", counted in passed and failed for the summary
 * line the program prints last.
 */
#ifndef ERT_TAP_CHECK_H
#define ERT_TAP_CHECK_H

#include <stdbool.h>
#include <stdio.h>

static int passed, failed;

static void check(bool ok, const char *what, const char *why)
{
	if (ok) {
		passed++;
		printf("ok - %s\n", what);
	} else {
		failed++;
		printf("not ok - %s: %s\n", what, why);
	}
}

#endif
