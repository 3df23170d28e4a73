"""Next-token choice: greedy for extraction, temperature / top-p / repetition penalty otherwise."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from desktop.core.chat import GenerationSettings

_FLOAT32_MAX = float(np.finfo(np.float32).max)


class Sampler:
    def __init__(self, settings: GenerationSettings) -> None:
        self.settings = settings
        self._rng = np.random.default_rng(settings.seed)

    def choose(
        self, logits: np.ndarray, seen: Sequence[int], allowed: np.ndarray | None = None
    ) -> int:
        """A token id from logits [vocab]; `allowed` is a boolean mask (constrained output)."""
        logits = np.asarray(logits, dtype=np.float32)
        penalty = self.settings.repetition_penalty
        if penalty != 1.0 and len(seen):
            idx = np.unique(np.asarray(seen, dtype=np.int64))
            picked = logits[idx].astype(np.float64)
            logits = logits.copy()
            # In float64 and kept finite in float32: a penalty of 1e-300 is 0 in float32 (a
            # division by zero), and an infinite logit would make the sampling's sums NaN.
            with np.errstate(over="ignore", under="ignore"):
                penalised = np.where(picked > 0, picked / penalty, picked * penalty)
            logits[idx] = np.clip(penalised, -_FLOAT32_MAX, _FLOAT32_MAX)
        if allowed is not None:
            logits = np.where(allowed[: logits.shape[0]], logits, -np.inf)
        if self.settings.temperature <= 0:
            return int(np.argmax(logits))
        scaled = logits.astype(np.float64) / self.settings.temperature
        scaled -= scaled.max()
        probs = np.exp(scaled)
        probs /= probs.sum()
        if self.settings.top_p < 1.0:
            order = np.argsort(-probs)
            cumulative = np.cumsum(probs[order])
            cut = int(np.searchsorted(cumulative, self.settings.top_p)) + 1
            keep = order[:cut]
            trimmed = np.zeros_like(probs)
            trimmed[keep] = probs[keep]
            probs = trimmed / trimmed.sum()
        return int(self._rng.choice(probs.shape[0], p=probs))
