"""An `AskRequest` says where a question belongs and what goes before it as one value each:
the combinations that used to be settable side by side and wrong cannot be built now."""

from __future__ import annotations

import pytest
from PIL import Image

from desktop.core.chat import Answer, GenerationSettings
from desktop.core.conversation import (
    AskRequest,
    AskResult,
    FollowUp,
    GivenTurns,
    Ground,
    GroundTexts,
    NoContext,
    OneShot,
    PrepareRequest,
    StoredChat,
)
from desktop.core.history.handle import ChatHandle
from desktop.core.images import load_image
from desktop.core.regions import MAX_REGIONS, Region

PAGE = load_image(Image.new("RGB", (64, 48), "white"), name="page.png")


def _no_ocr():
    raise AssertionError("only handed on")


def test_a_plain_question_is_a_one_shot_without_context():
    request = AskRequest("What is it?", (PAGE,))
    assert request.where == OneShot() and request.context == NoContext()
    assert request.chat is None and request.conversation_id is None and not request.grounded


@pytest.mark.parametrize("where", [OneShot(), FollowUp(), GivenTurns(())])
@pytest.mark.parametrize("stored_only", ["user_message_id", "drops", "chat"])
def test_a_retry_or_rewind_cannot_be_asked_outside_a_stored_chat(where, stored_only):
    with pytest.raises(TypeError):
        AskRequest("Again?", (PAGE,), GenerationSettings(), where, **{stored_only: 3})
    with pytest.raises(TypeError):
        type(where)(**{stored_only: 3})


def test_a_stored_chat_carries_its_retry_and_rewind():
    chat = ChatHandle(5)
    request = AskRequest("Again?", (PAGE,), where=StoredChat(chat, user_message_id=7, drops=(8, 9)))
    assert request.chat is chat and request.conversation_id == 5
    assert (request.where.user_message_id, request.where.drops) == (7, (8, 9))


@pytest.mark.parametrize("drops", [(7,), (8, 7)])
def test_a_rewind_cannot_delete_the_question_it_asks_again(drops):
    with pytest.raises(ValueError, match="delete the question itself"):
        StoredChat(ChatHandle(5), user_message_id=7, drops=drops)
    # An extraction stored before the question (its id lower) and shown after it may go.
    assert StoredChat(ChatHandle(5), user_message_id=7, drops=(8, 6)).drops == (8, 6)


def test_grounding_is_one_value_and_needs_images_to_read():
    assert AskRequest("Total?", (PAGE,), context=Ground(_no_ocr)).grounded
    assert AskRequest("Total?", (PAGE,), context=GroundTexts(("Total 9",))).grounded
    with pytest.raises(ValueError, match="needs images"):
        AskRequest("Total?", (), context=Ground(_no_ocr))
    with pytest.raises(ValueError, match="at least one text"):
        GroundTexts(())
    with pytest.raises(TypeError):  # the two old fields side by side are gone
        AskRequest("Total?", (PAGE,), ground=_no_ocr, ground_texts=("Total 9",))


def test_regions_must_be_on_the_questions_images():
    assert AskRequest("This?", (PAGE,), regions=(Region(1, 2, 10, 10),)).regions
    with pytest.raises(ValueError, match="has 0 images"):
        AskRequest("This?", (), regions=(Region(1, 2, 10, 10),))
    with pytest.raises(ValueError, match="is on image 2, but the question has 1 image\\."):
        AskRequest("This?", (PAGE,), regions=(Region(1, 2, 10, 10, image=1),))
    with pytest.raises(ValueError, match="is on image 0, but the question has 1 image\\."):
        AskRequest("This?", (PAGE,), regions=(Region(1, 2, 10, 10, image=-1),))  # not the last
    with pytest.raises(ValueError, match=f"At most {MAX_REGIONS} regions"):
        AskRequest("This?", (PAGE,), regions=(Region(1, 2, 10, 10),) * (MAX_REGIONS + 1))


def test_a_retry_keeps_where_it_was_asked_and_rewinds_nothing():
    chat = ChatHandle(5)
    request = AskRequest(
        "Total?", (PAGE,), where=StoredChat(chat, drops=(9,)), context=Ground(_no_ocr),
        system="Be brief.", preset="json",
    )  # fmt: skip
    failed = AskResult(request, Answer("", "error", error="down"), "Be brief.\n\n…", 10)
    retry = request.retry(failed)
    assert isinstance(retry.where, StoredChat) and retry.chat is chat
    assert (retry.where.user_message_id, retry.where.drops) == (10, ())
    assert (retry.question, retry.typed, retry.preset) == ("Be brief.\n\n…", "Total?", "json")
    assert retry.context == NoContext() and retry.system == ""  # in the stored prompt already
    follow_up = AskRequest("And?", (), where=FollowUp())
    assert follow_up.retry(AskResult(follow_up, failed.answer, "And?")).where == FollowUp()


def test_a_read_ahead_is_for_a_stored_chat_or_the_follow_up_conversation_not_both():
    assert PrepareRequest((PAGE,), conversation_id=4).conversation_id == 4
    assert PrepareRequest((PAGE,), follow_up=True).follow_up
    with pytest.raises(ValueError, match="not both"):
        PrepareRequest((PAGE,), conversation_id=4, follow_up=True)
