"""Transcript entries -> message widgets: how each kind of entry is shown."""

from __future__ import annotations

from typing import cast

from desktop.core.conversation.transcript import Entry, EntryState, Transcript
from desktop.core.history import Role
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import Thumbnail
from desktop.gui.widgets.messages import (
    CUT_SHORT,
    AssistantMessage,
    ChatActions,
    ErrorMessage,
    MessageWidget,
    NoteMessage,
    OcrMessage,
    UserMessage,
)


def entry_widget(
    entry: Entry, transcript: Transcript, actions: ChatActions
) -> MessageWidget | NoteMessage | None:
    """The widget that shows `entry` (None for an extraction without its picture)."""
    widget = _widget(entry, transcript, actions)
    if widget is not None:
        widget.entry_id = entry.id
    return widget


def _widget(
    entry: Entry, transcript: Transcript, actions: ChatActions
) -> MessageWidget | NoteMessage | None:
    refs = [cast("ImageRef", image) for image in entry.images]  # what the GUI puts in
    if entry.role is Role.USER:
        question = UserMessage(
            entry.text, refs, actions, prompt=entry.prompt, context=entry.asked.label
        )
        for thumb in question.findChildren(Thumbnail):  # the boxes it was about
            index = next((i for i, ref in enumerate(refs) if ref is thumb.ref), -1)
            thumb.show_regions(tuple(r for r in entry.asked.regions if r.image == index))
        return question
    if entry.role is Role.ASSISTANT:
        answer = AssistantMessage(entry.text, actions=actions, streaming=False)
        answer.set_stopped(entry.state is EntryState.STOPPED)
        answer.set_stats(entry.stats)
        if entry.state is EntryState.CUT_SHORT:
            answer.meta.setText(f"{CUT_SHORT} · {answer.meta.text()}".rstrip(" ·"))
        return answer
    if entry.role is Role.OCR and entry.ocr is not None and refs:
        return OcrMessage(entry.ocr, refs[0], actions)
    if entry.role is Role.ERROR:
        return ErrorMessage(entry.text, actions, retry=can_retry(transcript, entry))
    if entry.role is Role.NOTE:
        return NoteMessage(entry.text)
    return None


def can_retry(transcript: Transcript, entry: Entry) -> bool:
    """An answer's error (it has a kind; an extraction's has none) whose question is there."""
    return entry.error_kind is not None and transcript.question_of(entry.id) is not None
