"""Show where the answer came from (issue 40, part 2): an answer's figures that its images
hold are links; clicking one opens the image viewer on the image that holds it, with every
quoted line outlined and the figure's line flashed; also after reopening the chat. The answer
is fixed (the tiny model writes gibberish); the extraction is the real fast OCR."""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS, send, text_image
from PIL import Image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QGuiApplication, QTextCursor, QTextDocument
from PySide6.QtWidgets import QLabel, QToolButton
from test_gui_evidence import box_of, extract, fixed_answer, page, question_thumbnail

from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.regions import Region
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import Thumbnail
from desktop.gui.widgets.evidence_links import LINK_TOOLTIP
from desktop.gui.widgets.image_viewer import ImageViewer
from desktop.gui.widgets.markdown_view import CodeBlock
from desktop.gui.widgets.messages import AssistantMessage, UserMessage
from desktop.gui.widgets.outlines import Marks

ANSWER = (
    "The total due is **12450.50**; the tax is 7,777.00.\n\n"
    "```\ntotal = 12450.50  # as the page says\n```\n"
)


def answer_card(window) -> AssistantMessage:
    [answer] = [m for m in window.chat.messages() if isinstance(m, AssistantMessage)]
    return answer


def linked_label(answer: AssistantMessage) -> QLabel:
    """The answer's prose label that holds evidence links (there is one in these answers)."""
    [label] = [w for w in answer.view.findChildren(QLabel) if 'href="evidence:' in w.text()]
    return label


def anchors(label: QLabel, words: str) -> list[str]:
    """The link targets of each place `words` stand in the label's rendered text ("" where
    they are not a link)."""
    document = QTextDocument()
    document.setHtml(label.text())
    found, cursor = [], document.find(words)
    while not cursor.isNull():
        probe = QTextCursor(document)
        probe.setPosition(cursor.selectionEnd())
        found.append(probe.charFormat().anchorHref())
        cursor = document.find(words, cursor)
    return found


def click_link(qtbot, window, label: QLabel, backwards: bool = False) -> ImageViewer:
    """Tab into the label from the widget before it (Shift+Tab from the one after it): its
    first link takes the focus; Enter on it. The viewer that opens."""
    window.activateWindow()
    step = label.nextInFocusChain if backwards else label.previousInFocusChain
    start = step()
    while not (start.focusPolicy() & Qt.FocusPolicy.TabFocus and start.isVisible()):
        start = start.nextInFocusChain() if backwards else start.previousInFocusChain()
    start.setFocus()
    qtbot.waitUntil(start.hasFocus, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.keyClick(start, Qt.Key.Key_Backtab if backwards else Qt.Key.Key_Tab)
    qtbot.waitUntil(label.hasFocus, timeout=SIGNAL_TIMEOUT_MS)
    assert label.selectedText() == "12450.50"  # the link has the focus (the only one here)
    qtbot.keyClick(label, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(viewers(window)), timeout=SIGNAL_TIMEOUT_MS)
    [viewer] = viewers(window)
    return viewer


def viewers(window) -> list[ImageViewer]:
    return [v for v in window.findChildren(ImageViewer) if v.isVisible()]


def amber_at(viewer: ImageViewer, box) -> bool:
    """The flashed line's outline is drawn (amber) just outside its box's left edge."""
    image = viewer.picture.grab().toImage()
    rect = viewer.picture.box_rect(box)
    ratio = image.devicePixelRatio()
    x, y = round((rect.left() - 3) * ratio), round(rect.center().y() * ratio)
    near = [QColor(image.pixel(x + dx, y)) for dx in (-1, 0, 1)]
    return any(c.red() > 200 and 150 < c.green() < 230 and c.blue() < 80 for c in near)


def test_clicking_a_figure_opens_the_image_with_its_line_flashed(
    qtbot, launch, tiny_ir, monkeypatch, tmp_path
):
    fixed_answer(monkeypatch, ANSWER)
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    picture = page()
    [lines] = extract(qtbot, window, [picture])
    total = box_of(lines, "12,450.50")
    result = send(qtbot, window, "What is the total?", [picture])
    qtbot.waitUntil(lambda: bool(question_thumbnail(window).evidence), timeout=SIGNAL_TIMEOUT_MS)

    answer = answer_card(window)
    label = linked_label(answer)
    assert anchors(label, "12450.50") == ["evidence:0"]
    assert anchors(label, "7,777.00") == [""]  # not on the image: no link
    [code] = answer.view.findChildren(CodeBlock)
    assert code.text() == "total = 12450.50  # as the page says"  # code is not linked
    label.linkHovered.emit("evidence:0")
    assert label.toolTip() == LINK_TOOLTIP

    viewer = click_link(qtbot, window, label)
    assert viewer.ref.digest == load_image(picture).digest
    assert viewer.marks == Marks((), (total,), total)
    assert viewer.picture.flashing()  # pulses while the app goes on
    qtbot.waitUntil(lambda: not viewer.picture.flashing(), timeout=SIGNAL_TIMEOUT_MS)
    assert amber_at(viewer, total)

    copy = next(b for b in answer.findChildren(QToolButton) if b.accessibleName() == "Copy answer")
    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == ANSWER == result.answer.text  # exactly

    chat_id = result.request.conversation_id
    viewer.close()
    window.close()
    reopened = launch(data_dir=data, model_dir=tiny_ir)  # a restart: links again
    reopened.open_conversation(chat_id)
    qtbot.waitUntil(
        lambda: any(
            'href="evidence:' in w.text() for w in answer_card(reopened).findChildren(QLabel)
        ),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    viewer = click_link(qtbot, reopened, linked_label(answer_card(reopened)), backwards=True)
    assert viewer.marks == Marks((), (total,), total)


def test_a_figure_on_the_second_image_opens_the_second_image(qtbot, launch, tiny_ir, monkeypatch):
    fixed_answer(monkeypatch, "Invoice 4471 is paid: the receipt says 98,310.25.")
    window = launch(model_dir=tiny_ir)
    receipt = render_lines(["Receipt", "Paid 98,310.25"], size=44, width=900, height=260, top=30)
    first, second = extract(qtbot, window, [page(), receipt])
    invoice, paid = box_of(first, "4471"), box_of(second, "98,310.25")
    send(qtbot, window, "Is it paid?", [page(), receipt])
    answer = answer_card(window)
    qtbot.waitUntil(lambda: bool(answer.view.links()), timeout=SIGNAL_TIMEOUT_MS)
    label = linked_label(answer)
    [paid_link] = anchors(label, "98,310.25")
    assert paid_link.startswith("evidence:")
    label.linkActivated.emit(paid_link)  # the label's own signal, as a click sends it
    [viewer] = viewers(window)
    assert viewer.ref.digest == load_image(receipt).digest
    assert viewer.marks.flash == paid and viewer.marks.evidence == (paid,)
    assert invoice not in viewer.marks.evidence  # image 1's line: not on image 2

    label.linkActivated.emit(anchors(label, "4471")[0])  # image 1: a viewer of its own
    assert {v.ref.digest for v in viewers(window)} == {
        load_image(page()).digest,
        load_image(receipt).digest,
    }
    label.linkActivated.emit(paid_link)  # image 2 again: its viewer is raised, not another
    assert len(viewers(window)) == 2


def test_a_thumbnail_opens_the_viewer_with_its_outlines(qtbot, launch):
    window = launch()
    ref = ImageRef.of(load_image(text_image("Gate B12", (900, 300))))
    window.session.ensure("trip")
    window.chat.add(UserMessage("which gate?", [ref], window.actions_hub))
    [thumb] = window.chat.messages()[0].findChildren(Thumbnail)
    thumb.show_regions((Region(10, 10, 300, 100, 0),))
    thumb.show_evidence(((40, 120, 400, 180),))
    qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
    [viewer] = viewers(window)
    assert viewer.marks == Marks(((10, 10, 310, 110),), ((40, 120, 400, 180),), None)
    assert not viewer.picture.flashing()


def test_a_line_too_small_to_read_when_fitted_is_shown_at_full_size(qtbot):
    """A tall page fitted to the window makes its lines a few pixels high: flashing one
    switches to 100 % and scrolls to it."""
    ref = ImageRef.of(load_image(Image.new("RGB", (700, 5200), "white")))
    box = (20, 5000, 500, 5060)
    viewer = ImageViewer(ref)
    qtbot.addWidget(viewer)
    viewer.show()
    viewer.show_marks(Marks((), (box,), box))
    qtbot.waitUntil(lambda: viewer.zoom_button.text() == "Fit to window", timeout=SIGNAL_TIMEOUT_MS)

    def line_in_view() -> bool:
        rect = viewer.picture.box_rect(box).toRect()
        top_left = viewer.picture.mapTo(viewer.scroll_area.viewport(), rect.topLeft())
        shown = viewer.scroll_area.viewport().rect()
        return shown.contains(top_left) and shown.contains(top_left + QPoint(0, rect.height()))

    qtbot.waitUntil(line_in_view, timeout=SIGNAL_TIMEOUT_MS)
    assert viewer.scroll_area.verticalScrollBar().value() > 0
