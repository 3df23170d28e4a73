"""The GUI's parts on their own: Markdown splitting, replaying history, settings, widgets,
themes, and what importing the GUI costs."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolButton

from desktop.core.history import HistoryStore
from desktop.core.history.replay import rebuild_conversation
from desktop.core.images import load_image
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.widgets.markdown_view import Block, CodeBlock, MarkdownView, split_blocks
from desktop.gui.workers.intake import IntakeResult, name_list


def test_split_blocks_separates_prose_and_fenced_code():
    text = "Intro\n\n```python\nx = 1\n\n```\nOutro"
    assert split_blocks(text) == [
        Block("markdown", "Intro\n"),
        Block("code", "x = 1\n", "python"),
        Block("markdown", "Outro"),
    ]


def test_split_blocks_streaming_unclosed_fence_and_longer_fences():
    assert split_blocks("See:\n```js\nlet a") == [
        Block("markdown", "See:"),
        Block("code", "let a", "js"),
    ]
    # A ``` inside a ```` block does not close it.
    assert split_blocks("````\n```\ninner\n````") == [Block("code", "```\ninner", "")]


def test_markdown_view_reuses_widgets_while_streaming_and_copies_code(qtbot):
    view = MarkdownView()
    qtbot.addWidget(view)
    view.set_markdown("Answer:\n```sh\necho hi")
    first_code = view.code_blocks()[0]
    view.set_markdown("Answer:\n```sh\necho hi\necho there\n```\nDone.")
    assert view.code_blocks()[0] is first_code  # updated in place, no flicker
    assert first_code.text() == "echo hi\necho there"
    assert view.plain_text().endswith("Done.")
    [copy] = [b for b in first_code.findChildren(QToolButton) if b.text() == "Copy"]
    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == "echo hi\necho there"
    assert copy.text() == "Copied"
    view.set_markdown("Only prose now")
    assert view.code_blocks() == []
    assert isinstance(first_code, CodeBlock)


def test_markdown_tables_render_with_the_theme_grid(qtbot):
    from desktop.gui.theme import apply_theme, current_theme
    from desktop.gui.widgets.markdown_view import markdown_to_html

    apply_theme(QApplication.instance(), "dark")
    try:
        html = markdown_to_html("| a | b |\n|---|---|\n| 1 | 2 |")
        assert current_theme().grid in html
        assert "<body>" in html  # the label's own font applies
    finally:
        apply_theme(QApplication.instance(), "light")


def test_name_list_and_intake_messages():
    assert name_list(["a.txt"]) == "a.txt"
    assert name_list(["a", "b"]) == "a and b"
    assert name_list(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"
    result = IntakeResult(refused=["x.doc", "y.zip"], problems=['"z.png" is damaged.'])
    assert result.messages() == [
        "Not images, so not attached: x.doc and y.zip.",
        '"z.png" is damaged.',
    ]


def test_rebuild_conversation_pairs_questions_with_answers(tmp_path):
    picture = load_image(Image.new("RGB", (16, 16), (5, 5, 5)), name="p.png")
    with HistoryStore(tmp_path) as store:
        chat = store.create_conversation()
        store.add_message(chat, "user", "q1", [picture])
        store.add_message(chat, "ocr", "text of p")  # interleaved OCR: not a turn
        store.add_message(chat, "assistant", "a1", answer_ids=[1, 2], stats={"ttft_s": 0.1})
        store.add_message(chat, "user", "q2")
        store.add_message(chat, "error", "failed")  # no turn
        store.add_message(chat, "user", "q3")
        store.add_message(chat, "assistant", "", answer_ids=[], stopped=True)  # stopped early
        store.add_message(chat, "user", "q4")
        store.add_message(chat, "assistant", "a4", answer_ids=[7], stopped=True)
        store.add_message(chat, "user", "q5")
        store.add_message(chat, "assistant", "a5", answer_ids=[])  # a model server's: text only
        conversation = rebuild_conversation(store.messages(chat), store.load_image)
    assert [(t.question, t.answer, t.answer_ids, t.stopped) for t in conversation.turns] == [
        ("q1", "a1", [1, 2], False),
        ("q4", "a4", [7], True),
        ("q5", "a5", [], False),
    ]
    assert conversation.turns[0].images[0].digest == picture.digest


def test_rebuild_conversation_leaves_out_a_turn_whose_image_is_gone(tmp_path):
    picture = load_image(Image.new("RGB", (16, 16), (9, 1, 1)), name="gone.png")
    with HistoryStore(tmp_path) as store:
        chat = store.create_conversation()
        message = store.add_message(chat, "user", "q", [picture])
        store.add_message(chat, "assistant", "a", answer_ids=[3])
        message.images[0].path.unlink()
        conversation = rebuild_conversation(store.messages(chat), store.load_image)
    assert conversation.turns == []
    assert conversation.notes


def test_settings_round_trip_and_damaged_values(tmp_path):
    store = SettingsStore(tmp_path)
    assert store.load() == AppSettings()
    wanted = AppSettings(model_dir="/m", device="GPU", max_visual_tokens=512, theme="dark")
    store.save(wanted)
    assert SettingsStore(tmp_path).load() == wanted
    (tmp_path / "settings.ini").write_text(
        "[app]\nmax_new_tokens=lots\ntheme=purple\nfont_size=11\n"
    )
    loaded = SettingsStore(tmp_path).load()
    assert loaded.max_new_tokens == AppSettings().max_new_tokens
    assert loaded.theme == "system"
    assert loaded.font_size == 11


def test_settings_dialog_changes_reload_the_model_and_theme(qtbot, launch, tiny_ir):
    from desktop.gui.panels.settings_dialog import SettingsDialog
    from desktop.gui.theme import current_theme

    window = launch(model_dir=tiny_ir)
    dialog = SettingsDialog(window.settings, ["CPU"], window)
    qtbot.addWidget(dialog)
    dialog.detail_slider.setValue(0)
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    assert "256 visual tokens" in dialog.detail_label.text()
    new = dialog.result_settings()
    assert new.max_visual_tokens == 256 and new.theme == "dark"
    try:
        window.apply_settings(new)
        assert current_theme().name == "dark"
        assert window.status.state == "loading"  # image detail is compiled into the model
        qtbot.waitUntil(lambda: window.model_loaded, timeout=120_000)
        assert SettingsStore(window.data_dir).load().max_visual_tokens == 256
    finally:
        window.apply_settings(AppSettings(theme="light", model_dir=new.model_dir))


def test_window_geometry_is_remembered(qtbot, launch, tmp_path):
    data = tmp_path / "data"
    first = launch(data_dir=data)
    first.resize(790, 550)  # within the offscreen platform's 800x600 screen
    first.close()
    second = launch(data_dir=data)
    assert (second.width(), second.height()) == (790, 550)


def test_controls_have_accessible_names(qtbot, launch):
    window = launch()
    for widget in (
        window.composer.editor,
        window.composer.send_button,
        window.composer.attach_button,
        window.sidebar.search,
        window.sidebar.list,
        window.status.state_label,
        *window.composer.preset_buttons.values(),
    ):
        assert widget.accessibleName(), widget


def test_importing_the_gui_does_not_load_the_engine_or_ocr():
    # The Save as menus iterate OutputFormat (stdlib only), which loads the OCR package's lazy
    # __init__; any other OCR module (the engine, its models, OpenCV) must wait for first use.
    light = ("desktop.core.ocr", "desktop.core.ocr.formats")
    code = (
        "import sys, desktop.gui.app, desktop.cli.gui_cmd;"
        "heavy = [m for m in sys.modules if m in ('openvino', 'cv2', 'desktop.core.engine')"
        f" or (m.startswith('desktop.core.ocr') and m not in {light!r})]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_gui_subcommand_default_and_files_to_open(monkeypatch, tmp_path):
    import desktop.gui.app as gui_app
    from desktop.cli import main

    calls = []
    monkeypatch.setattr(
        gui_app,
        "run",
        lambda data_dir, model_dir, files: calls.append((data_dir, model_dir, files)) or 0,
    )
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(tmp_path / "data"))  # no open app answers
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"")
    assert main(["gui", "--model", "/m", "--data-dir", "/d"]) == 0
    assert main([]) == 0
    assert main([str(shot), str(tmp_path / "scan.pdf")]) == 0  # "Open with DeskLens"
    assert [(str(d) if d else d, str(m) if m else m, f) for d, m, f in calls] == [
        ("/d", "/m", []),
        (None, None, []),
        (None, None, [shot, tmp_path / "scan.pdf"]),
    ]
    with pytest.raises(SystemExit) as usage:  # neither a command nor a file: a usage error
        main(["no-such-command"])
    assert usage.value.code == 2 and len(calls) == 3


def test_long_unbroken_words_get_break_points_but_links_stay_intact(qapp):
    from desktop.gui.widgets.markdown_view import markdown_to_html

    run = "x" * 100
    html = markdown_to_html(f"See {run} and [the docs](https://example.org/{run}).")
    assert "\u200b" in html  # the label can wrap the 100-character run
    assert f"https://example.org/{run}" in html  # the href itself is untouched


def test_the_app_icon_and_the_source_root_are_found(qtbot):
    """Both are found from the package's own place, so a move inside gui/ cannot lose them."""
    from desktop.gui.widgets.icons import APP_ICON_PNG, APP_ICON_SVG, app_icon
    from desktop.gui.workers.setup_process import SOURCE_ROOT

    assert APP_ICON_SVG.is_file() and APP_ICON_PNG.is_file()
    assert not app_icon().isNull()
    assert (SOURCE_ROOT / "convert.py").is_file()


def test_the_notice_shows_a_servers_control_and_bidi_characters_as_escapes(qtbot):
    from desktop.gui.widgets.notice import Notice

    notice = Notice()
    qtbot.addWidget(notice)
    notice.show_message("The server failed: \x1b]0;pwned\x07 invoice\u202efdp.exe", error=True)
    assert notice.label.text() == r"The server failed: \x1b]0;pwned\x07 invoice\u202efdp.exe"
