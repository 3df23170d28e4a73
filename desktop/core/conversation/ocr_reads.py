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

from desktop.core.bounded_json import as_object, loads

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

    def add(self, digest: str, read: OcrResult | str) -> None:
        """A read the caller has already (a result, or an extraction's stored JSON); JSON that
        is not an OCR result's is left out (the picture is read again if it is needed)."""
        if digest in self._results:
            self._results.move_to_end(digest)
            return
        if isinstance(read, str):
            from desktop.core.ocr.stored import result_from_dict

            try:
                read = result_from_dict(as_object(loads(read), "The extraction"))
            except (ValueError, TypeError):
                return
        self._keep(digest, read)

    def of(self, images: Sequence[LoadedImage]) -> tuple[OcrResult | None, ...]:
        """Each image's result if it has been read (None where not), in order."""
        return tuple(self._results.get(image.digest) for image in images)

    def known(self, images: Sequence[LoadedImage]) -> list[OcrResult]:
        """The results already read of `images` (no OCR runs)."""
        found = (self._results.get(image.digest) for image in images)
        return [result for result in found if result is not None]

    def _keep(self, digest: str, result: OcrResult) -> None:
        self._results[digest] = result
        self._results.move_to_end(digest)
        while len(self._results) > self._limit:
            self._results.popitem(last=False)
