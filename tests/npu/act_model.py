#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Export a small CNN with the activations int8 ops cannot clamp to:
HardSwish, Sigmoid (also as SiLU, x * sigmoid(x)), Tanh, LeakyRelu. Quantized
by edgert quantize, each becomes a 256-entry table lookup (QLinearLookup)
that the NPU runs as a LUT command.
Usage: act_model.py OUT.onnx
"""
import sys

import torch


class Acts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.c3 = torch.nn.Conv2d(16, 32, 1)
        self.c4 = torch.nn.Conv2d(32, 32, 3, padding=1)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = torch.nn.functional.hardswish(self.c1(x))
        x = self.c2(x)
        x = x * torch.sigmoid(x)
        x = torch.tanh(self.c3(x))
        x = torch.nn.functional.leaky_relu(self.c4(x), 0.1)
        x = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


def main():
    torch.manual_seed(0)
    model = Acts().eval()
    torch.onnx.export(model, torch.randn(1, 3, 64, 64), sys.argv[1], opset_version=14,
                      input_names=["input"], output_names=["logits"])


if __name__ == "__main__":
    main()
