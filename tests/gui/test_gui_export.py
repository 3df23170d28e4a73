"""The header's Export menu: the open chat as Markdown with its images folder, as one HTML
page, and Copy conversation; written on the storage thread, the same documents the CLI's
`history export` writes."""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS, send, shown_message, text_image
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from desktop.cli import main


def test_export_menu_saves_markdown_and_html_and_copies_the_chat(
    qtbot, launch, tiny_ir, tmp_path, monkeypatch
):
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    assert not window.exporting.button.isEnabled()  # an empty chat has nothing to export
    result = send(qtbot, window, "What is the number?", [text_image("Invoice 4471")])
    assert window.exporting.button.isEnabled()

    target = tmp_path / "out" / "invoice"  # no extension typed: the format's is added
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.exporting.save("md")
    window.exporting.save("html", tmp_path / "out" / "invoice.html")
    qtbot.waitUntil(lambda: not window.storage.busy, timeout=SIGNAL_TIMEOUT_MS)
    markdown = (tmp_path / "out" / "invoice.md").read_text(encoding="utf-8")
    assert "What is the number?" in markdown and result.answer.text in markdown
    [picture] = (tmp_path / "out" / "invoice images").iterdir()
    assert f"(<invoice images/{picture.name}>)" in markdown
    assert "invoice.html" in shown_message(window.status)  # with room to be read

    window.exporting.copy()
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("# What is the number?") and result.answer.text in copied
    assert shown_message(window.status) == "Copied the conversation as Markdown."
    window.asking.copy_last_answer()
    assert QGuiApplication.clipboard().text() == result.answer.text
    assert shown_message(window.status) == "Copied the last answer."

    cli_target = tmp_path / "cli.html"
    args = ["history", "--data-dir", str(data), "export", str(result.request.conversation_id)]
    assert main([*args, "--format", "html", "--out", str(cli_target)]) == 0
    assert cli_target.read_bytes() == (tmp_path / "out" / "invoice.html").read_bytes()
