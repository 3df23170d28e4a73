"""The picture store: pixels kept by content digest within a byte bound, least recently used
out first; a picture pushed out is decoded again from its file."""

from __future__ import annotations

import threading

from PIL import Image

from desktop.core.images import load_image
from desktop.core.pictures import Pictures, pixel_bytes


def picture(shade: int, size=(100, 100), name="shot.png"):
    return load_image(Image.new("RGB", size, (shade, shade, shade)), name=name)


def test_the_least_recently_used_picture_goes_first_when_the_bound_is_reached():
    one, two, three = picture(1), picture(2), picture(3)
    store = Pictures(limit_bytes=2 * pixel_bytes(one))
    store.keep(one)
    store.keep(two)
    assert store.get(one.digest) is one  # used: now the most recent
    store.keep(three)
    assert store.get(two.digest) is None
    assert store.get(one.digest) is one and store.get(three.digest) is three
    assert store.kept_bytes == 2 * pixel_bytes(one)


def test_a_picture_larger_than_the_bound_is_not_kept_and_evicts_nothing():
    small, huge = picture(1), picture(2, size=(400, 400))
    store = Pictures(limit_bytes=pixel_bytes(huge) - 1)
    store.keep(small)
    assert store.keep(huge) is huge and store.get(huge.digest) is None
    assert store.get(small.digest) is small


def test_the_same_pixels_under_another_name_keep_the_askers_name():
    store = Pictures()
    kept = store.keep(picture(7, name="a.png"))
    again = store.get(kept.digest, "b.png")
    assert again is not None and again.name == "b.png" and again.image is kept.image
    assert store.get(kept.digest).name == "a.png"


def test_load_decodes_the_file_only_when_the_pixels_are_not_kept(tmp_path):
    path = tmp_path / "shot.png"
    Image.new("RGB", (50, 40), (9, 9, 9)).save(path)
    store = Pictures(limit_bytes=50 * 40 * 3)
    first = store.load("0" * 64, path, "shot.png")  # an unknown digest: the file decoded
    assert store.load(first.digest, path, "shot.png") is first
    path.unlink()  # kept: the file is not read again
    assert store.load(first.digest, path, "shot.png") is first
    store.keep(picture(3, size=(50, 40)))  # pushes it out
    assert store.get(first.digest) is None


def test_threads_keeping_and_reading_at_once_stay_within_the_bound():
    pictures = [picture(shade) for shade in range(40)]
    store = Pictures(limit_bytes=5 * pixel_bytes(pictures[0]))

    def churn(offset: int) -> None:
        for index in range(400):
            image = pictures[(index + offset) % len(pictures)]
            store.keep(image)
            found = store.get(image.digest)
            assert found is None or found.digest == image.digest

    threads = [threading.Thread(target=churn, args=(n * 7,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.kept_bytes <= store.limit_bytes
