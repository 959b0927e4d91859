#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torchvision detection models (seeded random weights, full post-processing)
exported to ONNX, and the comparison of edgert's detections with PyTorch's.

  detect.py export NAME DIR   writes DIR/model.onnx, DIR/input.npy (one
                              [3, H, W] image) and DIR/expected/{boxes,
                              scores,labels}.npy (PyTorch's detections)
  detect.py compare NAME GOT WANT
                              GOT and WANT are folders holding boxes.npy,
                              scores.npy and labels.npy: the same number of
                              detections, each matched (see match())
"""
import os
import sys

import numpy as np

if sys.argv[1:2] != ["compare"]:  # comparing needs numpy only, and starts fast
    import torch
    import torchvision
    from torchvision.models import detection

OUTPUTS = ("boxes", "scores", "labels")


def fasterrcnn():
    # A 320x320 image: the transform's resize to min_size 320 keeps its
    # size. box_score_thresh 0.2 keeps some 70 of the 100 detections the
    # model may give (calibrate() below sets the classifier's logits), so
    # the last cut does not decide on near-ties.
    return detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, box_score_thresh=0.2)


def retinanet():
    # min_size/max_size 256 with a 256x256 image: it is not resized, and
    # ResNet-50 + FPN + the heads stay cheap enough for CI. score_thresh
    # 0.75 keeps some 70 boxes of the 1.1 million class scores (calibrate()
    # below sets the logits), under the 300 detections the model may give.
    return detection.retinanet_resnet50_fpn(
        weights=None, weights_backbone=None, min_size=256, max_size=256, score_thresh=0.75)


# name: (constructor, opset, image size, box tolerance in pixels, score
# tolerance). The tolerances are some ten times what float32 rounding alone
# moves the outputs by (PyTorch in float64 against float32: boxes 2e-4 px,
# scores 1e-5 to 3e-5). Opsets below 16: torchvision 0.14 exports RoiAlign without
# coordinate_transformation_mode, which from opset 16 on means half_pixel
# (torchvision's aligned=True); these models use aligned=False
# (output_half_pixel, RoiAlign-10's only mode).
MODELS = {
    "fasterrcnn_mobilenet_v3_large_320_fpn": (fasterrcnn, 11, 320, 2e-3, 1e-4),
    "retinanet_resnet50_fpn": (retinanet, 13, 256, 2e-3, 1e-4),
}


def calibrate(model, layer, x, mean, std):
    """Make the classifier `layer` (a Linear or Conv2d, channels on dim 1)
    give logits of the given mean and spread on this image: each channel's
    logits are centred over the image's positions or proposals, then scaled
    to the standard deviation `std`. Random weights otherwise give nearly the
    same logits everywhere (the bias dominates the features' variation), and
    so scores that tie to a few decimals: a comparison at float32 rounding
    would then be a coin toss. The weights stay random; only their scale and
    the bias follow from the image."""
    seen = []
    hook = layer.register_forward_hook(lambda m, i, o: seen.append(o.detach()))
    with torch.no_grad():
        model([x])
    hook.remove()
    z = torch.cat([o.transpose(0, 1).reshape(o.shape[1], -1) for o in seen], 1)
    mu = z.mean(1)
    scale = std / (z - mu[:, None]).std()
    with torch.no_grad():
        layer.weight.mul_(scale)
        layer.bias.copy_((layer.bias - mu) * scale + mean)


def randomise(model, x):
    """Seeded random weights that make detections. Kaiming-initialised
    layers behind BatchNorm at its identity statistics shrink the image's
    signal layer by layer (to 1e-8 at MobileNet's FPN, leaving features that
    no longer depend on the image), so the BatchNorm statistics are first
    measured on the image, as training would. Then the classifiers are
    calibrated (above) so that a few boxes score well above the score
    threshold and most well below."""
    def measure(m, args):
        z = args[0].detach()
        m.running_mean.copy_(z.mean((0, 2, 3)))
        # one variance for the whole layer: a channel's own would blow up
        # channels that carry almost nothing (and with them rounding noise)
        m.running_var.fill_(z.var((0, 2, 3)).mean())
    hooks = [m.register_forward_pre_hook(measure) for m in model.modules()
             if isinstance(m, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        model([x])
    for h in hooks:
        h.remove()
    if hasattr(model, "roi_heads"):
        calibrate(model, model.rpn.head.cls_logits, x, 0.0, 2.0)
        calibrate(model, model.roi_heads.box_predictor.cls_score, x, 0.0, 2.0)
    else:
        calibrate(model, model.head.classification_head.cls_logits, x, -4.0, 1.0)


def image(size, gen):
    """A seeded synthetic scene in [0, 1]: a smooth background, a dozen
    rectangles of random colours and a little noise. Uniform noise alone
    gives features that look alike at every position, and so scores that
    nearly tie."""
    x = torch.nn.functional.interpolate(torch.rand(1, 3, 6, 6, generator=gen), size=(size, size),
                                        mode="bilinear", align_corners=False)[0]
    for _ in range(12):
        y0, x0 = (torch.rand(2, generator=gen) * size * 0.8).long().tolist()
        h, w = (16 + torch.rand(2, generator=gen) * size * 0.4).long().tolist()
        x[:, y0:y0 + h, x0:x0 + w] = torch.rand(3, 1, 1, generator=gen)
    return (x + 0.05 * torch.randn(x.shape, generator=gen)).clamp(0, 1)


def match(got, want, box_tol, score_tol):
    """Match `got` with `want` (dicts of boxes, scores, labels): a string
    saying what differs, or None when they hold the same detections.
    Detections whose scores nearly tie may come in either order, so each
    wanted detection (by decreasing score) takes the closest unused one of
    the same label whose box and score are within the tolerances.
    match.worst holds the largest box and score differences matched."""
    n = len(want["scores"])
    match.worst = (0.0, 0.0)
    if len(got["scores"]) != n:
        return f"{len(got['scores'])} detections, expected {n}"
    used = np.zeros(n, bool)
    for i in np.argsort(-want["scores"], kind="stable"):
        db = np.abs(got["boxes"] - want["boxes"][i]).max(1)
        ds = np.abs(got["scores"] - want["scores"][i])
        ok = ~used & (got["labels"] == want["labels"][i]) & (db <= box_tol) & (ds <= score_tol)
        if not ok.any():
            return (f"no match for detection {i}: label {want['labels'][i]}, score "
                    f"{want['scores'][i]:.6g}, box {want['boxes'][i]}")
        j = np.flatnonzero(ok)[np.argmin(db[ok])]
        used[j] = True
        match.worst = (max(match.worst[0], float(db[j])), max(match.worst[1], float(ds[j])))
    return None


def export(name, d):
    ctor, opset, size, box_tol, score_tol = MODELS[name]
    torch.manual_seed(0)
    model = ctor().eval()
    gen = torch.Generator().manual_seed(1)
    x = image(size, gen)
    randomise(model, x)
    run = lambda im: {k: v.numpy() for k, v in model([im])[0].items()}
    # Record what each NMS (torchvision's batched_nms: the RPN's, the final
    # one) gets and keeps: the test must show boxes suppressed, not only
    # passed through.
    nms = []
    batched_nms = torchvision.ops.boxes.batched_nms

    def recording_nms(boxes, scores, idxs, iou_threshold):
        keep = batched_nms(boxes, scores, idxs, iou_threshold)
        nms.append((len(boxes), len(keep)))
        return keep
    torchvision.ops.boxes.batched_nms = recording_nms
    with torch.no_grad():
        want = run(x)
    torchvision.ops.boxes.batched_nms = batched_nms
    if not nms or any(kept >= got for got, kept in nms):
        raise SystemExit(f"{name}: an NMS suppressed nothing (boxes in, kept: {nms})")
    with torch.no_grad():
        # A meaningful comparison needs every decision (score thresholds,
        # top-k cuts, NMS overlaps) to have a margin well above float32
        # rounding, which moves these outputs by about 1e-5 (PyTorch in
        # float64 against float32). Input noise of 1e-5 moves them 40 (Faster
        # R-CNN) to 90 (RetinaNet) times more: refuse a model whose
        # detections then change (count, labels, or a box that is not the
        # same one). Scores and boxes
        # themselves follow the noise, hence the looser tolerances here.
        for i in range(2):
            noise = 1e-5 * torch.randn(x.shape, generator=gen)
            diff = match(run(x + noise), want, 0.1, 1e-2)
            if diff:
                raise SystemExit(f"{name}: detections change with 1e-5 input noise: {diff}")
    if not 0 < len(want["scores"]) < model_limit(model):
        raise SystemExit(f"{name}: {len(want['scores'])} detections: make some, under the limit")
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    # the outputs in the order of the model's dict (Faster R-CNN gives
    # boxes, labels, scores; RetinaNet boxes, scores, labels)
    torch.onnx.export(model, ([x],), os.path.join(d, "model.onnx"), opset_version=opset,
                      input_names=["images"], output_names=list(want))
    np.save(os.path.join(d, "input.npy"), x.numpy())
    for k in OUTPUTS:
        np.save(os.path.join(d, "expected", k + ".npy"), want[k])
    print(f"{name}: opset {opset}, {len(want['scores'])} detections, NMS boxes in, kept: {nms}\n"
          f"scores {want['scores']}\nlabels {want['labels']}")


def model_limit(model):
    return model.roi_heads.detections_per_img if hasattr(model, "roi_heads") else model.detections_per_img


def compare(name, got_dir, want_dir):
    box_tol, score_tol = MODELS[name][3:]
    got = {k: np.load(os.path.join(got_dir, k + ".npy")) for k in OUTPUTS}
    want = {k: np.load(os.path.join(want_dir, k + ".npy")) for k in OUTPUTS}
    n = len(want["scores"])
    if n == 0:
        print("PyTorch found no detections: the comparison would prove nothing")
        return 1
    diff = match(got, want, box_tol, score_tol)
    if diff:
        print(f"{diff}: MISMATCH")
        return 1
    print(f"{n} detections, boxes within {match.worst[0]:.2g} px (bound {box_tol}), "
          f"scores within {match.worst[1]:.2g} (bound {score_tol}): ok")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[4]))
    print(__doc__)
    sys.exit(2)
