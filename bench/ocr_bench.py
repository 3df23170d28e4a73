"""OCR benchmark: DeskLens's OCR (PP-OCR on OpenVINO + layout) against Tesseract 5.

Renders its own set of document screenshots with known text, in several style classes (light
and dark themes, fonts and sizes, two columns, tables, an invoice, code, low contrast, JPEG
artefacts, HiDPI, a slightly rotated photo, CJK, an application window), then reads each with
both engines in one run and reports the character error rate (CER) and seconds per image.

    .venv/bin/python -m desktop.core.ocr.quantize       # once: the INT8 models (needs NNCF)
    .venv/bin/python bench/ocr_bench.py                 # print the table
    .venv/bin/python bench/ocr_bench.py --precision both --write   # INT8 and FP32, into RESULTS.md

CER is the edit distance between the engine's text and the reference text (the lines in
natural reading order), divided by the reference length, after normalising whitespace: runs
of spaces and tabs become one space, blank lines go, and spaces next to CJK characters are
dropped (Tesseract spaces out Chinese characters). Line breaks count, so reading order counts.

Tesseract runs as its command-line tool with OMP_THREAD_LIMIT=1, its fastest setting on a
shared 2-core machine (its default OpenMP threading was 7x slower there), and with the right
language per image (eng, or chi_sim+eng for CJK). Its time includes starting the process.
If it (or the fonts) is missing, the script installs Debian's packages with apt-get.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import openvino
from PIL import Image, ImageDraw, ImageFilter, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import RESULTS, write_section  # noqa: E402  (bench/ is on sys.path)

from desktop.core.ocr import OcrEngine  # noqa: E402

HEADING = "## OCR: DeskLens vs Tesseract"
TESSERACT = "Tesseract"
APT_PACKAGES = ["tesseract-ocr", "tesseract-ocr-eng", "tesseract-ocr-chi-sim"]
FONT_DIRS = [Path("/usr/share/fonts/truetype"), Path("/usr/share/fonts/opentype")]
FONT_FILES = {
    "sans": "dejavu/DejaVuSans.ttf",
    "sans-bold": "dejavu/DejaVuSans-Bold.ttf",
    "serif": "liberation/LiberationSerif-Regular.ttf",
    "serif-bold": "liberation/LiberationSerif-Bold.ttf",
    "arial": "liberation/LiberationSans-Regular.ttf",
    "arial-bold": "liberation/LiberationSans-Bold.ttf",
    "mono": "dejavu/DejaVuSansMono.ttf",
    "cjk": "noto/NotoSansCJK-Regular.ttc",
}
APT_FONTS = ["fonts-dejavu", "fonts-liberation", "fonts-noto-cjk"]

WORD_TEXT = (
    "the of and to in is for on that with as are this be by from at or it an was which you "
    "your file data report system user account settings update review project team support "
    "invoice payment order customer service network server version release window screen "
    "document page table column value total amount price quarter revenue growth budget "
    "meeting schedule deadline summary analysis result error warning message request "
    "response access security password backup storage folder export import download "
    "upload install configure display option feature performance memory process thread "
    "quickly carefully before after during between against without within across "
    "important available required optional current previous following additional"
)
WORDS = WORD_TEXT.split()
CJK_TEXT = (
    "今天的会议讨论了新产品的发布计划 我们需要在下周五之前完成测试 "
    "请把报告发送给项目经理 系统更新后性能提高了百分之二十 "
    "客户对服务质量非常满意 数据备份每天晚上自动进行 "
    "网络连接不稳定时请检查设置 这个版本修复了多个安全问题 "
    "销售额比去年同期增长明显 文件已经上传到共享文件夹 "
    "用户可以在设置页面修改密码 技术支持团队全天候在线"
)
CJK_PHRASES = CJK_TEXT.split()


# --- text and rendering ---------------------------------------------------------------------


def font_path(key: str) -> Path | None:
    for folder in FONT_DIRS:
        path = folder / FONT_FILES[key]
        if path.exists():
            return path
    return None


def font(key: str, size: int) -> ImageFont.FreeTypeFont:
    path = font_path(key)
    if path is None:
        sys.exit(f"Font {FONT_FILES[key]} is missing: apt-get install -y {' '.join(APT_FONTS)}")
    return ImageFont.truetype(str(path), size)


def sentence(rng: random.Random, words: int) -> str:
    picked = [rng.choice(WORDS) for _ in range(words)]
    if rng.random() < 0.4:
        picked.insert(rng.randrange(len(picked)), str(rng.randint(2, 9999)))
    if rng.random() < 0.2:
        picked.insert(
            rng.randrange(len(picked)), f"{rng.randint(1, 28):02d}/0{rng.randint(1, 9)}/2025"
        )
    text = " ".join(picked)
    return text[0].upper() + text[1:] + rng.choice(".,;:!?." if words > 6 else "..")


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng, rng.randint(5, 14)) for _ in range(sentences))


def wrap(text: str, face: ImageFont.FreeTypeFont, width: int) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if current and face.getlength(candidate) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    return [*lines, current] if current else lines


def wrap_cjk(text: str, face: ImageFont.FreeTypeFont, width: int) -> list[str]:
    lines, current = [], ""
    for char in text:
        if current and face.getlength(current + char) > width:
            lines.append(current)
            current = char.lstrip()
        else:
            current += char
    return [*lines, current] if current else lines


@dataclass
class Page:
    """A canvas that records the text it draws, block by block, as the reference."""

    width: int
    height: int
    background: tuple[int, int, int] = (255, 255, 255)
    ink: tuple[int, int, int] = (20, 20, 20)
    reference: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.image = Image.new("RGB", (self.width, self.height), self.background)
        self.draw = ImageDraw.Draw(self.image)

    def lines(
        self,
        x: int,
        y: int,
        lines: list[str],
        face: ImageFont.FreeTypeFont,
        *,
        spacing: float = 1.45,
        fill: tuple[int, int, int] | None = None,
    ) -> int:
        step = round(face.size * spacing)
        for line in lines:
            self.draw.text((x, y), line, font=face, fill=fill or self.ink)
            y += step
        self.reference.extend(lines)
        return y

    def paragraphs(
        self,
        x: int,
        y: int,
        width: int,
        face: ImageFont.FreeTypeFont,
        rng: random.Random,
        bottom: int,
    ) -> int:
        """Wrapped paragraphs from y down to (at most) bottom."""
        step = round(face.size * 1.45)
        while True:
            lines = wrap(paragraph(rng, rng.randint(2, 4)), face, width)
            room = (bottom - y) // step
            if room < 2:
                return y
            y = self.lines(x, y, lines[:room], face) + face.size

    def sample(self, name: str, style: str, lang: str = "eng") -> Sample:
        return Sample(name, style, self.image, "\n".join(self.reference), lang)


@dataclass
class Sample:
    name: str
    style: str
    image: Image.Image
    reference: str
    lang: str = "eng"


def jpeg(image: Image.Image, quality: int) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def document(
    rng: random.Random,
    face_key: str,
    size: int,
    *,
    width: int | None = None,
    height: int = 800,
    **colours: tuple[int, int, int],
) -> Page:
    """A heading and paragraphs filling the page: the common base of several styles."""
    page = Page(width or rng.choice([1100, 1280, 1366]), height, **colours)
    heading = font(face_key + "-bold", size + 8)
    y = page.lines(40, 30, [sentence(rng, 5).rstrip(".,;:!?")], heading) + size
    page.paragraphs(40, y, page.width - 80, font(face_key, size), rng, page.height - 30)
    return page


def make_plain(rng: random.Random, name: str) -> Sample:
    return document(rng, "sans", rng.choice([14, 15, 16])).sample(name, "plain")


def make_dark(rng: random.Random, name: str) -> Sample:
    page = document(rng, "arial", 15, background=(30, 31, 34), ink=(220, 221, 222))
    return page.sample(name, "dark theme")


def make_serif(rng: random.Random, name: str) -> Sample:
    page = document(rng, "serif", rng.choice([20, 24]), background=(250, 246, 235))
    return page.sample(name, "serif, large")


def make_small(rng: random.Random, name: str) -> Sample:
    return document(rng, "arial", rng.choice([9, 10, 11]), height=600).sample(name, "small font")


def make_low_contrast(rng: random.Random, name: str) -> Sample:
    background, ink = rng.choice(
        [((235, 235, 235), (165, 165, 165)), ((40, 44, 52), (110, 118, 130))]
    )
    page = document(rng, "sans", 15, background=background, ink=ink)
    return page.sample(name, "low contrast")


def make_jpeg(rng: random.Random, name: str) -> Sample:
    """A screenshot shrunk and recompressed, as chat apps do when it is shared."""
    sample = document(rng, "arial", 16).sample(name, "JPEG, shrunk")
    small = sample.image.resize(
        (round(sample.image.width * 0.8), round(sample.image.height * 0.8)), Image.BILINEAR
    )
    sample.image = jpeg(small, quality=rng.choice([25, 35]))
    return sample


def make_hidpi(rng: random.Random, name: str) -> Sample:
    return document(rng, "sans", 30, width=2560, height=1600).sample(name, "HiDPI 2x")


def make_rotated(rng: random.Random, name: str) -> Sample:
    """A phone photo of a screen: tilted, slightly keystoned, unevenly lit, blurred, noisy."""
    sample = document(rng, "sans", 16, width=1100, height=700).sample(name, "photo, tilted")
    image = sample.image.rotate(
        rng.choice([-4.0, -2.5, 2.5, 4.0]),
        resample=Image.BICUBIC,
        expand=True,
        fillcolor=(200, 200, 195),
    )
    width, height = image.size
    inset = [rng.uniform(0, 0.02) * width for _ in range(4)]
    quad = (inset[0], 0, inset[1], height, width - inset[2], height, width - inset[3], 0)
    image = image.transform(image.size, Image.QUAD, quad, Image.BICUBIC)
    noise = np.random.default_rng(rng.randint(0, 1 << 30))
    light = np.linspace(0.8, 1.05, width)[np.newaxis, :, np.newaxis]
    pixels = np.asarray(image.filter(ImageFilter.GaussianBlur(0.8)), dtype=np.float32) * light
    pixels += noise.normal(0, 5, (height, width, 1))
    sample.image = jpeg(Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)), quality=60)
    return sample


def make_two_columns(rng: random.Random, name: str) -> Sample:
    column, gutter, size = rng.choice([(460, 40, 15), (540, 50, 16)])
    page = Page(80 + 2 * column + gutter, 900)
    y = page.lines(40, 30, [sentence(rng, 6).rstrip(".,;:!?")], font("serif-bold", 26)) + 10
    for left in (40, 40 + column + gutter):
        page.paragraphs(left, y, column, font("serif", size), rng, page.height - 30)
    return page.sample(name, "two columns")


def table_rows(rng: random.Random, rows: int) -> list[list[str]]:
    header = ["Item", "Region", "Qty", "Price", "Status"]
    regions = ["North", "South", "East", "West", "Central"]
    statuses = ["Open", "Closed", "Pending", "Shipped"]
    body = [
        [
            rng.choice(WORDS).capitalize() + " " + rng.choice(WORDS),
            rng.choice(regions),
            str(rng.randint(1, 500)),
            f"${rng.randint(1, 999)}.{rng.randint(0, 99):02d}",
            rng.choice(statuses),
        ]
        for _ in range(rows)
    ]
    return [header, *body]


def make_ruled_table(rng: random.Random, name: str) -> Sample:
    """A grid table; half of them with a filled header row and zebra stripes."""
    size, styled = rng.choice([13, 14, 15]), rng.random() < 0.5
    page = Page(1000, 560)
    y = page.lines(30, 24, [sentence(rng, 4).rstrip(".,;:!?")], font("arial-bold", 20)) + 10
    rows = table_rows(rng, rng.randint(8, 11))
    widths, row_height, left = [260, 150, 90, 120, 130], size * 2 + 6, 30
    right, top = left + sum(widths), y
    body, bold = font("arial", size), font("arial-bold", size)
    for number, row in enumerate(rows):
        ink = page.ink
        if styled and number == 0:
            page.draw.rectangle((left, y, right, y + row_height), fill=(44, 82, 130))
            ink = (255, 255, 255)
        elif styled and number % 2 == 0:
            page.draw.rectangle((left, y, right, y + row_height), fill=(236, 241, 247))
        x = left
        for cell, cell_width in zip(row, widths, strict=True):
            page.draw.text((x + 8, y + 7), cell, font=bold if number == 0 else body, fill=ink)
            x += cell_width
        page.reference.append(" ".join(row))
        y += row_height
    rule = (150, 150, 150)
    for boundary in range(top, y + 1, row_height):
        page.draw.line([(left, boundary), (right, boundary)], fill=rule)
    x = left
    for cell_width in [0, *widths]:
        x += cell_width
        page.draw.line([(x, top), (x, y)], fill=rule)
    return page.sample(name, "ruled table")


def make_invoice(rng: random.Random, name: str) -> Sample:
    page = Page(1000, 760)
    face, bold = font("arial", 14), font("arial-bold", 14)
    y = page.lines(40, 30, ["Northwind Supplies Ltd"], font("arial-bold", 24)) + 4
    street = f"{rng.randint(10, 400)} Harbour Road"
    y = page.lines(
        40, y, [street, f"Bristol BS{rng.randint(1, 9)} 4QA", "VAT GB 123 4567 89"], face
    )
    y = page.lines(40, y + 16, ["INVOICE"], font("arial-bold", 20)) + 12
    bill = [
        "Bill to:",
        f"{rng.choice(WORDS).capitalize()} Consulting",
        f"{rng.randint(1, 99)} Market Street",
        "Leeds LS1 5AB",
    ]
    meta = [
        f"Invoice no: INV-{rng.randint(1000, 9999)}",
        f"Date: {rng.randint(10, 28)}/0{rng.randint(1, 9)}/2025",
        "Terms: 30 days",
    ]
    bottom = page.lines(40, y, bill, face)
    y = max(page.lines(620, y, meta, face), bottom) + 24
    columns = [(40, "Description"), (520, "Qty"), (620, "Unit price"), (800, "Amount")]
    for x, header in columns:
        page.draw.text((x, y), header, font=bold, fill=page.ink)
    page.reference.append(" ".join(header for _, header in columns))
    y += 30
    total = 0
    for _ in range(rng.randint(5, 9)):
        quantity, price = rng.randint(1, 20), rng.randint(5, 300)
        total += quantity * price
        description = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} service"
        cells = [description, str(quantity), f"{price}.00", f"{quantity * price}.00"]
        for (x, _), cell in zip(columns, cells, strict=True):
            page.draw.text((x, y), cell, font=face, fill=page.ink)
        page.reference.append(" ".join(cells))
        y += 26
    page.lines(620, y + 14, [f"Total due: {total}.00 GBP"], bold)
    return page.sample(name, "invoice")


CODE = [
    "import json",
    "from pathlib import Path",
    "",
    'DEFAULTS = {"theme": "dark", "font_size": 13, "autosave": True}',
    "",
    "",
    "def load_settings(path: Path) -> dict:",
    '    """Read the settings file, falling back to defaults."""',
    "    if not path.exists():",
    "        return dict(DEFAULTS)",
    '    with path.open(encoding="utf-8") as handle:',
    "        data = json.load(handle)",
    "    for key, value in DEFAULTS.items():",
    "        data.setdefault(key, value)  # keep user values",
    "    return data",
    "",
    "",
    "class Cache:",
    "    def __init__(self, limit: int = 128) -> None:",
    "        self.items: dict[str, bytes] = {}",
    "        self.limit = limit",
    "",
    "    def get(self, key: str) -> bytes | None:",
    "        return self.items.get(key)",
    "",
    "    def put(self, key: str, value: bytes) -> None:",
    "        if len(self.items) >= self.limit:",
    "            self.items.pop(next(iter(self.items)))",
    "        self.items[key] = value",
]


def make_code(rng: random.Random, name: str) -> Sample:
    dark = rng.random() < 0.5
    background, ink = ((30, 30, 30), (212, 212, 212)) if dark else ((250, 250, 250), (36, 41, 46))
    page = Page(900, 740, background=background, ink=ink)
    start = rng.randrange(len(CODE))
    lines = CODE[start:] + CODE[:start]
    page.lines(24, 16, lines, font("mono", rng.choice([13, 14])), spacing=1.5)
    page.reference = [line for line in page.reference if line]
    return page.sample(name, "code")


def make_cjk(rng: random.Random, name: str) -> Sample:
    page = Page(1000, 700)
    face = font("cjk", 20)
    y = page.lines(40, 30, [rng.choice(CJK_PHRASES) + " 2025"], font("cjk", 28)) + 10
    while y < page.height - 160:
        text = "，".join(rng.sample(CJK_PHRASES, 4)) + "。"
        if rng.random() < 0.6:
            text = text.replace("，", f"，版本 {rng.randint(2, 9)}.{rng.randint(0, 9)} ", 1)
        y = page.lines(40, y, wrap_cjk(text, face, 900), face) + 12
    return page.sample(name, "CJK", lang="chi_sim+eng")


def make_ui(rng: random.Random, name: str) -> Sample:
    """An application window: title bar, toolbar, sidebar, content with a form, status bar."""
    dark = rng.random() < 0.5
    surface, panel, ink = (
        ((37, 37, 38), (50, 50, 52), (225, 225, 225))
        if dark
        else ((245, 246, 248), (232, 234, 238), (30, 30, 30))
    )
    page = Page(1280, 800, background=surface, ink=ink)
    draw, face, small = page.draw, font("sans", 14), font("sans", 12)
    draw.rectangle((0, 0, 1280, 36), fill=(52, 58, 70))
    title = f"{rng.choice(WORDS).capitalize()} Manager - Project {rng.randint(1, 99)}"
    page.lines(16, 10, [title], face, fill=(235, 235, 235))
    buttons = rng.sample(["New", "Open", "Save", "Export", "Share", "Print", "Undo"], 5)
    x = 16
    for label in buttons:
        width = round(face.getlength(label)) + 24
        draw.rounded_rectangle((x, 48, x + width, 78), 5, outline=(150, 150, 150), fill=panel)
        draw.text((x + 12, 55), label, font=face, fill=ink)
        x += width + 10
    page.reference.append(" ".join(buttons))
    draw.rectangle((0, 90, 220, 770), fill=panel)
    menu = rng.sample(
        ["Dashboard", "Inbox", "Calendar", "Reports", "Customers", "Settings", "Help", "Archive"], 7
    )
    page.lines(24, 110, menu, face, spacing=2.6)
    y = page.lines(260, 110, [sentence(rng, 4).rstrip(".,;:!?")], font("sans-bold", 22)) + 6
    y = page.paragraphs(260, y, 960, face, rng, 420)
    for label in ["Full name", "Email address", "Department"]:
        value = {"Full name": "Jordan Lee", "Email address": "jordan.lee@example.com"}.get(
            label, "Finance"
        )
        page.lines(260, y + 7, [label], face)
        draw.rectangle((420, y, 760, y + 32), outline=(150, 150, 150), fill=panel)
        draw.text((430, y + 7), value, font=face, fill=ink)
        page.reference[-1] += " " + value
        y += 46
    page.paragraphs(260, y + 10, 960, face, rng, 750)
    draw.rectangle((0, 770, 1280, 800), fill=panel)
    saved = f"{rng.randint(1, 12)}:{rng.randint(10, 59)}"
    status = f"Ready - {rng.randint(2, 90)} items - last saved {saved}"
    page.lines(12, 777, [status], small)
    return page.sample(name, "UI screenshot")


STYLES: list[Callable[[random.Random, str], Sample]] = [
    make_plain,
    make_dark,
    make_serif,
    make_small,
    make_low_contrast,
    make_jpeg,
    make_hidpi,
    make_rotated,
    make_two_columns,
    make_ruled_table,
    make_invoice,
    make_code,
    make_cjk,
    make_ui,
]


# --- scoring --------------------------------------------------------------------------------

CJK_CHAR = r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]"


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    lines = [re.sub(r"\s+", " ", line).strip() for line in text.splitlines()]
    text = "\n".join(line for line in lines if line)
    return re.sub(rf"(?<={CJK_CHAR}) | (?={CJK_CHAR})", "", text)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time (insertions via a running minimum)."""
    if not a or not b:
        return len(a) + len(b)
    codes_b = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    offsets = np.arange(len(b) + 1)
    row = offsets.copy()
    for index, char in enumerate(a, start=1):
        substitution = row[:-1] + (codes_b != ord(char))
        current = np.empty_like(row)
        current[0] = index
        current[1:] = np.minimum(row[1:] + 1, substitution)
        row = np.minimum.accumulate(current - offsets) + offsets
    return int(row[-1])


def cer(hypothesis: str, reference: str) -> float:
    ref = normalise(reference)
    return edit_distance(normalise(hypothesis), ref) / max(len(ref), 1)


# --- engines --------------------------------------------------------------------------------


def ensure_tools() -> str:
    """Install Tesseract (with English and Chinese data) and the fonts if missing; its version."""
    missing = [] if _tesseract_ready() else list(APT_PACKAGES)
    missing += [] if all(font_path(key) for key in FONT_FILES) else APT_FONTS
    if missing:
        print(f"Installing {' '.join(missing)} with apt-get...", file=sys.stderr)
        subprocess.run(["apt-get", "update"], check=True, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", *missing], check=True, capture_output=True)
    version = subprocess.run(["tesseract", "--version"], capture_output=True, text=True)
    return (version.stdout or version.stderr).splitlines()[0]


def _tesseract_ready() -> bool:
    if shutil.which("tesseract") is None:
        return False
    listed = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True)
    return {"eng", "chi_sim"} <= set(listed.stdout.split())


def run_tesseract(path: Path, lang: str) -> tuple[str, float]:
    started = time.perf_counter()
    completed = subprocess.run(
        ["tesseract", str(path), "stdout", "-l", lang, "--psm", "3"],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        check=True,
    )
    return completed.stdout, time.perf_counter() - started


def run_desklens(engine: OcrEngine, image: Image.Image) -> tuple[str, float]:
    started = time.perf_counter()
    text = engine.extract(image).text()
    return text, time.perf_counter() - started


@dataclass
class Reading:
    cer: float
    seconds: float


@dataclass
class Score:
    sample: Sample
    readings: dict[str, Reading]  # engine label -> its reading; "Tesseract" among them


def measure(
    samples: list[Sample], engines: dict[str, OcrEngine], repeat: int, folder: Path
) -> list[Score]:
    scores = []
    for sample in samples:
        path = folder / f"{sample.name}.png"
        sample.image.save(path)
        # Alternate the engines so that load from other processes hits all of them alike;
        # the fastest of `repeat` runs is each engine's time, the first run's text is scored.
        runs: dict[str, list[tuple[str, float]]] = {label: [] for label in [*engines, TESSERACT]}
        for _ in range(repeat):
            for label, engine in engines.items():
                runs[label].append(run_desklens(engine, sample.image))
            runs[TESSERACT].append(run_tesseract(path, sample.lang))
        readings = {
            label: Reading(cer(done[0][0], sample.reference), min(s for _, s in done))
            for label, done in runs.items()
        }
        scores.append(Score(sample, readings))
        summary = "  ".join(
            f"{label} {reading.cer:.4f} {reading.seconds:5.2f}s"
            for label, reading in readings.items()
        )
        print(
            f"{sample.name:18s} {sample.image.width}x{sample.image.height:<5d} {summary}",
            file=sys.stderr,
        )
    return scores


# --- report ---------------------------------------------------------------------------------


def report(scores: list[Score], labels: list[str], command: str, setup: str) -> str:
    """Markdown: a table per style (CER and seconds per engine), the totals, the verdicts."""
    columns = [*labels, TESSERACT]
    styles = list(dict.fromkeys(score.sample.style for score in scores))
    rows = [
        "| Style | Images | "
        + " | ".join(f"CER {label}" for label in columns)
        + " | "
        + " | ".join(f"s/image {label}" for label in columns)
        + " |",
        "|---|---:|" + "---:|" * (2 * len(columns)),
    ]
    for style in styles:
        group = [score for score in scores if score.sample.style == style]
        rows.append(_row(style, group, columns, bold=False))
    rows.append(_row("all", scores, columns, bold=True))
    verdicts = [line for label in labels for line in _verdicts(scores, label)]
    return "\n".join(
        [
            HEADING,
            "",
            f"Command: `{command}`",
            "",
            setup,
            "",
            "CER: edit distance / reference length after whitespace normalisation (reading order "
            "counts), mean over the images. Seconds: fastest of the repeated runs (median over "
            "the images); DeskLens was warmed up on other rendered screenshots first.",
            "",
            *rows,
            "",
            *verdicts,
            "",
        ]
    )


def _row(style: str, group: list[Score], columns: list[str], *, bold: bool) -> str:
    mark = "**" if bold else ""
    cers = [statistics.mean(s.readings[label].cer for s in group) for label in columns]
    seconds = [statistics.median(s.readings[label].seconds for s in group) for label in columns]
    cells = [f"{mark}{value:.4f}{mark}" for value in cers]
    cells += [f"{mark}{value:.2f}{mark}" for value in seconds]
    return f"| {mark}{style}{mark} | {len(group)} | " + " | ".join(cells) + " |"


def _verdicts(scores: list[Score], label: str) -> list[str]:
    def mean_cer(group: list[Score], name: str) -> float:
        return statistics.mean(score.readings[name].cer for score in group)

    ours, theirs = mean_cer(scores, label), mean_cer(scores, TESSERACT)
    worse = []
    for style in dict.fromkeys(score.sample.style for score in scores):
        group = [score for score in scores if score.sample.style == style]
        if mean_cer(group, label) > mean_cer(group, TESSERACT):
            worse.append(style)
    our_time = statistics.median(score.readings[label].seconds for score in scores)
    their_time = statistics.median(score.readings[TESSERACT].seconds for score in scores)
    return [
        _verdict(
            ours <= theirs / 2,
            f"{label}: mean CER {ours:.4f} is at most half of Tesseract's {theirs:.4f}",
        ),
        _verdict(
            not worse,
            f"{label}: no style class is worse than Tesseract"
            + (f" (worse: {', '.join(worse)})" if worse else ""),
        ),
        _verdict(
            our_time <= their_time,
            f"{label}: median time {our_time:.2f} s is no slower than "
            f"Tesseract's {their_time:.2f} s",
        ),
    ]


def _verdict(passed: bool, text: str) -> str:
    return f"- {'PASS' if passed else 'MISS'}: {text}"


def make_engines(precision: str, threads: int | None) -> dict[str, OcrEngine]:
    """DeskLens engines by label: "both" compares the INT8 models with the FP32 ones."""
    wanted = ["int8", "fp32"] if precision == "both" else [precision]
    engines = {}
    for name in wanted:
        engine = OcrEngine(threads=threads, precision=name)  # type: ignore[arg-type]
        engine.warm_up()
        assert engine.model_files is not None
        engines[f"DeskLens {engine.model_files.precision.upper()}"] = engine
    return engines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=2, help="images per style (default 2)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per image and engine")
    parser.add_argument("--threads", type=int, default=None, help="DeskLens OpenVINO threads")
    parser.add_argument(
        "--precision",
        choices=["auto", "fp32", "int8", "both"],
        default="auto",
        help="DeskLens models: auto (INT8 when quantized, else FP32), or both side by side",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", help="comma-separated style names (make_<name>) to run")
    parser.add_argument("--keep", type=Path, help="also save the rendered images in this folder")
    parser.add_argument("--write", action="store_true", help=f"write the table into {RESULTS}")
    args = parser.parse_args()

    tesseract = ensure_tools()
    makers = [m for m in STYLES if not args.only or m.__name__[5:] in args.only.split(",")]
    rng = random.Random(args.seed)
    samples = [
        maker(rng, f"{maker.__name__[5:]}-{index}")
        for maker in makers
        for index in range(args.per_class)
    ]
    engines = make_engines(args.precision, args.threads)
    # A session that has read a few screenshots: models compiled, common input shapes seen.
    # The warm-up images come from another seed, so no measured image is read beforehand.
    warm_rng = random.Random(args.seed + 1000)
    for maker in makers:
        image = maker(warm_rng, "warm-up").image
        for engine in engines.values():
            engine.extract(image)
    with tempfile.TemporaryDirectory() as temp:
        folder = args.keep or Path(temp)
        folder.mkdir(parents=True, exist_ok=True)
        scores = measure(samples, engines, args.repeat, folder)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"
    setup = (
        f"Machine: {machine}. DeskLens: OpenVINO {ov_version()} on CPU, "
        f"threads: {args.threads or 'auto'}; INT8 models (the default) built by the app from "
        "the committed calibration ranges (`desktop/core/ocr/int8.py`), FP32 = the fallback. "
        f"{tesseract}: `--psm 3`, OMP_THREAD_LIMIT=1, time includes starting the process."
    )
    command = "python bench/ocr_bench.py " + " ".join(sys.argv[1:])
    section = report(scores, list(engines), command.strip(), setup)
    print(section)
    if args.write:
        write_section(HEADING, section)
        print(f"Written to {RESULTS}", file=sys.stderr)


def ov_version() -> str:
    return openvino.get_version().split("-")[0]


if __name__ == "__main__":
    main()
