"""The sub-model inputs and outputs DeskLens's engine feeds by name, checked on import.

A folder exported by another optimum-intel version may name a tensor differently. Where the
difference is only a spelling we know of, the expected name is added to that tensor in the
.xml (a tensor may carry several names; the .bin is untouched). Anything else is refused with
one sentence naming the sub-model, what is missing and the exporter version.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from desktop.core import atomic
from desktop.core.model_setup.errors import ModelRejected

# Sub-model -> (input names, output names) the engine uses by name. The vision, position and
# text-embedding models are fed by position (one input each).
NAMED_PORTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "openvino_language_model": (
        ("inputs_embeds", "attention_mask", "position_ids", "visual_pos_masks",
         "deepstack_visual_embeds", "beam_idx"),
        ("logits",),
    ),
    "openvino_vision_embeddings_merger_model": (
        ("hidden_states", "rotary_pos_emb"),
        ("last_hidden_state", "deepstack_feature_lists"),
    ),
}  # fmt: skip
SINGLE_INPUT = (
    "openvino_text_embeddings_model",
    "openvino_vision_embeddings_model",
    "openvino_vision_embeddings_pos_model",
)
# Known other spellings of the names above (singular/plural and abbreviation variants).
ALIASES: dict[str, tuple[str, ...]] = {
    "inputs_embeds": ("input_embeds",),
    "visual_pos_masks": ("visual_pos_mask",),
    "deepstack_visual_embeds": ("deepstack_visual_embed", "deepstack_embeds"),
    "rotary_pos_emb": ("rotary_pos_embeds", "rotary_emb"),
    "deepstack_feature_lists": ("deepstack_feature_list", "deepstack_features"),
}


@dataclass(frozen=True)
class Renamed:
    submodel: str
    found: str  # the name in the folder
    expected: str  # the name the engine uses, added beside it


def _ports(root: ET.Element, side: str) -> list[ET.Element]:
    """The output ports of Parameter layers (side "inputs") or the input ports of Result
    layers' producers (side "outputs"): the elements whose `names` attribute is the tensor's."""
    layers = root.find("layers")
    if layers is None:
        return []
    if side == "inputs":
        return [
            port
            for layer in layers
            if layer.get("type") == "Parameter"
            for port in layer.iterfind("output/port")
        ]
    results = {layer.get("id") for layer in layers if layer.get("type") == "Result"}
    producers: set[tuple[str, str]] = set()
    edges = root.find("edges")
    for edge in edges if edges is not None else []:
        if edge.get("to-layer") in results:
            producers.add((edge.get("from-layer", ""), edge.get("from-port", "")))
    return [
        port
        for layer in layers
        for port in layer.iterfind("output/port")
        if (layer.get("id"), port.get("id")) in producers
    ]


def _names(port: ET.Element) -> list[str]:
    return [n.strip() for n in (port.get("names") or "").split(",") if n.strip()]


def _fit(ports: list[ET.Element], expected: tuple[str, ...]) -> tuple[list, list[str]]:
    """(ports to rename with their found/expected names, expected names that are missing)."""
    renames, missing = [], []
    for name in expected:
        if any(name in _names(port) for port in ports):
            continue
        aliased = [
            (port, alias)
            for port in ports
            for alias in ALIASES.get(name, ())
            if alias in _names(port)
        ]
        if len(aliased) == 1:
            renames.append((aliased[0][0], aliased[0][1], name))
        else:
            missing.append(name)
    return renames, missing


def check_interfaces(folder: Path, exporter: str = "") -> list[Renamed]:
    """Adds the expected names where only the spelling differs (rewriting those .xml files);
    raises ModelRejected if a sub-model lacks what the engine feeds or reads."""
    made_by = f" (exported by optimum-intel {exporter})" if exporter else ""
    renamed: list[Renamed] = []
    for submodel in (*NAMED_PORTS, *SINGLE_INPUT):
        path = folder / f"{submodel}.xml"
        try:
            tree = ET.parse(path)
        except (OSError, ET.ParseError) as exc:
            raise ModelRejected(f"{path.name} in {folder} cannot be read ({exc}).") from exc
        root = tree.getroot()
        inputs = _ports(root, "inputs")
        if submodel in SINGLE_INPUT:
            if len(inputs) != 1:
                raise ModelRejected(
                    f"{submodel} in {folder}{made_by} takes {len(inputs)} inputs where "
                    "DeskLens's engine feeds one: this export does not fit the engine."
                )
            continue
        want_in, want_out = NAMED_PORTS[submodel]
        in_renames, missing_in = _fit(inputs, want_in)
        out_renames, missing_out = _fit(_ports(root, "outputs"), want_out)
        if missing_in or missing_out:
            what = ", ".join([*(f"input {n}" for n in missing_in),
                              *(f"output {n}" for n in missing_out)])  # fmt: skip
            raise ModelRejected(
                f"{submodel} in {folder}{made_by} has no {what}, which DeskLens's engine "
                "needs: this export does not fit the engine (convert the checkpoint with "
                "convert.py instead)."
            )
        for port, found, expected in in_renames + out_renames:
            port.set("names", ",".join([*_names(port), expected]))
            renamed.append(Renamed(submodel, found, expected))
        if in_renames or out_renames:
            atomic.write_with(path, partial(tree.write, encoding="utf-8", xml_declaration=True))
    return renamed
