"""The local API under load, side by side in one run, against the real server on loopback:

* `/v1/ocr` on the OCR benchmark's rendered pages: requests per second from one client and
  from 4 parallel clients, next to the same engine's in-process `extract` time (the API's own
  cost is the difference: base64, JSON, HTTP);
* `/v1/chat/completions` from 10 parallel clients (one screenshot, 16 tokens each): how many
  are answered, how many get 429 (8 may wait, one runs), and each answered client's latency
  by its place in the queue (the engine answers one at a time);
* the OCR requests per second again while the chat queue is busy (separate lanes: the OCR
  never waits for the chat queue, only shares the CPU with it).

    .venv/bin/python bench/api_bench.py --model DIR [--write]
    .venv/bin/python bench/api_bench.py --smoke --smoke-model DIR   # one page, one pass (CI)

With the tiny test model the chat figures show the queue's mechanics, not a real model's speed.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import ocr_bench  # bench/ is on sys.path
from results import publish
from smoke import add_smoke_options, check_smoke

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop.core.api.jobs import EngineThread, JobQueue  # noqa: E402
from desktop.core.api.routes import ApiBackend  # noqa: E402
from desktop.core.api.server import ApiServer, ApiSettings  # noqa: E402
from desktop.core.api.tokens import load_or_create_token  # noqa: E402

HEADING = "## Local API under load"
PAGES = [
    ("invoice", ocr_bench.make_invoice),
    ("app window", ocr_bench.make_ui),
    ("code editor", ocr_bench.make_code),
    ("full page, dense text", ocr_bench.make_plain),
]
CHAT_CLIENTS = 10


def data_url(image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def ocr_rate(client, urls: list[str], parallel: int, rounds: int) -> float:
    """Requests per second of `rounds` passes over the pages from `parallel` clients."""
    work = urls * rounds

    def one(url: str) -> None:
        reply = client.post("/ocr", body={"image": url}, cast_to=object)
        assert reply["text"]

    started = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, work))
    return len(work) / (time.perf_counter() - started)


def chat_burst(client, url: str) -> tuple[list[float], int]:
    """10 clients at once: the answered ones' latencies (sorted) and the number refused."""
    import openai

    messages = [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": "What is the total?"},
            ],
        }
    ]

    def one(_: int) -> float | None:
        started = time.perf_counter()
        try:
            client.chat.completions.create(model="desklens", messages=messages, max_tokens=16)
        except openai.RateLimitError:
            return None
        return time.perf_counter() - started

    with ThreadPoolExecutor(CHAT_CLIENTS) as pool:
        outcomes = list(pool.map(one, range(CHAT_CLIENTS)))
    answered = sorted(t for t in outcomes if t is not None)
    return answered, outcomes.count(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a converted model folder")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the pages")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    add_smoke_options(parser, model=True)
    args = parser.parse_args()
    check_smoke(args)
    if args.smoke:
        args.model, args.rounds = args.model or args.smoke_model, 1
    if not args.model:
        parser.error("--model DIR is needed")
    page_makers = PAGES[:1] if args.smoke else PAGES

    import openai

    from desktop.core.engine import VLMEngine
    from desktop.core.images import load_image
    from desktop.core.ocr import OcrEngine

    rng = random.Random(7)
    pages = [make(rng, label).image for label, make in page_makers]
    urls = [data_url(page) for page in pages]
    ocr = OcrEngine()
    ocr.warm_up(every_width=True)
    loaded = [load_image(page) for page in pages]
    for image in loaded:  # untimed: each page's shapes met once, as the server's are below
        ocr.extract(image)
    started = time.perf_counter()
    for _ in range(args.rounds):
        for image in loaded:
            ocr.extract(image)
    in_process = len(loaded) * args.rounds / (time.perf_counter() - started)

    engine = VLMEngine.load(args.model)
    queue = JobQueue(8)
    owner = EngineThread(engine, queue)
    backend = ApiBackend(queue, lambda: engine.info.name, lambda: ocr)
    token = load_or_create_token(Path(tempfile.mkdtemp()) / "api.token")
    server = ApiServer(backend, token, ApiSettings(port=0))
    server.start()
    owner.start()
    client = openai.OpenAI(base_url=server.url, api_key=token, max_retries=0, timeout=600)
    try:
        client.chat.completions.create(  # warm: the first JSON/HTTP paths, the image cache
            model="desklens",
            messages=[{"role": "user", "content": "hi"}],
            max_tokens=2,
        )
        alone, refused_alone = chat_burst(client, urls[0])
        one_client = ocr_rate(client, urls, 1, args.rounds)
        four_clients = ocr_rate(client, urls, 4, args.rounds)
        with ThreadPoolExecutor(1) as side:
            burst = side.submit(chat_burst, client, urls[0])
            during_chat = ocr_rate(client, urls, 1, args.rounds)
            answered, refused = burst.result()
    finally:
        server.stop()
        owner.stop()

    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"
    sizes = ", ".join(
        f"{label} {page.width}x{page.height}"
        for (label, _), page in zip(page_makers, pages, strict=True)
    )
    lines = [
        HEADING,
        "",
        f"`python bench/api_bench.py --model {Path(args.model).name}` on {machine}; the real "
        "server on 127.0.0.1, the official `openai` client, one run. OCR on the OCR "
        f"benchmark's rendered pages ({sizes}), PNG as base64 data: URLs, "
        f"{args.rounds} passes.",
        "",
        "| `/v1/ocr` | requests/s |",
        "| --- | ---: |",
        f"| in-process `OcrEngine.extract` (no HTTP), for reference | {in_process:.2f} |",
        f"| 1 client | {one_client:.2f} |",
        f"| 4 parallel clients (one page at a time on the engine) | {four_clients:.2f} |",
        f"| 1 client while 10 chat clients are queued | {during_chat:.2f} |",
        "",
        f"Chat queue alone, {CHAT_CLIENTS} parallel clients: {len(alone)} answered, "
        f"{refused_alone} refused with 429; latencies "
        + ", ".join(f"{t:.2f}" for t in alone)
        + " s.",
        "",
        f"Chat queue next to the OCR client, {CHAT_CLIENTS} parallel clients, one screenshot "
        "and 16 tokens each, "
        f"model `{engine.info.name}`: {len(answered)} answered, {refused} refused with 429 "
        "(8 may wait while one is answered). Latency of the answered ones, by place in the "
        "queue: " + ", ".join(f"{t:.2f}" for t in answered) + " s "
        f"(first {answered[0]:.2f} s, median {statistics.median(answered):.2f} s, last "
        f"{answered[-1]:.2f} s): the engine answers one request at a time, so the n-th waits "
        "for the n-1 before it.",
    ]
    publish(HEADING, "\n".join(lines), args.write)


if __name__ == "__main__":
    main()
