"""The endpoints: GET /v1/models, POST /v1/chat/completions, POST /v1/ocr (Starlette).

Handlers run on the server's event loop and never touch the model: a chat request becomes an
`EngineJob` for the engine's owner thread, whose text comes back through a `Relay`; the OCR
runs in a worker thread, one page at a time (the engine serialises its calls anyway, and the
waiting is done here, bounded, rather than by parked threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from desktop.core.api import memory
from desktop.core.api import ocr as ocr_api
from desktop.core.api.body import parse_body
from desktop.core.api.completion import ChatRunner, Completion
from desktop.core.api.errors import ApiError
from desktop.core.api.jobs import EngineJob, JobQueue, QueueClosed, QueueFull
from desktop.core.api.messages import ChatCall, parse_chat
from desktop.core.errors import describe

if TYPE_CHECKING:
    from desktop.core.conversation import ConversationService
    from desktop.core.ocr import OcrEngine

T = TypeVar("T")
MODEL_ALIAS = "desklens"  # accepted for whichever chat model is loaded
OCR_MODEL = "desklens-ocr"


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def stopping() -> ApiError:
    return ApiError(503, "DeskLens is stopping its API.", "server_stopping")


@dataclass
class ApiBackend:
    """What the API serves: the owner thread's queue, the loaded model's name, the OCR."""

    jobs: JobQueue
    model_name: Callable[[], str | None]  # None: no model loaded (yet)
    ocr: Callable[[], OcrEngine]  # the warm OCR engine; thread-safe (it locks itself)


@dataclass(frozen=True)
class Limits:
    request_timeout_s: float = 600.0  # waiting in the queue plus answering
    max_ocr_waiting: int = 8


class Relay:
    """Carries a job's output from the owner thread to the request's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._items: asyncio.Queue[tuple[str, object]] = asyncio.Queue()

    def put(self, kind: str, value: object) -> None:
        """Any thread: "text" (a chunk), then "done" (a Completion) or "error" (an ApiError)."""
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            self._loop.call_soon_threadsafe(self._items.put_nowait, (kind, value))

    async def get(self, deadline: float) -> tuple[str, object]:
        try:
            return await asyncio.wait_for(self._items.get(), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            raise ApiError(
                504, "The request took longer than the API's time limit.", "timeout"
            ) from None


class Admission:
    """At most `limit` requests admitted at once (event-loop only, so no lock); 429 past it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0

    @contextmanager
    def enter(self) -> Iterator[None]:
        if self.count >= self.limit:
            raise ApiError(
                429, "Too many OCR requests are waiting; try again shortly.", "queue_full"
            )
        self.count += 1
        try:
            yield
        finally:
            self.count -= 1


class ApiRoutes:
    def __init__(self, backend: ApiBackend, limits: Limits) -> None:
        self.backend = backend
        self.limits = limits
        self.runner = ChatRunner()  # used on the owner thread only
        # The jobs under way: their cancel events, and the relays their clients wait on.
        self.running: dict[threading.Event, Relay] = {}
        self._ocr_admission = Admission(limits.max_ocr_waiting + 1)
        self._ocr_lane = anyio.CapacityLimiter(1)
        # Images are decoded one at a time: a 100-megapixel image takes 300 MB as pixels, so
        # N requests decoding side by side would take N times that at once.
        self._decode_lane = anyio.CapacityLimiter(1)
        # An OCR under way cannot be cut short: when the server stops, its request is answered
        # with a 503 at once (the read finishes on its thread, unheard).
        self._ocr_stops: dict[asyncio.Future[None], asyncio.AbstractEventLoop] = {}
        self._stopping = False

    def cancel_all(self) -> None:
        """Any thread: the answers under way end at their next token (stopping the server), and
        their clients are answered 503 at once: the engine may be in a step no token ends
        (a long prefill), and the server's stop does not wait for it."""
        self._stopping = True
        for cancel, relay in list(self.running.items()):
            cancel.set()
            relay.put("error", stopping())
        for stop, loop in list(self._ocr_stops.items()):
            loop.call_soon_threadsafe(_settle, stop)

    async def models(self, request: Request) -> Response:
        created = int(time.time())
        names = [name for name in (self.backend.model_name(), OCR_MODEL) if name]
        data = [
            {"id": n, "object": "model", "created": created, "owned_by": "desklens"} for n in names
        ]
        return JSONResponse({"object": "list", "data": data})

    async def chat(self, request: Request) -> Response:
        deadline = time.monotonic() + self.limits.request_timeout_s
        body = await request.body()
        call = await anyio.to_thread.run_sync(
            lambda: parse_chat(parse_body(body, len(body))), limiter=self._decode_lane
        )
        self._check_model(call.model)
        relay = Relay(asyncio.get_running_loop())
        cancel = threading.Event()
        job = EngineJob(
            partial(self._run_job, call, relay, cancel),
            cancel,
            on_skip=lambda: relay.put("error", stopping()),
        )
        self._enqueue(job)
        reply = _Reply(call.model)
        images = call.images + [i for turn in call.history for i in turn.images]
        after = _giving_back(images, job.finished)
        if call.stream:
            events = self._events(call, relay, cancel, reply, deadline)
            return StreamingResponse(
                events, media_type="text/event-stream", headers=_NO_CACHE, background=after
            )
        watcher = asyncio.ensure_future(_until_disconnect(request, cancel))
        try:
            completion = await _collect(relay, deadline)
        finally:
            cancel.set()  # a timeout, an error, a client gone: the job, waiting or running, ends
            watcher.cancel()
        return JSONResponse(reply.completion(completion), background=after)

    async def ocr(self, request: Request) -> Response:
        body = await request.body()
        parse = partial(
            ocr_api.parse_ocr,
            request.headers.get("content-type", ""),
            body,
            request.query_params.get("format"),
        )
        with self._ocr_admission.enter():
            call = await anyio.to_thread.run_sync(parse, limiter=self._decode_lane)
            after = _giving_back([call.image] if call.image else [])
            engine = await anyio.to_thread.run_sync(self.backend.ocr)
            answer = await self._unless_stopping(
                anyio.to_thread.run_sync(ocr_api.read, engine, call, limiter=self._ocr_lane)
            )
        return answer.response(background=after)

    async def _unless_stopping(self, work: Awaitable[T]) -> T:
        """`work`'s result, or the JSON 503 `stopping()` as soon as the server stops."""
        if self._stopping:
            raise stopping()
        loop = asyncio.get_running_loop()
        stop: asyncio.Future[None] = loop.create_future()
        task = asyncio.ensure_future(work)
        self._ocr_stops[stop] = loop
        try:
            waiting: set[asyncio.Future[Any]] = {task, stop}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            del self._ocr_stops[stop]
        if task.done():
            return task.result()
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        raise stopping()

    def _check_model(self, name: str) -> None:
        loaded = self.backend.model_name()
        if loaded is not None and name not in (loaded, MODEL_ALIAS):
            raise ApiError(
                404,
                f"The model {name!r} is not served here; use {loaded!r}.",
                "model_not_found",
                "model",
            )

    def _enqueue(self, job: EngineJob) -> None:
        try:
            self.backend.jobs.put(job)
        except QueueFull:
            raise ApiError(
                429, "Too many chat requests are waiting; try again shortly.", "queue_full"
            ) from None
        except QueueClosed:
            raise stopping() from None

    def _run_job(
        self, call: ChatCall, relay: Relay, cancel: threading.Event, service: ConversationService
    ) -> None:
        """On the owner thread, through its conversation service."""
        self.running[cancel] = relay
        try:
            completion = self.runner.run(service, call, partial(relay.put, "text"), cancel)
        except ApiError as exc:
            relay.put("error", exc)
        except Exception as exc:  # the owner thread and the server must outlive any request
            relay.put("error", ApiError(500, f"Generation failed: {describe(exc)}", "server_error"))
        else:
            relay.put("done", completion)
        finally:
            self.running.pop(cancel, None)

    async def _events(
        self, call: ChatCall, relay: Relay, cancel: threading.Event, reply: _Reply, deadline: float
    ) -> AsyncIterator[str]:
        """Server-sent events: the role, the text as it comes, the finish, usage, [DONE]."""
        try:
            yield reply.chunk({"role": "assistant", "content": ""})
            while True:
                try:
                    kind, value = await relay.get(deadline)
                except ApiError as exc:
                    kind, value = "error", exc
                if kind == "text":
                    yield reply.chunk({"content": value})
                    continue
                if kind == "error":
                    assert isinstance(value, ApiError)
                    yield _event(value.body())
                else:
                    assert isinstance(value, Completion)
                    yield reply.chunk({}, value.finish_reason)
                    if call.include_usage:
                        yield _event(
                            {
                                **reply.head("chat.completion.chunk"),
                                "choices": [],
                                "usage": value.usage.to_dict(),
                            }
                        )
                yield "data: [DONE]\n\n"
                return
        finally:  # also when the client went away mid-answer
            cancel.set()


def _giving_back(images: list, owner_done: threading.Event | None = None) -> BackgroundTask | None:
    """After the response: large images' memory back to the system. The request's locals
    have let the images go by then; a chat's job may still hold them on the owner thread
    (it replies before it returns), so that give-back waits for `owner_done`."""
    if not memory.large(images):
        return None
    return BackgroundTask(anyio.to_thread.run_sync, partial(memory.give_back, owner_done))


class _Reply:
    """The id, time and model name every part of one answer carries."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = model

    def head(self, kind: str) -> dict:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}

    def chunk(self, delta: dict, finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _event({**self.head("chat.completion.chunk"), "choices": [choice]})

    def completion(self, completion: Completion) -> dict:
        message = {"role": "assistant", "content": completion.text}
        choice = {"index": 0, "message": message, "finish_reason": completion.finish_reason}
        return {
            **self.head("chat.completion"),
            "choices": [choice],
            "usage": completion.usage.to_dict(),
        }


_NO_CACHE = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _event(data: dict) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _until_disconnect(request: Request, cancel: threading.Event) -> None:
    """Sets `cancel` when the client of a non-streaming answer goes away (the body is read
    already, so the next message the server has for this request is its disconnect)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
    cancel.set()


async def _collect(relay: Relay, deadline: float) -> Completion:
    while True:
        kind, value = await relay.get(deadline)
        if kind == "done":
            assert isinstance(value, Completion)
            return value
        if kind == "error":
            assert isinstance(value, ApiError)
            raise value


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "No such endpoint." if exc.status_code == 404 else str(exc.detail)
    return ApiError(
        exc.status_code, message, "not_found" if exc.status_code == 404 else None
    ).response()


async def _server_error(request: Request, exc: Exception) -> Response:
    return ApiError(500, f"The server failed: {describe(exc)}", "server_error").response()


def build_app(routes: ApiRoutes) -> Starlette:
    """The Starlette application (wrap it in security.Guard before serving it)."""
    return Starlette(
        routes=[
            Route("/v1/models", routes.models, methods=["GET"]),
            Route("/v1/chat/completions", routes.chat, methods=["POST"]),
            Route("/v1/ocr", routes.ocr, methods=["POST"]),
        ],
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )
