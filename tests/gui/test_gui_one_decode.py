"""A dropped picture is decoded once and hashed once (issue 58), however many readers it has:
the intake, the read-ahead, the readability guard's OCR and the question itself share the
pixels the intake decoded (`core/pictures.py`)."""

from __future__ import annotations

import pytest
from gui_support import SIGNAL_TIMEOUT_MS, drop_on, file_mime, save_png, send, text_image

import desktop.core.images as images

INVOICE_SIZE = (640, 360)  # no picture the model or the OCR checks read has this size


@pytest.fixture
def counted(monkeypatch) -> dict[str, int]:
    """How often a file is decoded, and pixels hashed, from now on."""
    calls = {"decoded": 0, "hashed": 0}  # of the 640x360 invoice only (not the model checks)
    decode, digest = images._open_and_decode, images.image_digest

    def counting_decode(file, label):
        calls["decoded"] += label == "invoice.png"
        return decode(file, label)

    def counting_digest(image):
        calls["hashed"] += image.size == INVOICE_SIZE
        return digest(image)

    monkeypatch.setattr(images, "_open_and_decode", counting_decode)
    monkeypatch.setattr(images, "image_digest", counting_digest)
    return calls


def test_a_dropped_file_is_decoded_and_hashed_once_up_to_its_answer(
    qtbot, launch, tiny_ir, tmp_path, counted
):
    window = launch(model_dir=tiny_ir)
    shot = save_png(text_image("Invoice 2291 due today", INVOICE_SIZE), tmp_path / "invoice.png")
    prepared: list = []
    window.engine.prepared.connect(prepared.append)
    drop_on(window, file_mime(shot))  # the real intake: decoded in the pool, then attached
    qtbot.waitUntil(lambda: bool(prepared) and window.preparing.settled, timeout=SIGNAL_TIMEOUT_MS)
    assert prepared[-1].preparation.stats.images_encoded == 1  # read ahead

    result = send(qtbot, window, "What is due?")

    assert result.answer.ok, result.answer.error
    assert result.answer.stats.images_cached == 1
    assert counted == {"decoded": 1, "hashed": 1}


def test_a_reopened_pictures_thumbnail_is_drawn_from_the_kept_pixels(qapp, tmp_path):
    """A chat reopened in the same session: its thumbnails come from the picture store, not
    from a PNG decoded on the GUI thread (were the file read, this one is gone: the grey
    placeholder would be drawn)."""
    from desktop.core.images import load_image
    from desktop.core.pictures import SHARED
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.widgets.thumbnails import thumbnail

    path = save_png(text_image("Kept in memory", (400, 200)), tmp_path / "kept.png")
    picture = SHARED.keep(load_image(path))
    path.unlink()
    stored = ImageRef(picture.name, picture.digest, picture.size, path=path)  # as from history
    drawn = thumbnail(stored, 100).toImage()
    colours = {
        drawn.pixelColor(x, y).name()
        for x in range(0, drawn.width(), 2)
        for y in range(0, drawn.height(), 2)
    }
    assert drawn.width() == 2 * drawn.height()  # the picture's shape, not the square placeholder
    assert "#ffffff" in colours and len(colours) > 2  # white page, dark text, its antialiasing
