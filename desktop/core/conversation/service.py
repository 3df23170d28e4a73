"""The conversation service: open or resolve a chat, rewind, ground, replay, store, ask, stream.

It is the one owner of what the engine holds: the conversation whose state the engine's KV
cache holds (a stored chat's id, `holds`, or the unsaved follow-up conversation of `desklens
chat`), so the next question of the same chat feeds only its new tokens. Turns a caller gives
(the API's requests) are answered in a lane of their own (`Lane.GIVEN`), so they never take
that conversation out of the engine. Use it from one thread, the one that owns the engine
(`stop` and the cancellation events excepted). Saving is best effort: a history that cannot
be written still gets its answer, and `AskResult.save_error` says what the history misses. The
question is written beside its answer, on a thread of its own (`beside.py`): no image encode or
disk sync stands between Send and the first token.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from desktop.core.chat import Answer, Conversation, GenerationSettings, Turn
from desktop.core.conversation.beside import BesideWrite
from desktop.core.conversation.engine_protocol import Lane
from desktop.core.conversation.models import (
    AskRequest,
    AskResult,
    FollowUp,
    GivenTurns,
    Ground,
    GroundTexts,
    PrepareRequest,
    StoredChat,
)
from desktop.core.conversation.ocr_reads import OcrReads
from desktop.core.draft_texts import draft_hints
from desktop.core.history import AskedWith, ErrorKind, Finish, HistoryError, Role
from desktop.core.history.replay import rebuild_conversation
from desktop.core.images import ImageError
from desktop.core.question_context import GroundedPrompt, compose_question, grounded_prompt
from desktop.core.regions import RegionError, region_prompt, with_regions

if TYPE_CHECKING:
    from desktop.core.conversation.engine_protocol import AnswerEngine, Preparation
    from desktop.core.history import HistoryStore
    from desktop.core.images import LoadedImage

logger = logging.getLogger(__name__)

NO_MODEL = "No model is loaded yet. Set one up in the panel above, then ask again."
_FINISH = {"length": Finish.LENGTH, "stopped": Finish.STOPPED}


@dataclass
class _Saving:
    """What one ask wrote to the history (ids) and what it could not write."""

    conversation_id: int | None
    user_message_id: int | None = None
    answer_message_id: int | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


class ConversationService:
    def __init__(
        self, engine: AnswerEngine | None = None, store: HistoryStore | None = None
    ) -> None:
        self._engine = engine
        self._store = store
        self._conversation = Conversation()
        self._conversation_id: int | None = None  # the stored chat `_conversation` is
        self._holds: int | None = None  # the stored chat the engine's own lane holds
        self._ocr_reads = OcrReads()  # kept across chats and engines: keyed by the picture
        self.no_model = NO_MODEL  # the sentence an ask gets while there is no engine

    @property
    def engine(self) -> AnswerEngine | None:
        return self._engine

    @property
    def holds(self) -> int | None:
        """The stored chat whose turns the engine's state holds (after its answer or its
        preparation): its next question feeds only itself. None: no stored chat is held."""
        return self._holds

    @property
    def conversation(self) -> Conversation:
        """The conversation whose state the engine holds (read it on the engine's thread)."""
        return self._conversation

    def set_engine(self, engine: AnswerEngine | None, problem: str | None = None) -> None:
        """A new engine (or none, with the sentence asks get meanwhile) holds no state yet."""
        self._engine = engine
        if problem is not None:
            self.no_model = problem
        self.reset()

    def reset(self) -> None:
        """A new conversation: the unsaved one is cleared, a stored one replayed on next use."""
        self._conversation = Conversation()
        self._conversation_id = self._holds = None
        if self._engine is not None:
            self._engine.use_lane(Lane.OWN)
            self._engine.reset()

    def forget(self, conversation_id: int) -> None:
        """The stored chat was deleted: its id may be reused by a new one."""
        if self._conversation_id == conversation_id:
            self._conversation_id = None
            self._conversation = Conversation()
        if self._holds == conversation_id:
            self._holds = None

    def stop(self) -> None:
        """Any thread: ends the current answer at its next token."""
        if self._engine is not None:
            self._engine.stop()

    def ask(
        self,
        request: AskRequest,
        cancel: threading.Event | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> AskResult:
        """Answers `request`, streaming its text to `on_text`; `cancel` (any thread) stops it
        with what it has written so far."""
        engine = self._engine
        try:
            images = [source.load() for source in request.images]
            asked_about = with_regions(request.regions, images)
        except (ImageError, RegionError) as exc:  # nothing is stored: the images are wrong
            failed = Answer("", "error", error=str(exc), error_kind=ErrorKind.IMAGE)
            return AskResult(request, failed, request.question)
        for known in request.known_reads:  # read by the caller: not read again here
            self._ocr_reads.add(known.digest, known.read)
        composed = self._compose(request, images, asked_about.note)
        prompt = composed.prompt
        saving = _Saving(None)
        where = request.where
        # The question's images are encoded and synced beside the answer, not before it.
        history = BesideWrite(partial(self._write_question, saving, request, prompt, images))
        whole = images
        images = list(asked_about.images)  # the model reads the crops after the whole images
        if engine is None:  # the question is kept with its error: Retry asks it once there is
            history.wait()
            failed = Answer("", "error", error=self.no_model, error_kind=ErrorKind.NO_MODEL)
            self._store_answer(saving, failed, None, ())
            return AskResult(
                request, failed, prompt, saving.user_message_id, saving.answer_message_id,
                save_error=saving.error, holds=self._holds, reads=self._ocr_reads.of(whole),
            )  # fmt: skip
        conversation = self._conversation_for(request)  # read before the write changes it
        last_turn = conversation.turns[-1] if conversation.turns else None
        notes_before = len(conversation.notes)
        hints = list(dict.fromkeys([*request.hints, *composed.drafts]))
        given = isinstance(where, GivenTurns)  # the caller's turns: beside the service's own
        engine.use_lane(Lane.GIVEN if given else Lane.OWN)
        if isinstance(where, StoredChat) and self._store is not None:  # else nothing to write
            history.start()
        try:
            answer = self._answer(
                engine, conversation, prompt, images, request, hints, cancel, on_text
            )
        finally:
            history.wait()
        if isinstance(where, StoredChat) and self._conversation_id is None:
            self._conversation_id = saving.conversation_id  # a new chat: nothing to replay
        if not given:  # a failed answer leaves the engine's state empty
            held = saving.conversation_id if isinstance(where, StoredChat) else None
            self._holds = held if answer.finish_reason != "error" else None
        notes = conversation.notes[notes_before:]
        turn = conversation.turns[-1] if conversation.turns else None
        turn = turn if turn is not last_turn else None
        self._store_answer(saving, answer, turn, notes)
        return AskResult(
            request, answer, prompt, saving.user_message_id, saving.answer_message_id,
            tuple(notes), saving.error, turn, self._holds, self._ocr_reads.of(whole),
        )  # fmt: skip

    def ask_each(
        self, question: str, images: Sequence[LoadedImage], settings: GenerationSettings
    ) -> list[Answer]:
        """The same question of each image on its own, decoded side by side (no history)."""
        if self._engine is None:
            return [Answer("", "error", error=self.no_model) for _ in images]
        self._engine.use_lane(Lane.OWN)  # no second state for a batch (the CLI's)
        self._holds = None  # the batch's state is cleared afterwards
        return self._engine.ask_each([(question, [image]) for image in images], settings)

    def prepare(
        self, request: PrepareRequest, cancel: threading.Event | None = None
    ) -> Preparation | None:
        """Reads the request's images (and its chat's history) ahead of the question; None
        when there is no engine. A bad image is reported by the question's own ask."""
        from desktop.core.conversation.engine_protocol import Preparation

        engine = self._engine
        if engine is None or (cancel is not None and cancel.is_set()):
            return None
        try:
            images = [source.load() for source in request.images]
        except ImageError as exc:
            return Preparation("error", error=str(exc))
        if request.follow_up:
            conversation = self._conversation
        elif request.conversation_id is None:
            conversation = Conversation()  # a new chat's prompt; its id does not exist yet
        else:
            conversation = self._stored(request.conversation_id)
        engine.use_lane(Lane.OWN)
        preparation = engine.prepare(conversation, images, request.settings, cancel)
        if preparation.status == "ready":
            self._holds = None if request.follow_up else request.conversation_id
        elif preparation.status != "skipped":  # part of it, or nothing, is held now
            self._holds = None
        return preparation

    # --- internals -----------------------------------------------------------------------

    def _compose(
        self, request: AskRequest, images: Sequence[LoadedImage], regions_note: str
    ) -> GroundedPrompt:
        """The prompt; a question grounded here also drafts from the OCR's reads, and any
        other drafts from the reads there are already of its images (no OCR runs for it)."""
        question = region_prompt(request.question, regions_note)
        context = request.context
        if isinstance(context, Ground):
            read = partial(self._ocr_reads.read, context.ocr, images)
            return grounded_prompt(question, read, request.system)
        texts = context.texts if isinstance(context, GroundTexts) else ()
        composed = compose_question(question, system=request.system, ocr_texts=texts)
        return GroundedPrompt(composed, tuple(draft_hints(self._ocr_reads.known(images))))

    @staticmethod
    def _answer(
        engine: AnswerEngine,
        conversation: Conversation,
        prompt: str,
        images: list[LoadedImage],
        request: AskRequest,
        hints: list[str],
        cancel: threading.Event | None,
        on_text: Callable[[str], None] | None,
    ) -> Answer:
        if cancel is not None and cancel.is_set():
            return Answer("", "stopped")

        def streamed(chunk: str) -> None:
            if cancel is not None and cancel.is_set():  # a Stop before the engine's own flag
                engine.stop()
            if on_text is not None:
                on_text(chunk)

        return engine.ask(conversation, prompt, images, request.settings, streamed, hints)

    def _write_question(
        self, saving: _Saving, request: AskRequest, prompt: str, images: Sequence[LoadedImage]
    ) -> None:
        """The chat created (if new), the dropped messages deleted, the question stored
        (unless it is stored already: a retry). Runs beside the answer (`BesideWrite`)."""
        where = request.where
        if not isinstance(where, StoredChat) or self._store is None:
            return
        try:
            saving.conversation_id = where.chat.resolve(self._store)
        except HistoryError as exc:  # still answered: only the history misses it
            saving.error = str(exc)
            return
        if where.drops:
            try:
                self._store.delete_messages(saving.conversation_id, where.drops)
            except HistoryError as exc:
                saving.error = str(exc)
        saving.user_message_id = where.user_message_id or self._save_question(
            saving, request, prompt, images
        )  # the images attached; the regions' crops are cut from them again on replay

    def _conversation_for(self, request: AskRequest) -> Conversation:
        where = request.where
        if isinstance(where, GivenTurns):
            return Conversation(list(where.turns))
        if isinstance(where, FollowUp):
            return self._conversation
        conversation_id = where.chat.id if isinstance(where, StoredChat) else None
        if conversation_id is None:
            self._conversation_id = None
            self._conversation = Conversation()
            return self._conversation
        # A rewind: replayed from the store without the dropped messages, with the ids the
        # kept turns were answered as, so the engine's KV prefix still matches up to the
        # question and only that is fed again. The write beside the answer deletes them.
        assert isinstance(where, StoredChat)
        return self._stored(conversation_id, without=where.drops)

    def _stored(self, conversation_id: int, without: tuple[int, ...] = ()) -> Conversation:
        """The stored chat as the engine's conversation, replayed when it is not the one the
        service holds (its turns with the token ids they were answered as), or when messages
        are dropped from it (`without`)."""
        replay = without or self._conversation_id != conversation_id
        if replay and self._store is not None:
            try:
                messages = self._store.messages(conversation_id)
            except HistoryError as exc:
                logger.warning("could not replay conversation %s: %s", conversation_id, exc)
                messages = []
            kept = [message for message in messages if message.id not in without]
            self._conversation = rebuild_conversation(kept, self._store.load_image)
            self._conversation_id = conversation_id
        return self._conversation

    def _save_question(
        self, saving: _Saving, request: AskRequest, prompt: str, images: Sequence[LoadedImage]
    ) -> int | None:
        """The typed words, the composed prompt and how it was asked (for Retry, Regenerate
        and Edit after a restart)."""
        asked = AskedWith(
            request.settings, request.preset, request.grounded, bool(request.system),
            request.regions,
        )  # fmt: skip
        return self._save(
            saving, Role.USER, request.typed or request.question, images=images,
            prompt=prompt, asked=asked,
        )  # fmt: skip

    def _store_answer(
        self, saving: _Saving, answer: Answer, turn: Turn | None, notes: Sequence[str]
    ) -> None:
        if answer.ok:
            saving.answer_message_id = self._save(
                saving,
                Role.ASSISTANT,
                answer.text,
                answer_ids=turn.answer_ids if turn is not None else [],
                stats=answer.stats.to_dict(),
                finish=_FINISH.get(answer.finish_reason, Finish.DONE),
            )
        else:
            kind = answer.error_kind or ErrorKind.FAILED
            saving.answer_message_id = self._save(
                saving, Role.ERROR, answer.error or "", error_kind=kind
            )
        for note in notes:
            self._save(saving, Role.NOTE, note)

    def _save(
        self,
        saving: _Saving,
        role: Role,
        text: str,
        *,
        images: Sequence[LoadedImage] = (),
        answer_ids: Sequence[int] | None = None,
        stats: dict[str, Any] | None = None,
        prompt: str | None = None,
        asked: AskedWith | None = None,
        finish: Finish | None = None,
        error_kind: ErrorKind | None = None,
    ) -> int | None:
        if saving.conversation_id is None or self._store is None:
            return None  # not stored, or the chat could not be created (save_error says why)
        try:
            message = self._store.add_message(
                saving.conversation_id, role.value, text, images, answer_ids, stats,
                prompt=prompt, asked=asked, finish=finish, error_kind=error_kind,
            )  # fmt: skip
        except HistoryError as exc:  # the answer is still shown; only the history misses it
            saving.error = str(exc)
            return None
        return message.id
