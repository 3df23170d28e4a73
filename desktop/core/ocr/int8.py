"""INT8 OCR models built on the user's machine from the wheel's FP32 models, without NNCF.

Post-training quantisation has two halves. Deciding (NNCF runs the FP32 models on calibration
pages, chooses where FakeQuantize layers go and their ranges, and keeps weights to 7 bits, but
the depthwise convolutions', so that every CPU computes the same integers) is slow and is done
once, at development time, by `python -m devkit.ocr_calibrate`; `decisions_of` writes NNCF's
FakeQuantize layers down as `int8_ranges.json` (format 2), which is committed. Applying them is
quick graph surgery that plain OpenVINO can do (`apply_decisions`): the same FakeQuantize layers
on the same edges of the wheel's model, with the same numbers, so the built model is NNCF's
model. OpenVINO's CPU plugin then runs those layers in INT8.

A model is quantized in the form the CPU plugin runs it in: the ONNX detector spells GELU out
(Divide, Erf, Add, Multiply), and NNCF, which does not see an activation there, put its
FakeQuantize layers between those pieces; the plugin then ran them as separate INT8
element-wise layers instead of folding them into the convolution, and the INT8 detector was
only 1.22x faster than FP32 (1.45x once fused; bench/RESULTS.md). `prepared` folds them into
Gelu layers first, for NNCF and for the build alike; the decisions file lists the roles it
was applied to ("fused"), so older decisions still build as they were made.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as ops

from desktop.core.bounded_json import read_json

RANGES_FILE = Path(__file__).with_name("int8_ranges.json")
_ROLES = ("det", "rec")
_NUMBERED = re.compile(r"[A-Za-z]+_\d+")


def load_ranges(path: Path = RANGES_FILE) -> dict:
    """The decisions file: source model sizes, and a list of decisions per model role."""
    ranges = read_json(path)
    if not isinstance(ranges, dict) or not all(isinstance(ranges.get(r), list) for r in _ROLES):
        raise ValueError(f"{path} does not hold INT8 decisions")
    return ranges


def prepared(source: Path, fused: bool) -> ov.Model:
    """The model NNCF decides on and the build applies the decisions to: `source` as read,
    with its spelled-out activations folded into single layers when `fused` (OpenVINO's own
    common transformations, the ones the CPU plugin applies when it compiles). The layers
    the decisions name keep their names; a folded GELU takes its last Multiply's."""
    model = ov.Core().read_model(source)
    if fused:
        from openvino._offline_transformations import apply_moc_transformations

        apply_moc_transformations(model, cf=False)
    return model


def build_int8(source: Path, decisions: list[dict], target: Path, *, fused: bool = False) -> int:
    """Reads `source` (ONNX/IR), applies NNCF's `decisions` (made on the `fused` form when
    set), saves the INT8-ready IR at `target`; returns how many FakeQuantize layers it has."""
    model = prepared(source, fused)
    layers = apply_decisions(model, decisions)
    try:  # store the quantised weights as int8 (a quarter of the size); same results
        from openvino._offline_transformations import compress_quantize_weights_transformation

        compress_quantize_weights_transformation(model)
    except ImportError:  # a runtime without it: the f32 weights work the same, 4x larger
        pass
    ov.save_model(model, target, compress_to_fp16=False)
    return layers


def decisions_of(quantized: ov.Model) -> list[dict]:
    """NNCF's FakeQuantize layers as JSON: for each, where it sits (its producer's output,
    the consumers it feeds, and whether that is every consumer of the output), its levels and
    its range constants (float32, exact; two when the output range is the input range)."""
    found = []
    for node in quantized.get_ordered_ops():
        if node.get_type_name() != "FakeQuantize":
            continue
        source = node.input_value(0)
        fed = node.output(0).get_target_inputs()
        others = [t for t in source.get_target_inputs() if t.get_node() != node]
        ranges = [node.input_value(i).get_node().get_data() for i in range(1, 5)]
        if all(np.array_equal(a, b) for a, b in zip(ranges[:2], ranges[2:], strict=True)):
            ranges = ranges[:2]  # output range = input range, as NNCF makes them
        found.append(
            {
                "producer": [source.get_node().get_friendly_name(), source.get_index()],
                "consumers": sorted([t.get_node().get_friendly_name(), t.get_index()] for t in fed),
                "all": not others,
                "levels": node.get_attributes()["levels"],
                "ranges": [_array(values) for values in ranges],
            }
        )
    return found


def apply_decisions(model: ov.Model, decisions: list[dict]) -> int:
    """Inserts the recorded FakeQuantize layers in place; returns how many were inserted. A
    decision that this model cannot place raises ValueError (other source models). OpenVINO
    numbers the nodes it names itself ("ShapeOf_25842") anew on every read, so a layer is
    found by its producer's name, else by a consumer's."""
    by_name = {node.get_friendly_name(): node for node in model.get_ordered_ops()}
    for decision in decisions:
        source = _source(by_name, decision)
        if decision["all"]:
            targets = list(source.get_target_inputs())
        else:
            targets = [
                by_name[name].input(int(port))
                for name, port in decision["consumers"]
                if _stable(name) and name in by_name
            ]
            if len(targets) != len(decision["consumers"]):
                missing = decision["consumers"]
                raise ValueError(f"the INT8 decisions name layers the model lacks: {missing}")
        ranges = [ops.constant(_from_array(values)) for values in decision["ranges"]]
        low_in, high_in, low_out, high_out = ranges if len(ranges) == 4 else ranges * 2
        quantized = ops.fake_quantize(
            source, low_in, high_in, low_out, high_out, int(decision["levels"])
        ).output(0)
        for target in targets:
            target.replace_source_output(quantized)
    model.validate_nodes_and_infer_types()
    return len(decisions)


def _source(by_name: dict[str, ov.Node], decision: dict) -> ov.Output:
    """The output a decision quantizes: its producer's, else the one a consumer reads; only
    names the source model gave are trusted (OpenVINO's own numbering can repeat)."""
    name, port = decision["producer"]
    if _stable(name) and name in by_name:
        return by_name[name].output(int(port))
    for consumer, index in decision["consumers"]:
        if _stable(consumer) and consumer in by_name:
            return by_name[consumer].input_value(int(index))
    raise ValueError(f"the INT8 decisions name a layer the model lacks: {name}")


def _stable(name: str) -> bool:
    """False for names OpenVINO numbers itself when it reads a model ("ShapeOf_25842")."""
    return _NUMBERED.fullmatch(name) is None


def _array(values: np.ndarray) -> dict:
    data = np.ascontiguousarray(values, dtype="<f4")
    return {"shape": list(data.shape), "f32": base64.b64encode(data.tobytes()).decode("ascii")}


def _from_array(stored: dict) -> np.ndarray:
    data = np.frombuffer(base64.b64decode(stored["f32"], validate=True), dtype="<f4")
    return data.reshape([int(n) for n in stored["shape"]]).astype(np.float32)
