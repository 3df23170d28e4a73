"""Own prompts as stored in presets.json: checked field by field with one clear sentence per
problem; a damaged file never stops the app (no presets, and a message saying why)."""

from __future__ import annotations

import json

import pytest

from desktop.core.history import AskedWith
from desktop.core.ocr.readability import Readability, readability_of_json
from desktop.core.question_context import compose_question
from desktop.core.user_presets import (
    PresetBook,
    PresetError,
    UserPreset,
    find_preset,
    load_book,
    parse_book,
    presets_path,
    write_book,
)


def test_a_book_round_trips_through_its_file(tmp_path):
    book = PresetBook(
        (UserPreset("Totals", "List every total.", 64, {"type": "object"}), UserPreset("B", "b")),
        "Be brief.",
    )
    write_book(presets_path(tmp_path), book)
    assert load_book(tmp_path).book == book
    preset = find_preset("totals", book, default_length=900)
    assert preset.key == "user:Totals" and preset.settings.max_new_tokens == 64
    assert find_preset("user:B", book, 900).settings.max_new_tokens == 900  # the app's
    assert find_preset("text", book, 900).settings.max_new_tokens == 900  # a built-in


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], 'a "presets" list'),
        ({"presets": [{"name": "", "prompt": "x"}]}, "name must be text"),
        ({"presets": [{"name": "A", "prompt": " "}]}, "prompt must be text"),
        ({"presets": [{"name": "A", "prompt": "x", "max_new_tokens": True}]}, "max_new_tokens"),
        ({"presets": [{"name": "A", "prompt": "x", "json_schema": [1]}]}, "json_schema"),
        ({"presets": [{"name": "A", "prompt": "x"}, {"name": "a", "prompt": "y"}]}, "twice"),
        ({"presets": [{"name": "Describe", "prompt": "x"}]}, "built-in"),
        ({"presets": [], "system_prompt": 5}, "system_prompt"),
    ],
)
def test_bad_presets_are_refused_with_a_sentence(data, message):
    with pytest.raises(PresetError, match=message):
        parse_book(data)


def test_a_damaged_file_gives_no_presets_and_says_why(tmp_path):
    assert load_book(tmp_path).book == PresetBook() and load_book(tmp_path).problem is None
    presets_path(tmp_path).write_text("{not json", encoding="utf-8")
    loaded = load_book(tmp_path)
    assert loaded.book == PresetBook() and "could not be read" in loaded.problem
    with pytest.raises(ValueError, match="Unknown preset 'nope'; choose one of: text"):
        find_preset("nope", loaded.book)


def test_the_system_prompt_and_the_ocr_text_go_before_the_question_and_are_said():
    composed = compose_question(
        "What is due?", system="Be brief.", ocr_texts=["OCR found no text in the image."]
    )
    assert composed.startswith("Be brief.\n\n") and composed.endswith("Question: What is due?")
    assert compose_question("q") == "q"
    # The bubble says what was put before (stored as columns, never read back from markers).
    both = AskedWith(grounded=True, system=True)
    assert both.label == "With your system prompt and the extracted text"
    assert AskedWith(grounded=True).label == "With the extracted text"
    assert AskedWith().label == ""


def test_readability_of_stored_json_ignores_what_is_not_ours():
    assert readability_of_json("not json") == Readability(0, 0)
    assert readability_of_json(json.dumps({"pages": "x"})) == Readability(0, 0)
    page = {"lines": [{"text": " 41 ", "box": [0, 0, 800, 30]}], "unsure_lines": 4}
    assert readability_of_json(json.dumps({"pages": [page, page]})).failed
    assert not readability_of_json(json.dumps({"lines": [], "unsure_lines": 2})).failed


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
        {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}},
    ],
)
def test_a_schema_that_refers_only_to_itself_names_the_preset(schema):
    book = PresetBook((UserPreset("Loop", "Fill it in.", None, schema),))
    said = r"^Your prompt 'Loop' has a JSON schema that cannot be used: its \$ref '.*' refers"
    with pytest.raises(ValueError, match=said + r" only to itself\."):
        find_preset("Loop", book)


def test_a_recursive_schema_with_a_type_is_usable():
    children = {"type": "array", "items": {"$ref": "#"}}
    tree = {"type": "object", "properties": {"name": {"type": "string"}, "children": children}}
    book = PresetBook((UserPreset("Tree", "As a tree.", None, tree),))
    assert find_preset("Tree", book).settings.json_schema == tree
