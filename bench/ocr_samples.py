"""What the OCR benchmark's pages are made of: pseudo-prose, the Sample that carries a rendered
image with its truth, and the helpers every style uses (wrapped paragraphs, JPEG round trips).
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field

from PIL import Image

from desktop.core.ocr.models import Box
from desktop.core.ocr.rendered_pages import Face, Page, TruthTable, wrap

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


@dataclass
class Sample:
    """A rendered image and its truth: text in reading order, table cells, decoration boxes."""

    name: str
    style: str
    image: Image.Image
    reference: str
    lang: str = "eng"  # Tesseract's language(s) for this image
    tables: list[TruthTable] = field(default_factory=list)
    decorations: list[Box] = field(default_factory=list)


def sample(page: Page, name: str, style: str, lang: str = "eng") -> Sample:
    return Sample(
        name, style, page.image, page.reference_text(), lang, page.tables, page.decorations
    )


def sentence(rng: random.Random, words: int, vocabulary: list[str] = WORDS) -> str:
    picked = [rng.choice(vocabulary) for _ in range(words)]
    if rng.random() < 0.4:
        picked.insert(rng.randrange(len(picked)), str(rng.randint(2, 9999)))
    if rng.random() < 0.2:
        picked.insert(
            rng.randrange(len(picked)), f"{rng.randint(1, 28):02d}/0{rng.randint(1, 9)}/2025"
        )
    text = " ".join(picked)
    return text[0].upper() + text[1:] + rng.choice(".,;:!?." if words > 6 else "..")


def paragraph(rng: random.Random, sentences: int, vocabulary: list[str] = WORDS) -> str:
    return " ".join(sentence(rng, rng.randint(5, 14), vocabulary) for _ in range(sentences))


def paragraphs(
    page: Page,
    x: int,
    y: int,
    width: int,
    face: Face,
    rng: random.Random,
    bottom: int,
    vocabulary: list[str] = WORDS,
) -> int:
    """Wrapped paragraphs from y down to (at most) bottom; the y below the last."""
    step = round(face.size * 1.45)
    while True:
        lines = wrap(paragraph(rng, rng.randint(2, 4), vocabulary), face, width)
        room = (bottom - y) // step
        if room < 2:
            return y
        y = page.lines(x, y, lines[:room], face) + face.size


def jpeg(image: Image.Image, quality: int) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")
