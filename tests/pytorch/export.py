#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Export torchvision classifiers and a ViT to ONNX with seeded random weights.

For each model writes OUT/NAME/model.onnx, input.npy (seeded N(0,1) image)
and expected.npy (PyTorch's own output for that input).
Usage: export.py OUT [NAME ...]
"""
import os
import sys

import numpy as np
import torch
import torchvision

# name: (constructor, opset, dynamic batch)
MODELS = {
    "resnet18": (torchvision.models.resnet18, 13, True),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, 13, True),
    "mobilenet_v3_small": (torchvision.models.mobilenet_v3_small, 14, True),
    "squeezenet1_1": (torchvision.models.squeezenet1_1, 15, False),
    "shufflenet_v2_x1_0": (torchvision.models.shufflenet_v2_x1_0, 16, True),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, 17, False),
    "vit_b_16": (torchvision.models.vit_b_16, 17, True),
}


def export(out_dir, name):
    ctor, opset, dynamic = MODELS[name]
    torch.manual_seed(0)
    model = ctor(weights=None).eval()
    # BatchNorm running stats start at mean 0 / var 1: randomise them so that
    # folding BatchNorm into Conv is exercised with non-trivial values.
    # torchvision zero-initialises some layers (ViT's head): give them weights,
    # or every output would be 0 and the comparison would prove nothing.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
            if isinstance(m, torch.nn.Linear) and not m.weight.any():
                torch.nn.init.normal_(m.weight, std=0.02)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, 3, 224, 224, generator=gen)
    with torch.no_grad():
        y = model(x)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    axes = {"input": {0: "batch"}, "logits": {0: "batch"}} if dynamic else None
    torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=opset,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes=axes, do_constant_folding=False)
    np.save(os.path.join(d, "input.npy"), x.numpy())
    np.save(os.path.join(d, "expected.npy"), y.numpy())
    print(f"{name}: opset {opset}, dynamic batch {dynamic}, output {tuple(y.shape)}")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 1
    names = sys.argv[2:] or list(MODELS)
    for n in names:
        if n not in MODELS:
            print(f"unknown model '{n}'; known: {', '.join(MODELS)}", file=sys.stderr)
            return 1
        export(sys.argv[1], n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
