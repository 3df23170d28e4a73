"""What a walkthrough of the app found (issue 55), each held by a test: the tray note's Show,
and the smaller things."""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS


def test_a_crop_handed_to_be_extracted_shows_its_text_in_the_chat(
    launch, qtbot, sample_image, tmp_path
):
    """The tray note's Show hands the crop with "extract" (`extract_requested`, then the file
    as `desklens FILE` hands one): the window shows its text, not the box picker."""
    from desktop.gui.widgets.messages import OcrMessage
    from desktop.gui.widgets.region_picker import RegionDialog

    path = tmp_path / "capture 10-00-00.png"
    sample_image.save(path)
    window = launch()
    window.ocr.extract_requested.emit([str(path)])
    window.ocr.open_requested.emit([str(path)])
    qtbot.waitUntil(
        lambda: any(isinstance(m, OcrMessage) for m in window.chat.messages()),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    assert window.findChildren(RegionDialog) == []


def test_the_image_viewer_opens_with_the_picture_fitted_to_its_space(qtbot):
    """It opened at 63-71 % of the space: fitted to the viewport before the layout settled."""
    from PIL import Image

    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.widgets.image_viewer import ImageViewer

    ref = ImageRef.of(load_image(Image.new("RGB", (2400, 1800), "white"), name="big.png"))
    viewer = ImageViewer(ref)
    qtbot.addWidget(viewer)
    viewer.show()
    qtbot.waitExposed(viewer)
    area = viewer.scroll_area.viewport().size()

    def fitted() -> bool:
        shown = viewer.picture.pixmap().deviceIndependentSize()
        return abs(shown.width() - area.width()) <= 2 or abs(shown.height() - area.height()) <= 2

    qtbot.waitUntil(fitted, timeout=10_000)  # a layout of this process: no slow work
    shown = viewer.picture.pixmap().deviceIndependentSize()
    assert shown.width() <= area.width() + 1 and shown.height() <= area.height() + 1
