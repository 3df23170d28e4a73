"""Which pixels of a crop are ink: the one place the OCR code tells text from its background.

Two ways, for two questions:

* Against the median (the default): a line or cell crop is mostly background, so its median
  grey is the background, and ink is what differs from it, darker or lighter alike (a cell's
  rule caught in a crop is ink too, whatever the theme). The threshold is a fixed contrast
  (in a blank cell, a share of its own range would make its noise ink) and/or a share of the
  crop's largest difference (a mark's shape is measured at half its own contrast).
* Otsu's (`otsu`): the threshold that best splits the crop's greys in two, the ink being the
  side with fewer pixels (dark text on a light ground or light on dark); where text runs in a
  line crop (its columns, rows and height: `wide_gaps`, `detection_scale`).
"""

from __future__ import annotations

import cv2
import numpy as np


def ink_mask(
    crop: np.ndarray,
    *,
    otsu: bool = False,
    contrast: int = 0,
    share: float = 0.0,
    min_spread: int = 0,
) -> np.ndarray:
    """A boolean mask of the ink in `crop` (BGR or grey, 8-bit), of its height and width.

    Against the median: ink differs from the median grey by more than `contrast` and by at
    least `share` of the largest difference. With `otsu`: ink is the minority side of Otsu's
    threshold (the lighter side when the two are even). No pixel is ink when the crop's greys
    spread less than `min_spread` (from the median; with `otsu`, from darkest to lightest):
    noise and anti-aliasing, nothing to speak of."""
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    none = np.zeros(gray.shape, bool)
    if gray.size == 0:
        return none
    if otsu:
        if int(gray.max()) - int(gray.min()) < min_spread:
            return none
        threshold, _ = cv2.threshold(
            np.ascontiguousarray(gray), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU
        )
        dark = gray <= threshold
        return dark if dark.mean() < 0.5 else ~dark
    # int16: the difference of two 8-bit greys; the median whole, as the thresholds are
    distance = np.abs(gray.astype(np.int16) - int(np.median(gray)))
    spread = int(distance.max())
    if spread < min_spread:
        return none
    return (distance > contrast) & (distance >= spread * share)
