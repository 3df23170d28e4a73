"""Questions about a region (issue 40): the box in Qwen3-VL's 0..1000 convention, its crop as an
extra image, the regions stored with the question and kept after reopening (schema 4), a retry
that asks the same prompt, and a schema-3 history that gains the column."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from PIL import Image

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService, StoredChat
from desktop.core.conversation.transcript import Means, Transcript
from desktop.core.history import AskedWith, HistoryStore, Role
from desktop.core.history.database import SCHEMA_VERSION
from desktop.core.history.handle import ChatHandle
from desktop.core.history.replay import rebuild_conversation
from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.regions import (
    Region,
    RegionError,
    check_regions,
    region_prompt,
    regions_from_json,
    regions_to_json,
    with_regions,
)

SETTINGS = GenerationSettings(max_new_tokens=4)


@pytest.fixture
def page():
    return load_image(render_lines(["Invoice 4471", "Total 12,450.50"], size=20, width=400))


def test_a_region_is_parsed_checked_and_written_in_the_models_convention():
    assert Region.parse("10, 20,30,40") == Region(10, 20, 30, 40, 0)
    assert Region.parse("2:0,0,5,5") == Region(0, 0, 5, 5, 1)
    for bad in ("10,20,30", "a,b,c,d", "0:1,1,1,1"):
        with pytest.raises(RegionError):
            Region.parse(bad)
    # 0..1000 of the width and the height, rounded: [x1, y1, x2, y2].
    assert Region(960, 540, 960, 540).bbox_2d((3840, 2160)) == [250, 250, 500, 500]
    assert Region(2400, 1200, 960, 540).bbox_2d((3840, 2160)) == [625, 556, 875, 806]
    image = load_image(Image.new("RGB", (100, 50), "white"), name="shot.png")
    with pytest.raises(RegionError, match=r"not inside shot.png \(100x50"):
        check_regions([Region(90, 0, 20, 10)], [image])
    with pytest.raises(RegionError, match="no area"):
        check_regions([Region(0, 0, 0, 10)], [image])
    with pytest.raises(RegionError, match="on image 2, but the question has 1 image"):
        check_regions([Region(0, 0, 5, 5, image=1)], [image])


def test_each_region_adds_its_crop_and_says_which_image_it_is(page):
    first, second = Region(0, 0, 200, 40), Region(100, 30, 150, 40)
    asked = with_regions([first, second], [page])
    assert len(asked.images) == 3 and asked.images[0] is page
    assert asked.images[1].size == (200, 40) and asked.images[2].size == (150, 40)
    assert asked.images[1].image.tobytes() == page.image.crop((0, 0, 200, 40)).tobytes()
    box = first.bbox_2d(page.size)
    assert f'region 1 is {{"bbox_2d": {box}}} of image 1, shown enlarged as image 2' in asked.note
    assert "region 2" in asked.note and "as image 3" in asked.note
    prompt = region_prompt("What is it?", asked.note)
    assert prompt.endswith("\nWhat is it?") and region_prompt(prompt, asked.note) == prompt
    assert regions_from_json([r.to_dict() for r in (first, second)]) == (first, second)
    assert regions_from_json([{"x": 1, "y": 2, "w": True, "h": 4}, "junk"]) == ()
    assert regions_to_json([]) is None


def test_regions_are_stored_with_the_question_and_survive_reopening(engine, page, tmp_path):
    region = Region(0, 0, 200, 40)
    folder = tmp_path / "history"
    with HistoryStore(folder) as store:
        service = ConversationService(engine, store)
        request = AskRequest(
            "What is it?", (page,), SETTINGS, where=StoredChat(ChatHandle()), regions=(region,)
        )
        result = service.ask(request)
        assert result.answer.ok, result.answer.error
        box = region.bbox_2d(page.size)
        assert f'{{"bbox_2d": {box}}}' in result.prompt and result.prompt.endswith("What is it?")
        assert result.answer.stats.images_encoded == 2  # the page and the crop
        assert len(result.turn.images) == 2
        # A retry asks the stored prompt again: the region's sentence is not added twice.
        again = service.ask(request.retry(result))
        assert again.prompt == result.prompt
    with HistoryStore(folder) as reopened:
        messages = reopened.messages(request.chat.id)
        question = messages[0]
        assert question.role == Role.USER and question.text == "What is it?"
        assert question.asked.regions == (region,) and question.model_text == result.prompt
        assert [image.digest for image in question.images] == [page.digest]  # as attached
        # Replayed as the model read it: the crop is cut again from the stored page.
        [turn, *_] = rebuild_conversation(messages, reopened.load_image).turns
        assert [image.digest for image in turn.images] == [
            page.digest,
            with_regions([region], [page]).images[1].digest,
        ]
        assert turn.answer_ids == result.turn.answer_ids
        # Regenerate after the restart asks the same prompt with the same crop.
        transcript = Transcript.from_stored(messages, lambda image: reopened.load_image(image))
        answer = next(entry for entry in transcript.entries if entry.role == Role.ASSISTANT)
        regenerate = transcript.request_for(answer.id, ChatHandle(request.chat.id), Means(SETTINGS))
        assert regenerate.regions == (region,)
        engine.reset()
        again = ConversationService(engine, reopened).ask(regenerate)
        assert again.prompt == result.prompt and again.turn.answer_ids == result.turn.answer_ids


def test_a_region_outside_its_image_fails_the_question_with_a_sentence(engine, page, store):
    result = ConversationService(engine, store).ask(
        AskRequest(
            "What?",
            (page,),
            SETTINGS,
            where=StoredChat(ChatHandle()),
            regions=(Region(0, 0, 999, 9),),
        )
    )
    assert not result.answer.ok and "is not inside" in result.answer.error
    assert store.list_conversations() == []  # nothing stored for a question not asked


def test_a_schema_3_history_gains_the_regions_column_and_keeps_its_rows(tmp_path):
    folder = tmp_path / "history-v3"  # made by the schema-3 code (data/make_history_v3.py)
    shutil.copytree(Path(__file__).parent / "data" / "history-v3", folder)
    with HistoryStore(folder) as store:
        [chat] = store.list_conversations()
        question, answer = store.messages(chat.id)
        assert (question.text, question.asked.preset, answer.text) == (
            "What is the total?",
            "text",
            "12.50",
        )
        assert question.asked.settings.max_new_tokens == 64 and question.asked.regions == ()
        region = Region(1, 2, 3, 4)
        stored = store.add_message(chat.id, "user", "New", asked=AskedWith(regions=(region,)))
        assert stored.asked.regions == (region,)
    with sqlite3.connect(folder / "history.sqlite3") as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (5,)
