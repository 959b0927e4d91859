#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sequence models people export from PyTorch (issue 11): LSTM, GRU and RNN
(bidirectional, multi-layer, with initial states, packed sequences of
different lengths, a dynamic number of frames) and a transformer encoder
with a dynamic sequence length, seeded random weights.

  rnn.py list             prints the model names
  rnn.py export OUT NAME...
                          writes OUT/NAME/model.onnx and, for each case
                          (the transformer has one per sequence length),
                          OUT/NAME/CASE/in/<input>.npy and
                          OUT/NAME/CASE/want/<output>.npy (PyTorch's output),
                          then OUT/NAME/exported (the suite's stamp)
  rnn.py info NAME INFO.json
                          checks `edgert info --json`: every node's shape
                          known (dynamic axes taken as 1) and the MACs
                          those sizes give (MACS below)
  rnn.py compare CASEDIR  compares each CASEDIR/result/<output>.npy with
                          CASEDIR/want/<output>.npy: same shape and
                          max |got - want| <= 1e-5 + 1e-4 max |want|, per
                          output; a classifier's top-1 equal too

Only `export` imports torch (slow to load); `compare` needs numpy alone.
"""
import os
import shutil
import sys

import numpy as np


def _models():
    import torch
    from torch import nn

    class KwsLstm(nn.Module):
        """Keyword spotting: MFCC frames [batch, time, 40] -> 12 class logits,
        through a 2-layer bidirectional LSTM (batch_first) and mean pooling."""

        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(40, 48, num_layers=2, bidirectional=True, batch_first=True)
            self.fc = nn.Linear(96, 12)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.fc(y.mean(dim=1))

    class StatefulLstm(nn.Module):
        """A 2-layer LSTM, time first, run from given states (streaming):
        returns the sequence and the final states."""

        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(16, 32, num_layers=2)

        def forward(self, x, h0, c0):
            y, (h, c) = self.lstm(x, (h0, c0))
            return y, h, c

    class PackedLstm(nn.Module):
        """A batch of sequences of different lengths through
        pack_padded_sequence (ONNX's sequence_lens): 2-layer bidirectional
        LSTM, outputs padded back to the input's length, and final states."""

        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True)

        def forward(self, x, lens):
            rnn_utils = nn.utils.rnn
            packed = rnn_utils.pack_padded_sequence(x, lens, batch_first=True,
                                                    enforce_sorted=False)
            y, (h, _) = self.lstm(packed)
            y, _ = rnn_utils.pad_packed_sequence(y, batch_first=True, total_length=x.shape[1])
            return y, h

    class GruDenoiser(nn.Module):
        """Speech denoising: a magnitude spectrogram [batch, frames, 64] times a
        mask in (0, 1) from a 2-layer bidirectional GRU and a Linear."""

        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(64, 48, num_layers=2, bidirectional=True, batch_first=True)
            self.fc = nn.Linear(96, 64)

        def forward(self, spec):
            y, _ = self.gru(spec)
            return spec * torch.sigmoid(self.fc(y))

    class StreamingGru(nn.Module):
        """The streaming form of the denoiser: a 2-layer GRU that carries its
        state from one block of frames to the next."""

        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(64, 48, num_layers=2, batch_first=True)
            self.fc = nn.Linear(48, 64)

        def forward(self, spec, h0):
            y, h = self.gru(spec, h0)
            return spec * torch.sigmoid(self.fc(y)), h

    class ReluRnn(nn.Module):
        """Elman RNN (ONNX RNN) with ReLU, 2 layers, bidirectional, and a
        Linear on every step."""

        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(24, 32, num_layers=2, nonlinearity="relu", bidirectional=True,
                              batch_first=True)
            self.fc = nn.Linear(64, 8)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.fc(y)

    class Encoder(nn.Module):
        """A 3-layer transformer encoder (batch_first) on [batch, seq, 64]."""

        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0,
                                               batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(64))

        def forward(self, x):
            return self.enc(x)

    def randn(*shape, gen):
        return torch.randn(*shape, generator=gen)

    # name: (module, opset, input names, output names, dynamic axes,
    #        cases: name -> function(gen) giving the inputs)
    return {
        "lstm_kws": (KwsLstm, 13, ["mfcc"], ["logits"], None,
                     {"b2": lambda g: [randn(2, 49, 40, gen=g)]}),
        "lstm_state": (StatefulLstm, 14, ["x", "h0", "c0"], ["y", "h", "c"], None,
                       {"t20": lambda g: [randn(20, 1, 16, gen=g), randn(2, 1, 32, gen=g),
                                          randn(2, 1, 32, gen=g)]}),
        # two batches of lengths (the export must not keep the first one's)
        "lstm_packed": (PackedLstm, 14, ["x", "lens"], ["y", "h"], None,
                        {"lens_a": lambda g: [randn(3, 10, 8, gen=g), torch.tensor([10, 4, 7])],
                         "lens_b": lambda g: [randn(3, 10, 8, gen=g), torch.tensor([2, 10, 9])]}),
        # exported at 50 frames, run at 50 and 23
        "gru_denoise": (GruDenoiser, 14, ["spec"], ["denoised"],
                        {"spec": {1: "frames"}, "denoised": {1: "frames"}},
                        {"t50": lambda g: [randn(1, 50, 64, gen=g).abs()],
                         "t23": lambda g: [randn(1, 23, 64, gen=g).abs()]}),
        "gru_stream": (StreamingGru, 13, ["spec", "h0"], ["denoised", "h"], None,
                       {"t16": lambda g: [randn(1, 16, 64, gen=g).abs(),
                                          randn(2, 1, 48, gen=g)]}),
        "rnn_relu": (ReluRnn, 13, ["x"], ["y"], None,
                     {"t30": lambda g: [randn(2, 30, 24, gen=g)]}),
        # exported at length 12, run at two other lengths
        "transformer_enc": (Encoder, 17, ["x"], ["y"],
                            {"x": {1: "seq"}, "y": {1: "seq"}},
                            {"export": lambda g: [randn(1, 12, 64, gen=g)],
                             "s7": lambda g: [randn(1, 7, 64, gen=g)],
                             "s33": lambda g: [randn(1, 33, 64, gen=g)]}),
    }



def _rnn_macs(layers, dirs, steps, batch, gates, hidden):
    """MACs of a stacked RNN: x W^T and h R^T for every gate, step and
    direction; layers lists each layer's input size."""
    return sum(dirs * steps * batch * gates * hidden * (i + hidden) for i in layers)


# What `edgert info` must count for each model, dynamic axes taken as 1.
MACS = {
    "lstm_kws": _rnn_macs([40, 96], 2, 49, 2, 4, 48) + 2 * 96 * 12,
    "lstm_state": _rnn_macs([16, 32], 1, 20, 1, 4, 32),
    "lstm_packed": _rnn_macs([8, 32], 2, 10, 3, 4, 16),
    "gru_denoise": _rnn_macs([64, 96], 2, 1, 1, 3, 48) + 96 * 64,
    "gru_stream": _rnn_macs([64, 48], 1, 16, 1, 3, 48) + 16 * 48 * 64,
    # per layer at length 1: Q, K, V and the output projection (4 x 64 x 64),
    # the feed-forward (2 x 64 x 128), Q K^T and A V (2 x 4 heads x 16)
    "rnn_relu": _rnn_macs([24, 64], 2, 30, 2, 1, 32) + 2 * 30 * 64 * 8,
    "transformer_enc": 3 * (4 * 64 * 64 + 2 * 64 * 128 + 2 * 4 * 16),
}

NAMES = ["lstm_kws", "lstm_state", "lstm_packed", "gru_denoise", "gru_stream", "rnn_relu",
         "transformer_enc"]


def export(out_dir, name):
    import torch

    ctor, opset, in_names, out_names, axes, cases = _models()[name]
    torch.manual_seed(0)
    model = ctor().eval()
    gen = torch.Generator().manual_seed(1)
    inputs = {c: f(gen) for c, f in cases.items()}
    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)  # no case left from an older version
    os.makedirs(d)
    first = next(iter(inputs))
    torch.onnx.export(model, tuple(inputs[first]), os.path.join(d, "model.onnx"),
                      opset_version=opset, input_names=in_names, output_names=out_names,
                      dynamic_axes=axes)
    for c, xs in inputs.items():
        if c == "export":
            continue  # only the shape the model was traced at
        with torch.no_grad():
            ys = model(*xs)
        if not isinstance(ys, tuple):
            ys = (ys,)
        for sub, names, vals in (("in", in_names, xs), ("want", out_names, ys)):
            os.makedirs(os.path.join(d, c, sub), exist_ok=True)
            for n, v in zip(names, vals):
                np.save(os.path.join(d, c, sub, n + ".npy"), v.numpy())
        print(f"{name} ({c}): opset {opset}, inputs "
              f"{', '.join(f'{n} {tuple(v.shape)}' for n, v in zip(in_names, xs))}")
    with open(os.path.join(d, "exported"), "w", encoding="ascii") as f:
        f.write("ok\n")


def info(name, path):
    import json

    with open(path, encoding="utf-8") as f:
        got = json.load(f)
    ok = got["macs_complete"] and got["macs"] == MACS[name]
    print(f"MACs {got['macs']} (expected {MACS[name]}), "
          f"{'every shape known' if got['macs_complete'] else 'shapes unknown'}: "
          f"{'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def compare(case_dir):
    want_dir = os.path.join(case_dir, "want")
    msgs, ok = [], True
    for f in sorted(os.listdir(want_dir)):
        want = np.load(os.path.join(want_dir, f)).astype(np.float64)
        try:
            got = np.load(os.path.join(case_dir, "result", f)).astype(np.float64)
        except OSError:
            print(f"{f[:-4]}: no output")
            return 1
        if got.shape != want.shape:
            print(f"{f[:-4]}: shape {got.shape}, expected {want.shape}")
            return 1
        if want.std() == 0:
            print(f"{f[:-4]}: the reference is constant: the comparison would prove nothing")
            return 1
        err = np.abs(got - want).max()
        bound = 1e-5 + 1e-4 * np.abs(want).max()
        good = bool(err <= bound)
        msg = f"{f[:-4]} {err:.2g} (bound {bound:.2g})"
        if f == "logits.npy":
            top_got = got.reshape(got.shape[0], -1).argmax(axis=1)
            top_want = want.reshape(want.shape[0], -1).argmax(axis=1)
            good = good and bool((top_got == top_want).all())
            msg += f", top-1 {top_got.tolist()} vs {top_want.tolist()}"
        ok = ok and good
        msgs.append(msg)
    print(f"max abs error {'; '.join(msgs)}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "list":
        print(" ".join(NAMES))
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] == "export" and set(sys.argv[3:]) <= set(NAMES):
        failed = 0
        for n in sys.argv[3:]:
            try:
                export(sys.argv[2], n)
            except Exception as e:  # the others still export; the suite names this one
                print(f"{n}: export failed: {e!r}", file=sys.stderr)
                failed += 1
        sys.exit(1 if failed else 0)
    if len(sys.argv) == 4 and sys.argv[1] == "info" and sys.argv[2] in NAMES:
        sys.exit(info(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2]))
    print(__doc__)
    sys.exit(2)
