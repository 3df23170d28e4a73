"""DeskLens's own `regions` field of /v1/chat/completions (issue 40): a box of the question's
image, asked about as Qwen3-VL's bbox_2d and a crop read at its own resolution; a box that is
not one is a 400 naming `regions`."""

from __future__ import annotations

import openai
import pytest
from api_support import user_message

from desktop.core.api.errors import ApiError
from desktop.core.api.messages import parse_chat
from desktop.core.engine.vision import visual_token_count
from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.regions import Region, region_prompt, with_regions

PAGE = render_lines([f"Row {n}: {n * 1117}.25 due" for n in range(12)], size=14, width=1600)


def test_a_region_costs_its_crops_tokens_and_its_box(client, engine) -> None:
    messages = [user_message("What is due?", PAGE)]
    options = {"max_tokens": 2, "extra_body": {"skip_repeats": False}}
    plain = client.chat.completions.create(model="desklens", messages=messages, **options)
    region = {"x": 800, "y": 20, "w": 320, "h": 96}
    options["extra_body"] = {"skip_repeats": False, "regions": [region]}
    boxed = client.chat.completions.create(model="desklens", messages=messages, **options)
    # The crop as the engine reads it (this small one is enlarged to the model's minimum), its
    # vision start and end marks, and the sentence with the box before the question.
    crop_tokens = visual_token_count((320, 96), engine.encoder.spec)
    note = with_regions([Region(800, 20, 320, 96)], [load_image(PAGE)]).note
    assert '{"bbox_2d": [500, ' in note
    words = engine.codec.encode(region_prompt("What is due?", note))
    added = len(words) - len(engine.codec.encode("What is due?"))
    assert boxed.usage.prompt_tokens - plain.usage.prompt_tokens == crop_tokens + 2 + added


@pytest.mark.parametrize(
    ("regions", "says"),
    [
        ([{"x": 0, "y": 0, "w": 5000, "h": 10}], "is not inside"),
        # "image" counts from 0 and is said so (issue 59: was "on image 2", and -1 accepted)
        ([{"x": 0, "y": 0, "w": 10, "h": 10, "image": 1}], "names image 1, but the last user"),
        ([{"x": 0, "y": 0, "w": 10, "h": 10, "image": -1}], "names image -1,"),
        ([{"x": 0, "y": 0, "w": 10, "h": 10, "image": -2}], "counts them from 0"),
        ({"x": 0}, "must be a list"),
        ([{"x": "0", "y": 0, "w": 10, "h": 10}], "must be a list"),
    ],
)
def test_a_region_that_is_not_a_box_of_the_image_is_a_400(client, regions, says) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(
            model="desklens", messages=[user_message("What?", PAGE)], max_tokens=2,
            extra_body={"regions": regions},
        )  # fmt: skip
    assert says in raised.value.body["message"] and raised.value.body["param"] == "regions"


def test_regions_are_parsed_against_the_questions_images() -> None:
    body = {"model": "desklens", "messages": [user_message("What?", PAGE)]}
    assert parse_chat(body).regions == ()
    body["regions"] = [{"x": 1, "y": 2, "w": 30, "h": 40}, {"x": 0, "y": 0, "w": 9, "h": 9}]
    assert parse_chat(body).regions == (Region(1, 2, 30, 40), Region(0, 0, 9, 9))
    body["messages"] = [user_message("No image")]
    with pytest.raises(ApiError, match="has 0 images"):
        parse_chat(body)
