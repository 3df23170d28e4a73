"""Boxes on a capture (issue 49, part 2): a region captured to ask about opens the attached
images' box picker on the crop; the boxes drawn there (by mouse or keyboard) go with the next
question as `desklens ask --region` sends them (`AskRequest.regions`, the crop's pixels, the
core.regions path), and Esc skips them.

The screens here are a frozen picture at twice the screen's logical size (a 200 % screen):
the overlay gets a real drag, in logical pixels, and the region's crop must be exactly the
device pixels of the page under it. The grab itself is the seam (tests/gui/test_gui_capture.py
grabs a real X server's screen; its last test takes this picker's boxes there too)."""

from __future__ import annotations

import json
import os

import pytest
from gui_support import SIGNAL_TIMEOUT_MS
from PIL import Image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QImage

from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.regions import Region, with_regions
from desktop.gui.capture.frozen import FrozenScreen
from desktop.gui.capture.overlay import HINTS, CaptureOverlay
from desktop.gui.widgets.region_picker import KEY_STEP_PX
from desktop.gui.widgets.thumbnails import qimage_to_png

SCALE = 2  # device pixels per logical pixel of the frozen screen
DRAG = (QPoint(10, 10), QPoint(610, 210))  # on the overlay, logical: 600x200
CROP_AREA = (20, 20, 1200, 400)  # the same, in the frozen picture's device pixels


@pytest.fixture
def screen_page(monkeypatch):
    """The screen frozen as a page of text at twice its logical size; the page (PIL)."""
    screen = QGuiApplication.primaryScreen()
    geometry = screen.geometry()
    assert geometry.width() >= 640 and geometry.height() >= 240
    page = render_lines(
        ["Invoice 4471 from Example Ltd", "Total due 12,450.50 EUR", "Thank you"],
        size=56, width=geometry.width() * SCALE, height=geometry.height() * SCALE, top=60,
        ink=(0, 0, 0),
    )  # fmt: skip
    picture = QImage.fromData(png_bytes(page))
    picture.setDevicePixelRatio(SCALE)

    def grab(done, _failed):  # the screen as Qt has it now, as the real grab takes it
        done([FrozenScreen(QGuiApplication.primaryScreen(), geometry, picture)])

    monkeypatch.setattr("desktop.gui.flows.capturing.grab_screens", grab)
    monkeypatch.setattr("desktop.gui.flows.capturing.visible_windows", lambda: [])
    return page


def png_bytes(image: Image.Image) -> bytes:
    import io

    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def capture_and_drag(qtbot, window, mode: str = "ask"):
    """Starts a capture, drags DRAG on the overlay with the mouse; the box picker on the crop."""
    flow = window.capturing
    with qtbot.waitSignal(flow.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
        flow.start(mode, hide_window=False)
    [overlay] = flow.picker.overlays
    assert isinstance(overlay, CaptureOverlay) and overlay.frozen.scale == SCALE
    assert overlay.hint == HINTS[mode]  # the line says boxes can be marked next
    start, end = DRAG
    with qtbot.waitSignal(flow.attached, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.mousePress(overlay, Qt.MouseButton.LeftButton, pos=start)
        qtbot.mouseMove(overlay, (start + end) / 2)
        qtbot.mouseMove(overlay, end)
        qtbot.mouseRelease(overlay, Qt.MouseButton.LeftButton, pos=end)
    capture = flow.last_capture
    area = capture.area
    assert (area.x(), area.y(), area.width(), area.height()) == CROP_AREA
    dialog = flow.boxes_dialog
    assert dialog is not None and dialog.isVisible() and dialog.note.isVisible()
    assert dialog.canvas.ref.size == (1200, 400) and dialog.canvas.scale == 0.8
    return dialog


def ask(qtbot, window, question: str):
    window.composer.editor.setPlainText(question)
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    return blocker.args[0]


def device_crop(page: Image.Image, region: Region) -> Image.Image:
    """The region's pixels as they are on the frozen screen (device pixels)."""
    left, top = CROP_AREA[0] + region.x, CROP_AREA[1] + region.y
    return page.crop((left, top, left + region.width, top + region.height))


def same_pixels(first: Image.Image, second: Image.Image) -> bool:
    first, second = first.convert("RGB"), second.convert("RGB")
    return first.size == second.size and first.tobytes() == second.tobytes()


def asked_crop(window, region: Region) -> Image.Image:
    """The region's crop as the engine is given it: core.regions on the captured picture."""
    captured = load_image(qimage_to_png(window.capturing.last_capture.image), name="capture")
    question = with_regions([region], [captured])
    return question.images[1].image


def test_a_box_drawn_on_the_capture_is_asked_about_in_its_device_pixels(
    qtbot, launch, tiny_ir, screen_page
):
    window = launch(model_dir=tiny_ir)
    dialog = capture_and_drag(qtbot, window)
    canvas = dialog.canvas
    # On the canvas (the crop at 0.8): (100, 40)-(500, 120) is the crop's (125, 50)-(625, 150).
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(100, 40))
    qtbot.mouseMove(canvas, QPoint(300, 80))
    qtbot.mouseMove(canvas, QPoint(500, 120))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(500, 120))
    box = Region(125, 50, 500, 100)
    assert canvas.boxes == [box]
    with qtbot.waitSignal(dialog.finished, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.mouseDClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(700, 200))  # done
    [chip] = window.composer.chips()
    assert chip.regions == (box,) and window.capturing.boxes_dialog is None

    result = ask(qtbot, window, "What is the total?")
    assert result.answer.ok
    assert result.request.regions == (box,)  # the crop's pixels, as --region takes them
    assert json.dumps({"bbox_2d": box.bbox_2d((1200, 400))}) in result.prompt
    assert same_pixels(asked_crop(window, box), device_crop(screen_page, box))
    [stored, _answer] = window.store.messages(result.request.conversation_id)
    assert stored.asked.regions == (box,)


def test_the_keyboard_marks_a_box_and_enter_confirms_it(qtbot, launch, tiny_ir, screen_page):
    window = launch(model_dir=tiny_ir)
    dialog = capture_and_drag(qtbot, window)
    canvas = dialog.canvas
    assert canvas.focusPolicy() == Qt.FocusPolicy.StrongFocus
    assert canvas.key_box == Region(300, 100, 600, 200)  # the middle of the crop
    step = round(KEY_STEP_PX / canvas.scale)
    for key, modifier in [
        (Qt.Key.Key_Left, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_Left, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_Up, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier),  # narrower
    ]:
        qtbot.keyClick(canvas, key, modifier)
    box = Region(300 - 2 * step, 100 - step, 600 - step, 200)
    assert canvas.key_box == box
    qtbot.keyClick(canvas, Qt.Key.Key_Space)  # added
    qtbot.keyClick(canvas, Qt.Key.Key_Right)
    qtbot.keyClick(canvas, Qt.Key.Key_Space)  # a second ...
    qtbot.keyClick(canvas, Qt.Key.Key_Delete)  # ... removed again
    assert canvas.boxes == [box]
    with qtbot.waitSignal(dialog.finished, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.keyClick(canvas, Qt.Key.Key_Return)
    result = ask(qtbot, window, "What does this say?")
    assert result.request.regions == (box,)
    assert same_pixels(asked_crop(window, box), device_crop(screen_page, box))


def test_escape_skips_the_boxes_and_a_new_capture_closes_the_picker(
    qtbot, launch, tiny_ir, screen_page
):
    window = launch(model_dir=tiny_ir)
    dialog = capture_and_drag(qtbot, window)
    qtbot.mousePress(dialog.canvas, Qt.MouseButton.LeftButton, pos=QPoint(100, 40))
    qtbot.mouseRelease(dialog.canvas, Qt.MouseButton.LeftButton, pos=QPoint(500, 120))
    with qtbot.waitSignal(dialog.finished, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.keyClick(dialog.canvas, Qt.Key.Key_Escape)
    [chip] = window.composer.chips()
    assert chip.regions == ()  # the crop stays attached, about all of it

    window.composer.clear_images()
    second = capture_and_drag(qtbot, window)  # the same crop again: its own picker
    second.canvas.boxes.append(Region(0, 0, 10, 10))
    with qtbot.waitSignal(second.finished, timeout=SIGNAL_TIMEOUT_MS):
        window.capturing.start("copy", hide_window=False)  # a new capture skips these boxes
    window.capturing.picker.cancel()
    assert window.composer.marks.for_images(window.composer.attachments()) == ()
    result = ask(qtbot, window, "What is this?")
    assert result.request.regions == () and "bbox_2d" not in result.prompt


@pytest.fixture
def boxes_desktop(tmp_path):
    """test_gui_capture's app on its own Xvfb at QT_SCALE_FACTOR=2, driven by
    tests/support/capture_boxes_app.py (which reports the box picker's canvas)."""
    import test_gui_capture

    original = test_gui_capture.DRIVER
    test_gui_capture.DRIVER = original.with_name("capture_boxes_app.py")
    try:
        yield from test_gui_capture.start_app(tmp_path, {"QT_SCALE_FACTOR": "2"})
    finally:
        test_gui_capture.DRIVER = original


def test_under_a_real_x_server_the_box_is_the_crops_device_pixels(boxes_desktop) -> None:
    """xdotool's real pointer (XTEST, device pixels): a drag on the overlay, a drag on the box
    picker, a double-click; the region is the dragged device pixels of the crop."""
    from test_gui_capture import inside

    server, app, ready = boxes_desktop
    assert ready["scale"] == 2.0
    app.send("capture ask")
    app.wait_for("overlay")
    server.drag(*inside(ready["target"], margin=10))
    crop_width, crop_height = app.wait_for("attached")["crop"]
    boxes = app.wait_for("boxes")
    server.xdotool("search", "--sync", "--onlyvisible", "--name", boxes["title"])
    x, y, width, height = boxes["canvas"]
    # Shown at its size on this screen: one crop pixel per device pixel.
    assert boxes["ratio"] == 2.0 and boxes["scale"] == 0.5
    assert (width, height) == (crop_width, crop_height)
    server.drag((x + 100, y + 20), (x + 500, y + 120))
    # A double-click near the canvas's corner (the buttons were once laid over it) confirms.
    server.xdotool("mousemove", x + width - 12, y + height - 12)
    server.xdotool("click", "--repeat", "2", "--delay", "80", "1")
    closed = app.wait_for("regions")
    assert closed["accepted"], closed
    assert closed["regions"] == [{"image": 0, "x": 100, "y": 20, "w": 400, "h": 100}]


def test_the_app_started_by_capture_ask_opens_the_picker_on_its_capture(
    qtbot, launch, monkeypatch, tmp_path
):
    """`desklens capture --ask` without a window saves the crop and starts `desklens gui FILE`
    with PICK_BOXES_ENV naming it (capture/standalone.py): that app's picker opens on it."""
    from desktop.gui.capture.overlay import PICK_BOXES_ENV

    capture = tmp_path / "capture 10-11-12.png"
    render_lines(["Total due 12,450.50"], size=40, width=700, height=120).save(capture)
    monkeypatch.setenv(PICK_BOXES_ENV, str(capture))
    window = launch(files=[capture])
    qtbot.waitUntil(lambda: window.capturing.boxes_dialog is not None, timeout=SIGNAL_TIMEOUT_MS)
    dialog = window.capturing.boxes_dialog
    assert dialog.canvas.ref.name == capture.name and dialog.note.isVisible()
    assert PICK_BOXES_ENV not in os.environ  # taken: an app it starts does not inherit it
    qtbot.mousePress(dialog.canvas, Qt.MouseButton.LeftButton, pos=QPoint(20, 20))
    qtbot.mouseRelease(dialog.canvas, Qt.MouseButton.LeftButton, pos=QPoint(220, 100))
    qtbot.keyClick(dialog.canvas, Qt.Key.Key_Return)
    [chip] = window.composer.chips()
    assert chip.regions == (Region(20, 20, 200, 80),)
