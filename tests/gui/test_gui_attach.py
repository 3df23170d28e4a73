"""Getting images into the composer: drop (files, folders, browser data), paste, refusals."""

from __future__ import annotations

from gui_support import (
    SIGNAL_TIMEOUT_MS,
    drag_enter,
    drop_on,
    file_mime,
    save_png,
)
from PIL import Image
from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication


def colour_png(tmp_path, name: str, colour: tuple[int, int, int]):
    return save_png(Image.new("RGB", (64, 48), colour), tmp_path / name)


def test_files_given_at_launch_are_attached(qtbot, launch, tmp_path):
    """`desklens shot.png` / the file manager's "Open with DeskLens" (Exec=desklens %F)."""
    picture = colour_png(tmp_path, "opened.png", (20, 120, 30))
    window = launch(files=[picture, tmp_path / "gone.png"])
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.chips()[0].ref.name == "opened.png"
    qtbot.waitUntil(lambda: "gone.png" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS)


def test_drop_attaches_images_and_refuses_a_text_file_by_name(qtbot, launch, tmp_path):
    window = launch()
    picture = colour_png(tmp_path, "receipt.png", (200, 30, 30))
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture")

    # Dropped onto the chat area, not the window itself: drops work anywhere.
    drop_on(window.chat.viewport(), file_mime(picture, notes))

    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    chip = window.composer.chips()[0]
    assert chip.ref.name == "receipt.png"
    assert chip.ref.size == (64, 48)
    assert chip.ref.loaded is None and chip.ref.path == picture  # decoded again when used
    assert not chip.picture.pixmap().isNull()
    qtbot.waitUntil(lambda: "notes.txt" in window.notice.text())
    assert "Not an image" in window.notice.text()
    assert not window.drop.overlay.isVisible()  # hidden again after the drop
    assert window.composer.preset_buttons["describe"].isEnabled()


def test_drag_shows_overlay_and_leaving_hides_it(qtbot, launch, tmp_path):
    from PySide6.QtGui import QDragLeaveEvent

    window = launch()
    enter = drag_enter(window.composer.editor, file_mime(colour_png(tmp_path, "a.png", (0, 0, 0))))
    assert enter.isAccepted()  # the editor passed it up to the window
    assert window.drop.overlay.isVisible()
    QApplication.sendEvent(window, QDragLeaveEvent())
    assert not window.drop.overlay.isVisible()


def test_plain_text_drag_is_not_taken_as_attachment(qtbot, launch):
    window = launch()
    mime = QMimeData()
    mime.setText("just words")
    enter = drag_enter(window.chat.viewport(), mime)
    assert not enter.isAccepted()
    assert not window.drop.overlay.isVisible()


def test_dropped_folder_is_expanded_and_duplicates_attach_once(qtbot, launch, tmp_path):
    window = launch()
    folder = tmp_path / "shots"
    (folder / "nested").mkdir(parents=True)
    colour_png(folder, "one.png", (10, 10, 10))
    colour_png(folder / "nested", "two.png", (20, 200, 20))
    colour_png(folder, "same-as-one.png", (10, 10, 10))  # same pixels: same digest

    drop_on(window, file_mime(folder))

    qtbot.waitUntil(lambda: len(window.composer.chips()) == 2, timeout=SIGNAL_TIMEOUT_MS)
    assert {chip.ref.name for chip in window.composer.chips()} <= {
        "one.png", "two.png", "same-as-one.png",
    }  # fmt: skip
    assert window.composer.count_label.text() == "2 images"


def test_browser_image_data_is_attached_and_web_address_alone_is_refused(qtbot, launch):
    window = launch()
    picture = QImage(40, 30, QImage.Format.Format_RGB32)
    picture.fill(Qt.GlobalColor.blue)
    from_browser = QMimeData()
    from_browser.setImageData(picture)
    from_browser.setUrls([QUrl("https://example.com/chart.png")])
    drop_on(window, from_browser)
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.chips()[0].ref.size == (40, 30)
    assert window.notice.text() == ""  # the picture came with the drop: nothing to refuse

    link_only = QMimeData()
    link_only.setUrls([QUrl("https://example.com/other.png")])
    drop_on(window, link_only)
    qtbot.waitUntil(lambda: "offline" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS)
    assert "https://example.com/other.png" in window.notice.text()
    assert len(window.composer.chips()) == 1


def test_damaged_image_is_reported_by_name(qtbot, launch, tmp_path):
    window = launch()
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    drop_on(window, file_mime(broken))
    qtbot.waitUntil(lambda: "broken.png" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.chips() == []


def test_ctrl_v_pastes_an_image_into_the_composer(qtbot, launch):
    window = launch()
    picture = QImage(50, 20, QImage.Format.Format_RGB32)
    picture.fill(Qt.GlobalColor.darkGreen)
    QApplication.clipboard().setImage(picture)
    window.composer.editor.setFocus()
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    chip = window.composer.chips()[0]
    assert chip.ref.name == "pasted image"
    assert chip.ref.size == (50, 20)
    assert window.composer.editor.toPlainText() == ""  # the image did not turn into text


def test_pasting_copied_files_attaches_them_and_text_stays_text(qtbot, launch, tmp_path):
    window = launch()
    QApplication.clipboard().setMimeData(file_mime(colour_png(tmp_path, "copied.png", (1, 2, 3))))
    window.composer.editor.setFocus()
    window.composer.editor.paste()
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.chips()[0].ref.name == "copied.png"

    QApplication.clipboard().setText("plain words")
    window.composer.editor.paste()
    assert window.composer.editor.toPlainText() == "plain words"
    assert len(window.composer.chips()) == 1


def test_removing_an_attachment(qtbot, launch, tmp_path):
    window = launch()
    drop_on(
        window,
        file_mime(
            colour_png(tmp_path, "a.png", (1, 1, 1)), colour_png(tmp_path, "b.png", (9, 9, 9))
        ),
    )
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 2, timeout=SIGNAL_TIMEOUT_MS)
    first = window.composer.chips()[0]
    qtbot.mouseClick(first.close_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(window.composer.attachments()) == 1)
    assert window.composer.attachments()[0].name != first.ref.name


def test_dropped_pdf_becomes_page_images(qtbot, launch, tmp_path, monkeypatch):
    from gui_support import text_image

    import desktop.gui.workers.intake as intake

    monkeypatch.setattr(intake, "MAX_PDF_PAGES", 2)
    pages = [text_image(f"Chapter {n}") for n in (1, 2, 3)]
    pdf = tmp_path / "report.pdf"
    pages[0].save(pdf, save_all=True, append_images=pages[1:])

    window = launch()
    drop_on(window, file_mime(pdf))
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 2, timeout=SIGNAL_TIMEOUT_MS)
    assert [c.ref.name for c in window.composer.chips()] == ["report p1.png", "report p2.png"]
    assert "first 2 of the 3 pages" in window.notice.text()

    window.extraction.extract_all()
    qtbot.waitUntil(
        lambda: (
            "Chapter 2" in window.chat.messages()[-1].text() if window.chat.messages() else False
        ),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    assert "Chapter 1" in window.chat.messages()[0].text()


def test_damaged_pdf_is_refused_by_name(qtbot, launch, tmp_path):
    broken = tmp_path / "scan.pdf"
    broken.write_bytes(b"%PDF-1.4 garbage")
    window = launch()
    drop_on(window, file_mime(broken))
    qtbot.waitUntil(lambda: "scan.pdf" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS)
    assert "could not be opened as a PDF" in window.notice.text()
    assert window.composer.chips() == []


def test_attach_button_opens_a_file_dialog(qtbot, launch, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    picked = colour_png(tmp_path, "picked.png", (90, 90, 90))
    asked = []

    def fake_dialog(parent, caption, folder, filters):
        asked.append(filters)
        return [str(picked)], filters

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", fake_dialog)
    window = launch()
    qtbot.mouseClick(window.composer.attach_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.chips()[0].ref.name == "picked.png"
    assert "*.pdf" in asked[0] and "*.png" in asked[0]
