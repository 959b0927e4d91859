/* SPDX-License-Identifier: MIT */
/*
 * CPU kernel: NonMaxSuppression. Per batch and class, the boxes scoring above
 * score_threshold (all boxes without one) are taken in decreasing score, ties
 * lower index first; each is kept unless its IoU with a box kept before
 * exceeds iou_threshold, up to max_output_boxes_per_class (0 or absent:
 * none). The output rows (batch, class, box) follow batch, class, then the
 * order of selection. Boxes are [y1, x1, y2, x2] with either corner first,
 * or with center_point_box [x_center, y_center, width, height].
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/ops/select-kernels.h"

struct nms_geom {
	int64_t batches, classes, n;
};

static struct nms_geom geom_of(const struct ert_exec *x)
{
	struct nms_geom g = { x->in[1]->dims[0], x->in[1]->dims[1], x->in[0]->dims[1] };

	return g;
}

/* counts (batches x classes), candidates and merge buffer (n each), corners (4 n), kept (B C n) */
size_t ert_cpu_nms_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct nms_geom g = geom_of(x);
	size_t bc = (size_t)(g.batches * g.classes), n = (size_t)g.n;

	/* both products are bounded by the scores' element count */
	return bc * sizeof(int64_t) + n * 2 * sizeof(int64_t) + n * 4 * sizeof(float) +
	       bc * n * sizeof(int32_t) + 64;
}

/* ymin, xmin, ymax, xmax */
static void corners(const float *b, bool center, float *c)
{
	if (center) {
		c[0] = b[1] - b[3] / 2;
		c[1] = b[0] - b[2] / 2;
		c[2] = b[1] + b[3] / 2;
		c[3] = b[0] + b[2] / 2;
	} else {
		c[0] = fminf(b[0], b[2]);
		c[1] = fminf(b[1], b[3]);
		c[2] = fmaxf(b[0], b[2]);
		c[3] = fmaxf(b[1], b[3]);
	}
}

/* IoU(a, b) > threshold; boxes of no area, and disjoint ones, never suppress */
static bool suppresses(const float *a, const float *b, float threshold)
{
	float ymin = fmaxf(a[0], b[0]), xmin = fmaxf(a[1], b[1]);
	float ymax = fminf(a[2], b[2]), xmax = fminf(a[3], b[3]);
	float inter, area_a, area_b, uni;

	if (xmax <= xmin || ymax <= ymin)
		return false;
	inter = (xmax - xmin) * (ymax - ymin);
	area_a = (a[2] - a[0]) * (a[3] - a[1]);
	area_b = (b[2] - b[0]) * (b[3] - b[1]);
	if (area_a <= 0 || area_b <= 0)
		return false;
	uni = area_a + area_b - inter;
	if (uni <= 0)
		return false;
	return inter / uni > threshold;
}

/* Stable merge sort of @idx by decreasing @score. */
static void sort_by_score(const float *score, int64_t *idx, int64_t *tmp, int64_t n)
{
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t a = lo, b = mid, o = lo;

			while (a < mid && b < hi)
				tmp[o++] = score[idx[b]] > score[idx[a]] ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[o++] = idx[a++];
			while (b < hi)
				tmp[o++] = idx[b++];
		}
		memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
	}
}

static const struct ert_value *opt_in(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in ? x->in[i] : NULL;
}

ert_status ert_cpu_nms_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct nms_geom g = geom_of(x);
	const struct ert_value *mv = opt_in(x, 2), *iv = opt_in(x, 3), *sv = opt_in(x, 4);
	const float *boxes = x->in[0]->data;
	int64_t max_out = mv ? ert_value_get_int(mv, 0) : 0, total = 0, dims[2];
	float iou = iv ? ((const float *)iv->data)[0] : 0.0f;
	float min_score = sv ? ((const float *)sv->data)[0] : 0.0f;
	bool center = ert_attr_int(x->node, "center_point_box", 0) != 0;
	ert_status st;

	if (!x->workspace || x->workspace_size < ert_cpu_nms_workspace(cpu, x))
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL, "workspace too small");
	int64_t *count = x->workspace, *cand = count + g.batches * g.classes, *tmp = cand + g.n;
	float *corner = (float *)(tmp + g.n);
	int32_t *kept = (int32_t *)(corner + 4 * g.n);

	if (g.n > INT32_MAX)
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "%lld boxes, at most 2^31 - 1", (long long)g.n);
	if (max_out < 0)
		max_out = 0;
	if (max_out > g.n)
		max_out = g.n;
	for (int64_t b = 0; b < g.batches; b++) {
		for (int64_t j = 0; j < g.n; j++)
			corners(boxes + (b * g.n + j) * 4, center, corner + j * 4);
		for (int64_t c = 0; c < g.classes; c++) {
			const float *score = (const float *)x->in[1]->data + (b * g.classes + c) * g.n;
			int32_t *k = kept + (b * g.classes + c) * g.n;
			int64_t m = 0, got = 0;

			for (int64_t j = 0; j < g.n && max_out > 0; j++)
				if (!sv || score[j] > min_score)
					cand[m++] = j;
			sort_by_score(score, cand, tmp, m);
			for (int64_t i = 0; i < m && got < max_out; i++) {
				const float *box = corner + cand[i] * 4;
				bool keep = true;

				for (int64_t q = 0; q < got && keep; q++)
					keep = !suppresses(corner + (int64_t)k[q] * 4, box, iou);
				if (keep)
					k[got++] = (int32_t)cand[i];
			}
			count[b * g.classes + c] = got;
			total += got;
		}
	}
	dims[0] = total;
	dims[1] = 3;
	st = ert_exec_output(x, 0, 2, dims, err);
	if (st != ERT_OK)
		return st;
	int64_t *out = x->out[0]->data;

	for (int64_t bc = 0; bc < g.batches * g.classes; bc++) {
		for (int64_t q = 0; q < count[bc]; q++) {
			*out++ = bc / g.classes;
			*out++ = bc % g.classes;
			*out++ = kept[bc * g.n + q];
		}
	}
	return ERT_OK;
}
