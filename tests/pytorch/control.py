#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A torch.jit.script model with an If and a Loop on tensor values
(docs/control-flow.md), exported to ONNX: seeded random weights, and inputs
that take each branch.

  control.py export DIR   writes DIR/model.onnx and, for each case
                          (then, else), DIR/CASE/x.npy, n.npy and
                          expected.npy (PyTorch's output)
  control.py compare GOT.npy WANT.npy
                          max |got - want| <= 1e-5 + 1e-4 |want|
"""
import os
import sys

import numpy as np
import torch


class Control(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, n):
        h = self.lin(x)
        # an If on a tensor value
        if bool(h.sum() > 0):
            h = h * 2.0 + 1.0
        else:
            h = torch.relu(-h) - x
        # a Loop whose trip count is a tensor value, with a loop-carried value
        for i in range(int(n)):
            h = torch.tanh(h + x * float(i + 1)) * 0.5
        return h


def export(d):
    torch.manual_seed(0)
    model = Control().eval()
    scripted = torch.jit.script(model)
    os.makedirs(d, exist_ok=True)
    gen = torch.Generator().manual_seed(1)
    # inputs for each branch: draw until both signs of the condition are seen
    cases = {}
    with torch.no_grad():
        while len(cases) < 2:
            x = torch.randn(2, 4, generator=gen)
            case = "then" if bool(model.lin(x).sum() > 0) else "else"
            if case not in cases:
                cases[case] = x
    n = {"then": 3, "else": 5}
    torch.onnx.export(scripted, (cases["then"], torch.tensor(n["then"])),
                      os.path.join(d, "model.onnx"), opset_version=13,
                      input_names=["x", "n"], output_names=["y"])
    for case, x in cases.items():
        c = os.path.join(d, case)
        os.makedirs(c, exist_ok=True)
        with torch.no_grad():
            y = scripted(x, torch.tensor(n[case]))
        np.save(os.path.join(c, "x.npy"), x.numpy())
        np.save(os.path.join(c, "n.npy"), np.array(n[case], dtype=np.int64))
        np.save(os.path.join(c, "expected.npy"), y.numpy())


def compare(got_path, want_path):
    got = np.load(got_path).astype(np.float64)
    want = np.load(want_path).astype(np.float64)
    if got.shape != want.shape:
        print(f"shape {got.shape}, expected {want.shape}")
        return 1
    if want.std() == 0:
        print("the reference output is constant: the comparison would prove nothing")
        return 1
    err = np.abs(got - want)
    ok = bool((err <= 1e-5 + 1e-4 * np.abs(want)).all())
    print(f"max abs error {err.max():.3g}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "export":
        export(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)
