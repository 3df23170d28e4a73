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
