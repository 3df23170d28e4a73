"""`desklens --self-test [--model DIR]`: headless checks that an install (a frozen bundle above
all) has everything it needs at run time, one PASS/FAIL line per check, exit code 0 or 1.

Each check imports what it tests, so a missing library fails its own line instead of the whole
command, and the report says which part of a bundle is broken.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop import APP_NAME, __version__
from desktop.core import exit_codes
from desktop.core.errors import describe

if TYPE_CHECKING:
    from PIL import Image

    from desktop.core.engine import VLMEngine

# Rendered at run time and read back by the OCR; letters, digits and a hyphen.
SAMPLE_TEXT = "DeskLens self-test 4821"
SAMPLE_QUESTION = "What does this image say?"
ANSWER_TOKENS = 8
# Frontends the app reads models with: IR (the VLM) and ONNX (the PP-OCR models).
REQUIRED_FRONTENDS = ("ir", "onnx")


class CheckFailed(Exception):
    """A check ran but found a problem; str() is the report's detail."""


@dataclass
class CheckResult:
    name: str
    passed: bool
    seconds: float
    detail: str

    def line(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        return f"{status}  {self.name:<9} {self.seconds:6.2f} s  {self.detail}"


def run_check(name: str, check: Callable[[], str]) -> CheckResult:
    """Runs one check; any exception is that check's FAIL, never the end of the report."""
    started = time.perf_counter()
    try:
        detail, passed = check(), True
    except Exception as exc:  # the report must go on whatever a library raises
        detail, passed = describe(exc), False
    return CheckResult(name, passed, time.perf_counter() - started, detail)


def sample_image() -> Image.Image:
    """SAMPLE_TEXT on white, drawn with Pillow's built-in TrueType font (no font file needed)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=36)
    image = Image.new("RGB", (720, 96), "white")
    ImageDraw.Draw(image).text((24, 24), SAMPLE_TEXT, font=font, fill="black")
    return image


# -- checks --------------------------------------------------------------------------------------


def check_runtime() -> str:
    import openvino as ov
    import openvino_tokenizers
    from openvino.frontend import FrontEndManager

    devices = ov.Core().available_devices
    if "CPU" not in devices:
        raise CheckFailed(f"no CPU device (found: {', '.join(devices) or 'none'})")
    frontends = FrontEndManager().get_available_front_ends()
    missing = [name for name in REQUIRED_FRONTENDS if name not in frontends]
    if missing:
        raise CheckFailed(f"OpenVINO frontend(s) missing: {', '.join(missing)}")
    if not openvino_tokenizers.is_openvino_tokenizers_compatible:
        raise CheckFailed("the openvino-tokenizers extension library could not be loaded")
    version = ov.get_version().split("-")[0]
    return f"OpenVINO {version}, devices {', '.join(devices)}, tokenizers extension loaded"


def check_libraries() -> str:
    """Libraries only some features import (JSON answers, PDF pages): a bundle may lack them."""
    import llguidance  # noqa: F401
    import pypdfium2

    return f"llguidance, pypdfium2 {pypdfium2.PYPDFIUM_INFO.version}"


def check_qt() -> str:
    """The GUI's modules import and Qt's offscreen platform plugin loads. On Linux the xcb
    plugin must be there; whether it loads depends on the machine's X libraries, so that is
    reported, not required (a headless machine may lack them)."""
    import importlib

    import PySide6
    from PySide6.QtCore import QLibraryInfo

    importlib.import_module("desktop.gui.app")  # without starting it: no display needed
    folder = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"
    plugins = {
        p.stem.removeprefix("lib").removeprefix("q"): p
        for p in (folder.iterdir() if folder.is_dir() else ())
        if p.suffix in (".so", ".dll", ".dylib")
    }
    required = ["offscreen", "xcb"] if sys.platform.startswith("linux") else ["offscreen"]
    missing = [name for name in required if name not in plugins]
    if missing:
        raise CheckFailed(f"Qt platform plugin(s) {', '.join(missing)} missing from {folder}")
    problem = _plugin_load_error(plugins["offscreen"])
    if problem:
        raise CheckFailed(f"Qt's offscreen platform plugin does not load: {problem}")
    detail = f"PySide6 {PySide6.__version__}, GUI modules, platforms {', '.join(sorted(plugins))}"
    xcb_problem = _plugin_load_error(plugins["xcb"]) if "xcb" in plugins else None
    return detail + (f" (xcb does not load here: {xcb_problem})" if xcb_problem else "")


def _plugin_load_error(path: Path) -> str | None:
    from PySide6.QtCore import QPluginLoader

    loader = QPluginLoader(str(path))
    return None if loader.load() else loader.errorString()


def check_ocr() -> str:
    from desktop.core.ocr import OcrEngine

    engine = OcrEngine()
    result = engine.extract(sample_image(), name="self-test sample")
    read = " ".join(result.text().split())
    if SAMPLE_TEXT not in read:
        raise CheckFailed(f'expected "{SAMPLE_TEXT}", read "{read}"')
    models = engine.model_files
    verdict = engine.int8_verdict  # INT8 checked against FP32 on this CPU (first use)
    if verdict is not None:
        return f'read "{read}"; {verdict.sentence()} (checked in {verdict.seconds:.1f} s)'
    return f'read "{read}" ({models.precision.upper() if models else "?"} models)'


def check_data_folder() -> str:
    """The user data folder (history, models of an installed app) must be writable."""
    from desktop.core import paths

    folder = paths.user_data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder):
        pass
    models = ", ".join(str(p) for p in paths.model_search_dirs())
    return f"{folder} is writable; models are looked for in {models}"


class ModelChecks:
    """Load, then answer: the second check needs the engine the first one made."""

    def __init__(self, model: str, device: str) -> None:
        self.model = model  # a folder, or a model's name in the models folders
        self.device = device
        self.engine: VLMEngine | None = None

    def load(self) -> str:
        from desktop.core.engine import EngineConfig, VLMEngine
        from desktop.core.model_registry import resolve_model

        folder = resolve_model(self.model)
        self.engine = VLMEngine.load(folder, EngineConfig(device=self.device))
        info = self.engine.info
        loaded = f"{info.name} ({info.weight_format}) from {folder} on {info.device}"
        choice = self.engine.precision_choice  # measured on this CPU at first load
        return f"{loaded}; {choice.sentence()}" if choice else loaded

    def answer(self) -> str:
        from desktop.core.chat import GenerationSettings
        from desktop.core.conversation import AskRequest, ConversationService
        from desktop.core.images import load_image

        if self.engine is None:
            raise CheckFailed("skipped: the model did not load")
        streamed: list[str] = []
        request = AskRequest(
            SAMPLE_QUESTION,
            (load_image(sample_image(), name="self-test sample"),),
            GenerationSettings(max_new_tokens=ANSWER_TOKENS),
        )
        answer = ConversationService(self.engine).ask(request, on_text=streamed.append).answer
        if answer.error:
            raise CheckFailed(answer.error)
        stats = answer.stats
        if stats.generated_tokens < 1 or answer.finish_reason not in ("eos", "length"):
            raise CheckFailed(f"no tokens generated (finish reason {answer.finish_reason})")
        return (
            f"{stats.generated_tokens} tokens, first after {stats.ttft_s:.2f} s, "
            f"{stats.tokens_per_s:.1f} tokens/s, streamed {len(''.join(streamed))} characters"
        )


def checks_for(args: argparse.Namespace) -> list[tuple[str, Callable[[], str]]]:
    checks = [
        ("runtime", check_runtime),
        ("libraries", check_libraries),
        ("qt", check_qt),
        ("ocr", check_ocr),
        ("data", check_data_folder),
    ]
    if args.model:
        model = ModelChecks(args.model, args.device)
        checks += [("model", model.load), ("answer", model.answer)]
    return checks


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="desklens --self-test",
        description="Check the runtime, OCR and (with --model) a model; exit 0 if all pass.",
    )
    parser.add_argument(
        "--model", help="also load this converted model (folder or name) and answer with it"
    )
    parser.add_argument("--device", default="CPU", help="OpenVINO device for the model")
    args = parser.parse_args(argv)

    where = "bundle" if getattr(sys, "frozen", False) else "Python"
    print(f"{APP_NAME} {__version__} self-test ({where}: {sys.executable})", flush=True)
    results = []
    for name, check in checks_for(args):
        results.append(run_check(name, check))
        print(results[-1].line(), flush=True)
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return exit_codes.FAILED if failed else exit_codes.OK
