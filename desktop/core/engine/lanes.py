"""One KV state per lane (`Lane`): the window's chat and the Local API's requests each keep
their own, so an API request never takes the chat out of the engine's state and the user's
next question still feeds only its own tokens.

A lane is a second infer request of the same compiled language model: the weights and the
compiled graph are shared, only the state (the KV cache, as long as the lane's conversation)
is its own. It is made when the lane is first used.
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.core.conversation.engine_protocol import Lane
from desktop.core.engine.language import LanguageModel

# The key of every position a lane's KV state holds (None: a rejected draft, masked out).
Keys = list[object | None]


class KvLanes:
    def __init__(self, make: Callable[[], LanguageModel]) -> None:
        self.make = make  # a new lane's language model (an infer request of its own)
        self.current = Lane.OWN
        self._parked: dict[Lane, tuple[LanguageModel, Keys]] = {}

    def switch(self, lane: Lane, language: LanguageModel, keys: Keys) -> tuple[LanguageModel, Keys]:
        """Parks the current lane's state (`language`, `keys`) and returns `lane`'s."""
        if lane is self.current:
            return language, keys
        self._parked[self.current] = (language, keys)
        self.current = lane
        return self._parked.pop(lane, None) or (self.make(), [])
