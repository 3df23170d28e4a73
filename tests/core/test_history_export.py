"""Exported chats: Markdown with an images folder and self-contained HTML contain every turn
and every picture (HTML read back with the stdlib parser, its images decoded); the CLI's
`history export` writes the same documents."""

from __future__ import annotations

import base64
import io
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from desktop.cli import main
from desktop.core.history import HistoryStore
from desktop.core.history.export import clipboard_markdown, write_document
from desktop.core.images import load_image

TEXTS = {
    "user": "What is in <b>this</b> & that?",
    "assistant": "A **bold** answer with <script>alert(1)</script>",
    "ocr": "Invoice 4471\nTotal 12.50",
    "note": "Older turns were dropped.",
}


class Page(HTMLParser):
    def __init__(self, fetch_images: bool = True) -> None:
        super().__init__()
        self.fetch_images = fetch_images
        self.images: list[Image.Image] = []
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img" and self.fetch_images:
            source = dict(attrs)["src"]
            prefix = "data:image/png;base64,"
            assert source.startswith(prefix)
            self.images.append(Image.open(io.BytesIO(base64.b64decode(source[len(prefix) :]))))

    def handle_data(self, data):
        self.text.append(data)


def rendered(markdown: str) -> Page:
    """The Markdown as a CommonMark viewer renders it (markdown-it-py, with raw HTML on, as
    most viewers have it), read back; images are not fetched."""
    from markdown_it import MarkdownIt

    page = Page(fetch_images=False)
    page.feed(MarkdownIt("commonmark", {"html": True}).render(markdown))
    return page


def picture(tmp_path: Path, name: str, size: tuple[int, int], colour: str):
    path = tmp_path / name
    Image.new("RGB", size, colour).save(path)
    return load_image(path)


@pytest.fixture
def chat(tmp_path):
    data = tmp_path / "data"
    store = HistoryStore(data / "history")
    chat_id = store.create_conversation("Invoice: check/totals")
    red = picture(tmp_path, "red shot.png", (40, 30), "red")
    blue = picture(tmp_path, "blue.png", (20, 50), "blue")
    store.add_message(chat_id, "user", TEXTS["user"], [red, blue])
    store.add_message(chat_id, "assistant", TEXTS["assistant"], answer_ids=[1, 2])
    store.add_message(chat_id, "ocr", TEXTS["ocr"], [red])
    store.add_message(chat_id, "note", TEXTS["note"])
    yield data, store, chat_id
    store.close()


def test_markdown_has_every_turn_and_a_folder_with_every_picture(chat, tmp_path):
    _data, store, chat_id = chat
    target = tmp_path / "out" / "chat.md"
    target.parent.mkdir()
    exported = write_document(store.title_of(chat_id), store.messages(chat_id), target, "md")

    text = target.read_text(encoding="utf-8")
    assert exported.messages == 4 and exported.images == 2  # red is shown twice, stored once
    page = rendered(text)  # what a Markdown viewer shows: the markup in messages as text
    for value in TEXTS.values():
        assert value.replace("**", "") in "".join(page.text)
    assert "script" not in page.tags and "b" not in page.tags
    assert text.startswith("# Invoice: check/totals\n")
    folder = tmp_path / "out" / "chat images"
    files = sorted(folder.iterdir())
    assert [Image.open(f).size for f in files] == [(40, 30), (20, 50)]
    for file in files:
        assert f"](<chat images/{file.name}>)" in text


def test_html_is_self_contained_escaped_and_has_every_picture(chat, tmp_path):
    _data, store, chat_id = chat
    target = tmp_path / "chat.html"
    write_document(store.title_of(chat_id), store.messages(chat_id), target, "html")

    page = Page()
    page.feed(target.read_text(encoding="utf-8"))
    text = "".join(page.text)
    for value in TEXTS.values():
        assert value in text  # as text: the markup in messages was escaped
    assert "script" not in page.tags and "b" not in page.tags
    assert [(i.size, i.convert("RGB").getpixel((0, 0))) for i in page.images] == [
        ((40, 30), (255, 0, 0)),
        ((20, 50), (0, 0, 255)),
    ]


def test_clipboard_markdown_names_the_pictures(chat):
    _data, store, chat_id = chat
    text = clipboard_markdown("T", store.messages(chat_id))
    assert "![red shot.png](red shot.png)" in text
    assert "alert(1)" in "".join(rendered(text).text) and "script" not in rendered(text).tags


def test_cli_exports_the_last_chat_and_refuses_an_unknown_one(chat, tmp_path, capsys):
    data, store, chat_id = chat
    target = tmp_path / "last.html"
    code = main(
        ["history", "--data-dir", str(data), "export", "--last", "--format", "html",
         "--out", str(target)]
    )  # fmt: skip
    assert code == 0
    page = Page()
    page.feed(target.read_text(encoding="utf-8"))
    assert len(page.images) == 2 and TEXTS["ocr"] in "".join(page.text)
    assert "4 messages, 2 images" in capsys.readouterr().err

    assert main(["history", "--data-dir", str(data), "list"]) == 0
    assert f"{chat_id}\t" in capsys.readouterr().out
    assert main(["history", "--data-dir", str(data), "export", str(chat_id + 7)]) == 2
    assert "no chat with id" in capsys.readouterr().err
    assert main(["history", "--data-dir", str(tmp_path / "none"), "list"]) == 4


def test_an_image_only_extracted_is_exported_and_a_question_title_ends_cleanly(tmp_path):
    """Issue 29: a picture whose text was extracted without a question was left out, and a
    title ending in "?" gave a file name ending in "_"."""
    from desktop.core.history.export import safe_file_name

    store = HistoryStore(tmp_path / "history")
    chat_id = store.create_conversation("What is the total?")
    green = picture(tmp_path, "green.png", (30, 30), "green")
    store.add_message(chat_id, "ocr", TEXTS["ocr"], [green])
    target = tmp_path / "chat.md"
    exported = write_document("T", store.messages(chat_id), target, "md")
    store.close()
    assert exported.images == 1
    assert "](<chat images/01 green.png>)" in target.read_text(encoding="utf-8")
    assert safe_file_name("What is the total?") == "What is the total"
    assert safe_file_name("a/b") == "a_b"  # inside the name, unsafe characters still become _
