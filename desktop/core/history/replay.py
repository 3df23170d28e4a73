"""Stored messages -> the engine's `Conversation`, so a reopened chat can be continued."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from desktop.core.chat import Conversation, ImageLike, Turn
from desktop.core.history.records import StoredImage, StoredMessage
from desktop.core.images import ImageError, LoadedImage


def rebuild_conversation(
    messages: Sequence[StoredMessage], load: Callable[[StoredImage], LoadedImage]
) -> Conversation:
    """Each assistant answer with token ids pairs with the latest user message before it; so
    does one a model server wrote (its stats name the server; it has text but no ids of this
    computer's model: the local engine tokenizes that text, a server reads it as it is).

    OCR results and notes are not part of what the model saw; an error or an answer stopped
    before its first token leaves no turn, just as the engine leaves none.
    """
    conversation = Conversation()
    question: StoredMessage | None = None
    for message in messages:
        if message.role == "user":
            question = message
        elif message.role == "error":
            question = None
        elif message.role == "assistant" and question is not None:
            if message.answer_ids or (message.text and _from_a_server(message)):
                turn = _turn(question, message, load)
                if turn is None:
                    conversation.notes.append(
                        "A turn whose image is missing from the history was left out."
                    )
                else:
                    conversation.turns.append(turn)
            question = None
    return conversation


def _from_a_server(message: StoredMessage) -> bool:
    return isinstance(message.stats, dict) and bool(message.stats.get("server"))


def _turn(
    question: StoredMessage,
    answer: StoredMessage,
    load: Callable[[StoredImage], LoadedImage],
) -> Turn | None:
    try:
        images: list[ImageLike] = [load(image) for image in question.images]
    except ImageError:
        return None
    return Turn(
        question=question.text,
        images=images,
        answer=answer.text,
        answer_ids=list(answer.answer_ids or []),
        stopped=answer.stopped,
    )
