"""Made the schema-4 fixture with the code of commit f7e4733 (schema 4, before an answer's
evidence was kept): `PYTHONPATH=<that tree> python make_history_v4.py OUT`."""

import sys
from pathlib import Path

from desktop.core.history import AskedWith, HistoryStore
from desktop.core.images import load_image
from desktop.core.regions import Region

out = Path(sys.argv[1])
src = Path(
    "tests/core/data/history-v1/images/cb/cbfd855b0540a392c78d5d104765bf5caa12d5317d29b404fa68fef6aaf9363c.png"
)
image = load_image(src, name="receipt.png")
with HistoryStore(out) as store:
    a = store.create_conversation("Receipt")
    asked = AskedWith(grounded=True, regions=(Region(2, 3, 40, 20),))
    store.add_message(a, "user", "What is the total?", [image], asked=asked)
    store.add_message(a, "assistant", "The total is 12.50.", answer_ids=[5, 6])
