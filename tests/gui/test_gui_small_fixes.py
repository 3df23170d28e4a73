"""Issue 39's smaller fixes: New chat drops the last chat's unsent images, save dialogs open
in the folder saved into last, and your own prompts sit under a header in the Ask AI menu."""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS, save_png, text_image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QToolButton

from desktop.gui.widgets.messages import OcrMessage


def test_new_chat_drops_the_unsent_images(qtbot, launch, sample_image):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    window = launch()
    window.composer.add_images([ImageRef.of(load_image(sample_image))])
    assert len(window.composer.attachments()) == 1
    qtbot.mouseClick(window.sidebar.new_button, Qt.MouseButton.LeftButton)
    assert window.composer.attachments() == []  # Ctrl+E would have read them in the new chat


def test_save_dialogs_open_where_the_last_save_went(qtbot, launch, tmp_path, monkeypatch):
    window = launch()
    shot = save_png(text_image("Ref AB-12"), tmp_path / "ref.png")
    from gui_support import drop_on, file_mime

    drop_on(window, file_mime(shot))
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    window.extraction.extract_all()
    qtbot.waitUntil(
        lambda: any(isinstance(m, OcrMessage) for m in window.chat.messages()),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    message = next(m for m in window.chat.messages() if isinstance(m, OcrMessage))
    chosen = tmp_path / "chosen folder"
    chosen.mkdir()
    offered: list[str] = []

    def dialog(_parent, _title, start, _filters):
        offered.append(start)
        return str(chosen / "ref.txt"), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    save = next(b for b in message.findChildren(QToolButton) if b.text() == "Save as…")
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: (chosen / "ref.txt").exists(), timeout=SIGNAL_TIMEOUT_MS)
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)  # the same dialog again
    window.exporting.save("md")  # and the chat's export
    assert offered[1] == str(chosen / "ref.txt")
    assert offered[2].startswith(str(chosen))
    qtbot.waitUntil(lambda: not window.storage.busy, timeout=SIGNAL_TIMEOUT_MS)


def test_own_prompts_sit_under_a_readable_header_in_the_ask_ai_menu(qtbot):
    from desktop.core.presets import Preset
    from desktop.gui.widgets.composer import Composer

    composer = Composer()
    qtbot.addWidget(composer)
    composer.set_own_presets([Preset("mine:totals", "Totals", "List every total.")])
    actions = composer.ask_menu_button.menu().actions()
    labels = [a.text() for a in actions if not a.isSeparator()]  # a separator draws no text
    assert labels.index("My prompts") == labels.index("Totals") - 1
    header = next(a for a in actions if a.text() == "My prompts")
    assert not header.isEnabled()  # a header, not something to click
