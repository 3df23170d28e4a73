"""Questions about a region of an image: the box in Qwen3-VL's own convention, and a crop.

Qwen3-VL was trained on boxes written as `{"bbox_2d": [x1, y1, x2, y2]}` in relative units of
0..1000 of the image's width and height. A region's question carries its box that way, and the
region itself as an extra image: the crop goes through the engine's image budget on its own,
so a small region of a 4K screenshot is read at its own resolution instead of at the whole
image's (a 960x540 region of a 3840x2160 page gets its 1:1 pixels, the page 1/6.5 of its).
Regions are given in image pixels (x, y, width, height) and refer to one of the question's
images by its index (0: the first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop.core.images import LoadedImage, load_image

MAX_REGIONS = 8  # per question: each is an image of its own in the prompt
_REGION = re.compile(r"^\s*(?:(\d+)\s*:)?\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*$")
REGION_FORMAT = "X,Y,W,H in pixels (or N:X,Y,W,H for the question's image N, from 1)"


class RegionError(ValueError):
    """A region that is not a box inside its image: the sentence says which and why."""


@dataclass(frozen=True)
class Region:
    x: int
    y: int
    width: int
    height: int
    image: int = 0  # index into the question's images

    @classmethod
    def parse(cls, text: str) -> Region:
        """ "X,Y,W,H" (the first image) or "N:X,Y,W,H" (image N, counted from 1)."""
        match = _REGION.match(text)
        if match is None:
            raise RegionError(f"{text!r} is not a region: give {REGION_FORMAT}.")
        number, *box = match.groups()
        image = int(number) - 1 if number is not None else 0
        if image < 0:
            raise RegionError(f"{text!r}: images are counted from 1.")
        x, y, width, height = (int(value) for value in box)
        return cls(x, y, width, height, image)

    @property
    def corners(self) -> tuple[int, int, int, int]:
        """left, top, right, bottom in pixels."""
        return self.x, self.y, self.x + self.width, self.y + self.height

    def check(self, size: tuple[int, int], name: str) -> None:
        """Raises RegionError unless the box has an area and lies inside an image of `size`."""
        width, height = size
        left, top, right, bottom = self.corners
        if self.width <= 0 or self.height <= 0:
            raise RegionError(f"The region {self.label()} has no area: width and height > 0.")
        if left < 0 or top < 0 or right > width or bottom > height:
            raise RegionError(
                f"The region {self.label()} is not inside {name} ({width}x{height} pixels)."
            )

    def bbox_2d(self, size: tuple[int, int]) -> list[int]:
        """The box as Qwen3-VL writes it: x1, y1, x2, y2 in 0..1000 of the image's size."""
        width, height = size
        left, top, right, bottom = self.corners
        return [
            round(left * 1000 / width),
            round(top * 1000 / height),
            round(right * 1000 / width),
            round(bottom * 1000 / height),
        ]

    def label(self) -> str:
        return f"{self.x},{self.y},{self.width},{self.height}"

    def to_dict(self) -> dict[str, int]:
        return {"image": self.image, "x": self.x, "y": self.y, "w": self.width, "h": self.height}

    @classmethod
    def from_dict(cls, data: object) -> Region | None:
        """A stored or sent region; None for anything that is not one."""
        if not isinstance(data, dict):
            return None
        values = [data.get(key) for key in ("x", "y", "w", "h")] + [data.get("image", 0)]
        numbers = [value for value in values if type(value) is int]  # a bool is no number
        if len(numbers) != len(values):
            return None
        x, y, width, height, image = numbers
        return cls(x, y, width, height, image)


@dataclass(frozen=True)
class RegionQuestion:
    """A question's images with the regions' crops after them, and the words that say which
    image each crop is."""

    images: tuple[LoadedImage, ...]
    note: str


def check_region_count(regions: Sequence[Region], image_count: int) -> None:
    """Raises RegionError for too many regions or one on an image the question lacks."""
    if len(regions) > MAX_REGIONS:
        raise RegionError(f"At most {MAX_REGIONS} regions per question (got {len(regions)}).")
    for region in regions:
        if not 0 <= region.image < image_count:  # a negative one would index from the end
            raise RegionError(
                f"The region {region.label()} is on image {region.image + 1}, but the question "
                f"has {image_count} image{'' if image_count == 1 else 's'}."
            )


def check_regions(regions: Sequence[Region], images: Sequence[LoadedImage]) -> None:
    """Raises RegionError for a region on no image, outside its image, or too many."""
    check_region_count(regions, len(images))
    for region in regions:
        image = images[region.image]
        region.check(image.size, image.name)


def with_regions(regions: Sequence[Region], images: Sequence[LoadedImage]) -> RegionQuestion:
    """The images plus one crop per region (at its own resolution: the engine's budget then
    applies to the crop alone), and the sentence naming each box and its crop."""
    check_regions(regions, images)
    if not regions:
        return RegionQuestion(tuple(images), "")
    crops: list[LoadedImage] = []
    parts: list[str] = []
    for number, region in enumerate(regions, start=1):
        source = images[region.image]
        crop = load_image(source.image.crop(region.corners), name=f"{source.name} region {number}")
        crops.append(crop)
        box = json.dumps({"bbox_2d": region.bbox_2d(source.size)})
        parts.append(
            f"region {number} is {box} of image {region.image + 1}, shown enlarged as image "
            f"{len(images) + number}"
        )
    note = f"The question is about the marked region{'s' if len(regions) > 1 else ''}: "
    return RegionQuestion((*images, *crops), note + "; ".join(parts) + ".")


def region_prompt(question: str, note: str) -> str:
    """The question with the regions' sentence before it; a prompt that already carries it (a
    retried question's stored prompt) is left as it is."""
    if not note or note in question:
        return question
    return f"{note}\n{question}"


def regions_to_json(regions: Sequence[Region]) -> str | None:
    return json.dumps([region.to_dict() for region in regions]) if regions else None


def regions_from_json(data: Any) -> tuple[Region, ...]:  # noqa: ANN401 - stored JSON
    """Regions from decoded JSON; anything damaged is left out (the question still shows)."""
    if not isinstance(data, list):
        return ()
    found = (Region.from_dict(item) for item in data[:MAX_REGIONS])
    return tuple(region for region in found if region is not None)
