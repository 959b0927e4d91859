#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A small int8 CNN in QDQ form, as PyTorch exports fake quantisation.

conv+relu, depthwise conv+relu, pointwise conv, residual add+relu, global
average pool, flatten, linear; activations fake-quantised per tensor (int8,
-128..127, scales from a calibration pass), weights per output channel
(symmetric int8). torch.onnx at opset 13 writes QuantizeLinear /
DequantizeLinear pairs, which `edgert convert` must fuse into int8 ops.

Usage:
  qdq.py export OUT          OUT/model.onnx, input.npy, expected.npy (fake-quant output)
  qdq.py info INFO.json      the converted graph keeps Q/DQ only at its edges
  qdq.py compare GOT WANT    cosine >= 0.99 and top-1 equal
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

QMIN, QMAX = -128, 127
# activation fake-quant points, in forward order
POINTS = ("input", "conv1", "dw", "pw", "add", "out")


def act_params(lo, hi):
    """Per-tensor int8 scale and zero point covering [lo, hi] (and 0)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = max(hi - lo, 1e-6) / (QMAX - QMIN)
    zp = int(round(QMIN - lo / scale))
    return scale, max(QMIN, min(QMAX, zp))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, stride=2, groups=16)
        self.pw = torch.nn.Conv2d(16, 16, 1)
        self.fc = torch.nn.Linear(16, 10)
        self.qp = None  # {point: (scale, zero point)} once calibrated
        self.ranges = {}

    def act(self, name, x):
        if self.qp is None:  # calibration: record the range
            lo, hi = self.ranges.get(name, (0.0, 0.0))
            self.ranges[name] = (min(lo, float(x.min())), max(hi, float(x.max())))
            return x
        s, zp = self.qp[name]
        return torch.fake_quantize_per_tensor_affine(x, s, zp, QMIN, QMAX)

    def weight(self, m):
        if self.qp is None:
            return m.weight
        w = m.weight
        scale = w.detach().abs().reshape(w.shape[0], -1).max(dim=1).values / QMAX
        zp = torch.zeros(w.shape[0], dtype=torch.int32)
        return torch.fake_quantize_per_channel_affine(w, scale, zp, 0, QMIN, QMAX)

    def forward(self, x):
        x = self.act("input", x)
        y1 = self.act("conv1", F.relu(F.conv2d(x, self.weight(self.conv1), self.conv1.bias,
                                               padding=1)))
        y2 = self.act("dw", F.relu(F.conv2d(y1, self.weight(self.dw), self.dw.bias, padding=1,
                                            stride=2, groups=16)))
        y3 = self.act("pw", F.conv2d(y2, self.weight(self.pw), self.pw.bias))
        # the residual branch: y1 brought to y3's resolution by a 2x2 average
        # that keeps y1's scale and zero point
        r = self.act("conv1", F.avg_pool2d(y1, 2, count_include_pad=False))
        y4 = self.act("add", F.relu(r + y3))
        # pooling and flattening keep the add's scale and zero point
        g = F.adaptive_avg_pool2d(y4, 1)
        g = self.act("add", g)
        f = self.act("add", torch.flatten(g, 1))
        return self.act("out", F.linear(f, self.weight(self.fc), self.fc.bias))


def export(out_dir):
    torch.manual_seed(0)
    net = Net().eval()
    gen = torch.Generator().manual_seed(1)
    calib = torch.randn(8, 3, 32, 32, generator=gen)
    with torch.no_grad():
        net(calib)
        net.qp = {k: act_params(*net.ranges[k]) for k in POINTS}
        # an input whose top-1 is clear of the output quantisation (one step is
        # net.qp["out"][0]): a near tie proves nothing about the int8 path
        for i in range(100):
            x = torch.randn(1, 3, 32, 32, generator=gen)
            y = net(x)
            top2 = torch.topk(y[0], 2).values
            if float(top2[0] - top2[1]) > 4 * net.qp["out"][0]:
                break
    os.makedirs(out_dir, exist_ok=True)
    torch.onnx.export(net, x, os.path.join(out_dir, "model.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=False)
    np.save(os.path.join(out_dir, "input.npy"), x.numpy())
    np.save(os.path.join(out_dir, "expected.npy"), y.numpy())
    print(f"qdq_cnn: opset 13, output {tuple(y.shape)}, top-1 margin "
          f"{float(top2[0] - top2[1]):.3g} (output step {net.qp['out'][0]:.3g})")
    return 0


def info(path):
    with open(path) as f:
        desc = json.load(f)
    ops = desc["ops"]
    q, dq = ops.get("QuantizeLinear", 0), ops.get("DequantizeLinear", 0)
    fused = {k: v for k, v in ops.items() if k.startswith("Q") and k != "QuantizeLinear"}
    # one QuantizeLinear for the float input, one DequantizeLinear for the output
    ok = q == 1 and dq == 1 and ops.get("QLinearConv", 0) == 3 and ops.get("QGemm", 0) == 1 \
        and ops.get("QLinearAdd", 0) == 1 and ops.get("QLinearAveragePool", 0) == 1 \
        and ops.get("QLinearGlobalAveragePool", 0) == 1 \
        and not any(k in ops for k in ("Conv", "Gemm", "Add", "Relu"))
    print(f"ops {ops}: {'ok' if ok else 'MISMATCH'} (int8 ops {fused})")
    return 0 if ok else 1


def compare(got_path, want_path):
    got = np.load(got_path).astype(np.float64).ravel()
    want = np.load(want_path).astype(np.float64).ravel()
    if got.shape != want.shape or want.std() == 0:
        print(f"shape {got.shape} vs {want.shape}, or a constant reference")
        return 1
    cos = float(got @ want / (np.linalg.norm(got) * np.linalg.norm(want)))
    top_got, top_want = int(got.argmax()), int(want.argmax())
    ok = cos >= 0.99 and top_got == top_want
    print(f"cosine {cos:.5f}, max abs error {np.abs(got - want).max():.3g}, "
          f"top-1 {top_got} vs {top_want}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "export":
        return export(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "info":
        return info(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
