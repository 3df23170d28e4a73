"""Each image's fast-OCR result, read once per session: a grounded question on a picture the
service has read already ("Use the extracted text" again, an Edit resent grounded) puts the
same text before it without running the OCR again, and any later question on that picture
drafts from it. Keyed by the image's content digest (`images.image_digest`: equal pictures,
one read, whatever their file or name); the app has one fast OCR, so its reads do not depend
on which factory asked. Used from the service's one thread."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.images import LoadedImage
    from desktop.core.ocr import OcrEngine, OcrResult

READS_KEPT = 64  # the most recently used; a page's result is text and boxes, kilobytes


class OcrReads:
    def __init__(self, limit: int = READS_KEPT) -> None:
        self._limit = limit
        self._results: OrderedDict[str, OcrResult] = OrderedDict()

    def read(self, ocr: Callable[[], OcrEngine], images: Sequence[LoadedImage]) -> list[OcrResult]:
        """Each image's result, the OCR (made by `ocr` only when needed) run on those not
        read yet. Raises what the OCR raises; a failed read is not kept."""
        results: list[OcrResult] = []
        engine: OcrEngine | None = None
        for image in images:
            result = self._results.get(image.digest)
            if result is None:
                engine = engine or ocr()
                result = engine.extract(image)
            self._keep(image.digest, result)
            results.append(result)
        return results

    def known(self, images: Sequence[LoadedImage]) -> list[OcrResult]:
        """The results already read of `images` (no OCR runs)."""
        found = (self._results.get(image.digest) for image in images)
        return [result for result in found if result is not None]

    def _keep(self, digest: str, result: OcrResult) -> None:
        self._results[digest] = result
        self._results.move_to_end(digest)
        while len(self._results) > self._limit:
            self._results.popitem(last=False)
