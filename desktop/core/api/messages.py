"""OpenAI chat requests -> what the engine is asked: history turns, the question, its images.

Images come only inline, as base64 `data:` URLs. http(s) URLs are refused (the app is offline)
and so is anything that names a file: the API never reads a file its caller names, so a
script or page that may call the API cannot make it read what the caller itself cannot.
System (and developer) messages have no place of their own in the engine's prompt; their text
opens the first user turn, the same way in every request, so the KV state still matches.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop.core.api.errors import ApiError, invalid, invalid_image
from desktop.core.api.schemas import check_schema
from desktop.core.chat import GenerationSettings
from desktop.core.images import ImageError, LoadedImage, load_image
from desktop.core.regions import Region, RegionError, check_regions

MAX_STOP_SEQUENCES = 4  # as OpenAI
CONTEXT_TOKENS = 16384  # the engine's context (EngineConfig.max_context_tokens)
MAX_ANSWER_TOKENS = CONTEXT_TOKENS
# The least a turn can cost, whatever its words (sequence.py; a text is at least one token):
# <|im_start|>, "user\n", <|im_end|>, "\n", <|im_start|>, "assistant\n" before its answer,
# <|im_end|>, "\n" after it.
MIN_QUESTION_TOKENS = 6
MIN_TURN_TOKENS = 8
# The longest token of Qwen's vocabulary is 128 bytes (a run of spaces): a text of n
# characters is at least n / 128 tokens.
MAX_TOKEN_CHARS = 128
MAX_ASPECT_RATIO = 200  # the model's image preprocessing refuses longer strips (vision.py)
_DATA_URL = re.compile(
    r"data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(;[^,;]*)*),(?P<data>.*)", re.S
)
_UNSUPPORTED = ("tools", "tool_choice", "functions", "function_call", "logprobs", "audio")


@dataclass
class HistoryTurn:
    """An answered turn the caller sent back: the user's text and images, the answer's text."""

    question: str
    images: list[LoadedImage]
    answer: str


@dataclass
class ChatCall:
    """One validated /v1/chat/completions request."""

    model: str
    history: list[HistoryTurn]
    question: str
    images: list[LoadedImage]
    settings: GenerationSettings
    stop: tuple[str, ...] = ()
    stream: bool = False
    include_usage: bool = False
    regions: tuple[Region, ...] = ()  # DeskLens's own: boxes of the question's images


@dataclass
class _Message:
    role: str  # "user" | "assistant"
    texts: list[str] = field(default_factory=list)
    images: list[LoadedImage] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(t for t in self.texts if t)


def parse_chat(body: object) -> ChatCall:
    """Validates a request body; raises ApiError (400) naming the first problem."""
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.")
    _refuse_unsupported(body)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("'model' is required (GET /v1/models lists it).", "model")
    history, question, images = _conversation(body.get("messages"))
    chars = len(question) + sum(len(turn.question) + len(turn.answer) for turn in history)
    _refuse_what_cannot_fit(len(history) + 1, chars)
    stream = _flag(body, "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise invalid("'stream_options' must be an object.", "stream_options")
    return ChatCall(
        model=model,
        history=history,
        question=question,
        images=images,
        settings=generation_settings(body),
        stop=_stop_sequences(body.get("stop")),
        stream=stream,
        include_usage=stream and _flag(options, "include_usage"),
        regions=_regions(body.get("regions"), images),
    )


def generation_settings(body: dict) -> GenerationSettings:
    """max_tokens, temperature, top_p, seed, response_format, skip_repeats, repetition_penalty
    and ignore_eos as the engine's settings."""
    settings = GenerationSettings()
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if limit is not None:
        settings.max_new_tokens = int(
            _number(limit, "max_tokens", 1, MAX_ANSWER_TOKENS, integer=True)
        )
    if body.get("temperature") is not None:
        settings.temperature = _number(body["temperature"], "temperature", 0.0, 2.0)
    if body.get("top_p") is not None:
        settings.top_p = _number(body["top_p"], "top_p", 0.0, 1.0)
        if settings.top_p == 0:
            raise invalid("'top_p' must be above 0.", "top_p")
    if body.get("seed") is not None:
        # Non-negative: the sampler's generator takes no negative seed (a 500 before).
        settings.seed = int(_number(body["seed"], "seed", 0, 2**63 - 1, integer=True))
    settings.json_schema = json_schema(body.get("response_format"))
    if body.get("skip_repeats") is not None:  # DeskLens's own: false reads every image block
        settings.skip_repeats = _flag(body, "skip_repeats")
    _server_extensions(body, settings)
    return settings


def _server_extensions(body: dict, settings: GenerationSettings) -> None:
    """vLLM's and OpenVINO Model Server's fields, which DeskLens's remote engine sends."""
    if body.get("repetition_penalty") is not None:
        penalty = _number(body["repetition_penalty"], "repetition_penalty", 0.0, 10.0)
        if penalty == 0:
            raise invalid("'repetition_penalty' must be above 0.", "repetition_penalty")
        settings.repetition_penalty = penalty
    if body.get("ignore_eos") is not None:
        settings.ignore_eos = _flag(body, "ignore_eos")


def _regions(value: object, images: Sequence[LoadedImage]) -> tuple[Region, ...]:
    """DeskLens's own `regions`: [{"x", "y", "w", "h", "image"?}] in pixels of the last user
    message's images (`image` counts them from 0), each asked about as a box and a crop."""
    if value is None:
        return ()
    items = value if isinstance(value, list) else None
    found = [Region.from_dict(item) for item in items or []]
    if items is None or None in found:
        raise invalid(
            '\'regions\' must be a list of {"x", "y", "w", "h"} boxes in pixels, with '
            '"image" (from 0) for a question\'s other images.',
            "regions",
        )
    regions = tuple(region for region in found if region is not None)
    for region in regions:  # said here as the API counts images: from 0 (the CLI's from 1)
        if not 0 <= region.image < len(images):
            count = f"{len(images)} image{'' if len(images) == 1 else 's'}"
            raise invalid(
                f"A region names image {region.image}, but the last user message has {count} "
                f'("image" counts them from 0).',
                "regions",
            )
    try:
        check_regions(regions, images)
    except RegionError as exc:
        raise invalid(str(exc), "regions") from None
    return regions


def _refuse_what_cannot_fit(turns: int, chars: int = 0) -> None:
    """A conversation of more turns or characters than the context can ever hold is refused
    before any of it is encoded or waits for the engine: its turns' markers and its text's
    characters alone are more tokens than the context leaves room for with one answer token
    (a chat sent back with 50,000 turns kept the engine busy for minutes)."""
    least = MIN_TURN_TOKENS * (turns - 1) + MIN_QUESTION_TOKENS + chars // MAX_TOKEN_CHARS
    if least >= CONTEXT_TOKENS:
        raise ApiError(
            400,
            f"The conversation is too long for the model: {turns:,} turns"
            + (f" and {chars:,} characters" if chars else "")
            + f" need at least {least:,} tokens, more than its {CONTEXT_TOKENS:,}-token "
            "context can ever hold. Send its latest turns only.",
            "context_length_exceeded",
            "messages",
        )


def _user_turns(messages: list) -> int:
    """The turns a list of messages makes at least (user messages in a row are one turn), read
    from the roles only: 50,000 turns are refused before their messages are read."""
    roles = [m.get("role") for m in messages if isinstance(m, dict)]
    roles = [role for role in roles if role in ("user", "assistant")]
    return sum(1 for i, role in enumerate(roles) if role == "user" and roles[i - 1 : i] != ["user"])


def _refuse_unsupported(body: dict) -> None:
    for name in _UNSUPPORTED:
        if body.get(name):
            raise invalid(f"'{name}' is not supported by DeskLens.", name)
    if body.get("n", 1) != 1:
        raise invalid("Only n = 1 is supported.", "n")
    for name in ("presence_penalty", "frequency_penalty"):
        if body.get(name):
            raise invalid(f"'{name}' is not supported; leave it out or 0.", name)


def json_schema(response_format: object) -> dict | None:
    """The schema the answer must match: json_schema's own, any object for json_object."""
    if response_format is None:
        return None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "object"}
    if kind == "json_schema" and isinstance(response_format, dict):
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if isinstance(schema, dict):
            check_schema(schema)
            return schema
        raise invalid("'response_format.json_schema.schema' must be an object.", "response_format")
    raise invalid(
        "'response_format.type' must be text, json_object or json_schema.", "response_format"
    )


def decode_data_url(url: object, name: str) -> LoadedImage:
    """An image from a base64 data: URL; anything else is refused with the reason."""
    if not isinstance(url, str) or not url:
        raise invalid("An image_url needs a 'url'.", "messages")
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("http", "https"):
        raise invalid(
            "DeskLens works offline and fetches no URLs: send the image inline as a "
            "data:image/...;base64,... URL.",
            "messages",
        )
    match = _DATA_URL.fullmatch(url) if scheme == "data" else None
    if match is None:
        raise invalid(
            "Images must be data:image/...;base64,... URLs; the API never opens files or "
            "other URLs.",
            "messages",
        )
    if "base64" not in match["params"].lower().split(";"):
        raise invalid("An image data: URL must be base64-encoded (;base64,).", "messages")
    return decode_image(match["data"], name)


def decode_image(data: str | bytes, name: str) -> LoadedImage:
    """Base64 text or raw bytes -> an image within the app's limits (images.py)."""
    if isinstance(data, str):
        try:
            data = base64.b64decode(re.sub(r"\s+", "", data), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise invalid(f"The {name} is not valid base64.", "messages") from exc
    try:
        return load_image(data, name=name)
    except ImageError as exc:
        raise invalid_image(str(exc)) from exc


def _conversation(messages: object) -> tuple[list[HistoryTurn], str, list[LoadedImage]]:
    if not isinstance(messages, list) or not messages:
        raise invalid("'messages' must be a non-empty list.", "messages")
    _refuse_what_cannot_fit(_user_turns(messages))
    system: list[str] = []
    merged: list[_Message] = []
    for index, message in enumerate(messages):
        role, texts, images = _read_message(message, index, len(system) + len(merged))
        if role in ("system", "developer"):
            system += texts
        elif merged and merged[-1].role == role:  # two in a row: one turn
            merged[-1].texts += texts
            merged[-1].images += images
        else:
            merged.append(_Message(role, list(texts), list(images)))
    if not merged or merged[-1].role != "user":
        raise invalid("The last message must be the user's.", "messages")
    if merged[0].role != "user":
        merged.insert(0, _Message("user"))
    merged[0].texts[:0] = system
    history = [
        HistoryTurn(user.text, user.images, answer.text)
        for user, answer in zip(merged[:-1:2], merged[1::2], strict=True)
    ]
    return history, merged[-1].text, merged[-1].images


def _read_message(message: object, index: int, seen: int) -> tuple[str, list[str], list]:
    if not isinstance(message, dict):
        raise invalid(f"messages[{index}] must be an object.", "messages")
    role = message.get("role")
    if role not in ("system", "developer", "user", "assistant"):
        raise invalid(
            f"messages[{index}].role must be system, user or assistant (got {role!r}).",
            "messages",
        )
    texts, images = _content(message.get("content"), index, seen)
    if images and role != "user":
        raise invalid(f"messages[{index}]: only user messages can hold images.", "messages")
    return role, texts, images


def _content(content: object, index: int, seen: int) -> tuple[list[str], list[LoadedImage]]:
    if content is None:
        return [], []
    if isinstance(content, str):
        return [content], []
    if not isinstance(content, list):
        raise invalid(f"messages[{index}].content must be a string or a list.", "messages")
    texts: list[str] = []
    images: list[LoadedImage] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url":
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            images.append(_proportioned(decode_data_url(url, f"image {seen + len(images) + 1}")))
        else:
            raise invalid(
                f"messages[{index}].content parts must be text or image_url (got {kind!r}).",
                "messages",
            )
    return texts, images


def _proportioned(image: LoadedImage) -> LoadedImage:
    """The image, if the model can look at it (the OCR reads longer strips, in tiles)."""
    width, height = image.size
    if max(width, height) > MAX_ASPECT_RATIO * min(width, height):
        raise invalid_image(
            f"The {image.name} is too elongated for the model ({width} x {height}; the long side "
            f"may be at most {MAX_ASPECT_RATIO} times the short one): crop it, or read its text "
            "with /v1/ocr."
        )
    return image


def _stop_sequences(stop: object) -> tuple[str, ...]:
    if stop is None:
        return ()
    stops: Sequence[object] = [stop] if isinstance(stop, str) else stop  # type: ignore[assignment]
    if not isinstance(stops, list) or len(stops) > MAX_STOP_SEQUENCES:
        raise invalid(f"'stop' must be a string or up to {MAX_STOP_SEQUENCES} strings.", "stop")
    if not all(isinstance(s, str) and s for s in stops):
        raise invalid("'stop' sequences must be non-empty strings.", "stop")
    return tuple(stops)


def _flag(body: dict, name: str) -> bool:
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise invalid(f"'{name}' must be true or false.", name)
    return value


def _number(value: object, name: str, low: float, high: float, *, integer: bool = False) -> float:
    wanted = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, wanted) or not low <= value <= high:
        kind = "an integer" if integer else "a number"
        raise invalid(f"'{name}' must be {kind} from {low:g} to {high:g}.", name)
    return value


__all__ = ["ApiError", "ChatCall", "HistoryTurn", "decode_data_url", "decode_image", "parse_chat"]
