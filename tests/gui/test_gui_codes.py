"""A code's link (any kind, or a link field of its payload) in the app's extraction bubble is an
anchor that opens in the browser; a payload's fields show under its code;
other lines stay plain text."""

from __future__ import annotations

from code_images import URL, WIFI, page_with_codes, page_with_payloads, page_without_codes
from gui_support import SIGNAL_TIMEOUT_MS
from PySide6.QtCore import Qt

from desktop.core.images import load_image
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.code_links import code_links_html
from desktop.gui.widgets.messages import OcrMessage


def extract_in_app(qtbot, window, image, name: str) -> OcrMessage:
    window.extraction.extract_text([ImageRef.of(load_image(image, name=name))])
    qtbot.waitUntil(
        lambda: any(isinstance(m, OcrMessage) for m in window.chat.messages()),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    return next(m for m in window.chat.messages() if isinstance(m, OcrMessage))


def test_a_decoded_qr_link_is_clickable_in_the_bubble(qtbot, launch, monkeypatch) -> None:
    from desktop.gui.widgets import code_links

    opened: list[str] = []
    monkeypatch.setattr(code_links, "_open_url", lambda url: opened.append(url.toString()) or True)
    window = launch()
    message = extract_in_app(qtbot, window, page_with_codes(), "order.png")
    assert f"QR: {URL}" in message.text()  # Copy gives the plain text
    label = message.label
    assert label.textFormat() == Qt.TextFormat.RichText
    # Opened by the app (so a failure can be said, issue 29), in the user's browser.
    assert label.textInteractionFlags() & Qt.TextInteractionFlag.LinksAccessibleByMouse
    label.linkActivated.emit(URL)
    assert opened == [URL] and getattr(label, "no_browser_note", None) is None
    assert f'<a href="{URL.replace("&", "&amp;")}">' in label.text()
    assert "EAN-13: 4006381333931" in label.text()  # not a link: plain


def test_a_page_without_codes_keeps_a_plain_label(qtbot, launch) -> None:
    window = launch()
    message = extract_in_app(qtbot, window, page_without_codes(), "invoice.png")
    assert message.label.textFormat() != Qt.TextFormat.RichText
    assert "QR:" not in message.text()


def test_only_code_lines_become_links_and_text_is_escaped() -> None:
    text = "Visit <b>us</b> at https://example.org\n\nQR: https://example.org/a?b=1&c=2"
    rich = code_links_html(text)
    assert rich is not None
    assert "&lt;b&gt;us&lt;/b&gt; at https://example.org<br>" in rich  # a text line: no anchor
    assert rich.count("<a href=") == 1
    assert code_links_html("QR: not a link\nEAN-13: 4006381333931") is None


def test_every_kind_links_and_a_payloads_link_fields_too() -> None:
    text = (
        "Contact us\n  Website: https://not-a-code.example\n\n"
        "Data Matrix: https://example.org/dm\n"
        "QR: BEGIN:VCARD\nURL:https://example.ch\nEND:VCARD\n  Name: Anna\n"
        "  Website: https://example.ch\nAztec: M1MUSTER/ANNA"
    )
    rich = code_links_html(text)
    assert rich is not None
    assert 'Data Matrix: <a href="https://example.org/dm">' in rich
    assert '  Website: <a href="https://example.ch">https://example.ch</a>' in rich
    assert "URL:https://example.ch<br>" in rich  # the raw vCard line stays text
    assert "Website: https://not-a-code.example<br>" in rich  # OCR text, not under a code
    assert rich.count("<a href=") == 2


def test_a_wifi_payload_shows_under_its_code_in_the_bubble(qtbot, launch) -> None:
    window = launch()
    message = extract_in_app(qtbot, window, page_with_payloads(), "parcel.png")
    assert f"QR: {WIFI}\n  Network: Cafe Guest;5G\n  Password: pa;ss:w0rd\\x" in message.text()
    assert "Data Matrix: (01)04012345678901" in message.label.text()
