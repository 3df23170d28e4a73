"""capture_app.py's app and driver, plus what tests/gui/test_gui_capture_boxes.py needs under a
real X server: after an "attached" event, a "boxes" event with the box picker's canvas on the
screen (device pixels) and its scale, once the picker is shown (the target window, needed only
for the first drag, is hidden so that it covers nothing); when the picker closes, "regions":
the regions the next question will carry."""

from __future__ import annotations

import sys

import capture_app
from capture_app import Driver, say
from PySide6.QtCore import QEvent, QObject, QPoint, QTimer


class BoxesDriver(Driver):
    def on_attached(self, ref) -> None:
        super().on_attached(ref)
        self.target.hide()
        dialog = self.window.capturing.boxes_dialog
        if dialog is None or not dialog.isVisible():
            say("failed", text="no box picker on the capture")
            return
        dialog.canvas.installEventFilter(self)  # reported once painted: laid out by then

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self.report_canvas)
        return False

    def report_canvas(self) -> None:
        dialog = self.window.capturing.boxes_dialog
        assert dialog is not None
        canvas = dialog.canvas
        ratio = canvas.devicePixelRatioF()
        corner = canvas.mapToGlobal(QPoint(0, 0))
        say(
            "boxes",
            canvas=[round(v * ratio) for v in
                    (corner.x(), corner.y(), canvas.width(), canvas.height())],
            ratio=ratio,
            scale=canvas.scale,
            title=dialog.windowTitle(),
        )  # fmt: skip
        dialog.finished.connect(self.say_regions)

    def say_regions(self, result: int) -> None:
        """The picker closed (`result`: accepted or not): what the question will carry."""
        composer = self.window.composer
        regions = composer.marks.for_images(composer.attachments())
        say("regions", regions=[region.to_dict() for region in regions], accepted=bool(result))


if __name__ == "__main__":
    capture_app.Driver = BoxesDriver  # capture_app's main, with this driver
    sys.exit(capture_app.main())
