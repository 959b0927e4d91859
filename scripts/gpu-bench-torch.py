#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The PyTorch side of scripts/gpu-bench.sh: the zoo's architectures built by
torchvision with random weights, run eagerly on CUDA with cuDNN, fp32 and
fp16, timed as edgert bench times a run.

A timed run is what `edgert bench --backend opencl` does per run: the input
copied from host memory to the GPU, the forward pass, the logits copied back,
with torch.cuda.synchronize() before the clock starts and the copy back
waiting for the GPU. cudnn.benchmark is on (cuDNN picks its algorithms per
shape during the warm-up, as edgert's tuner does while planning); TF32 is
off so that fp32 is fp32. Prints one JSON object per line:
{"model", "batch", "dtype", "min_ms", "median_ms", "runs"}, then one with
"env" (versions, GPU). Exit status 1 when anything failed; the lines of what
worked are still printed.
"""
import argparse
import json
import statistics
import sys
import time


def build(name, torchvision):
    m = torchvision.models
    if name == "mobilenet_v2":
        return m.mobilenet_v2(weights=None)
    if name == "resnet18":
        return m.resnet18(weights=None)
    if name == "resnet50":
        return m.resnet50(weights=None)
    if name == "vit_s16":
        # ViT-S/16 as edgert zoo builds it: 384 dims, 6 heads, 12 blocks, MLP 1536
        from torchvision.models.vision_transformer import VisionTransformer
        return VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=6,
                                 hidden_dim=384, mlp_dim=1536, num_classes=1000)
    raise ValueError("unknown model '%s'" % name)


def bench(torch, model, batch, dtype, warmup, loops):
    x_host = torch.rand(batch, 3, 224, 224, dtype=dtype).pin_memory()
    times = []
    with torch.inference_mode():
        for i in range(warmup + loops):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = model(x_host.to("cuda", non_blocking=True))
            y_host = y.to("cpu")          # waits for the GPU
            t1 = time.perf_counter()
            if i >= warmup:
                times.append((t1 - t0) * 1e3)
    if not torch.isfinite(y_host.float()).all():
        raise RuntimeError("non-finite logits")
    return min(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="mobilenet_v2,resnet18,resnet50,vit_s16")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--dtypes", default="fp32,fp16")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--loops", type=int, default=50)
    a = ap.parse_args()
    try:
        import torch
        import torchvision
    except Exception as e:  # noqa: BLE001 - any import failure is reported the same way
        print("gpu-bench-torch: cannot import torch/torchvision: %s" % e, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu-bench-torch: torch sees no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    env = {"env": {"torch": torch.__version__, "torchvision": torchvision.__version__,
                   "cudnn": torch.backends.cudnn.version(), "cuda": torch.version.cuda,
                   "gpu": torch.cuda.get_device_name(0)}}
    dtypes = {"fp32": torch.float32, "fp16": torch.float16}
    failed = False
    for name in a.models.split(","):
        try:
            base = build(name, torchvision).eval()
        except Exception as e:  # noqa: BLE001
            print("gpu-bench-torch: %s: cannot build: %s" % (name, e), file=sys.stderr)
            failed = True
            continue
        for dname in a.dtypes.split(","):
            # Module.to converts in place: base is in this dtype from here on
            model = base.to("cuda", dtype=dtypes[dname])
            for batch in (int(b) for b in a.batches.split(",")):
                try:
                    lo, med = bench(torch, model, batch, dtypes[dname], a.warmup, a.loops)
                except Exception as e:  # noqa: BLE001
                    print("gpu-bench-torch: %s batch %d %s: %s" % (name, batch, dname, e),
                          file=sys.stderr)
                    failed = True
                    continue
                print(json.dumps({"model": name, "batch": batch, "dtype": dname,
                                  "min_ms": round(lo, 4), "median_ms": round(med, 4),
                                  "runs": a.loops}), flush=True)
        del base
        torch.cuda.empty_cache()
    print(json.dumps(env), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
