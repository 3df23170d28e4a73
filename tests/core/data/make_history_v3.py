"""Made the schema-3 fixture with the code of commit fd63100 (schema 3, before regions)."""

import sys
from pathlib import Path

from desktop.core.chat import GenerationSettings
from desktop.core.history import AskedWith, HistoryStore
from desktop.core.images import load_image

out = Path(sys.argv[1])
src = Path(
    "tests/core/data/history-v1/images/cb/cbfd855b0540a392c78d5d104765bf5caa12d5317d29b404fa68fef6aaf9363c.png"
)
image = load_image(src, name="receipt.png")
with HistoryStore(out) as store:
    a = store.create_conversation("Receipt")
    asked = AskedWith(GenerationSettings(max_new_tokens=64), "text", grounded=False)
    store.add_message(a, "user", "What is the total?", [image], asked=asked)
    store.add_message(a, "assistant", "12.50", answer_ids=[5, 6], finish=None)
