"""Asking about a region (issue 40): boxes dragged on an attached image go with the next
question (`AskRequest.regions`, in image pixels), are stored with it, and are drawn on the
question's thumbnail, also after a restart; Regenerate asks about the same boxes."""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS, text_image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QDialogButtonBox, QToolButton

from desktop.core.images import load_image
from desktop.core.regions import MAX_REGIONS, Region
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import Thumbnail
from desktop.gui.widgets.messages import AssistantMessage, UserMessage
from desktop.gui.widgets.outlines import REGION_COLOUR
from desktop.gui.widgets.region_picker import RegionCanvas, RegionDialog

# A 1440x280 page is shown at 2/3 (the canvas is at most 960 wide): canvas points * 1.5.
PAGE = (1440, 280)
FIRST = Region(45, 45, 450, 135)  # dragged from (30, 30) to (330, 120)
SECOND = Region(900, 45, 135, 135)  # from (600, 30) to (690, 120)


def drag(qtbot, canvas, start: QPoint, end: QPoint, button=Qt.MouseButton.LeftButton) -> None:
    qtbot.mousePress(canvas, button, pos=start)
    middle = (start + end) / 2
    qtbot.mouseMove(canvas, middle)
    qtbot.mouseMove(canvas, end)
    qtbot.mouseRelease(canvas, button, pos=end)


def page_ref() -> ImageRef:
    return ImageRef.of(load_image(text_image("Invoice 4471 total 12,450.50", size=PAGE)))


def chat_thumbnails(window) -> list[Thumbnail]:
    questions = [m for m in window.chat.messages() if isinstance(m, UserMessage)]
    return [thumb for message in questions for thumb in message.findChildren(Thumbnail)]


def outlined(thumb: Thumbnail, region: Region) -> bool:
    """The box's left edge is drawn in the box colour on the thumbnail's picture."""
    pixmap = thumb.picture.pixmap()
    image = pixmap.toImage()
    scale = pixmap.width() / thumb.ref.size[0]
    x, y = round(region.x * scale), round((region.y + region.height / 2) * scale)
    near = [QColor(image.pixel(x + dx, y)) for dx in (-1, 0, 1)]
    return any(abs(c.red() - 255) < 40 and c.green() < 120 and c.blue() > 80 for c in near)


def test_drawn_regions_are_asked_about_stored_and_shown_after_a_restart(
    qtbot, launch, tiny_ir, tmp_path
):
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    ref = page_ref()
    window.composer.add_images([ref])
    [chip] = window.composer.chips()
    [pick] = [a for a in chip.actions() if a.text() == "Ask about a region…"]
    pick.trigger()
    dialog = window.composer.findChild(RegionDialog)
    assert dialog is not None and dialog.isVisible()
    canvas = dialog.canvas
    drag(qtbot, canvas, QPoint(30, 30), QPoint(330, 120))
    drag(qtbot, canvas, QPoint(600, 30), QPoint(690, 120))
    drag(qtbot, canvas, QPoint(750, 150), QPoint(800, 180))  # a third, then removed
    qtbot.mouseClick(canvas, Qt.MouseButton.RightButton, pos=QPoint(775, 165))
    assert canvas.boxes == [FIRST, SECOND]
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert chip.regions == (FIRST, SECOND) and outlined(chip, FIRST)

    window.composer.editor.setPlainText("What is the total here?")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    result = blocker.args[0]
    assert result.answer.ok
    assert result.request.regions == (FIRST, SECOND)
    assert '"bbox_2d": [31, 161, 344, 643]' in result.prompt  # the box in 0..1000 units
    chat_id = result.request.conversation_id
    [stored, _answer] = window.store.messages(chat_id)
    assert stored.asked.regions == (FIRST, SECOND)
    assert window.composer.attachments() == [] and window.composer.marks.for_images([ref]) == ()
    [thumb] = chat_thumbnails(window)
    assert thumb.regions == (FIRST, SECOND) and outlined(thumb, FIRST) and outlined(thumb, SECOND)
    window.close()

    reopened = launch(data_dir=data, model_dir=tiny_ir)  # a restart
    reopened.open_conversation(chat_id)
    [thumb] = chat_thumbnails(reopened)
    assert thumb.regions == (FIRST, SECOND) and outlined(thumb, FIRST)
    [answer] = [m for m in reopened.chat.messages() if isinstance(m, AssistantMessage)]
    regenerate = next(b for b in answer.findChildren(QToolButton) if b.text() == "Regenerate")
    with qtbot.waitSignal(reopened.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(regenerate, Qt.MouseButton.LeftButton)
    assert blocker.args[0].request.regions == (FIRST, SECOND)
    [thumb] = chat_thumbnails(reopened)
    assert thumb.regions == (FIRST, SECOND)


def test_a_question_without_boxes_has_no_regions(qtbot, launch, tiny_ir):
    window = launch(model_dir=tiny_ir)
    ref = page_ref()
    window.composer.add_images([ref])
    dialog = window.composer.pick_regions(ref)
    drag(qtbot, dialog.canvas, QPoint(30, 30), QPoint(330, 120))
    dialog.reject()  # cancelled: nothing marked
    window.composer.editor.setPlainText("What is this?")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    assert blocker.args[0].request.regions == ()
    assert "bbox_2d" not in blocker.args[0].prompt
    [thumb] = chat_thumbnails(window)
    assert thumb.regions == () and not outlined(thumb, FIRST)


def test_the_canvas_keeps_boxes_inside_the_image_and_ignores_clicks(qtbot):
    canvas = RegionCanvas(page_ref())
    qtbot.addWidget(canvas)
    assert (canvas.width(), canvas.height()) == (960, 187)
    drag(qtbot, canvas, QPoint(10, 10), QPoint(12, 11))  # a click that slipped: no box
    assert canvas.boxes == []
    drag(qtbot, canvas, QPoint(900, 150), QPoint(1200, 400))  # dragged past the corner
    assert canvas.boxes == [Region(1350, 225, 90, 55)]
    qtbot.mouseClick(canvas, Qt.MouseButton.RightButton, pos=QPoint(5, 5))  # not on a box
    assert len(canvas.boxes) == 1
    for step in range(MAX_REGIONS + 2):
        drag(qtbot, canvas, QPoint(10 + 20 * step, 10), QPoint(25 + 20 * step, 30))
    assert len(canvas.boxes) == MAX_REGIONS  # no more than one question takes


def test_edit_shows_the_boxes_and_sends_them_as_changed(qtbot, launch, tiny_ir):
    window = launch(model_dir=tiny_ir)
    ref = page_ref()
    window.composer.add_images([ref])
    window.composer.set_regions(ref, (FIRST, SECOND))
    window.composer.editor.setPlainText("What is the total here?")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    chat_id = blocker.args[0].request.conversation_id
    [question] = window.session.transcript.questions()

    window.rewinding.edit(question.id)
    [chip] = window.composer.chips()
    assert chip.regions == (FIRST, SECOND)  # the question's boxes, back on its image
    dialog = window.composer.pick_regions(chip.ref)
    qtbot.mouseClick(dialog.canvas, Qt.MouseButton.RightButton, pos=QPoint(640, 60))
    dialog.accept()
    assert chip.regions == (FIRST,)
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    assert blocker.args[0].request.regions == (FIRST,)
    assert '"bbox_2d": [31, 161, 344, 643]' in blocker.args[0].prompt
    [stored, _answer] = window.store.messages(chat_id)
    assert stored.asked.regions == (FIRST,)
    [thumb] = chat_thumbnails(window)
    assert thumb.regions == (FIRST,)


def dashed_pixels(canvas: RegionCanvas, box: Region) -> int:
    """Pixels in the box colour along the top edge of `box` (image pixels) on the canvas."""
    image = canvas.grab().toImage()
    left, top, right, _ = (round(v * canvas.scale) for v in box.corners)
    colours = [QColor(image.pixel(x, top)) for x in range(left + 2, right - 2)]
    return sum(c == REGION_COLOUR for c in colours)


def test_a_drag_hides_the_keyboard_box_until_a_key_is_pressed(qtbot):
    """The dashed keyboard box stayed beside a box dragged with the mouse."""
    dialog = RegionDialog(page_ref())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    canvas = dialog.canvas
    qtbot.waitUntil(canvas.hasFocus)
    key_box = canvas.key_box  # the middle of the page, clear of the box dragged below
    assert dashed_pixels(canvas, key_box) > 20  # from the keyboard: shown at once
    drag(qtbot, canvas, QPoint(10, 10), QPoint(100, 40))
    assert len(canvas.boxes) == 1 and canvas.hasFocus()
    assert dashed_pixels(canvas, key_box) == 0
    qtbot.keyClick(canvas, Qt.Key.Key_Space)  # shows the box; adds nothing unseen
    assert len(canvas.boxes) == 1 and dashed_pixels(canvas, key_box) > 20
    qtbot.keyClick(canvas, Qt.Key.Key_Space)
    assert canvas.boxes[-1] == key_box


def test_the_composer_says_a_region_is_set(qtbot, launch):
    """The count line and the chip's name and tooltip say the next question is about regions."""
    window = launch()
    composer = window.composer
    ref = page_ref()
    composer.add_images([ref])
    [chip] = composer.chips()
    assert composer.count_label.text().startswith("1 image")
    assert "region" not in composer.count_label.text() + chip.accessibleName()
    dialog = composer.pick_regions(ref)
    drag(qtbot, dialog.canvas, QPoint(30, 30), QPoint(330, 120))
    dialog.accept()
    assert composer.count_label.text().startswith("1 image · 1 region")
    assert chip.accessibleName() == f"Image {ref.name}, 1 region"
    assert "1 region marked" in chip.toolTip()
    composer.set_regions(ref, ())
    assert "region" not in composer.count_label.text() + chip.accessibleName() + chip.toolTip()
