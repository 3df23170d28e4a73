"""Redaction in the app (issue 49): "Redact before sending" on an attached picture replaces it
by its filled copy (read off the GUI thread) whose extracted text carries tags, a notice
always says what happened, and with a model server the first question with pictures in a
chat offers redaction; what reaches the server then holds none of the private items."""

from __future__ import annotations

import base64
import io
import re
import threading

from gui_support import SIGNAL_TIMEOUT_MS, text_image
from misbehaving_server import MODEL, StandInServer
from PIL import Image
from PySide6.QtCore import Qt

from desktop.core.images import load_image
from desktop.core.ocr import OcrEngine
from desktop.core.privacy import redact as redact_module
from desktop.core.regions import Region
from desktop.core.remote import config as remote_config
from desktop.gui.flows.redacting import OFFER_TITLE, offer_buttons
from desktop.gui.image_ref import ImageRef
from desktop.gui.settings import AppSettings, SettingsStore
from devkit import redaction_pages


def _plain(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def chip_action(window, text: str, ref=None):
    kept = [ref] if ref is not None else window.composer.attachments()
    [chip] = [c for c in window.composer.chips() if c.ref in kept]  # removed: deleted later
    assert [a.text() for a in chip.actions()] == [
        "Extract text",
        "Ask about a region…",
        "Redact before sending",
        "Remove",
    ]
    [action] = [a for a in chip.actions() if a.text() == text]
    return action


def redact_chip(qtbot, window, ref=None):
    with qtbot.waitSignal(window.redacting.finished, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        chip_action(window, "Redact before sending", ref).trigger()
    return blocker.args[0]


def test_redact_before_sending_replaces_the_chip_and_tags_its_text(qtbot, launch, monkeypatch):
    threads: list[threading.Thread] = []
    real = redact_module.redact_page

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(redact_module, "redact_page", recorded)
    window = launch()
    page = redaction_pages.page(11)
    original = ImageRef.of(load_image(page.image, name="letter.png"))
    other = ImageRef.of(load_image(text_image("Second page"), name="second.png"))
    window.composer.add_images([original, other])
    box = Region(40, 20, 200, 80)
    window.composer.set_regions(original, (box,))
    result = redact_chip(qtbot, window, original)

    assert threads and threads[0] is not threading.main_thread()
    copy, second = window.composer.attachments()  # in its place, its box kept
    assert second is other and window.composer.marks.of(copy) == (box,)
    window.composer.remove_image(other)
    assert copy is result.copy and copy is not original and copy.name == "letter (redacted).png"
    assert window.notice.text() == (
        "Redacted 4 items in letter.png (1 e-mail, 1 IBAN, 1 card number, 1 phone number)."
    )
    read = OcrEngine().extract(copy.load()).text()
    for _, value in page.private:
        assert _plain(value) not in _plain(read)
    assert "Account summary" in read

    # Extract text on the copy: its text with tags, not the black boxes' nothing.
    with qtbot.waitSignal(window.ocr.extracted, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        chip_action(window, "Extract text").trigger()
    text = blocker.args[0].text.text
    assert "E-mail: [email]" in text and "IBAN: [iban]" in text and "@" not in text
    # and a grounded question would be grounded on the same tagged text
    [known] = window.redacting.known_reads([copy])
    assert "[card]" in known.read.text()


def test_nothing_to_redact_and_unreadable_pages_say_so(qtbot, launch):
    window = launch()
    clean = ImageRef.of(load_image(text_image("Meeting at noon"), name="notes.png"))
    window.composer.add_images([clean])
    result = redact_chip(qtbot, window)
    assert result.copy is None and window.composer.attachments() == [clean]
    assert window.notice.text() == (
        "notes.png: Nothing to redact: the OCR read 1 line and found no e-mail, IBAN, card "
        "or phone number."
    )
    window.composer.clear_images()
    blank = ImageRef.of(load_image(Image.new("RGB", (400, 300), "white"), name="blank.png"))
    window.composer.add_images([blank])
    redact_chip(qtbot, window)
    assert window.notice.text().startswith(
        "blank.png: Could not read any text on this page: nothing was redacted"
    )
    assert window.composer.attachments() == [blank]


def _images_and_texts(body: dict) -> tuple[list[Image.Image], list[str]]:
    images, texts = [], []
    for message in body["messages"]:
        content = message["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for part in parts:
            if part["type"] == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                images.append(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
            elif part["type"] == "text":
                texts.append(part["text"])
    return images, texts


def test_a_server_gets_the_first_pictures_only_after_the_offer(qtbot, launch, tmp_path):
    data = tmp_path / "data"
    with StandInServer("503") as server:
        remote_config.save(data, remote_config.ServerConfig(server.url, model=MODEL))
        SettingsStore(data).save(AppSettings(model_source="server", consented_servers=server.url))
        window = launch(data_dir=data, wait_model=False)
        qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
        page = redaction_pages.page(11)
        email = next(value for kind, value in page.private if kind == "email")
        question = f"Is {email} the address on this letter?"

        def press_send():
            window.composer.add_images([ImageRef.of(load_image(page.image, name="letter.png"))])
            window.composer.editor.setPlainText(question)
            qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
            qtbot.waitUntil(lambda: window.redacting.offer_box is not None)
            box = window.redacting.offer_box
            assert box.windowTitle() == OFFER_TITLE
            return box

        # Cancel: nothing is sent, the question and its picture are back in the composer.
        press_send().reject()
        qtbot.waitUntil(lambda: window.redacting.offer_box is None)
        assert window.composer.editor.toPlainText() == question
        assert len(window.composer.attachments()) == 1
        assert not [r for r in server.requests if r[0] == "POST"]
        window.composer.clear_images()

        said: list[str] = []
        shown = window.notice.show_message
        window.notice.show_message = lambda text, **kw: (said.append(text), shown(text, **kw))
        box = press_send()
        with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
            offer_buttons(box)["Redact and send"].click()
        [post] = [r for r in server.requests if r[0] == "POST"]
        images, texts = _images_and_texts(post[3])
        assert len(images) == 1
        read = OcrEngine().extract(images[0]).text()
        for _, value in page.private:
            assert _plain(value) not in _plain(read)
        assert "Account summary" in read
        assert any("[email]" in text for text in texts)
        assert not any(email in text for text in texts)
        assert said[0] == (
            "Your question's private words were replaced by tags. Redacted 4 items in "
            "letter.png (1 e-mail, 1 IBAN, 1 card number, 1 phone number)."
        )

        # The chat's next question: no second offer, its words tagged all the same.
        window.composer.editor.setPlainText("And is +49 30 1234567 the phone number?")
        with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
            qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
        assert window.redacting.offer_box is None
        last = [r for r in server.requests if r[0] == "POST"][-1]
        _, texts = _images_and_texts(last[3])
        assert any("[phone]" in text for text in texts)
        assert not any("1234567" in text for text in texts)

        # A new chat whose first question names an e-mail, without pictures: offered too.
        window.sidebar.select(None)
        window.composer.editor.setPlainText("Please forward this to bob.miller@example.org")
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window.redacting.offer_box is not None)
        box = window.redacting.offer_box
        assert box.text().startswith("Your question, which names private data, is about to go")
        with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
            offer_buttons(box)["Redact and send"].click()
        last = [r for r in server.requests if r[0] == "POST"][-1]
        _, texts = _images_and_texts(last[3])
        assert texts[-1].endswith("Please forward this to [email]")
        assert not any("bob.miller" in text for text in texts)


def test_own_patterns_in_settings_are_checked_saved_and_used(qtbot, launch, tmp_path):
    from desktop.core.privacy.user_patterns import read_patterns
    from desktop.gui.panels.settings_dialog import SettingsDialog

    data = tmp_path / "data"
    window = launch(data_dir=data)
    dialog = SettingsDialog(window.settings, parent=window, redaction=window.redacting)
    row = dialog.redaction_row
    assert row.label.text() == "E-mails, IBANs, cards, phones"
    row.open_editor()
    editor = row.editor
    editor.edit.setPlainText("FALCON-\\d+\nproject (")
    editor.accept()
    assert editor.isVisible() and "'project (' is not a valid regular expression" in (
        editor.problem.text()
    )
    assert not (data / "redaction.json").exists()
    editor.edit.setPlainText("FALCON-\\d+")
    editor.accept()
    assert not editor.isVisible() and row.label.text() == "1 pattern of your own"
    qtbot.waitUntil(lambda: (data / "redaction.json").exists(), timeout=SIGNAL_TIMEOUT_MS)
    assert read_patterns(data) == ("FALCON-\\d+",)

    plan = ImageRef.of(load_image(text_image("Project FALCON-7 starts"), name="plan.png"))
    window.composer.add_images([plan])
    result = redact_chip(qtbot, window)
    assert [span.kind for span in result.redaction.spans] == ["custom"]
    assert window.notice.text() == "Redacted 1 item in plan.png (1 match of your patterns)."
