/* SPDX-License-Identifier: MIT */
/*
 * MobileNetV2 (Sandler et al. 2018), width 1.0, 224x224: inverted residual
 * blocks (1x1 expand, 3x3 depthwise, 1x1 linear projection) with ReLU6.
 */
#include "zoo.h"

/* expansion t, output channels c, repeats n, first stride s */
static const struct {
	int64_t t, c, n, s;
} stages[] = {
	{ 1, 16, 1, 1 }, { 6, 24, 2, 2 },  { 6, 32, 3, 2 },  { 6, 64, 4, 2 },
	{ 6, 96, 3, 1 }, { 6, 160, 3, 2 }, { 6, 320, 1, 1 },
};

static int32_t inverted_residual(struct zoo_builder *b, int32_t x, int64_t cin, int64_t cout,
				 int64_t stride, int64_t expand)
{
	int64_t hidden = cin * expand;
	int32_t y = x;

	if (expand != 1)
		y = zoo_relu6(b, zoo_conv(b, y, cin, hidden, 1, 1, 1, 2.0f, 1.0f));
	y = zoo_relu6(b, zoo_conv(b, y, hidden, hidden, 3, stride, hidden, 2.0f, 1.0f));
	if (stride == 1 && cin == cout) {
		/* keep the residual sum from growing block after block */
		y = zoo_conv(b, y, hidden, cout, 1, 1, 1, 1.0f, 0.5f);
		return zoo_op2(b, ERT_OP_Add, "residual", x, y);
	}
	return zoo_conv(b, y, hidden, cout, 1, 1, 1, 1.0f, 1.0f);
}

static bool build(struct zoo_builder *b)
{
	int64_t in_dims[4] = { b->batch, 3, 224, 224 };
	int64_t c = 32;
	int32_t x = zoo_input(b, "input", 4, in_dims);

	x = zoo_relu6(b, zoo_conv(b, x, 3, c, 3, 2, 1, 2.0f, 1.0f));
	for (size_t s = 0; s < sizeof(stages) / sizeof(stages[0]); s++) {
		for (int64_t i = 0; i < stages[s].n; i++) {
			x = inverted_residual(b, x, c, stages[s].c, i ? 1 : stages[s].s, stages[s].t);
			c = stages[s].c;
		}
	}
	x = zoo_relu6(b, zoo_conv(b, x, c, 1280, 1, 1, 1, 2.0f, 1.0f));
	x = zoo_classifier(b, x, 1280, 1000);
	return zoo_end(b, x);
}

const struct zoo_arch zoo_mobilenet_v2 = {
	.name = "mobilenet_v2",
	.description = "MobileNetV2 1.0, 1x3x224x224 -> 1x1000, 3.5M parameters",
	.opset = 17,
	.build = build,
};
