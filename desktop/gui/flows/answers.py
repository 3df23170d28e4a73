"""An answer's result as a transcript entry; and an answer that finished after its chat was
opened again, shown under its question as reopening the chat would show it."""

from __future__ import annotations

from desktop.core.chat import ErrorKind
from desktop.core.conversation import AskResult
from desktop.core.conversation.transcript import Entry, EntryState, Transcript
from desktop.core.history import AskedWith, Role
from desktop.gui.widgets.chat_view import ChatView

_STATES = {"stopped": EntryState.STOPPED, "length": EntryState.CUT_SHORT}


def add_answer(transcript: Transcript, result: AskResult) -> Entry:
    """The answer (or its error) at the end of `transcript`."""
    answer = result.answer
    if answer.ok:
        return transcript.add(
            Role.ASSISTANT,
            answer.text,
            stats=answer.stats,
            state=_STATES.get(answer.finish_reason, EntryState.ANSWERED),
            message_id=result.answer_message_id,
        )
    return transcript.add(
        Role.ERROR,
        answer.error or "The answer failed.",
        state=EntryState.FAILED,
        error_kind=answer.error_kind or ErrorKind.FAILED,
        message_id=result.answer_message_id,
    )


def show_late_answer(transcript: Transcript, chat: ChatView, result: AskResult) -> None:
    """The chat was opened again while this answer ran (switching chats stops it, and the
    stopped answer is stored after the view read the store): the stored answer goes under
    its question, or after the extractions stored since (they come before it in the store
    too), unless the view already has it or its question has later turns."""
    entries = transcript.entries
    stored = {entry.message_id for entry in entries}
    if result.answer_message_id is None or result.answer_message_id in stored:
        return
    last = entries[-1] if entries else None
    if last is not None and last.role is Role.USER and last.message_id == result.user_message_id:
        chat.drop_unanswered(last.id)  # its no-answer card, if the chat showed one
    elif result.user_message_id in stored:
        question = next(e for e in entries if e.message_id == result.user_message_id)
        if any(e.role is not Role.OCR for e in transcript.from_entry(question.id)[1:]):
            return  # its question has later turns: reopening the chat shows it in place
    else:  # the question too was stored after the view read the store
        request = result.request
        asked = AskedWith(
            request.settings, request.preset, request.grounded, bool(request.system),
            request.regions,
        )  # fmt: skip
        question = transcript.add(
            Role.USER, request.typed or request.question, images=request.images, asked=asked,
            prompt=result.prompt, message_id=result.user_message_id,
        )  # fmt: skip
        chat.show_entry(question)
    chat.show_entry(add_answer(transcript, result))
