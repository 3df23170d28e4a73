#!/usr/bin/env python3
"""A model server as the engine: first token and decode speed through the remote engine against
`desklens serve --api` on this same machine, beside the local engine, in one run.

    python bench/remote_bench.py --write     # Qwen3-VL-2B shape, random weights (~10 min here)
    python bench/remote_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR  # seconds

Both sides run the same converted model with the same engine settings; the server is the real
`desklens serve --api` in its own process, the client the app's `RemoteEngine` through the
conversation service, in a process that also holds the local engine: the two take turns
screenshot by screenshot (which goes first alternates), so both meet the same machine. What the
remote path adds is the HTTP and serialisation cost (the PNG and base64 of each image, JSON,
server-sent events) and what a stateless server re-reads: every request sends the conversation
again, and `serve --api` reuses its KV state when the conversation matches; another server may
not. Each row: the median over IMAGES screenshots, all different (no image cache helps).
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import children  # noqa: E402  (bench/ is on sys.path)
import smoke  # noqa: E402
import vlm_bench  # noqa: E402
from results import publish  # noqa: E402

HEADING = "## A model server as the engine: remote vs local"
QUESTION = "What is the total amount?"
FOLLOW_UP = "And the date?"
NEW_TOKENS = 32
IMAGES = 6
SIZE = "1280x720"


def _turn_pair(engine, image, settings) -> dict[str, float]:
    """A new chat's first question on `image` (cold), then a text follow-up."""
    from desktop.core.conversation import AskRequest, ConversationService, FollowUp

    service = ConversationService(engine)
    cold = service.ask(AskRequest(QUESTION, (image,), settings, FollowUp())).answer
    prompt = _prompt_tokens(engine, cold)
    follow = service.ask(AskRequest(FOLLOW_UP, (), settings, FollowUp())).answer
    assert cold.ok and follow.ok, (cold.error, follow.error)
    return {
        "cold_ttft": cold.stats.ttft_s,
        "follow_ttft": follow.stats.ttft_s,
        "tok_s": cold.stats.tokens_per_s,
        "total": cold.stats.total_s,
        "prompt_tokens": prompt,
    }


def _prompt_tokens(engine, answer) -> int:
    """The whole prompt the model read: the server's usage says it; this computer's engine
    feeds less (the prefix it holds), so its last sequence says it."""
    sequence = getattr(engine, "last_sequence", None)
    return len(sequence) if sequence is not None else answer.stats.input_tokens


def child_pair(model: str, url: str, token: str, size: str, images: str, tokens: str) -> dict:
    """This computer's engine and the remote one in turns, screenshot by screenshot (which goes
    first alternates), so that both see the same machine at the same time."""
    from desktop.core.chat import GenerationSettings
    from desktop.core.engine import VLMEngine
    from desktop.core.images import load_image
    from desktop.core.remote.config import ServerConfig
    from desktop.core.remote.engine import RemoteEngine
    from desktop.core.remote.messages import data_url

    engines = {
        "local": VLMEngine.load(model),
        "remote": RemoteEngine.connect(ServerConfig(url, token)),
    }
    settings = GenerationSettings(max_new_tokens=int(tokens), ignore_eos=True)
    rows: dict[str, dict[str, list[float]]] = {"local": {}, "remote": {}}
    shots = [
        vlm_bench.document_screenshot(vlm_bench.SIZES[size], v) for v in range(int(images) + 1)
    ]
    for index, shot in enumerate(shots):
        order = ("local", "remote") if index % 2 else ("remote", "local")
        for side in order:
            measured = _turn_pair(engines[side], load_image(shot), settings)
            if index == 0:
                continue  # the warm-up: first-call costs on both sides
            for key, value in measured.items():
                rows[side].setdefault(key, []).append(value)
    result = {side: {k: statistics.median(v) for k, v in row.items()} for side, row in rows.items()}
    for side, row in rows.items():  # the fastest: the spread of one call is wide on 2 cores
        result[side]["cold_fastest"] = min(row["cold_ttft"])
        result[side]["cold_slowest"] = max(row["cold_ttft"])
    image = load_image(vlm_bench.document_screenshot(vlm_bench.SIZES[size], 99))
    started = time.perf_counter()
    encoded = data_url(image)
    result["remote"]["encode_s"] = time.perf_counter() - started
    result["remote"]["encoded_mb"] = len(encoded) / 1e6
    return result


CHILDREN = {"pair": child_pair}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(model: Path, data_dir: Path) -> tuple[subprocess.Popen, str, str]:
    """`desklens serve --api` as a user starts it; (process, base URL, token) once it is ready."""
    port = _free_port()
    env = {**os.environ, "DESKLENS_DATA_DIR": str(data_dir)}
    command = [sys.executable, "-m", "desktop", "serve", "--api", "--model", str(model),
               "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stderr is not None
    for line in server.stderr:  # its progress lines; "API ready at …" once it listens
        if "API ready" in line:
            break
    else:
        raise SystemExit(f"desklens serve --api did not start (exit {server.wait()})")
    # Keep reading what it says, so a full pipe never stalls it.
    threading.Thread(target=server.stderr.read, daemon=True).start()
    token = (data_dir / "api.token").read_text().strip()
    return server, f"http://127.0.0.1:{port}/v1", token


def report(
    local: dict, remote: dict, command: str, model: str, size: str, images: int, tokens: int
) -> str:
    def row(label: str, key: str, unit: str = "s", digits: int = 2) -> str:
        near, far = local[key], remote[key]
        return (f"| {label} | {near:.{digits}f} {unit} | {far:.{digits}f} {unit} | "
                f"{far - near:+.{digits}f} {unit} | {far / near:.2f}x |")  # fmt: skip

    return "\n".join([
        HEADING,
        "",
        f"Command: `{command}` ({model}, {os.cpu_count()} cores, one run). The server is "
        "`desklens serve --api` on 127.0.0.1 in its own process; the client is the app's "
        f"remote engine, in the same process as the local engine; the two take turns "
        f"screenshot by screenshot (which goes first alternates), after one warm-up each. "
        f"{size} document screenshots, {tokens} new tokens; each row the median over {images} "
        "screenshots. Measured end to end on each side; the difference column is computed "
        "from the two.",
        "",
        "| | this computer | through the server | difference | ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
        row("a new screenshot's first question: first token", "cold_ttft"),
        row("the same, fastest of the screenshots", "cold_fastest"),
        row("a text follow-up on it: first token", "follow_ttft"),
        row("decode speed after the first token", "tok_s", "tok/s", 1),
        row(f"the whole first answer ({tokens} tokens)", "total"),
        row("the first question's prompt (tokens; the same model input)", "prompt_tokens", "", 0),
        "",
        f"A new screenshot's first token ranged {local['cold_fastest']:.2f}–"
        f"{local['cold_slowest']:.2f} s on this computer and {remote['cold_fastest']:.2f}–"
        f"{remote['cold_slowest']:.2f} s through the server: {_spread_words(local, remote)} "
        f"Sending one {size} screenshot: PNG + base64 {remote['encode_s'] * 1000:.0f} ms on the "
        f"client, {remote['encoded_mb']:.2f} MB in the request. On a shared server the first "
        "token also waits for other users' requests; these figures are one user.",
    ])  # fmt: skip


def _spread_words(local: dict, remote: dict) -> str:
    """Whether the call-to-call spread of a cold first token is wider than the two medians'
    difference (then that difference is within the noise of one run)."""
    spread = max(side["cold_slowest"] - side["cold_fastest"] for side in (local, remote))
    gap = abs(remote["cold_ttft"] - local["cold_ttft"])
    width = "wider" if spread > gap else "narrower"
    return f"a spread of {spread:.2f} s, {width} than the {gap:.2f} s between the medians."


def main() -> int:
    if children.child_main(CHILDREN):
        return 0
    parser = smoke.model_bench_parser(__doc__)
    args = parser.parse_args()
    smoke.check_smoke(args)
    _checkpoint, ir = smoke.models(args, parser, vlm_bench.prepare_models)
    images, tokens = (1, 4) if args.smoke else (IMAGES, NEW_TOKENS)
    with tempfile.TemporaryDirectory() as data:
        server, url, token = start_server(ir, Path(data))
        try:
            pair = children.run_child(__file__, "pair", ir, url, token, SIZE, images, tokens)
        finally:
            server.terminate()
            server.wait(60)
    if "error" in pair:
        raise SystemExit(f"the run failed: {pair['error']}")
    local, remote = pair["local"], pair["remote"]
    command = "python bench/remote_bench.py" + (" --smoke" if args.smoke else " --write")
    model = "the tests' tiny model" if args.smoke else "Qwen3-VL-2B shape, random weights, INT8"
    publish(HEADING, report(local, remote, command, model, SIZE, images, tokens), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
