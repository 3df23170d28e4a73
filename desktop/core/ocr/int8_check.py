"""INT8 is used on a CPU only where it reads as FP32 there: checked by the program on first use,
not promised by the CPUs the tests ran on (issue 56).

The INT8 models compute the same integers on every CPU only as far as their kernels do: 7-bit
weights keep the non-VNNI pair sums from saturating, but a kernel of another kind can still
round differently (with AMX the INT8 recognizer read a lone "-" table cell as "."). So the first
OCR on a CPU reads fixed pages (`check_pages.py`) with the INT8 and the FP32 models and
compares what a user gets: text, line breaks, table cells. Where INT8 differs, the parts are
tried one at a time (the FP32 detector with the INT8 recognizer, then the other way round) and
the first mix that reads every page as FP32 is used; if none does, the FP32 models are. The
verdict is kept in the user data folder per CPU model, CPU flags, oneDNN cap, OpenVINO version,
INT8 decisions and DeskLens version, so the check (a few seconds, on the thread that loads the
models: the GUI's warm-up worker) runs once per machine and update, and again if the pages
drawn change (fonts installed since).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal

from PIL import Image

from desktop.core.cpu_records import (
    cpu_identity,
    key_of,
    read_fields,
    records_file,
    write_record,
)
from desktop.core.ocr.check_pages import check_pages
from desktop.core.ocr.model_files import OcrModelFiles, decisions_digest

log = logging.getLogger(__name__)

CHECK_VERSION = 1  # raise when the comparison changes (new pages change the key themselves)
VERDICTS_NAME = "ocr-int8-verdicts.json"
VERDICTS_ENV = "DESKLENS_OCR_VERDICTS"
SECTION = "verdicts"
KEPT = 16  # verdicts kept (one per CPU, cap and version the data folder has met)
Part = Literal["int8", "fp32"]
# The mixes tried, in order of speed: (detector, recognizer).
MIXES: tuple[tuple[Part, Part], ...] = (("int8", "int8"), ("fp32", "int8"), ("int8", "fp32"))


@dataclass(frozen=True)
class Reading:
    """What a user gets from a page: the text with its line breaks, and every table's cells."""

    text: str
    cells: tuple[tuple[tuple[str, ...], ...], ...]


# Reads the images with the given model files, in order.
Reader = Callable[[OcrModelFiles, Sequence[Image.Image]], list[Reading]]


@dataclass(frozen=True)
class Verdict:
    det: Part
    rec: Part
    differed: tuple[str, ...]  # the check pages INT8 (both parts) read otherwise than FP32
    pages: int
    seconds: float
    cpu: str
    openvino: str
    isa_cap: str = ""  # ONEDNN_MAX_CPU_ISA when it was set

    @property
    def models(self) -> str:
        if self.det == self.rec:
            return f"{self.det.upper()} models"
        return f"{self.det.upper()} detector, {self.rec.upper()} recognizer"

    def sentence(self) -> str:
        cap = f" capped at {self.isa_cap}" if self.isa_cap else ""
        where = f"on {self.cpu}{cap}, OpenVINO {self.openvino.split('-')[0]}"
        if not self.differed:
            return f"INT8 reads the {self.pages} check pages as FP32 {where}: {self.models}"
        pages = ", ".join(f'"{name}"' for name in self.differed)
        return f"INT8 read {pages} otherwise than FP32 {where}: {self.models}"


def fingerprint() -> dict[str, str]:
    """What the INT8 kernels OpenVINO picks, and so the verdict, depend on."""
    return {
        **cpu_identity(),
        "decisions": decisions_digest()[:16],
        "check": str(CHECK_VERSION),
        "pages": pages_digest(),
    }


@cache
def pages_digest() -> str:
    """The check pages' pixels: other pages (an update, fonts installed since) are checked
    again."""
    digest = hashlib.sha256()
    for page in check_pages():
        digest.update(page.image.tobytes())
    return digest.hexdigest()[:16]


def verdicts_file() -> Path:
    return records_file(VERDICTS_NAME, VERDICTS_ENV)


def mixed(int8: OcrModelFiles, fp32: OcrModelFiles, det: Part, rec: Part) -> OcrModelFiles:
    """The model files of a mix; the FP32 recognizer reads again the INT8 one's doubts."""
    if det == rec:
        return int8 if det == "int8" else fp32
    chosen = replace(fp32, precision="mixed")
    if det == "int8":
        return replace(chosen, det=int8.det)
    return replace(chosen, rec=int8.rec, rec_reference=fp32.rec)


def decide(
    int8: OcrModelFiles, fp32: OcrModelFiles, read: Reader, identity: dict[str, str]
) -> Verdict:
    """Reads the check pages with FP32, then with each mix until one reads them all alike
    (INT8 whole reads every page, for the verdict to name them; a mix stops at its first
    page read otherwise)."""
    started = time.perf_counter()
    pages = check_pages()
    images = [page.image for page in pages]
    wanted = read(fp32, images)
    got = read(int8, images)
    differed = tuple(p.name for p, a, b in zip(pages, got, wanted, strict=True) if a != b)
    mix: tuple[Part, Part] = ("fp32", "fp32") if differed else MIXES[0]
    for tried in MIXES[1:] if differed else ():
        files = mixed(int8, fp32, *tried)
        if all(read(files, [image]) == [want] for image, want in zip(images, wanted, strict=True)):
            mix = tried
            break
    det, rec = mix
    return Verdict(
        det,
        rec,
        differed,
        len(pages),
        round(time.perf_counter() - started, 2),
        identity["cpu"],
        identity["openvino"],
        identity["isa_cap"],
    )


_known: dict[str, Verdict] = {}  # this process's verdicts (the folder may be read-only)
_deciding = threading.Lock()  # one check at a time: a second engine waits for the first's


def stored(key: str) -> Verdict | None:
    fields = read_fields(verdicts_file(), SECTION, key, Verdict.__dataclass_fields__)
    if fields is None:
        return None
    try:
        verdict = replace(Verdict(**fields), differed=tuple(fields["differed"]))
    except TypeError:  # not one of ours
        return None
    return None if {verdict.det, verdict.rec} - {"int8", "fp32"} else verdict


def store(key: str, verdict: Verdict, identity: dict[str, str]) -> None:
    write_record(verdicts_file(), SECTION, key, {**asdict(verdict), "identity": identity}, KEPT)


def checked(
    int8: OcrModelFiles, fp32: OcrModelFiles, read: Reader
) -> tuple[OcrModelFiles, Verdict]:
    """The files to use on this CPU and the verdict they follow from (checked now if no
    verdict is kept for this CPU, cap and versions)."""
    identity = fingerprint()
    key = key_of(identity)
    with _deciding:
        verdict = _known.get(key) or stored(key)
        if verdict is None:
            verdict = decide(int8, fp32, read, identity)
            log.info("INT8 check: %s (%.1f s)", verdict.sentence(), verdict.seconds)
            store(key, verdict, identity)
        _known[key] = verdict
    return mixed(int8, fp32, verdict.det, verdict.rec), verdict


def this_cpu() -> Verdict | None:
    """The verdict kept for this CPU as it runs now, if its check has been made."""
    key = key_of(fingerprint())
    return _known.get(key) or stored(key)
