"""Issue 37: the service reads each picture's fast OCR once per session (keyed by its content
digest), for grounding and for drafting; counted here in OCR calls."""

from __future__ import annotations

import pytest
from PIL import ImageOps
from test_conversation_service import RecordingEngine

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService, Ground
from desktop.core.conversation.ocr_reads import OcrReads
from desktop.core.draft_texts import draft_hints
from desktop.core.images import load_image

SETTINGS = GenerationSettings(max_new_tokens=4)


@pytest.fixture(scope="module")
def real_ocr():
    from desktop.core.ocr import OcrEngine

    return OcrEngine()


class CountingOcr:
    """An OCR engine counting its reads (and a factory counting how often it is made)."""

    def __init__(self, engine) -> None:
        self.engine, self.calls, self.made, self.broken = engine, 0, 0, False

    def __call__(self) -> CountingOcr:
        self.made += 1
        if self.broken:
            raise RuntimeError("the OCR device is gone")
        return self

    def extract(self, image):
        self.calls += 1
        return self.engine.extract(image)


def test_a_picture_read_once_grounds_and_drafts_later_questions_without_the_ocr(
    engine, real_ocr, sample_image
):
    ocr, recording = CountingOcr(real_ocr), RecordingEngine(engine)
    service = ConversationService(recording)
    first = service.ask(AskRequest("Total?", (load_image(sample_image),), SETTINGS,
                                   context=Ground(ocr)))  # fmt: skip
    read = draft_hints([real_ocr.extract(load_image(sample_image))])
    assert first.answer.ok and read and recording.hints[0] == read
    assert (ocr.calls, ocr.made) == (1, 1)
    # The same picture loaded anew (another file or a paste: the same digest), grounded again.
    again = service.ask(AskRequest("Due?", (load_image(sample_image),), SETTINGS,
                                   context=Ground(ocr)))  # fmt: skip
    assert (ocr.calls, ocr.made) == (1, 1)  # neither read nor made again
    grounding = first.prompt.removesuffix("Question: Total?")
    assert grounding and again.prompt == grounding + "Question: Due?"
    assert recording.hints[1] == read
    # Not grounded: the question is as typed, and still drafts from the read.
    plain = service.ask(AskRequest("Colour?", (load_image(sample_image),), SETTINGS))
    assert plain.prompt == "Colour?" and recording.hints[2] == read and ocr.calls == 1


def test_each_picture_is_read_once_and_a_failed_read_is_read_again(engine, real_ocr, sample_image):
    page = load_image(sample_image)
    mirrored = load_image(ImageOps.mirror(page.image), name="mirrored.png")
    ocr, service = CountingOcr(real_ocr), ConversationService(engine)
    ocr.broken = True
    failed = service.ask(AskRequest("Total?", (page,), SETTINGS, context=Ground(ocr)))
    assert failed.answer.ok and failed.prompt == "Total?"  # answered without its grounding
    ocr.broken = False
    both = service.ask(AskRequest("Total?", (page, mirrored), SETTINGS, context=Ground(ocr)))
    assert ocr.calls == 2 and "Image 1:" in both.prompt and "Image 2:" in both.prompt
    swapped = service.ask(AskRequest("Total?", (mirrored, page), SETTINGS, context=Ground(ocr)))
    assert ocr.calls == 2
    first_block, second_block = both.prompt.split("\n\nImage 2:\n")
    assert swapped.prompt.startswith(
        "Image 1:\n" + second_block.removesuffix("\n\nQuestion: Total?")
    )  # each picture keeps its own read, in the question's order


def test_the_reads_kept_are_the_most_recently_used():
    class Fake:
        def __init__(self) -> None:
            self.calls = 0

        def extract(self, image):
            self.calls += 1
            return f"read of {image.digest}"

    class Picture:
        def __init__(self, digest: str) -> None:
            self.digest = digest

    fake, reads = Fake(), OcrReads(limit=2)
    a, b, c = Picture("a"), Picture("b"), Picture("c")
    assert reads.read(lambda: fake, [a, b]) == ["read of a", "read of b"]
    reads.read(lambda: fake, [a])  # a is used again: b is now the oldest
    reads.read(lambda: fake, [c])
    assert fake.calls == 3 and reads.known([a, b, c]) == ["read of a", "read of c"]
    reads.read(lambda: fake, [b])
    assert fake.calls == 4


def test_an_extraction_the_caller_has_grounds_without_the_ocr_and_comes_back_in_the_result(
    engine, real_ocr, sample_image
):
    """The app's "Extract text" (stored as JSON) handed in as a KnownRead: the grounded prompt
    is the one a fresh read gives, the OCR is never made, and the result carries the read."""
    import json

    from desktop.core.conversation import KnownRead

    page = load_image(sample_image)
    fresh = ConversationService(engine).ask(
        AskRequest("Total?", (page,), SETTINGS, context=Ground(CountingOcr(real_ocr)))
    )
    extracted = json.dumps(real_ocr.extract(page).to_dict())
    ocr, service = CountingOcr(real_ocr), ConversationService(engine)
    known = (KnownRead(page.digest, extracted),)
    asked = service.ask(
        AskRequest("Total?", (page,), SETTINGS, context=Ground(ocr), known_reads=known)
    )
    assert (ocr.calls, ocr.made) == (0, 0)
    assert asked.prompt == fresh.prompt and "Question: Total?" in asked.prompt
    (read,) = asked.reads
    assert read is not None and [line.text for line in read.lines] == [
        line.text for line in fresh.reads[0].lines
    ]
    # A damaged extraction is left out: the picture is read instead.
    other = ConversationService(engine)
    damaged = (KnownRead(page.digest, '{"lines": "not a list"'),)
    again = other.ask(
        AskRequest("Total?", (page,), SETTINGS, context=Ground(ocr), known_reads=damaged)
    )
    assert ocr.calls == 1 and again.prompt == fresh.prompt


def test_a_question_on_a_picture_never_read_has_no_read_in_its_result(engine, sample_image):
    asked = ConversationService(engine).ask(
        AskRequest("Colour?", (load_image(sample_image),), SETTINGS)
    )
    assert asked.answer.ok and asked.reads == (None,)
