"""INT8 is used on a CPU only where it reads the check pages as FP32 there (issue 56): the
verdict, the part it falls back on, where it is kept, and the engine following it. A mismatch
is forced with readers that differ, as INT8 did on an AMX Xeon (a lone "-" read as ".")."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from PIL import Image

from desktop.core import paths
from desktop.core.ocr import OcrEngine, int8_check, model_files
from desktop.core.ocr.check_pages import check_pages
from desktop.core.ocr.int8_check import Reading, Verdict
from desktop.core.ocr.model_files import OcrModelFiles

LONE = [page.name for page in check_pages()].index("lone characters")
INT8 = OcrModelFiles(
    Path("det_int8.xml"), Path("rec_int8.xml"), Path("cls.onnx"), "int8", Path("rec.onnx")
)
FP32 = OcrModelFiles(Path("det.onnx"), Path("rec.onnx"), Path("cls.onnx"), "fp32")


@pytest.fixture(autouse=True)
def own_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data folder of its own and no verdict known to the process."""
    monkeypatch.setenv(paths.DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.delenv(int8_check.VERDICTS_ENV, raising=False)  # the data folder's own file
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.setattr(int8_check, "_known", {})
    yield tmp_path / "data"


class Readers:
    """Reads every page as its size and a "-"; the lone-characters page with a "." for its
    "-" when the files hold the INT8 part named by `differs` ("det", "rec" or both)."""

    def __init__(self, *differs: str) -> None:
        self.differs = differs
        self.calls: list[OcrModelFiles] = []

    def __call__(self, files: OcrModelFiles, images: Sequence[Image.Image]) -> list[Reading]:
        self.calls.append(files)
        otherwise = any(getattr(files, part) == getattr(INT8, part) for part in self.differs)
        return [
            Reading(f"{image.size}\n{'.' if otherwise and lone(image) else '-'}", ())
            for image in images
        ]


def lone(image: Image.Image) -> bool:
    return image.tobytes() == check_pages()[LONE].image.tobytes()


def test_int8_that_reads_as_fp32_is_used_whole() -> None:
    read = Readers()
    files, verdict = int8_check.checked(INT8, FP32, read)
    assert files == INT8 and (verdict.det, verdict.rec, verdict.differed) == ("int8", "int8", ())
    assert read.calls == [FP32, INT8]  # FP32 read once, then INT8 whole: nothing more to try
    assert verdict.sentence().startswith(f"INT8 reads the {len(check_pages())} check pages as FP32")


@pytest.mark.parametrize(
    ("differs", "det", "rec"),
    [(("det",), "fp32", "int8"), (("rec",), "int8", "fp32"), (("det", "rec"), "fp32", "fp32")],
)
def test_a_part_that_reads_otherwise_runs_in_fp32(differs, det, rec) -> None:
    files, verdict = int8_check.checked(INT8, FP32, Readers(*differs))
    assert (verdict.det, verdict.rec, verdict.differed) == (det, rec, ("lone characters",))
    assert files.det == (INT8.det if det == "int8" else FP32.det)
    assert files.rec == (INT8.rec if rec == "int8" else FP32.rec)
    # the FP32 recognizer reads again the INT8 one's doubts, so only beside an INT8 recognizer
    assert files.rec_reference == (FP32.rec if rec == "int8" else None)
    assert '"lone characters" otherwise than FP32' in verdict.sentence()


def test_the_verdict_is_kept_per_cpu_and_versions(
    own_data_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    int8_check.checked(INT8, FP32, Readers("rec"))
    kept = json.loads((own_data_folder / int8_check.VERDICTS_NAME).read_text())
    (entry,) = kept["verdicts"].values()
    assert entry["rec"] == "fp32" and entry["identity"]["openvino"]
    monkeypatch.setattr(int8_check, "_known", {})  # a new process: the file is read back
    again = Readers("det", "rec")
    files, verdict = int8_check.checked(INT8, FP32, again)
    assert again.calls == [] and verdict.rec == "fp32" and files.det == INT8.det
    assert int8_check.this_cpu() == verdict
    # Another instruction-set cap (or CPU, or OpenVINO version) is checked again.
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert int8_check.this_cpu() is None
    files, verdict = int8_check.checked(INT8, FP32, again)
    assert again.calls and (verdict.det, verdict.rec, verdict.isa_cap) == ("fp32", "fp32", "AVX2")


@pytest.mark.parametrize("content", ['{"verdicts": {"x": ', '{"verdicts": [1, 2]}', "[]"])
def test_a_damaged_verdicts_file_is_checked_again(own_data_folder: Path, content: str) -> None:
    target = own_data_folder / int8_check.VERDICTS_NAME
    target.parent.mkdir()
    target.write_text(content)
    read = Readers()
    assert int8_check.checked(INT8, FP32, read)[1].det == "int8" and read.calls
    assert len(json.loads(target.read_text())["verdicts"]) == 1


def test_an_unwritable_data_folder_keeps_the_verdict_for_the_process(
    own_data_folder: Path,
) -> None:
    own_data_folder.parent.mkdir(exist_ok=True)
    own_data_folder.write_text("a file where the folder should be")
    read = Readers("det")
    first = int8_check.checked(INT8, FP32, read)
    calls = len(read.calls)
    assert int8_check.checked(INT8, FP32, read) == first and len(read.calls) == calls


@pytest.mark.slow
def test_the_engine_uses_fp32_for_the_part_that_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real models, with the INT8 recognizer's reads of the lone-characters page made to
    differ (as with AMX): the default engine reads with the FP32 recognizer, and reads the
    check pages as the FP32 engine does."""
    decide = int8_check.decide

    def differing(int8, fp32, read, identity) -> Verdict:
        def read_otherwise(files: OcrModelFiles, images) -> list[Reading]:
            readings = read(files, images)
            if files.rec == int8.rec:
                lone = readings[LONE]
                readings[LONE] = Reading(lone.text.replace("-", "."), lone.cells)
            return readings

        return decide(int8, fp32, read_otherwise, identity)

    monkeypatch.setattr(int8_check, "decide", differing)
    engine, fp32 = OcrEngine(), OcrEngine(precision="fp32")
    pages = check_pages()
    got = [engine.extract(page.image).text() for page in pages]
    verdict = engine.int8_verdict
    assert verdict is not None and verdict.rec == "fp32" and "lone characters" in verdict.differed
    assert engine.model_files is not None
    assert engine.model_files.rec == model_files.find_model_files("fp32").rec
    assert got == [fp32.extract(page.image).text() for page in pages]
    assert int8_check.this_cpu() == verdict
    unchecked = OcrEngine(precision="int8")  # asked for by name: as it is (the ISA tests')
    unchecked.warm_up()
    assert unchecked.model_files is not None and unchecked.model_files.precision == "int8"
    assert unchecked.int8_verdict is None
