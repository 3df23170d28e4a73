"""Made the schema-2 fixture with the code of commit 70916fa (schema 2)."""

import sys
from pathlib import Path

from desktop.core.history import HistoryStore
from desktop.core.history.ocr_text import OcrText
from desktop.core.images import load_image
from desktop.core.question_context import compose_question

out = Path(sys.argv[1])
src = Path(
    "tests/core/data/history-v1/images/cb/cbfd855b0540a392c78d5d104765bf5caa12d5317d29b404fa68fef6aaf9363c.png"
)
image = load_image(src, name="receipt.png")
with HistoryStore(out) as store:
    a = store.create_conversation("Grounded")
    prompt = compose_question(
        "What is the total?", system="Answer briefly.", ocr_texts=["Total 12.50"]
    )
    store.add_message(a, "user", prompt, [image], typed="What is the total?")
    store.add_message(
        a, "assistant", "12.50", answer_ids=[5, 6], stats={"generated_tokens": 2, "total_s": 0.5}
    )
    store.add_message(a, "user", "And the date?", [])
    store.add_message(
        a,
        "assistant",
        "It is 1 May",
        answer_ids=[7, 8, 9],
        stats={"generated_tokens": 3},
        stopped=True,
    )
    b = store.create_conversation("Failed")
    store.add_message(b, "user", "Describe it.", [image])
    store.add_message(b, "error", "The server at localhost:9 could not be reached.")
    c = store.create_conversation("Extracted")
    ocr = OcrText(
        "receipt.png",
        "Total 12.50",
        "Total **12.50**",
        '{"lines": [{"text": "Total 12.50"}], "tables": []}',
        0.25,
    )
    store.add_message(c, "ocr", ocr.text, [image], stats=ocr.stats())
