#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Compare edgert's output with PyTorch's: top-1 equal and
max |got - want| <= 1e-3 * max |want|. Usage: compare.py GOT.npy WANT.npy"""
import sys

import numpy as np


def main():
    got = np.load(sys.argv[1]).astype(np.float64)
    want = np.load(sys.argv[2]).astype(np.float64)
    if got.shape != want.shape:
        print(f"shape {got.shape}, expected {want.shape}")
        return 1
    if want.size < 2 or want.std() == 0:
        print("the reference output is constant: the comparison would prove nothing")
        return 1
    err = np.abs(got - want).max()
    bound = 1e-3 * np.abs(want).max()
    top_got, top_want = int(got.reshape(got.shape[0], -1)[0].argmax()), int(want.reshape(want.shape[0], -1)[0].argmax())
    ok = err <= bound and top_got == top_want
    print(f"max abs error {err:.3g} (bound {bound:.3g}), top-1 {top_got} vs {top_want}: "
          f"{'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
