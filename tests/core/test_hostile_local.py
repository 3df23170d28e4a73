"""Hostile or unlucky local input: preset names with control characters, a preset whose
schema has a bad regex, a PNG with a huge text chunk (the pixels are fine), and chat text
carrying HTML and remote images into a Markdown export."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image

from desktop.core.history.export import markdown_safe
from desktop.core.images import ImageError, load_image
from desktop.core.user_presets import (
    PresetBook,
    PresetDraft,
    PresetError,
    UserPreset,
    find_preset,
    parse_book,
)

# -- presets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["nul\0name", "esc\x1b[2J", "rtl\u202eexe.txt", "bell\x07", "zw\u200bj"]
)
def test_a_preset_name_with_control_characters_is_refused_and_shown_escaped(name):
    with pytest.raises(PresetError) as caught:
        parse_book({"presets": [{"name": name, "prompt": "x"}]})
    message = str(caught.value)
    assert "control or direction characters" in message
    assert all(c.isprintable() for c in message), message  # nothing raw reaches a terminal


def test_whitespace_in_a_preset_name_is_folded_not_refused():
    book = parse_book({"presets": [{"name": "Two\twords\n here", "prompt": "x"}]})
    assert book.presets[0].name == "Two words here"


@pytest.mark.parametrize("asked", ["\x1b]0;owned\x07", "a\0b", "\u202egnp.exe"])
def test_an_unknown_preset_name_is_printed_escaped(asked):
    with pytest.raises(ValueError) as caught:
        find_preset(asked, PresetBook((UserPreset("Mine", "x"),)))
    message = str(caught.value)
    assert message.startswith("Unknown preset '") and message.endswith("describe, Mine.")
    assert all(c.isprintable() for c in message), message


@pytest.mark.parametrize(
    "schema, words",
    [
        ({"type": "string", "pattern": "(("}, "unclosed group"),
        ({"type": "integer", "minimum": 3, "maximum": 1}, "minimum"),
        ({"enum": list(range(5000))}, "too large"),
    ],
)
def test_a_preset_with_an_unusable_schema_is_named(schema, words):
    book = PresetBook((UserPreset("Totals", "List them.", None, schema),))
    with pytest.raises(ValueError) as caught:
        find_preset("totals", book)
    message = str(caught.value)
    assert "Your prompt 'Totals' has a JSON schema that" in message and words in message
    draft = PresetDraft("Totals", "List them.", 0, __import__("json").dumps(schema))
    with pytest.raises(PresetError, match=f'The prompt "Totals": the JSON schema .*{words}'):
        draft.checked('The prompt "Totals"')


# -- a PNG whose metadata is huge ---------------------------------------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _png(before: list[bytes], after: list[bytes], *, cut: int = 0) -> bytes:
    """A 64x32 green PNG with `before` chunks after IHDR and `after` chunks before IEND;
    `cut` bytes taken from the end of the pixel data (a damaged file)."""
    buffer = io.BytesIO()
    Image.new("RGB", (64, 32), (10, 200, 30)).save(buffer, "PNG")
    raw, chunks, pos = buffer.getvalue(), [], 8
    while pos < len(raw):
        length = struct.unpack(">I", raw[pos : pos + 4])[0]
        chunks.append(raw[pos : pos + 12 + length])
        pos += 12 + length
    ihdr, *middle, iend = chunks
    if cut:
        idat = middle[-1]
        middle[-1] = _chunk(b"IDAT", idat[8:-4][:-cut])
    return raw[:8] + ihdr + b"".join(before) + b"".join(middle) + b"".join(after) + iend


HUGE = zlib.compress(b"x" * (50 << 20), 9)  # 50 MB of metadata in ~50 kB
ZTXT = _chunk(b"zTXt", b"Comment\0\0" + HUGE)
ITXT = _chunk(b"iTXt", b"XML:com.adobe.xmp\0\1\0\0\0" + HUGE)
ICCP = _chunk(b"iCCP", b"Display P3\0\0" + HUGE)  # a colour profile inflating to 50 MB
MANY = [_chunk(b"zTXt", b"k%d\0\0" % i + zlib.compress(b"y" * (900 << 10))) for i in range(80)]


@pytest.mark.parametrize(
    "before, after",
    [([ZTXT], []), ([ITXT], []), ([], [ZTXT]), ([ZTXT, ITXT], [ZTXT]), (MANY, []), ([ICCP], []),
     ([ICCP, ZTXT], [ITXT])],
    ids=["zTXt", "iTXt", "zTXt after the pixels", "several", "80 of 900 kB", "iCCP",
         "iCCP and text"],
)  # fmt: skip
def test_a_png_with_huge_text_metadata_or_colour_profile_is_read_without_it(
    tmp_path, before, after
):
    data = _png(before, after)
    for source in (data, tmp_path / "meta.png"):
        if not isinstance(source, bytes):
            source.write_bytes(data)
        loaded = load_image(source)
        assert loaded.size == (64, 32) and loaded.image.getpixel((5, 5)) == (10, 200, 30)


def test_a_damaged_png_with_huge_metadata_is_still_refused():
    with pytest.raises(ImageError, match="damaged or incomplete"):
        load_image(_png([ZTXT], [], cut=20))


# -- Markdown exports ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, gone",
    [
        ("<script>alert(1)</script>", "<script"),
        ('<iframe src="http://evil.example/x"></iframe>', "<iframe"),
        ("<img src=http://evil.example/t.png onerror=alert(1)>", "<img"),
        ("![pixel](http://evil.example/track.png)", "![pixel]("),
        ("[click](javascript:alert(1))", "](javascript:"),
        ("[click](DATA:text/html;base64,PHNjcmlwdD4=)", "](DATA:"),
        ("<http://evil.example/autolink>", "<http"),
        ("&lt;script&gt; stays text", "&lt;script"),
    ],
)
def test_markdown_export_text_cannot_run_or_fetch(text, gone):
    from markdown_it import MarkdownIt

    safe = markdown_safe(f"Before {text} after")
    assert gone not in safe
    rendered = MarkdownIt("commonmark", {"html": True}).render(safe)
    for tag in ("<script", "<iframe", "<img", 'href="javascript', 'href="DATA', "<a href"):
        assert tag not in rendered, rendered


def test_markdown_export_keeps_formatting_and_code_as_written():
    text = (
        "**Total**: 12\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```html\n<div>x</div>\n```\nuse `<br>`"
    )
    assert markdown_safe(text) == text
