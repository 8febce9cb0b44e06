"""torchvision's compiled operators `nms` and `roi_align`: on the CPU against a plain-Python
reference, on the device against the CPU.

Owns: the fixed inputs (seeded), the references (greedy NMS over float64 IoU; RoIAlign with
bilinear sampling, written from the operator's definition: bins of the box, `sampling_ratio`
points per bin side, points outside [-1, size] count as zero, `aligned=True` shifts by half a
pixel) and the comparisons. NMS must keep exactly the same boxes; RoIAlign within 1e-5
relative (float32 sums of a handful of float64-exact products).
Must not: import torch or torchvision at module level (the check hands the modules in).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from rocmforge.verify.checks.ops import relative_error

if TYPE_CHECKING:
    from torch import Tensor

NMS_THRESHOLD = 0.45
ROI_OUTPUT = (5, 5)
ROI_SCALE = 0.5
ROI_SAMPLING = 2
ROI_TOLERANCE = 1e-5


def nms_inputs(torch: ModuleType, count: int) -> tuple[Tensor, Tensor]:
    """`count` boxes (x1, y1, x2, y2) in a 100x100 field, many overlapping, distinct scores."""
    gen = torch.Generator().manual_seed(19)
    corner = torch.rand(count, 2, generator=gen) * 80
    size = torch.rand(count, 2, generator=gen) * 30 + 2
    boxes = torch.cat([corner, corner + size], dim=1)
    scores = torch.randperm(count, generator=gen).to(torch.float32) / count
    return boxes, scores


def nms_reference(boxes: list[list[float]], scores: list[float], threshold: float) -> list[int]:
    """Greedy NMS: highest score first; drop every later box whose IoU with a kept one is above
    `threshold`."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    kept: list[int] = []
    for i in order:
        if all(iou(boxes[i], boxes[k]) <= threshold for k in kept):
            kept.append(i)
    return kept


def iou(a: list[float], b: list[float]) -> float:
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def roi_inputs(torch: ModuleType) -> tuple[Tensor, Tensor]:
    """A (2, 3, 16, 16) feature map and 6 boxes (batch index, x1, y1, x2, y2) in image
    coordinates (scale 0.5), some reaching past the edge."""
    gen = torch.Generator().manual_seed(7)
    features = torch.randn(2, 3, 16, 16, generator=gen)
    rois = torch.tensor([[0, 0.0, 0.0, 31.0, 31.0], [0, 3.5, 7.25, 20.0, 14.0],
                         [1, 10.0, 2.0, 40.0, 30.0], [1, -4.0, -3.0, 6.0, 9.5],
                         [0, 12.3, 12.3, 12.9, 13.1], [1, 20.0, 0.5, 30.5, 22.0]])
    return features, rois


def _bilinear(plane: list[list[float]], y: float, x: float) -> float:
    height, width = len(plane), len(plane[0])
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_low = y_high = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_low = x_high = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    return (hy * hx * plane[y_low][x_low] + hy * lx * plane[y_low][x_high]
            + ly * hx * plane[y_high][x_low] + ly * lx * plane[y_high][x_high])


def roi_align_reference(features: list[list[list[list[float]]]], rois: list[list[float]],
                        output: tuple[int, int], scale: float, sampling: int, aligned: bool
                        ) -> list[list[list[list[float]]]]:
    """RoIAlign in float64 Python: out[roi][channel][ph][pw]."""
    offset = 0.5 if aligned else 0.0
    pooled_h, pooled_w = output
    out = []
    for roi in rois:
        batch = int(roi[0])
        x1, y1 = roi[1] * scale - offset, roi[2] * scale - offset
        x2, y2 = roi[3] * scale - offset, roi[4] * scale - offset
        roi_w, roi_h = x2 - x1, y2 - y1
        if not aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / pooled_h, roi_w / pooled_w
        per_roi = []
        for plane in features[batch]:
            rows = []
            for ph in range(pooled_h):
                row = []
                for pw in range(pooled_w):
                    total = 0.0
                    for iy in range(sampling):
                        y = y1 + ph * bin_h + (iy + 0.5) * bin_h / sampling
                        for ix in range(sampling):
                            x = x1 + pw * bin_w + (ix + 0.5) * bin_w / sampling
                            total += _bilinear(plane, y, x)
                    row.append(total / (sampling * sampling))
                rows.append(row)
            per_roi.append(rows)
        out.append(per_roi)
    return out


def _roi_align(torchvision: ModuleType, features: Tensor, rois: Tensor, aligned: bool) -> Tensor:
    return torchvision.ops.roi_align(features, rois, output_size=ROI_OUTPUT,
                                     spatial_scale=ROI_SCALE, sampling_ratio=ROI_SAMPLING,
                                     aligned=aligned)


def cpu_against_reference(torch: ModuleType, torchvision: ModuleType
                          ) -> tuple[list[str], dict[str, object]]:
    """(problems, figures) for nms and roi_align on the CPU against the references."""
    problems: list[str] = []
    boxes, scores = nms_inputs(torch, 300)
    kept = torchvision.ops.nms(boxes, scores, NMS_THRESHOLD).tolist()
    want = nms_reference(boxes.double().tolist(), scores.tolist(), NMS_THRESHOLD)
    if kept != want:
        first = next((i for i, (a, b) in enumerate(zip(kept, want, strict=False)) if a != b),
                     min(len(kept), len(want)))
        problems.append(f"nms kept {len(kept)} boxes, the reference {len(want)} (first "
                        f"difference at position {first})")
    features, rois = roi_inputs(torch)
    errors = {}
    for aligned in (False, True):
        got = _roi_align(torchvision, features, rois, aligned)
        reference = torch.tensor(roi_align_reference(
            features.double().tolist(), rois.double().tolist(), ROI_OUTPUT, ROI_SCALE,
            ROI_SAMPLING, aligned), dtype=torch.float64)
        error = relative_error(torch, got, reference)
        errors[f"aligned={aligned}"] = error
        if not error <= ROI_TOLERANCE:
            problems.append(f"roi_align(aligned={aligned}) differs from the reference by "
                            f"{error:.3g} (tolerance {ROI_TOLERANCE:g})")
    return problems, {"nms_boxes": len(boxes), "nms_kept": len(kept),
                      "roi_align_relative_error": errors, "tolerance": ROI_TOLERANCE}


def device_against_cpu(torch: ModuleType, torchvision: ModuleType, device: str
                       ) -> tuple[list[str], dict[str, object]]:
    """(problems, figures) for nms and roi_align on `device` against the same ops on the CPU."""
    problems: list[str] = []
    boxes, scores = nms_inputs(torch, 1000)
    on_cpu = torchvision.ops.nms(boxes, scores, NMS_THRESHOLD).tolist()
    on_device = torchvision.ops.nms(boxes.to(device), scores.to(device), NMS_THRESHOLD).cpu()
    if on_device.tolist() != on_cpu:
        problems.append(f"nms on {device} kept {len(on_device)} boxes, on the CPU "
                        f"{len(on_cpu)}")
    features, rois = roi_inputs(torch)
    errors = {}
    for aligned in (False, True):
        want = _roi_align(torchvision, features, rois, aligned)
        got = _roi_align(torchvision, features.to(device), rois.to(device), aligned)
        error = relative_error(torch, got, want)
        errors[f"aligned={aligned}"] = error
        if not error <= ROI_TOLERANCE:
            problems.append(f"roi_align(aligned={aligned}) on {device} differs from the CPU by "
                            f"{error:.3g} (tolerance {ROI_TOLERANCE:g})")
    return problems, {"device": device, "nms_boxes": len(boxes), "nms_kept": len(on_cpu),
                      "roi_align_relative_error": errors, "tolerance": ROI_TOLERANCE}
