"""The engine's precisions chosen per CPU by measurement (issue 60): measured once per CPU and
model with the real runtime, kept, measured again after `forget`; a faster precision that
leaves the f32 reference is never chosen (forced with engines that differ); and every
precision this CPU can be given stays within the tolerance of transformers' f32."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from desktop.core import cpu_records, paths
from desktop.core.chat import Answer, AnswerStats, Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine, tuning
from desktop.core.engine.vision import prepare_image
from desktop.core.images import load_image


@pytest.fixture(autouse=True)
def own_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data folder of its own and no choice known to the process."""
    monkeypatch.setenv(paths.DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.delenv(tuning.CHOICES_ENV, raising=False)  # the data folder's own file
    monkeypatch.setattr(tuning, "_known", {})
    yield tmp_path / "data"


class Counted:
    """Counts the precisions `tuning.measure` is run for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.precisions: list[str] = []
        real = tuning.measure

        def measure(engine, precision, kept):
            self.precisions.append(precision)
            return real(engine, precision, kept)

        monkeypatch.setattr(tuning, "measure", measure)


def test_a_cpu_with_f32_alone_measures_nothing(tiny_ir, own_data_folder, monkeypatch):
    monkeypatch.setenv(tuning.PRECISIONS_ENV, "f32")
    counted = Counted(monkeypatch)
    engine = VLMEngine.load(tiny_ir)
    choice = engine.precision_choice
    assert (choice.vision, choice.language, choice.measured) == ("f32", "f32", ())
    assert "one precision" in choice.sentence()
    assert counted.precisions == [] and not (own_data_folder / tuning.CHOICES_NAME).exists()


def test_the_choice_is_measured_once_kept_and_measured_again_when_forgotten(
    tiny_ir, own_data_folder, monkeypatch
):
    # bf16 asked for on every CPU: where it cannot run it is left out (a CPU whose oneDNN
    # lacks it fails its kernels), elsewhere measured; the mechanism is the same.
    monkeypatch.setenv(tuning.PRECISIONS_ENV, "f32,bf16")
    counted = Counted(monkeypatch)
    engine = VLMEngine.load(tiny_ir)
    choice = engine.precision_choice
    first = list(counted.precisions)
    assert first[0] == "f32" and set(first) <= {"f32", "bf16"}
    assert [m.precision for m in choice.measured] == first
    assert all(m.vision_s > 0 and m.prefill_s > 0 and m.decode_tps > 0 for m in choice.measured)
    assert engine.config.vision_precision == choice.vision
    assert engine.config.language_precision == choice.language
    kept = json.loads((own_data_folder / tuning.CHOICES_NAME).read_text())
    (entry,) = kept[tuning.SECTION].values()
    assert entry["identity"]["model"] == tuning.model_digest(Path(tiny_ir))

    monkeypatch.setattr(tuning, "_known", {})  # a new process: the file is read back
    again = VLMEngine.load(tiny_ir)
    assert counted.precisions == first and again.precision_choice == choice

    assert tuning.forget(Path(tiny_ir), EngineConfig())
    VLMEngine.load(tiny_ir)
    assert counted.precisions == first * 2


def test_asked_for_precisions_are_not_measured(tiny_ir, monkeypatch):
    monkeypatch.setenv(tuning.PRECISIONS_ENV, "f32,bf16")
    counted = Counted(monkeypatch)
    engine = VLMEngine.load(tiny_ir, EngineConfig(inference_precision="f32"))
    other = VLMEngine.load(tiny_ir, EngineConfig(tune_precision=False))
    assert engine.precision_choice is None and other.precision_choice is None
    assert counted.precisions == []


@dataclass
class Fake:
    """An engine whose times and outputs are given: `offset` moves its outputs from f32's."""

    vision_s: float
    prefill_s: float
    tps: float
    vision_offset: float = 0.0
    logits_offset: float = 0.0
    last_prefill_logits: np.ndarray | None = None
    reads: list[str] = field(default_factory=list)

    def ask(self, conversation, question, images=(), settings=None) -> Answer:
        base = np.linspace(1.0, 2.0, 50, dtype=np.float32)
        self.last_prefill_logits = base + self.logits_offset * base[::-1]
        stats = AnswerStats(vision_s=self.vision_s, prefill_s=self.prefill_s)
        stats.tokens_per_s = self.tps
        self.reads.append(images[0].name)
        return Answer("x", "length", stats)

    def reset(self) -> None:
        pass

    def image_embedding(self, image) -> np.ndarray:
        return np.ones(64, np.float32) + self.vision_offset


def _decide(f32: Fake, bf16: Fake) -> tuning.Choice:
    engines = {"f32": f32, "bf16": bf16}
    return tuning.decide(lambda vision, lm: engines[vision], ["f32", "bf16"], "cpu", "ov")


def test_the_faster_precision_is_chosen_for_each_part_on_its_own():
    choice = _decide(Fake(1.0, 1.0, 20.0), Fake(0.6, 0.8, 12.0))
    # bf16 reads the image faster; f32 answers faster (prefill + 128 tokens: 7.4 s vs 11.5 s).
    assert (choice.vision, choice.language) == ("bf16", "f32")
    choice = _decide(Fake(1.0, 1.0, 20.0), Fake(1.2, 0.5, 30.0))
    assert (choice.vision, choice.language) == ("f32", "bf16")


def test_a_faster_precision_that_leaves_f32_is_never_chosen():
    vision_off = Fake(0.5, 0.5, 40.0, vision_offset=tuning.VISION_DEVIATION_MAX * 2)
    choice = _decide(Fake(1.0, 1.0, 20.0), vision_off)
    assert (choice.vision, choice.language) == ("f32", "bf16")
    assert choice.measured[1].vision_deviation > tuning.VISION_DEVIATION_MAX
    logits_off = Fake(0.5, 0.5, 40.0, logits_offset=0.3)
    choice = _decide(Fake(1.0, 1.0, 20.0), logits_off)
    assert (choice.vision, choice.language) == ("bf16", "f32")
    assert not choice.measured[1].language_exact_enough


def test_a_precision_the_runtime_cannot_compile_is_left_out():
    f32 = Fake(1.0, 1.0, 20.0)

    def load(vision: str, lm: str) -> Fake:
        if vision == "bf16":
            raise RuntimeError("no kernels for bf16 here")
        return f32

    choice = tuning.decide(load, ["f32", "bf16"], "cpu", "ov")
    assert (choice.vision, choice.language) == ("f32", "f32") and len(choice.measured) == 1
    assert f32.reads == ["tuning 0", "tuning 1", "tuning 2"]  # one warm-up, two timed


def test_a_damaged_choices_file_is_measured_again(tiny_ir, own_data_folder, monkeypatch):
    monkeypatch.setenv(tuning.PRECISIONS_ENV, "f32,bf16")
    own_data_folder.mkdir(parents=True)
    (own_data_folder / tuning.CHOICES_NAME).write_text('{"choices": {"x": [1, ')
    counted = Counted(monkeypatch)
    VLMEngine.load(tiny_ir)
    assert counted.precisions[:1] == ["f32"]


CANDIDATES = tuning.native_precisions(cpu_records.cpu_identity()["capabilities"].split())


def test_a_onednn_cap_below_bf16_leaves_f32_alone(monkeypatch):
    monkeypatch.delenv(tuning.PRECISIONS_ENV, raising=False)
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    assert tuning.native_precisions(["FP32", "BF16"]) == ["f32", "bf16"]
    assert tuning.native_precisions(["FP32", "INT8"]) == ["f32"]
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_VNNI")
    assert tuning.native_precisions(["FP32", "BF16"]) == ["f32"]
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_AMX")
    assert tuning.native_precisions(["FP32", "BF16"]) == ["f32", "bf16"]


@pytest.mark.slow
@pytest.mark.parametrize("precision", CANDIDATES)
def test_every_precision_this_cpu_can_be_given_stays_near_transformers(
    precision, tiny_ir_fp32, hf_model, sample_image
):
    """The bound the choice is made under holds against transformers' f32 too (f32 itself is
    token-exact: test_engine_exactness.py)."""
    import torch

    config = EngineConfig(
        vision_precision=precision,
        language_precision=precision,
        language_properties={"KV_CACHE_PRECISION": "f32"},
        skip_repeats=False,
    )
    engine = VLMEngine.load(tiny_ir_fp32, config)
    image = load_image(sample_image)
    settings = GenerationSettings(max_new_tokens=2)
    answer = engine.ask(Conversation(), "What is it?", [image], settings)
    assert answer.ok, answer.error
    prepared = prepare_image(image.image, engine.encoder.spec)
    ids = torch.tensor([engine.last_sequence.ids])
    with torch.no_grad():
        theirs = (
            hf_model(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                pixel_values=torch.from_numpy(prepared.pixel_patches),
                image_grid_thw=torch.tensor([list(prepared.grid)]),
            )
            .logits[0, -1]
            .numpy()
        )
    ours = np.asarray(engine.last_prefill_logits, np.float32).ravel()
    assert tuning._distance(ours, theirs) <= tuning.LOGITS_DEVIATION_MAX
    assert int(np.argmax(ours)) == int(np.argmax(theirs))
