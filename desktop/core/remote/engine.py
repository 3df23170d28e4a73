"""`RemoteEngine`: the `AnswerEngine` protocol over an OpenAI-compatible server.

The server keeps no state between requests, so each question sends the conversation again;
what only a local engine can do (reading ahead, drafts, KV reuse) is skipped: `prepare` says
"skipped". Stop shuts the stream's socket down (the server stops decoding when its client
leaves), which also wakes a read that waits for the server's first word. A stream cut midway
keeps what came, as a stopped answer with a note that says why.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from desktop.core.chat import (
    Answer,
    AnswerStats,
    Conversation,
    ErrorKind,
    GenerationSettings,
    Turn,
)
from desktop.core.conversation.engine_protocol import Lane, ModelInfo, Preparation
from desktop.core.remote.config import ServerConfig, check_config
from desktop.core.remote.errors import RemoteError, describe_failure, failure_kind
from desktop.core.remote.limits import BadReply, CappedTransport
from desktop.core.remote.messages import ImageUrls, chat_messages, request_options

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionChunk

    from desktop.core.chat import FinishReason, ImageLike

CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 600.0  # a busy server may read a large image for minutes before its first word
# A token is rarely longer than a few characters; an answer longer than this many characters a
# token asked for is a server ignoring max_tokens (its words past that are not taken).
CHARS_PER_TOKEN = 64


def chunk_limit(max_tokens: int) -> int:
    """Content chunks taken for an answer of `max_tokens`: a server may send a token's text in
    two chunks (held back for a stop sequence, a character cut between tokens), so twice as
    many and a few more; past that it is ignoring max_tokens (an endless stream)."""
    return 2 * max_tokens + 16


# After its first word, a server silent this long has stopped answering (a token takes well
# under a second); the answer ends with a sentence instead of waiting out READ_TIMEOUT_S.
SILENCE_S = 120.0
# A whole answer, however steadily a server trickles it (16k tokens at 5 a second take 55 min).
ANSWER_DEADLINE_S = 3600.0


def make_client(config: ServerConfig, *, read_timeout_s: float = READ_TIMEOUT_S) -> openai.OpenAI:
    """The openai client over `CappedTransport`: a line, an error body and an answer capped."""
    import httpx2
    import openai

    timeout = openai.Timeout(read_timeout_s, connect=CONNECT_TIMEOUT_S)
    return openai.OpenAI(
        base_url=config.url,
        api_key=config.api_key or "none",  # the client insists on one; open servers ignore it
        max_retries=0,  # a refusal is said at once, with its Retry-After, not waited out
        timeout=timeout,
        http_client=httpx2.Client(transport=CappedTransport(), timeout=timeout),
    )


def list_models(config: ServerConfig) -> list[str]:
    """The server's model names (GET {url}/models); RemoteError in a sentence. `config` as
    `check_config` returned it: every caller has checked it already (a check may look up
    the host's name)."""
    client = make_client(config)
    try:
        # In order: its main model first. An id is a string; a server's number 5 is named "5".
        return [_model_id(model) for model in client.models.list() if _model_id(model)]
    except Exception as exc:
        status = getattr(exc, "status_code", None)
        raise RemoteError(describe_failure(exc, config.host), status) from exc
    finally:
        client.close()


class RemoteEngine:
    def __init__(
        self,
        config: ServerConfig,
        client: openai.OpenAI | None = None,
        *,
        silence_s: float = SILENCE_S,
        first_word_s: float = READ_TIMEOUT_S,
        deadline_s: float = ANSWER_DEADLINE_S,
    ) -> None:
        self.config = config
        self._limits = (first_word_s, silence_s, deadline_s)
        self._client = client or make_client(config)
        self._urls = ImageUrls()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._stream: Any = None  # the answer being streamed, for stop() to close
        self.info = ModelInfo(config.model, None, "server", "server", None, config.host)

    @classmethod
    def connect(cls, config: ServerConfig) -> RemoteEngine:
        """Checks the address, then asks the server for its models: the configured one must
        be there (none configured: its only, or first, model). RemoteError otherwise."""
        config = check_config(config)
        try:
            models = list_models(config)
        except RemoteError as exc:
            if exc.status not in (404, 405):
                raise
            if not config.model:  # a server that lists no models must be told the name
                raise RemoteError(
                    f"The server at {config.host} does not list its models; enter the name of "
                    "the model to ask."
                ) from exc
            models = []  # the name is checked by the first question instead
        if not models and not config.model:
            raise RemoteError(f"The server at {config.host} offers no model.")
        if config.model and models and config.model not in models:
            offered = ", ".join(models[:8]) + (" …" if len(models) > 8 else "")
            raise RemoteError(
                f"The server at {config.host} has no model named {config.model!r}; it offers: "
                f"{offered}."
            )
        return cls(config if config.model else config.with_model(models[0]))

    def close(self) -> None:
        self.stop()
        self._client.close()

    # --- the AnswerEngine protocol ---------------------------------------------------------

    def ask(
        self,
        conversation: Conversation,
        question: str,
        images: Sequence[ImageLike] = (),
        settings: GenerationSettings | None = None,
        on_text: Callable[[str], None] | None = None,
        hints: Sequence[str] = (),  # drafting is the server's business
    ) -> Answer:
        settings = settings or GenerationSettings()
        self._stopping.clear()
        messages = chat_messages(conversation, question, images, self._urls)
        reply = _Reply(time.perf_counter(), on_text, settings.max_new_tokens)
        try:
            self._stream_into(reply, messages, settings)
        except Exception as exc:
            if not self._stopping.is_set():
                reply.failure = describe_failure(exc, self.config.host, self.config.model)
                reply.failure_kind = failure_kind(exc)
        finally:
            with self._lock:
                self._stream = None
        answer = reply.answer(self.config.host, stopped=self._stopping.is_set())
        if answer.ok:
            conversation.turns.append(
                Turn(question, list(images), answer.text, [], answer.finish_reason == "stopped")
            )
            if reply.failure is not None:
                conversation.notes.append(f"The answer was cut off: {reply.failure}")
        return answer

    def ask_each(
        self,
        requests: Sequence[tuple[str, Sequence[ImageLike]]],
        settings: GenerationSettings | None = None,
    ) -> list[Answer]:
        answers = []
        for question, images in requests:
            answers.append(self.ask(Conversation(), question, images, settings))
            if self._stopping.is_set():
                break
        return answers

    def prepare(
        self,
        conversation: Conversation,
        images: Sequence[ImageLike] = (),
        settings: GenerationSettings | None = None,
        cancel: threading.Event | None = None,
    ) -> Preparation:
        """Nothing to read ahead: the server reads the images when the question comes."""
        return Preparation("skipped")

    def stop(self) -> None:
        """Any thread: ends the answer now, closing its stream."""
        self._stopping.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            # A socket closed by another thread leaves its blocked read waiting (until the
            # server's next chunk); shut down, the read ends at once. Either may raise here.
            with contextlib.suppress(Exception):
                _shut_down(stream)
            with contextlib.suppress(Exception):
                stream.close()

    def reset(self) -> None:
        """The server holds nothing between requests."""

    def use_lane(self, lane: Lane) -> None:
        """Nothing is held here, in any lane."""

    # --- internals -------------------------------------------------------------------------

    def _stream_into(
        self, reply: _Reply, messages: list[dict[str, Any]], settings: GenerationSettings
    ) -> None:
        # Plain dicts for the messages and options the SDK's TypedDicts do not name (extra_body).
        stream = self._client.chat.completions.create(  # type: ignore[call-overload]
            model=self.config.model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            **request_options(settings),
        )
        with self._lock:
            self._stream = stream
        if self._stopping.is_set():
            stream.close()
            return
        done = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(reply, stream, done))
        watcher.start()
        try:
            for chunk in stream:
                reply.take(chunk)
                if self._stopping.is_set() or reply.enough:
                    break
        finally:
            done.set()
            watcher.join()
        if reply.enough:
            stream.close()

    def _watch(
        self, reply: _Reply, stream: openai.Stream[ChatCompletionChunk], done: threading.Event
    ) -> None:
        """Cuts the stream of a server that says nothing new: no word within `first_word_s`
        of the question (keep-alive comments and empty chunks are no words), none for
        `silence_s` after one, or an answer past `deadline_s`."""
        first_word_s, silence_s, deadline_s = self._limits
        while not done.wait(min(1.0, silence_s / 4, first_word_s / 4)):
            now = time.perf_counter()
            if reply.last_at is None and now - reply.started > first_word_s:
                reply.cut = f"sent no word of its answer within {first_word_s:g} s"
            elif reply.last_at is not None and now - reply.last_at > silence_s:
                reply.cut = f"fell silent for {silence_s:g} s in the middle of the answer"
            elif now - reply.started > deadline_s:
                reply.cut = f"took more than {deadline_s:g} s for the answer"
            if reply.cut is not None:
                with contextlib.suppress(Exception):
                    _shut_down(stream)
                return


def _model_id(model: object) -> str:
    """A listed model's id as text ("" for none: null, an object, true)."""
    value = getattr(model, "id", None)
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""


def _count(value: object) -> int | None:
    """A token count a server reported, if it is one (1e308 or -1 is none)."""
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 31
        else None
    )


def _shut_down(stream: openai.Stream[ChatCompletionChunk]) -> None:
    """Shuts down the socket under an openai Stream (httpx's `network_stream` extension)."""
    network = stream.response.extensions.get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is not None:
        sock.shutdown(socket.SHUT_RDWR)


class _Reply:
    """What one streamed answer has brought so far."""

    def __init__(
        self, started: float, on_text: Callable[[str], None] | None, max_tokens: int
    ) -> None:
        self.started = started
        self.on_text = on_text
        self.max_tokens = max_tokens  # held here too: a server may ignore the request's
        self.chars = 0
        self.enough = False  # as many tokens as were asked for: the rest is not read
        self.parts: list[str] = []
        self.first_at: float | None = None
        self.last_at: float | None = None  # when the last word (or the finish) came
        self.cut: str | None = None  # why the watchdog cut the stream ("fell silent for 2 s")
        self.chunks = 0
        self.finish: str | None = None
        self.usage: Any = None
        self.failure: str | None = None
        self.failure_kind = ErrorKind.FAILED  # why, when the question failed before any word

    def take(self, chunk: ChatCompletionChunk) -> None:
        """One chunk; BadReply for one that is not what the API says a chunk is."""
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        choices = chunk.choices or ()
        if not isinstance(choices, (list, tuple)):
            raise BadReply(f"it sent a malformed chunk (choices is {type(choices).__name__})")
        for choice in choices:
            delta = getattr(choice, "delta", None)
            piece = getattr(delta, "content", None)
            if piece is not None and not isinstance(piece, str):
                raise BadReply(f"it sent a malformed chunk (content is {type(piece).__name__})")
            if piece:
                self._add(piece)
            if getattr(choice, "finish_reason", None):
                self.finish = str(choice.finish_reason)
            if piece or self.finish:  # an empty delta is no progress (the watchdog's clock)
                self.last_at = time.perf_counter()

    def _add(self, piece: str) -> None:
        if self.first_at is None:
            self.first_at = time.perf_counter()
        room = self.max_tokens * CHARS_PER_TOKEN - self.chars
        piece = piece[: max(room, 0)]
        self.parts.append(piece)
        self.chars += len(piece)
        self.chunks += 1
        too_long = self.chars >= self.max_tokens * CHARS_PER_TOKEN
        if self.chunks >= chunk_limit(self.max_tokens) or too_long:
            self.enough, self.finish = True, "length"
        if self.on_text is not None and piece:
            self.on_text(piece)

    def answer(self, host: str, *, stopped: bool) -> Answer:
        if self.cut is not None:
            self.failure = f"The server at {host} {self.cut}; it stops there."
        text = "".join(self.parts)
        stats = AnswerStats(server=host)
        generated = _count(getattr(self.usage, "completion_tokens", None)) or self.chunks
        context = _count(getattr(self.usage, "total_tokens", None)) or 0
        stats.input_tokens = _count(getattr(self.usage, "prompt_tokens", None)) or 0
        stats.close(generated, context, self.started, self.first_at, time.perf_counter())
        if self.failure is None and not stopped and self.finish is None:
            self.failure = f"The server at {host} closed the stream before the answer was complete."
        if self.failure is not None and not text:
            return Answer("", "error", stats, self.failure, error_kind=self.failure_kind)
        reason: FinishReason = "eos"
        if stopped or self.failure is not None:
            reason = "stopped"
        elif self.finish == "length":
            reason = "length"
        return Answer(text, reason, stats, cut_off=None if stopped else self.failure)
