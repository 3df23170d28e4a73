"""Chat completions and OCR through the official openai client against the real server.

The tiny model writes gibberish: the tests check mechanics and exactness (the same tokens by
every path), never words.
"""

from __future__ import annotations

import json

import openai
import pytest
from api_support import data_url, http_call, png, user_message
from gui_support import text_image

from desktop.core.images import load_image

QUESTION = "What does the screenshot say?"


def ask(client, messages, **options):
    return client.chat.completions.create(model="desklens", messages=messages, **options)


def streamed(client, messages, **options) -> tuple[str, list, object]:
    """(text, finish reasons, usage) of a streamed answer."""
    stream = ask(client, messages, stream=True, stream_options={"include_usage": True}, **options)
    parts, finishes, usage = [], [], None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            parts.append(choice.delta.content or "")
            if choice.finish_reason:
                finishes.append(choice.finish_reason)
    return "".join(parts), finishes, usage


def test_models_lists_the_loaded_model_and_the_ocr(client, engine) -> None:
    ids = [model.id for model in client.models.list().data]
    assert ids == [engine.info.name, "desklens-ocr"]


def test_streamed_text_equals_the_answer_under_greedy_decoding(client, sample_image) -> None:
    messages = [user_message(QUESTION, sample_image)]
    answer = ask(client, messages, max_tokens=24, temperature=0)
    text, finishes, usage = streamed(client, messages, max_tokens=24, temperature=0)
    assert answer.choices[0].message.content
    assert text == answer.choices[0].message.content
    assert finishes == [answer.choices[0].finish_reason]
    assert usage.completion_tokens == answer.usage.completion_tokens
    assert usage.prompt_tokens == answer.usage.prompt_tokens > 0


def test_the_model_can_be_named_as_listed(client, engine, sample_image) -> None:
    by_alias = ask(client, [user_message(QUESTION, sample_image)], max_tokens=8)
    by_name = client.chat.completions.create(
        model=engine.info.name, messages=[user_message(QUESTION, sample_image)], max_tokens=8
    )
    assert by_name.choices[0].message.content == by_alias.choices[0].message.content
    assert by_name.model == engine.info.name


def test_max_tokens_ends_the_answer_with_finish_reason_length(client, sample_image) -> None:
    answer = ask(client, [user_message(QUESTION, sample_image)], max_tokens=3)
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage.completion_tokens == 3


def test_a_follow_up_feeds_only_its_new_tokens(client, engine, sample_image) -> None:
    first_messages = [user_message(QUESTION, sample_image)]
    first = ask(client, first_messages, max_tokens=12)
    reply = first.choices[0].message.content
    follow_up = [*first_messages, {"role": "assistant", "content": reply}, user_message("And?")]
    second = ask(client, follow_up, max_tokens=12)
    cached = second.usage.prompt_tokens_details.cached_tokens
    fed = second.usage.prompt_tokens - cached
    # Everything of the first exchange (prompt and answer) is reused, image included: fed is
    # the new turn (and the answer's last token and end marker, which were never fed).
    exchange = first.usage.prompt_tokens + first.usage.completion_tokens
    assert cached >= exchange - 1
    assert 0 < fed <= second.usage.prompt_tokens - exchange + 2
    # ... and the answer is the one a fresh engine state gives (the reuse is exact).
    engine_reset_answer = _after_reset(client, engine, follow_up)
    assert second.choices[0].message.content == engine_reset_answer


def _after_reset(client, engine, messages) -> str:
    ask(client, [user_message("unrelated", text_image("Other"))], max_tokens=2)  # other state
    answer = ask(client, messages, max_tokens=12)
    assert answer.usage.prompt_tokens_details.cached_tokens < answer.usage.prompt_tokens // 2
    return answer.choices[0].message.content


def test_a_system_message_opens_the_first_turn(client, sample_image) -> None:
    plain = ask(client, [user_message(QUESTION, sample_image)], max_tokens=6)
    with_system = ask(
        client,
        [{"role": "system", "content": "Be brief."}, user_message(QUESTION, sample_image)],
        max_tokens=6,
    )
    assert with_system.usage.prompt_tokens > plain.usage.prompt_tokens


def test_json_schema_output_parses_and_matches(client, sample_image) -> None:
    schema = {
        "type": "object",
        "properties": {"kind": {"enum": ["invoice", "receipt"]}, "paid": {"type": "boolean"}},
        "required": ["kind", "paid"],
        "additionalProperties": False,
    }
    answer = ask(
        client,
        [user_message("Fields as JSON.", sample_image)],
        max_tokens=60,
        response_format={"type": "json_schema", "json_schema": {"name": "f", "schema": schema}},
    )
    data = json.loads(answer.choices[0].message.content)
    assert set(data) == {"kind", "paid"}
    assert data["kind"] in ("invoice", "receipt") and isinstance(data["paid"], bool)
    assert answer.choices[0].finish_reason == "stop"


def test_usage_counts_the_image_tokens_kept(client, engine, sample_image) -> None:
    from desktop.core.engine.pruning import kept_units
    from desktop.core.engine.vision import prepare_image

    spec = engine.encoder.spec
    prepared = prepare_image(sample_image, spec)
    full_count, kept = prepared.visual_tokens, len(kept_units(prepared.pixels, spec.factor))
    assert 0 < kept < full_count
    messages = [user_message(QUESTION, sample_image)]
    pruned = ask(client, messages, max_tokens=2)  # skipping repeated blocks is the default
    full = ask(client, messages, max_tokens=2, extra_body={"skip_repeats": False})
    assert full.usage.prompt_tokens - pruned.usage.prompt_tokens == full_count - kept


def test_json_object_output_is_an_object(client, sample_image) -> None:
    answer = ask(
        client,
        [user_message("JSON please.", sample_image)],
        max_tokens=200,
        response_format={"type": "json_object"},
    )
    if answer.choices[0].finish_reason == "stop":  # a complete object; "length" cuts it
        assert isinstance(json.loads(answer.choices[0].message.content), dict)
    else:
        assert answer.choices[0].message.content.startswith("{")


@pytest.mark.parametrize("stream", [False, True])
def test_stop_sequences_cut_the_answer_before_them(client, sample_image, stream) -> None:
    messages = [user_message(QUESTION, sample_image)]
    full = ask(client, messages, max_tokens=30).choices[0].message.content
    stop = full[len(full) // 2 : len(full) // 2 + 3]  # from the middle: the answer has it
    expected = full[: full.find(stop)]
    if stream:
        text, finishes, usage = streamed(client, messages, max_tokens=30, stop=[stop, "\x00"])
        assert finishes == ["stop"]
    else:
        answer = ask(client, messages, max_tokens=30, stop=stop)
        text, usage = answer.choices[0].message.content, answer.usage
        assert answer.choices[0].finish_reason == "stop"
    assert text == expected
    assert usage.completion_tokens < 30  # the engine stopped, it did not decode on


def test_ocr_returns_the_fast_ocr_text_of_a_rendered_page(api, ocr_engine) -> None:
    page = text_image("Invoice 2041 total 99.50", size=(900, 160))
    expected = ocr_engine.extract(load_image(page)).text()
    status, _, reply = http_call(api, "POST", "/ocr", {"image": data_url(page)})
    assert status == 200, reply
    assert reply["text"] == expected
    assert "2041" in expected
    status, _, raw = http_call(
        api, "POST", "/ocr?format=json", png(page), {"Content-Type": "image/png"}
    )
    assert status == 200
    lines = [line["text"] for line in raw["document"]["pages"][0]["lines"]]
    assert "\n".join(lines) == expected


def test_ocr_refuses_what_is_not_an_image(api) -> None:
    status, _, reply = http_call(api, "POST", "/ocr", b"%PDF-1.4", {"Content-Type": "text/plain"})
    assert status == 415
    status, _, reply = http_call(api, "POST", "/ocr", {"image": "https://example.com/a.png"})
    assert status == 400 and "offline" in reply["error"]["message"]
    status, _, reply = http_call(api, "POST", "/ocr", {"image": "aGVsbG8=", "format": "docx"})
    assert status == 400 and reply["error"]["param"] == "format"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, "offline"),
        ({"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}, "never opens files"),
        ({"type": "image_url", "image_url": {"url": "/etc/passwd"}}, "never opens files"),
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}, "base64"),
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}, "image"),
        ({"type": "input_audio", "input_audio": {}}, "text or image_url"),
    ],
)
def test_unusable_content_is_a_400_that_says_why(client, content, words) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, [{"role": "user", "content": [content]}])
    assert caught.value.status_code == 400
    assert words in caught.value.body["message"]
    assert caught.value.body["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    "options",
    [
        {"messages": []},
        {"messages": [{"role": "assistant", "content": "hi"}]},
        {"messages": [{"role": "tool", "content": "x"}]},
        {"max_tokens": 0},
        {"temperature": 5},
        {"n": 2},
        {"stop": ["a", "b", "c", "d", "e"]},
        {"response_format": {"type": "xml"}},
        {"tools": [{"type": "function", "function": {"name": "f"}}]},
        {"extra_body": {"skip_repeats": "no"}},
    ],
)
def test_invalid_requests_are_400s(client, options) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], **options}
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="desklens", **body)


def test_an_unknown_model_is_a_404(client) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=[user_message("hi")])
    assert "tiny" in caught.value.body["message"]


def test_broken_json_and_unknown_paths_get_openai_shaped_errors(api) -> None:
    json_type = {"Content-Type": "application/json"}
    status, _, broken = http_call(api, "POST", "/chat/completions", b"{nope", json_type)
    assert status == 400
    assert broken["error"]["type"] == "invalid_request_error"
    status, _, missing = http_call(api, "GET", "/embeddings")
    assert status == 404 and missing["error"]["message"]
    status, _, _ = http_call(api, "GET", "/chat/completions")
    assert status == 405
