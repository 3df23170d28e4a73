"""A conversation as an OpenAI chat request: every turn sent again (the server keeps nothing
between requests), each image inline as a `data:` URL, the request's generation settings."""

from __future__ import annotations

import base64
import io
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop.core.chat import Conversation, GenerationSettings, ImageLike

# What Qwen3-VL reads at most (its preprocessor's longest_edge, in pixels); larger images are
# scaled down before they are sent, so a 20000-px scan costs the upload of one the model uses.
MAX_PIXELS = 16_777_216
CACHED_URLS = 32  # encoded images kept, so a follow-up does not encode its history again


class ImageUrls:
    """PNG `data:` URLs by image digest (lossless: text in screenshots stays sharp)."""

    def __init__(self, size: int = CACHED_URLS) -> None:
        self._urls: OrderedDict[str, str] = OrderedDict()
        self._size = size

    def url(self, image: ImageLike) -> str:
        found = self._urls.get(image.digest)
        if found is not None:
            self._urls.move_to_end(image.digest)
            return found
        url = data_url(image)
        self._urls[image.digest] = url
        while len(self._urls) > self._size:
            self._urls.popitem(last=False)
        return url


def data_url(image: ImageLike) -> str:
    picture = image.image
    pixels = picture.width * picture.height
    if pixels > MAX_PIXELS:
        scale = (MAX_PIXELS / pixels) ** 0.5
        size = (max(1, int(picture.width * scale)), max(1, int(picture.height * scale)))
        picture = picture.resize(size)
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", compress_level=1)  # speed over size: it goes on a network
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def user_content(text: str, images: Sequence[ImageLike], urls: ImageUrls) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": urls.url(image)}} for image in images
    ]
    parts.append({"type": "text", "text": text})
    return parts


def chat_messages(
    conversation: Conversation, question: str, images: Sequence[ImageLike], urls: ImageUrls
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in conversation.turns:
        messages.append({"role": "user", "content": user_content(turn.question, turn.images, urls)})
        messages.append({"role": "assistant", "content": turn.answer})
    messages.append({"role": "user", "content": user_content(question, images, urls)})
    return messages


def request_options(settings: GenerationSettings) -> dict[str, Any]:
    """The OpenAI fields for `settings` (what a server cannot use, such as drafting, is left
    out: the server decodes as it does)."""
    options: dict[str, Any] = {
        "max_tokens": settings.max_new_tokens,
        "temperature": settings.temperature,
    }
    if settings.top_p < 1.0:
        options["top_p"] = settings.top_p
    if settings.seed is not None:
        options["seed"] = settings.seed
    if settings.json_schema is not None:
        options["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": settings.json_schema},
        }
    extra: dict[str, Any] = {}
    if settings.repetition_penalty != 1.0:
        extra["repetition_penalty"] = settings.repetition_penalty  # OVMS and vLLM read it
    if settings.ignore_eos:
        extra["ignore_eos"] = True  # benchmarks
    if extra:
        options["extra_body"] = extra
    return options
