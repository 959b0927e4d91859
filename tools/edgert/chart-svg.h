/* SPDX-License-Identifier: MIT */
/*
 * chart-svg.h — edgert profile --svg: a horizontal bar chart of where a
 * model's time goes, one bar per (op type, backend), longest first, and a
 * line naming the slowest single op. Plain SVG 1.1, no script, no external
 * resources: any browser or image viewer opens it.
 */
#ifndef ERT_CHART_SVG_H
#define ERT_CHART_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct chart_bar {
	const char *type, *backend; /* borrowed for the call */
	double ms;                  /* summed over the ops of this type on this backend */
	uint32_t ops;               /* how many ops */
};

struct chart_op {
	const char *name, *type, *backend;
	double ms;
};

/*
 * Write the chart to @f: @title on top, then "slowest op: ..." from @slowest
 * (the <text> element with id "slowest"), then @n bars (sorted here, longest
 * first; @bars is reordered) with their milliseconds and share of @total_ms.
 * Returns false when the stream reported an error.
 */
bool chart_svg_write(FILE *f, const char *title, struct chart_bar *bars, uint32_t n,
		     double total_ms, const struct chart_op *slowest);

#endif /* ERT_CHART_SVG_H */
