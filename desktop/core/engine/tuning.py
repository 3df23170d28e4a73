"""The engine's precisions, chosen on the CPU it runs on by measurement (issue 60).

Which precision is fastest depends on the CPU, not on one table: on an AVX512-BF16 CPU without
AMX the vision encoder ran 23 % slower in bf16 than in f32, on a Xeon with AMX 1.5x faster;
there the language model's default bf16 prefills faster than f32 but decodes 1.5x slower. So
at the first load on a CPU (per model, CPU, flags, ISA cap and versions) the engine is loaded
once per precision the CPU computes natively, each reads the same images and answers, and the
fastest precision is kept for the vision encoder (its time) and for the language model (its
prefill plus a typical answer). A precision whose results leave the f32 reference by more than
the engine's tolerance is never chosen. CPUs with f32 alone (most laptops) measure nothing.

The choice is kept in the user data folder beside the OCR's INT8 verdict (`cpu_records`);
`forget()` drops it so the next load measures again.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np
from PIL import Image

from desktop.core.chat import Answer, Conversation, GenerationSettings
from desktop.core.cpu_records import (
    cpu_identity,
    forget_record,
    key_of,
    read_fields,
    records_file,
    write_record,
)
from desktop.core.engine.config import EngineConfig
from desktop.core.images import LoadedImage, load_image
from desktop.core.manifest import MANIFEST_NAME

log = logging.getLogger(__name__)

TUNING_VERSION = 1  # raise when what is measured or how it is judged changes
CHOICES_NAME = "engine-precisions.json"
CHOICES_ENV = "DESKLENS_ENGINE_CHOICES"
SECTION = "choices"
KEPT = 16
# The language model is judged on the tuning prompt's prefill plus an answer this long (a
# short answer: a longer one would favour decode speed even more).
ANSWER_TOKENS = 128
MEASURED_TOKENS = 24  # decoded per timed answer (after the first token)
TUNING_SIDE = 448  # px: a 448 x 448 image is 196 visual tokens
QUESTION = "Describe the image."
# Relative L2 distance from the f32 reference on the tuning images, beyond which a precision is
# not chosen. The language model's bound is what its CPU default (bf16, and dynamic
# quantisation in groups of 128) already measured on the 2B shape, 9.2 % (config.py), with
# room for the image's share; the vision encoder's is 3x its INT8 deviation (2.1 %).
LOGITS_DEVIATION_MAX = 0.15
VISION_DEVIATION_MAX = 0.06
PRECISIONS_ENV = "DESKLENS_ENGINE_PRECISIONS"  # tests: the candidates, e.g. "f32,bf16"


class TunedEngine(Protocol):
    """What the measurement uses of an engine (VLMEngine)."""

    last_prefill_logits: np.ndarray | None

    def ask(
        self,
        conversation: Conversation,
        question: str,
        images: Sequence[LoadedImage] = (),
        settings: GenerationSettings | None = None,
    ) -> Answer: ...

    def reset(self) -> None: ...

    def image_embedding(self, image: LoadedImage) -> np.ndarray: ...


# Loads the engine with (vision precision, language-model precision).
Loader = Callable[[str, str], TunedEngine]


@dataclass(frozen=True)
class Measured:
    """One precision's figures on the tuning images (the best of the timed reads)."""

    precision: str
    vision_s: float
    prefill_s: float
    decode_tps: float
    vision_deviation: float  # relative L2 from the f32 reference (0 for f32 itself)
    logits_deviation: float
    same_top_token: bool

    @property
    def turn_s(self) -> float:
        """The language model's share of a typical turn: prefill, then ANSWER_TOKENS."""
        return self.prefill_s + ANSWER_TOKENS / max(self.decode_tps, 1e-9)

    @property
    def vision_exact_enough(self) -> bool:
        return self.vision_deviation <= VISION_DEVIATION_MAX

    @property
    def language_exact_enough(self) -> bool:
        return self.same_top_token and self.logits_deviation <= LOGITS_DEVIATION_MAX


@dataclass(frozen=True)
class Choice:
    vision: str
    language: str
    measured: tuple[Measured, ...]  # none where the CPU computes f32 alone
    seconds: float
    cpu: str
    openvino: str

    def sentence(self) -> str:
        chosen = f"vision encoder {self.vision}, language model {self.language}"
        if not self.measured:
            return f"{chosen}: f32 is the one precision {self.cpu} computes natively"
        figures = "; ".join(
            f"{m.precision}: vision {m.vision_s:.2f} s, prefill {m.prefill_s:.2f} s, "
            f"{m.decode_tps:.1f} tok/s"
            for m in self.measured
        )
        return f"{chosen}, measured on {self.cpu} in {self.seconds:.0f} s ({figures})"


def native_precisions(capabilities: Sequence[str]) -> list[str]:
    """The precisions the CPU computes natively: f32, and bf16 where OpenVINO says so (AVX512-BF16,
    AMX) and no oneDNN cap below bf16 is set (OpenVINO still lists BF16 then, but its kernels
    fail). Others would be emulated, slower: never candidates."""
    wanted = os.environ.get(PRECISIONS_ENV)
    if wanted:
        return [p for p in wanted.split(",") if p]
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    capped = not any(level in cap for level in ("ALL", "BF16", "FP16", "AMX", "AVX10"))
    return ["f32", "bf16"] if "BF16" in capabilities and not capped else ["f32"]


def applies(config: EngineConfig) -> bool:
    """Tuned unless asked for precisions (tests, benchmarks) or another device."""
    forced = config.inference_precision or config.vision_precision or config.language_precision
    hinted = any(
        "INFERENCE_PRECISION_HINT" in props
        for props in (config.language_properties, config.vision_properties)
    )
    return config.tune_precision and config.device.upper() == "CPU" and not forced and not hinted


def candidate_config(config: EngineConfig, vision: str, language: str) -> EngineConfig:
    """The configuration a candidate is measured with: no pruning (every visual token
    costs), a small image cache."""
    return replace(
        config,
        vision_precision=vision,
        language_precision=language,
        tune_precision=False,
        skip_repeats=False,
        image_cache_size=4,
    )


def choices_file() -> Path:
    return records_file(CHOICES_NAME, CHOICES_ENV)


def model_digest(folder: Path) -> str:
    """The model's identity: its manifest (file sizes and digests)."""
    try:
        return hashlib.sha256((folder / MANIFEST_NAME).read_bytes()).hexdigest()[:16]
    except OSError:
        return folder.name


def identity_of(folder: Path, config: EngineConfig) -> dict[str, str]:
    return {
        **cpu_identity(),
        "model": model_digest(folder),
        "threads": str(config.threads or ""),
        "group": str(config.dynamic_quantization_group_size),
        "tuning": str(TUNING_VERSION),
    }


def tuning_images(count: int = 3) -> list[LoadedImage]:
    """Images that repeat nothing (every visual token is computed), the same every time."""
    images = []
    for seed in range(count):
        pixels = np.random.default_rng(60 + seed).integers(0, 256, (TUNING_SIDE, TUNING_SIDE, 3))
        images.append(load_image(Image.fromarray(pixels.astype(np.uint8)), name=f"tuning {seed}"))
    return images


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def measure(engine: TunedEngine, precision: str, kept: dict[str, np.ndarray]) -> Measured:
    """Reads the tuning images: the first one prepares the runtime's shapes, the others are
    timed. `kept` carries the f32 reference's outputs (empty: this is the reference)."""
    warm, *timed = tuning_images()
    engine.ask(Conversation(), QUESTION, [warm], GenerationSettings(max_new_tokens=2))
    settings = GenerationSettings(max_new_tokens=MEASURED_TOKENS + 1, ignore_eos=True)
    vision, prefill, decode = [], [], []
    for image in timed:
        engine.reset()
        stats = engine.ask(Conversation(), QUESTION, [image], settings).stats
        vision.append(stats.vision_s)
        prefill.append(stats.prefill_s)
        decode.append(stats.tokens_per_s)
    logits = np.array(engine.last_prefill_logits, np.float32).ravel()
    embedding = np.array(engine.image_embedding(timed[-1]), np.float32)
    if not kept:
        kept.update(logits=logits, embedding=embedding)
    return Measured(
        precision,
        round(min(vision), 3),
        round(min(prefill), 3),
        round(max(decode), 2),
        round(_distance(embedding, kept["embedding"]), 4),
        round(_distance(logits, kept["logits"]), 4),
        int(np.argmax(logits)) == int(np.argmax(kept["logits"])),
    )


def decide(load: Loader, precisions: Sequence[str], cpu: str, openvino: str) -> Choice:
    """Loads and measures each precision (f32 first: the reference), one engine at a time."""
    started = time.perf_counter()
    measured: list[Measured] = []
    kept: dict[str, np.ndarray] = {}
    for precision in ["f32", *[p for p in precisions if p != "f32"]]:
        try:  # the engine is dropped with the call: one engine's memory at a time
            measured.append(measure(load(precision, precision), precision, kept))
        except RuntimeError as exc:  # the runtime cannot compile it here: not a candidate
            if precision == "f32":
                raise
            log.warning("Precision %s could not be measured: %s", precision, exc)
        gc.collect()
    vision = min((m for m in measured if m.vision_exact_enough), key=lambda m: m.vision_s)
    language = min((m for m in measured if m.language_exact_enough), key=lambda m: m.turn_s)
    seconds = round(time.perf_counter() - started, 1)
    return Choice(vision.precision, language.precision, tuple(measured), seconds, cpu, openvino)


_known: dict[str, Choice] = {}
_tuning = threading.Lock()  # one measurement at a time: a second load waits for the first's


def stored(key: str) -> Choice | None:
    fields = read_fields(choices_file(), SECTION, key, Choice.__dataclass_fields__)
    if fields is None:
        return None
    try:
        measured = tuple(Measured(**m) for m in fields.pop("measured"))
        return Choice(**fields, measured=measured)
    except TypeError:  # not one of ours
        return None


def chosen(folder: Path, config: EngineConfig, load: Loader) -> Choice:
    """The precisions for this model on this CPU: kept, or measured now."""
    identity = identity_of(folder, config)
    precisions = native_precisions(identity["capabilities"].split())
    if precisions == ["f32"]:
        return Choice("f32", "f32", (), 0.0, identity["cpu"], identity["openvino"])
    key = key_of(identity)
    with _tuning:
        choice = _known.get(key) or stored(key)
        if choice is None:
            choice = decide(load, precisions, identity["cpu"], identity["openvino"])
            log.info("Engine precisions: %s", choice.sentence())
            record = {**asdict(choice), "identity": identity}
            write_record(choices_file(), SECTION, key, record, KEPT)
        _known[key] = choice
    return choice


def configured(
    folder: Path, config: EngineConfig, make: Callable[[EngineConfig], TunedEngine]
) -> tuple[EngineConfig, Choice | None]:
    """`config` with the precisions chosen for this CPU (measured with engines `make` builds,
    where none are kept), and the choice; `config` itself where precisions were asked for."""
    if not applies(config):
        return config, None
    choice = chosen(folder, config, lambda v, lm: make(candidate_config(config, v, lm)))
    return replace(
        config, vision_precision=choice.vision, language_precision=choice.language
    ), choice


def forget(folder: Path, config: EngineConfig) -> bool:
    """Drops this CPU's kept choice for the model: the next load measures again."""
    key = key_of(identity_of(folder, config))
    _known.pop(key, None)
    try:
        return forget_record(choices_file(), SECTION, key)
    except OSError as exc:
        log.warning("The kept precisions could not be dropped: %s", exc)
        return False
