/* SPDX-License-Identifier: MIT */
/* The per-op bar chart of edgert profile --svg (see chart-svg.h). */
#include <stdlib.h>
#include <string.h>

#include "chart-svg.h"

enum { WIDTH = 960, LABEL_W = 300, BAR_W = 460, ROW_H = 22, TOP = 78 };

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* control characters are not allowed in XML 1.0 */
			fputc(c < 0x20 ? '?' : c, f);
		}
	}
}

static const char *backend_color(const char *backend)
{
	static const struct { const char *name, *color; } colors[] = {
		{ "cpu", "#4e79a7" }, { "npu", "#f28e2b" }, { "opencl", "#59a14f" },
		{ "vulkan", "#e15759" },
	};

	for (size_t i = 0; i < sizeof(colors) / sizeof(colors[0]); i++)
		if (!strcmp(backend, colors[i].name))
			return colors[i].color;
	return "#9c9c9c";
}

static int cmp_ms_desc(const void *a, const void *b)
{
	const struct chart_bar *x = a, *y = b;

	return (x->ms < y->ms) - (x->ms > y->ms);
}

bool chart_svg_write(FILE *f, const char *title, struct chart_bar *bars, uint32_t n,
		     double total_ms, const struct chart_op *slowest)
{
	double max = 0;
	int height = TOP + (int)n * ROW_H + 40;

	qsort(bars, n, sizeof(*bars), cmp_ms_desc);
	if (n)
		max = bars[0].ms;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">\n",
		WIDTH, height, WIDTH, height);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH, height);
	fputs("<text id=\"title\" x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", f);
	xml_text(f, title);
	fputs("</text>\n<text id=\"slowest\" x=\"12\" y=\"48\">", f);
	if (slowest) {
		fputs("slowest op: ", f);
		xml_text(f, slowest->name);
		fputs(" (", f);
		xml_text(f, slowest->type);
		fputs(" on ", f);
		xml_text(f, slowest->backend);
		fprintf(f, ") %.4f ms", slowest->ms);
	} else {
		fputs("no ops ran", f);
	}
	fprintf(f, "</text>\n<text x=\"12\" y=\"68\" fill=\"#555555\">time by op type and backend, "
		"total %.4f ms</text>\n", total_ms);
	for (uint32_t i = 0; i < n; i++) {
		int y = TOP + (int)i * ROW_H;
		double w = max > 0 ? BAR_W * bars[i].ms / max : 0;

		fprintf(f, "<g class=\"bar\">\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_W - 8,
			y + 15);
		xml_text(f, bars[i].type);
		fputs(" on ", f);
		xml_text(f, bars[i].backend);
		fprintf(f, " (%u)</text>\n", bars[i].ops);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>",
			LABEL_W, y + 3, w < 1 && bars[i].ms > 0 ? 1.0 : w, ROW_H - 6,
			backend_color(bars[i].backend));
		xml_text(f, bars[i].type);
		fprintf(f, ": %.4f ms</title></rect>\n", bars[i].ms);
		fprintf(f, "<text x=\"%.2f\" y=\"%d\">%.4f ms (%.1f%%)</text>\n</g>\n",
			LABEL_W + (w < 1 ? 1.0 : w) + 6, y + 15, bars[i].ms,
			total_ms > 0 ? 100.0 * bars[i].ms / total_ms : 0.0);
	}
	fputs("</svg>\n", f);
	return !ferror(f);
}
