"""The user's own prompts: created, reordered and removed in the editor, shown beside the
built-in presets, sent with their own length and schema, kept across a restart, exported and
imported, and usable from `desklens ask --preset NAME`."""

from __future__ import annotations

import json

from gui_support import SIGNAL_TIMEOUT_MS, save_png, text_image

from desktop.cli import main
from desktop.core.images import load_image
from desktop.core.user_presets import PresetBook, UserPreset
from desktop.gui.image_ref import ImageRef
from desktop.gui.panels.presets_editor import PresetsEditor

SCHEMA = {"type": "object", "properties": {"total": {"type": "string"}}}


def edit(editor: PresetsEditor, name: str, prompt: str, length: int = 0, schema: str = ""):
    editor.add()
    editor.name_edit.setText(name)
    editor.prompt_edit.setPlainText(prompt)
    editor.length_spin.setValue(length)
    editor.schema_edit.setPlainText(schema)


def own_chips(window) -> list[str]:
    return [a.text() for a in window.composer.own_presets_button.menu().actions()]


def test_own_prompts_are_edited_used_kept_and_read_by_the_cli(
    qtbot, launch, tiny_ir, tmp_path, monkeypatch, capsys
):
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    editor = PresetsEditor(window.own_presets.book, window.storage, window)
    edit(editor, "Totals", "List every total.", 24, json.dumps(SCHEMA))
    edit(editor, "Bad", "x", schema="{not json")
    editor.accept()
    assert "not valid JSON" in editor.problem.text() and editor.result() == 0
    editor.remove()
    edit(editor, "Summary", "Summarise the page in one line.")
    edit(editor, "Transcribe", "clash")  # a built-in preset's name
    editor.accept()
    assert "built-in preset" in editor.problem.text()
    editor.remove()
    editor.move_selected(-1)  # Summary before Totals
    editor.system_edit.setPlainText("Answer briefly.")
    editor.accept()
    window.own_presets.replace(editor.book)
    qtbot.waitUntil(lambda: not window.storage.busy, timeout=SIGNAL_TIMEOUT_MS)
    assert own_chips(window) == ["Summary", "Totals"]

    picture = save_png(text_image("Total 12.50"), tmp_path / "total.png")
    window.composer.add_images([ImageRef.of(load_image(picture))])
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        next(
            a for a in window.composer.own_presets_button.menu().actions() if a.text() == "Totals"
        ).trigger()
    request = blocker.args[0].request
    assert request.question.endswith("List every total.")
    assert request.settings.max_new_tokens == 24 and request.settings.json_schema == SCHEMA
    json.loads(blocker.args[0].answer.text)  # constrained to the schema: valid JSON
    window.close()

    reopened = launch(data_dir=data)
    assert own_chips(reopened) == ["Summary", "Totals"]
    assert reopened.own_presets.book.system_prompt == "Answer briefly."

    monkeypatch.setenv("DESKLENS_DATA_DIR", str(data))
    args = ["ask", str(picture), "--model", str(tiny_ir), "--json", "--max-new-tokens", "4"]
    assert main([*args, "--preset", "summary"]) == 0  # names ignore case
    assert json.loads(capsys.readouterr().out)["prompt"] == "Summarise the page in one line."
    assert main([*args, "--preset", "Nothing"]) == 2
    assert "Summary, Totals" in capsys.readouterr().err


def test_prompts_export_and_import_as_json(qtbot, launch, tmp_path):
    window = launch()
    book = PresetBook((UserPreset("Totals", "List every total.", 64),), "Be brief.")
    exporter = PresetsEditor(book, window.storage, window)
    target = tmp_path / "mine.json"
    exporter.export_file(str(target))
    qtbot.waitUntil(lambda: "Exported 1" in exporter.problem.text(), timeout=SIGNAL_TIMEOUT_MS)

    importer = PresetsEditor(PresetBook((UserPreset("Totals", "old"),)), window.storage, window)
    importer.import_file(str(target))
    assert importer.result_book() == book  # same name replaced, system prompt taken
    (tmp_path / "broken.json").write_text('{"presets": [{"name": 3}]}')
    importer.import_file(str(tmp_path / "broken.json"))
    assert "name must be text" in importer.problem.text()
    assert importer.result_book() == book
