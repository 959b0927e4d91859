/* SPDX-License-Identifier: MIT */
/*
 * ResNet (He et al. 2016) as torchvision builds it, 224x224: ResNet-18 with
 * basic blocks, ResNet-50 with bottlenecks (stride on the 3x3 conv, "v1.5").
 */
#include "zoo.h"

/* Residual branches end scaled down so that the sum stays near unit scale. */
#define BRANCH_SCALE 0.5f

static int32_t shortcut(struct zoo_builder *b, int32_t x, int64_t cin, int64_t cout,
			int64_t stride)
{
	if (stride == 1 && cin == cout)
		return x;
	return zoo_conv(b, x, cin, cout, 1, stride, 1, 1.0f, 1.0f);
}

static int32_t basic_block(struct zoo_builder *b, int32_t x, int64_t cin, int64_t cout,
			   int64_t stride)
{
	int32_t y = zoo_relu(b, zoo_conv(b, x, cin, cout, 3, stride, 1, 2.0f, 1.0f));

	y = zoo_conv(b, y, cout, cout, 3, 1, 1, 2.0f, BRANCH_SCALE);
	return zoo_relu(b, zoo_op2(b, ERT_OP_Add, "residual", shortcut(b, x, cin, cout, stride), y));
}

static int32_t bottleneck(struct zoo_builder *b, int32_t x, int64_t cin, int64_t width,
			  int64_t stride)
{
	int64_t cout = width * 4;
	int32_t y = zoo_relu(b, zoo_conv(b, x, cin, width, 1, 1, 1, 2.0f, 1.0f));

	y = zoo_relu(b, zoo_conv(b, y, width, width, 3, stride, 1, 2.0f, 1.0f));
	y = zoo_conv(b, y, width, cout, 1, 1, 1, 2.0f, BRANCH_SCALE);
	return zoo_relu(b, zoo_op2(b, ERT_OP_Add, "residual", shortcut(b, x, cin, cout, stride), y));
}

static bool build_resnet(struct zoo_builder *b, const int *blocks, bool bottlenecks)
{
	static const int64_t widths[4] = { 64, 128, 256, 512 };
	int64_t in_dims[4] = { b->batch, 3, 224, 224 };
	int64_t c = 64;
	int32_t x = zoo_input(b, "input", 4, in_dims);

	x = zoo_relu(b, zoo_conv(b, x, 3, 64, 7, 2, 1, 2.0f, 1.0f));
	x = zoo_maxpool(b, x, 3, 2, 1);
	for (int s = 0; s < 4; s++) {
		for (int i = 0; i < blocks[s]; i++) {
			int64_t stride = (s > 0 && i == 0) ? 2 : 1;

			if (bottlenecks) {
				x = bottleneck(b, x, c, widths[s], stride);
				c = widths[s] * 4;
			} else {
				x = basic_block(b, x, c, widths[s], stride);
				c = widths[s];
			}
		}
	}
	x = zoo_classifier(b, x, c, 1000);
	return zoo_end(b, x);
}

static bool build18(struct zoo_builder *b)
{
	static const int blocks[4] = { 2, 2, 2, 2 };

	return build_resnet(b, blocks, false);
}

static bool build50(struct zoo_builder *b)
{
	static const int blocks[4] = { 3, 4, 6, 3 };

	return build_resnet(b, blocks, true);
}

const struct zoo_arch zoo_resnet18 = {
	.name = "resnet18",
	.description = "ResNet-18, 1x3x224x224 -> 1x1000, 11.7M parameters",
	.opset = 17,
	.build = build18,
};

const struct zoo_arch zoo_resnet50 = {
	.name = "resnet50",
	.description = "ResNet-50 (bottlenecks), 1x3x224x224 -> 1x1000, 25.5M parameters",
	.opset = 17,
	.build = build50,
};
