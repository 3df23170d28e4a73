"""Answers one chat call on the engine (on the owner thread): stop sequences, usage, KV reuse.

The engine keeps its KV state between calls and feeds only what differs from the previous
prompt, so a follow-up of the same conversation costs its new tokens only, as in the app.
That needs the earlier answers as the token ids they were generated as: a caller sends back
text, and the text re-tokenised need not be the same ids. So the runner remembers the ids of
the answers it gave (by text, a bounded number) and feeds those.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from desktop.core.api.errors import ApiError
from desktop.core.api.messages import ChatCall, HistoryTurn
from desktop.core.chat import Answer, ErrorKind, ImageLike, Turn
from desktop.core.conversation import AskRequest, GivenTurns

if TYPE_CHECKING:
    from desktop.core.conversation import ConversationService

if TYPE_CHECKING:
    from desktop.core.engine import VLMEngine

ANSWERS_REMEMBERED = 256
NO_MODEL = (
    "No model is loaded in DeskLens yet; load one in the app or start `desklens serve --api`."
)


@dataclass
class Usage:
    prompt_tokens: int = 0  # the whole prompt
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens the KV state already held (not fed again)

    def to_dict(self) -> dict:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
        }


@dataclass
class Completion:
    text: str
    finish_reason: str  # OpenAI's: "stop" | "length"
    usage: Usage


class StopScanner:
    """Streams text until one of the stop sequences appears; it and what follows are dropped.

    Text that could be the start of a stop sequence is held back until it is decided.
    """

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = stops
        self._held = ""
        self.hit = False

    def push(self, chunk: str) -> str:
        """The part of `chunk` (with what was held) that is certainly output."""
        if self.hit:
            return ""
        text = self._held + chunk
        cut = min((i for i in (text.find(s) for s in self._stops) if i >= 0), default=-1)
        if cut >= 0:
            self.hit, self._held = True, ""
            return text[:cut]
        keep = max((_overlap(text, s) for s in self._stops), default=0)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return "" if self.hit else held


def _overlap(text: str, stop: str) -> int:
    """Length of the longest end of `text` that begins `stop`."""
    for size in range(min(len(text), len(stop) - 1), 0, -1):
        if stop.startswith(text[-size:]):
            return size
    return 0


class ChatRunner:
    """Runs chat calls on the engine's owner thread (one at a time, as the engine requires)."""

    def __init__(self) -> None:
        self._answer_ids: OrderedDict[str, list[int]] = OrderedDict()

    def run(
        self,
        service: ConversationService,
        call: ChatCall,
        emit: Callable[[str], None],
        cancel: threading.Event,
    ) -> Completion:
        """Answers `call` through the owner's service (in its lane for given turns, so what
        the engine holds of the app's chat stays), streaming output text to `emit`; raises
        ApiError. Only this computer's model answers: never a model server the app uses."""
        if service.engine is None or service.engine.info.server:
            raise ApiError(503, NO_MODEL, "model_not_loaded")
        engine = cast("VLMEngine", service.engine)
        history = tuple(self._turn(turn) for turn in call.history)
        scanner = StopScanner(call.stop)
        request = AskRequest(
            call.question, tuple(call.images), call.settings, GivenTurns(history),
            regions=call.regions,
        )  # fmt: skip
        on_text = _streamer(engine, scanner, emit, cancel)
        result = service.ask(request, cancel, on_text)
        answer = result.answer
        if answer.error:
            raise _engine_error(answer)
        tail = scanner.flush()
        if tail:
            emit(tail)
        text = answer.text
        if scanner.hit:
            text = text[: _stop_index(text, call.stop)]
        elif result.turn is not None:
            self._remember(text, result.turn.answer_ids)  # a follow-up feeds these
        finish = "length" if answer.finish_reason == "length" else "stop"
        return Completion(text, finish, _usage(engine, answer))

    def _turn(self, turn: HistoryTurn) -> Turn:
        """The answer's ids where this runner gave it; none otherwise: the prompt encodes its
        text, and only for the turns that fit the context (in batches)."""
        ids = self._answer_ids.get(turn.answer)
        if ids is not None:
            self._answer_ids.move_to_end(turn.answer)
        images: list[ImageLike] = list(turn.images)
        return Turn(turn.question, images, turn.answer, list(ids or ()))

    def _remember(self, text: str, ids: list[int]) -> None:
        self._answer_ids[text] = list(ids)
        self._answer_ids.move_to_end(text)
        while len(self._answer_ids) > ANSWERS_REMEMBERED:
            self._answer_ids.popitem(last=False)


def _streamer(
    engine: VLMEngine, scanner: StopScanner, emit: Callable[[str], None], cancel: threading.Event
) -> Callable[[str], None]:
    def on_text(chunk: str) -> None:
        text = scanner.push(chunk)
        if text:
            emit(text)
        if scanner.hit or cancel.is_set():
            engine.stop()  # takes effect before the next token

    return on_text


def _usage(engine: VLMEngine, answer: Answer) -> Usage:
    prompt = len(engine.last_sequence) if engine.last_sequence is not None else 0
    return Usage(prompt, answer.stats.generated_tokens, prompt - answer.stats.input_tokens)


def _stop_index(text: str, stops: tuple[str, ...]) -> int:
    return min(i for i in (text.find(s) for s in stops) if i >= 0)


def _engine_error(answer: Answer) -> ApiError:
    """The engine's sentence with the status of its cause, by its kind: the caller's input
    (too long for the context, an unusable schema or image: 400), no model to ask (a model
    server not reached, busy or refusing: 503), or the model failing (500)."""
    message = answer.error or "Generation failed."
    caller = _CALLER_ERRORS.get(answer.error_kind) if answer.error_kind is not None else None
    if caller is not None:
        return ApiError(400, message, *caller)
    if answer.error_kind is ErrorKind.NO_MODEL:  # a model server gone, busy or refusing
        return ApiError(503, message, "model_not_loaded")
    return ApiError(500, message, "generation_failed")


# An error kind that is the caller's doing: its OpenAI error code and the field at fault.
_CALLER_ERRORS = {
    ErrorKind.CONTEXT: ("context_length_exceeded", "messages"),
    ErrorKind.SCHEMA: ("invalid_json_schema", "response_format"),
    ErrorKind.IMAGE: ("invalid_image", "messages"),
}
