"""INT8 OCR models built on the user's machine from the wheel's FP32 models, without NNCF.

Post-training quantisation has two halves. Calibration (running the FP32 models on sample pages
to learn each activation's range) is slow and is done once, at development time, by
`python -m desktop.core.ocr.quantize`; its result is a few kilobytes of ranges committed as
`int8_ranges.json`. Applying them is quick graph surgery that plain OpenVINO can do: a
FakeQuantize on every convolution / fully-connected input (the calibrated range) and on its
weights (per output channel, from the weights themselves). OpenVINO's CPU plugin then runs
those layers in INT8. Attention products of two activations, softmax and the rest stay f32.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as ops

from desktop.core.bounded_json import read_json

RANGES_FILE = Path(__file__).with_name("int8_ranges.json")
_WEIGHTED = {"Convolution", "GroupConvolution", "MatMul"}


def quantizable_inputs(model: ov.Model) -> Iterator[tuple[ov.Node, str]]:
    """(layer, key of its activation input) for every layer with constant weights."""
    for node in model.get_ordered_ops():
        if node.get_type_name() not in _WEIGHTED:
            continue
        if _weights(node.input_value(1)) is None:
            continue  # a product of two activations (attention): kept in f32
        yield node, activation_key(node.input_value(0))


def activation_key(output: ov.Output) -> str:
    return f"{output.get_node().get_friendly_name()}:{output.get_index()}"


def apply_ranges(model: ov.Model, ranges: dict[str, list[float]]) -> int:
    """Inserts the FakeQuantize pairs in place; returns how many layers were quantised."""
    shared: dict[str, ov.Output] = {}
    done = 0
    for node, key in list(quantizable_inputs(model)):
        if key not in ranges:
            continue
        if key not in shared:
            shared[key] = _activation_fq(node.input_value(0), *ranges[key])
        node.input(0).replace_source_output(shared[key])
        weights = node.input_value(1)
        node.input(1).replace_source_output(_weight_fq(node, weights))
        done += 1
    model.validate_nodes_and_infer_types()
    return done


def load_ranges(path: Path = RANGES_FILE) -> dict:
    ranges = read_json(path)
    if not isinstance(ranges, dict):
        raise ValueError(f"{path} does not hold calibration ranges")
    return ranges


def build_int8(source: Path, ranges: dict[str, list[float]], target: Path) -> int:
    """Reads `source` (ONNX/IR), applies `ranges`, saves the INT8-ready IR at `target`."""
    model = ov.Core().read_model(source)
    layers = apply_ranges(model, ranges)
    try:  # store the quantised weights as int8 (a quarter of the size); same results
        from openvino._offline_transformations import compress_quantize_weights_transformation

        compress_quantize_weights_transformation(model)
    except ImportError:  # a runtime without it: the f32 weights work the same, 4x larger
        pass
    ov.save_model(model, target, compress_to_fp16=False)
    return layers


def _activation_fq(value: ov.Output, low: float, high: float) -> ov.Output:
    if low >= 0:  # after a ReLU: unsigned 8 bit from zero
        low, high = 0.0, max(high, 1e-6)
    else:  # signed, symmetric around zero (no zero point, the fast path on CPUs)
        scale = max(-low, high, 1e-6)
        low, high = -scale, scale * 127 / 128
    lo = ops.constant(np.float32(low))
    hi = ops.constant(np.float32(high))
    return ops.fake_quantize(value, lo, hi, lo, hi, 256).output(0)


def _weight_fq(node: ov.Node, weights: ov.Output) -> ov.Output:
    """Symmetric per-output-channel FakeQuantize (255 levels, i8 without -128)."""
    data = _weights(weights)
    assert data is not None  # the caller quantizes constant weights only
    kind = node.get_type_name()
    if kind == "MatMul":
        transposed = node.get_attributes().get("transpose_b", False)
        channel_axis = data.ndim - 2 if transposed else data.ndim - 1
    else:  # Convolution [O, I, ...]; GroupConvolution [G, O/G, I/G, ...]
        channel_axis = 1 if kind == "GroupConvolution" else 0
    keep = (0, 1) if kind == "GroupConvolution" else (channel_axis,)
    reduce_axes = tuple(i for i in range(data.ndim) if i not in keep)
    bound = np.abs(data).max(axis=reduce_axes, keepdims=True).astype(np.float32)
    bound = np.maximum(bound, 1e-8)
    lo, hi = ops.constant(-bound), ops.constant(bound)
    return ops.fake_quantize(weights, lo, hi, lo, hi, 255).output(0)


def _weights(output: ov.Output) -> np.ndarray | None:
    """The constant values feeding a weight input, seen through Convert (FP16 models) and
    Reshape (grouped convolutions), in the shape the layer sees; None for an activation."""
    node = output.get_node()
    while node.get_type_name() in ("Convert", "Reshape"):
        node = node.input_value(0).get_node()
    shape = output.get_partial_shape()
    if node.get_type_name() != "Constant" or not shape.is_static:
        return None
    return node.get_data().astype(np.float32).reshape(shape.to_shape())
