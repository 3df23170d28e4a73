"""The OCR's output formats as one type, `OutputFormat`: what `desklens ocr --format`, the
batch, `POST /v1/ocr` and the app's Save as menus offer (they iterate it), each member knowing
its name, file suffix, media type, whether it is text or a file's bytes, and where it comes
from: a document format is rendered from what the OCR read (`render`); a source format is
written from the input itself while it is read (the searchable PDF, `produce.py`).

A name is parsed into a member once, where it comes in (`OutputFormat.parse`: the CLI's
argparse type, the API's body, the warm service's request); past that, code passes the member.
Light: the command line imports it before deciding whether anything heavy is needed (openpyxl
and pypdf are imported only by the members that use them).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from desktop.core.ocr.models import OcrDocument


class Origin(Enum):
    DOCUMENTS = "documents"  # rendered from the OCR's documents
    SOURCE = "source"  # written from the input file as it is read (a searchable PDF)


class _Traits(NamedTuple):
    """A member's definition (unpacked into `OutputFormat.__new__`)."""

    name: str  # as the CLI and the API spell it
    suffix: str
    label: str  # a file dialog's filter
    media_type: str
    binary: bool = False  # a file's bytes, never printed on a terminal
    origin: Origin = Origin.DOCUMENTS
    tables_only: bool = False  # only the tables (a page without one gives nothing)
    combinable: bool = False  # --combined FILE can hold every document in one file of it
    aliases: tuple[str, ...] = ()  # other spellings the API has accepted


_XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


class OutputFormat(Enum):
    """One output format; adding a member adds it to every front end (and a case below)."""

    suffix: str
    label: str
    media_type: str
    binary: bool
    origin: Origin
    tables_only: bool
    combinable: bool
    aliases: tuple[str, ...]

    TEXT = _Traits("text", ".txt", "Plain text (*.txt)", "text/plain", combinable=True)
    MD = _Traits("md", ".md", "Markdown (*.md)", "text/markdown", combinable=True,
                 aliases=("markdown",))  # fmt: skip
    JSON = _Traits("json", ".json", "JSON (*.json)", "application/json", combinable=True)
    CSV = _Traits("csv", ".csv", "CSV, tables only (*.csv)", "text/csv", tables_only=True)
    XLSX = _Traits("xlsx", ".xlsx", "Excel workbook, a sheet per table (*.xlsx)", _XLSX_TYPE,
                   binary=True, combinable=True)  # fmt: skip
    PDF = _Traits("pdf", ".pdf", "Searchable PDF (*.pdf)", "application/pdf", binary=True,
                  origin=Origin.SOURCE)  # fmt: skip

    def __new__(  # the traits of a member, given by name in _Traits
        cls,
        name: str,
        suffix: str,
        label: str,
        media_type: str,
        binary: bool,
        origin: Origin,
        tables_only: bool,
        combinable: bool,
        aliases: tuple[str, ...],
    ) -> OutputFormat:
        member = object.__new__(cls)
        member._value_ = name
        member.suffix, member.label, member.media_type = suffix, label, media_type
        member.binary, member.origin, member.tables_only = binary, origin, tables_only
        member.combinable, member.aliases = combinable, aliases
        return member

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def parse(cls, name: object) -> OutputFormat:
        """The member a name asks for (any case; the API's aliases too). Raises ValueError
        with a sentence listing the choices."""
        if isinstance(name, str):
            wanted = name.strip().lower()
            for member in cls:
                if wanted == member.value or wanted in member.aliases:
                    return member
        raise ValueError(f"Unknown output format {name!r}; choose one of {cls.choices()}.")

    @classmethod
    def choices(cls) -> str:
        """'text, md, json, csv, xlsx or pdf'."""
        names = [str(member) for member in cls]
        return f"{', '.join(names[:-1])} or {names[-1]}"

    @classmethod
    def for_path(cls, path: Path) -> OutputFormat:
        """The format a file name asks for by its suffix (text for anything unknown)."""
        return cls.for_suffix(path.suffix) or cls.TEXT

    @classmethod
    def for_suffix(cls, suffix: str) -> OutputFormat | None:
        return next((member for member in cls if member.suffix == suffix.lower()), None)

    def render(self, document: OcrDocument) -> str | bytes:
        """One document in this format: text (no final newline) or a file's bytes. Raises
        ValueError for a source format, which is written as its input is read."""
        if self is OutputFormat.TEXT:
            return document.text()
        if self is OutputFormat.MD:
            return document.markdown()
        if self is OutputFormat.JSON:
            return document.to_json()
        if self is OutputFormat.CSV:
            from desktop.core.ocr.spreadsheet import csv_text

            return csv_text(document.tables)
        if self is OutputFormat.XLSX:
            return self.combine([document])
        raise ValueError(f"--format {self} is made from the input file as it is read.")

    def combine(self, documents: Sequence[OcrDocument]) -> str | bytes:
        """Every document in one file of this format (`--combined FILE`). Raises ValueError
        for a format that cannot hold several."""
        if self is OutputFormat.TEXT:
            return "\n\n".join(f"===== {d.source_name} =====\n{d.text()}" for d in documents)
        if self is OutputFormat.MD:
            return "\n\n".join(f"# {d.source_name}\n\n{d.markdown()}" for d in documents)
        if self is OutputFormat.JSON:
            return json.dumps([d.to_dict() for d in documents], ensure_ascii=False, indent=2)
        if self is OutputFormat.XLSX:
            from desktop.core.ocr.spreadsheet import workbook_bytes  # openpyxl: only when asked

            return workbook_bytes(documents)
        raise ValueError(f"--combined cannot hold {self.suffix} files.")

    def check(self, file: IO[bytes]) -> object:
        """Reads a written file back as this format, raising when it is not whole."""
        if self is OutputFormat.JSON:
            return check_json(file)
        if self is OutputFormat.CSV:
            return check_csv(file)
        if self is OutputFormat.XLSX:
            return check_xlsx(file)
        if self is OutputFormat.PDF:
            return check_pdf(file)
        return check_utf8(file)


def check_utf8(file: IO[bytes]) -> str:
    return file.read().decode("utf-8")


def check_json(file: IO[bytes]) -> object:
    return json.loads(check_utf8(file))


def check_csv(file: IO[bytes]) -> object:
    return list(csv.reader(io.StringIO(check_utf8(file), newline="")))


def check_xlsx(file: IO[bytes]) -> object:
    from openpyxl import load_workbook

    workbook = load_workbook(file, read_only=True)
    try:
        return [list(sheet.iter_rows(values_only=True)) for sheet in workbook.worksheets]
    finally:
        workbook.close()


def check_pdf(file: IO[bytes]) -> int:
    from pypdf import PdfReader

    pages = len(PdfReader(file, strict=True).pages)
    if not pages:
        raise ValueError("no pages")
    return pages
