#!/usr/bin/env python3
"""Send -> first token with the question's history write in front of the answer (the order
before issue 58) and beside it (now).

    python bench/send_write_bench.py --write [--images A.png B.png]   # 2B shape (~5 min here)
    python bench/send_write_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR

The Qwen3-VL-2B shape with random INT8 weights (bench/vlm_bench.py's, built once). Per round
and picture: a fresh history folder and a new chat; the picture read ahead with
`service.prepare`, as the app does while the question is typed; then Send, timed to the first
token (the call to the engine's start, timed, plus the engine's own first-token time).
"Before" creates the chat and stores the question with its picture (PNG encode,
two disk syncs) and then asks it as stored, the order of the service before issue 58; "now" is
the service's own ask, which writes beside the answer. The two alternate in one process;
medians. The write alone is timed too. A 1280x720 document screenshot always; `--images` adds
real screenshots at their own size.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
import vlm_bench  # noqa: E402
from results import publish  # noqa: E402
from smoke import check_smoke, model_bench_parser, models  # noqa: E402

HEADING = "## Send -> first token: the question written beside the answer (issue 58)"
QUESTION = "What is the total amount?"
ROUNDS, SMOKE_ROUNDS = 5, 1


def first_token(service, engine, request) -> float:
    """Seconds from the call to the engine's first token: the call to the engine's start,
    timed here, plus the engine's own time to its first token (`AnswerStats.ttft_s`). Random
    weights make the first streamed text a poor mark: their first tokens may print nothing."""
    started = time.perf_counter()
    entered: list[float] = []
    ask = engine.ask

    def timed_ask(*args, **kwargs):
        entered.append(time.perf_counter() - started)
        return ask(*args, **kwargs)

    engine.ask = timed_ask
    try:
        result = service.ask(request)
    finally:
        del engine.ask  # the class's own again
    assert result.answer.ok, result.answer.error
    return entered[0] + result.answer.stats.ttft_s


def one_send(engine, image, before: bool) -> tuple[float, float]:
    """(Send -> first token, of which the write in front) for a new chat in a fresh history."""
    from desktop.core.chat import GenerationSettings
    from desktop.core.conversation import AskRequest, ConversationService, StoredChat
    from desktop.core.conversation.models import PrepareRequest
    from desktop.core.history import HistoryStore
    from desktop.core.history.handle import ChatHandle

    settings = GenerationSettings(max_new_tokens=4, ignore_eos=True)
    with tempfile.TemporaryDirectory() as folder, HistoryStore(Path(folder)) as store:
        service = ConversationService(engine, store)
        engine.reset()
        ready = service.prepare(PrepareRequest((image,), settings))
        assert ready is not None and ready.status == "ready", ready
        chat = ChatHandle()
        started = time.perf_counter()
        write = 0.0
        if before:
            asked = store.add_message(chat.resolve(store), "user", QUESTION, [image])
            write = time.perf_counter() - started
            where = StoredChat(chat, user_message_id=asked.id)
        else:
            where = StoredChat(chat)
        request = AskRequest(QUESTION, (image,), settings, where)
        return write + first_token(service, engine, request), write


def measure(model: Path, images: list, rounds: int) -> list[dict]:
    from desktop.core.engine import EngineConfig, VLMEngine

    engine = VLMEngine.load(model, EngineConfig())
    one_send(engine, images[0], False)  # warm-up: compiled shapes, the first encode
    rows = []
    for image in images:
        times: dict[str, list[float]] = {"before": [], "now": [], "write": []}
        for round_ in range(rounds):
            for before in (True, False) if round_ % 2 == 0 else (False, True):
                total, write = one_send(engine, image, before)
                times["before" if before else "now"].append(total)
                if before:
                    times["write"].append(write)
        medians = {key: statistics.median(values) for key, values in times.items()}
        rows.append({"name": image.name, "size": image.size, **medians})
    return rows


def table(rows: list[dict]) -> list[str]:
    lines = [
        "| picture | size | write in front (before) | first token, before | first token, now "
        "| now / before |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['size'][0]}x{r['size'][1]} | {r['write'] * 1000:.0f} ms "
            f"| {r['before'] * 1000:.0f} ms | {r['now'] * 1000:.0f} ms "
            f"| **{r['now'] / r['before']:.2f}x** |"
        )
    return lines


def main() -> int:
    parser = model_bench_parser(__doc__)
    parser.add_argument("--images", nargs="*", type=Path, default=[], help="real screenshots")
    args = parser.parse_args()
    check_smoke(args)
    _, model = models(args, parser, vlm_bench.prepare_models)
    from desktop.core.images import load_image

    images = [load_image(vlm_bench.document_screenshot((1280, 720)), name="document 1280x720")]
    images += [load_image(path) for path in args.images]
    rounds = SMOKE_ROUNDS if args.smoke else ROUNDS
    rows = measure(model, images, rounds)
    command = " ".join(["python bench/send_write_bench.py", *sys.argv[1:]])
    lines = [HEADING, "", f"`{command}` ({rounds} rounds, medians; read ahead, then Send)", ""]
    publish(HEADING, "\n".join([*lines, *table(rows), ""]), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
