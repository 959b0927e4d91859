#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Export a small CNN whose middle and head the NPU cannot run: a bilinear
Resize between two conv blocks and a float Softmax at the end. Quantized by
edgert quantize it runs split: NPU, CPU (Resize), NPU, CPU (Softmax).
Usage: split_model.py OUT.onnx
"""
import sys

import torch


class Split(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 16, 3, padding=1, groups=16), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 1), torch.nn.ReLU())
        self.b = torch.nn.Sequential(
            torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.ReLU())
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = self.a(x)
        x = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="bilinear",
                                            align_corners=False)
        x = self.b(x)
        x = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return torch.softmax(self.fc(x), dim=1)


def main():
    torch.manual_seed(0)
    model = Split().eval()
    x = torch.randn(1, 3, 64, 64)
    torch.onnx.export(model, x, sys.argv[1], opset_version=13, input_names=["input"],
                      output_names=["probs"])


if __name__ == "__main__":
    main()
