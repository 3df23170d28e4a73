"""Stored messages -> message widgets, for a conversation reopened from the history."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from desktop.core.chat import AnswerStats, GenerationSettings
from desktop.core.conversation import AskRequest
from desktop.core.history import StoredMessage
from desktop.core.history.handle import ChatHandle
from desktop.core.history.ocr_text import OcrText
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.messages import (
    AssistantMessage,
    ChatActions,
    ErrorMessage,
    MessageWidget,
    NoteMessage,
    OcrMessage,
    UserMessage,
)

_STAT_FIELDS = {f.name for f in fields(AnswerStats)}


def stats_from_dict(data: dict[str, Any] | None) -> AnswerStats | None:
    if not data:
        return None
    return AnswerStats(**{k: v for k, v in data.items() if k in _STAT_FIELDS})


def message_widgets(
    messages: list[StoredMessage],
    chat: ChatHandle,
    actions: ChatActions,
    settings: GenerationSettings,
) -> list[MessageWidget | NoteMessage]:
    """The widgets of the stored `messages` of `chat` (an error's Retry asks in that chat)."""
    widgets: list[MessageWidget | NoteMessage] = []
    question: StoredMessage | None = None
    for message in messages:
        widget = _widget(message, question, chat, actions, settings)
        if message.role == "user":
            question = message
        if widget is not None:
            widget.message_id = message.id
            widgets.append(widget)
    return widgets


def _widget(
    message: StoredMessage,
    question: StoredMessage | None,
    chat: ChatHandle,
    actions: ChatActions,
    settings: GenerationSettings,
) -> MessageWidget | NoteMessage | None:
    refs = [ImageRef.stored(image) for image in message.images]
    if message.role == "user":
        return UserMessage(message.text, refs, actions, typed=message.typed_text)
    if message.role == "assistant":
        answer = AssistantMessage(message.text, actions=actions, streaming=False)
        answer.set_stopped(message.stopped)
        answer.set_stats(stats_from_dict(message.stats))
        return answer
    if message.role == "ocr" and refs:
        return OcrMessage(OcrText.from_message(message), refs[0], actions)
    if message.role == "error":
        retry = None
        if question is not None:  # Retry resends the question this error answered
            retry = AskRequest(
                question.text,
                tuple(ImageRef.stored(image) for image in question.images),
                settings,
                chat=chat,
                user_message_id=question.id,
            )
        return ErrorMessage(message.text, actions, retry)
    if message.role == "note":
        return NoteMessage(message.text)
    return None
