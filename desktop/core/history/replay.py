"""Stored messages -> the engine's `Conversation`, so a reopened chat can be continued."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from desktop.core.chat import Conversation, ImageLike, Turn
from desktop.core.history.records import Role, StoredImage, StoredMessage
from desktop.core.images import ImageError, LoadedImage
from desktop.core.regions import RegionError, with_regions


def rebuild_conversation(
    messages: Sequence[StoredMessage], load: Callable[[StoredImage], LoadedImage]
) -> Conversation:
    """Each assistant answer pairs with the latest user message before it: by its token ids,
    or by its text alone when a model server answered it (no ids are known then).

    OCR results and notes are not part of what the model saw; an error or an answer stopped
    before its first token leaves no turn, just as the engine leaves none.
    """
    conversation = Conversation()
    question: StoredMessage | None = None
    for message in messages:
        if message.role is Role.USER:
            question = message
        elif message.role is Role.ERROR:
            question = None
        elif message.role is Role.ASSISTANT and question is not None:
            if message.answer_ids or message.text:
                turn = _turn(question, message, load)
                if turn is None:
                    conversation.notes.append(
                        "A turn whose image is missing from the history was left out."
                    )
                else:
                    conversation.turns.append(turn)
            question = None
    return conversation


def _turn(
    question: StoredMessage,
    answer: StoredMessage,
    load: Callable[[StoredImage], LoadedImage],
) -> Turn | None:
    try:
        attached = [load(image) for image in question.images]
        # The regions' crops are cut again: the same pixels, so the same tokens as asked.
        images: list[ImageLike] = list(with_regions(question.asked.regions, attached).images)
    except (ImageError, RegionError):
        return None
    return Turn(
        question=question.model_text,
        images=images,
        answer=answer.text,
        answer_ids=list(answer.answer_ids or []),
        stopped=answer.stopped,
    )
