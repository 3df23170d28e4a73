#!/usr/bin/env python3
"""A model server as the engine: first token and decode speed through the remote engine against
`desklens serve --api` on this same machine, beside the local engine, in one run.

    python bench/remote_bench.py --write     # Qwen3-VL-2B shape, random weights (~10 min here)
    python bench/remote_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR  # seconds

Both sides run the same converted model with the same engine settings; the server is the real
`desklens serve --api` in its own process, the client the app's `RemoteEngine` through the
conversation service, in another. Each side in turn has the machine to itself (the server idles
while the local engine runs). What the remote path adds is the HTTP and serialisation cost
(the PNG and base64 of each image, JSON, server-sent events) and what a stateless server
re-reads: every request sends the conversation again, and `serve --api` reuses its KV state
when the conversation matches; another server may not. Each row: the median of IMAGES runs on
different screenshots (the image caches cannot help), single runs each.
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
IMAGES = 3
SIZE = "1280x720"


def _turns(engine, size: str, images: int, tokens: int, first: int = 1) -> dict:
    """Per screenshot: a new chat's first question on it (cold), then a text follow-up."""
    from desktop.core.chat import GenerationSettings
    from desktop.core.conversation import AskRequest, ConversationService
    from desktop.core.images import load_image

    settings = GenerationSettings(max_new_tokens=tokens, ignore_eos=True)
    rows: dict[str, list[float]] = {"cold_ttft": [], "follow_ttft": [], "tok_s": [], "total": []}
    for variant in range(first, first + images):
        image = load_image(vlm_bench.document_screenshot(vlm_bench.SIZES[size], variant))
        service = ConversationService(engine)
        first = service.ask(AskRequest(QUESTION, (image,), settings, follow_up=True)).answer
        second = service.ask(AskRequest(FOLLOW_UP, (), settings, follow_up=True)).answer
        assert first.ok and second.ok, (first.error, second.error)
        rows["cold_ttft"].append(first.stats.ttft_s)
        rows["follow_ttft"].append(second.stats.ttft_s)
        rows["tok_s"].append(first.stats.tokens_per_s)
        rows["total"].append(first.stats.total_s)
    return {key: statistics.median(values) for key, values in rows.items()}


def child_local(model: str, size: str, images: str, tokens: str) -> dict:
    from desktop.core.engine import VLMEngine

    engine = VLMEngine.load(model)
    _turns(engine, size, 1, 2, first=100)  # warm: first-call costs; another screenshot
    return _turns(engine, size, int(images), int(tokens))


def child_remote(url: str, token: str, size: str, images: str, tokens: str) -> dict:
    from desktop.core.images import load_image
    from desktop.core.remote.config import ServerConfig
    from desktop.core.remote.engine import RemoteEngine
    from desktop.core.remote.messages import data_url

    engine = RemoteEngine.connect(ServerConfig(url, token))
    _turns(engine, size, 1, 2, first=100)
    result = _turns(engine, size, int(images), int(tokens))
    image = load_image(vlm_bench.document_screenshot(vlm_bench.SIZES[size], 99))
    started = time.perf_counter()
    encoded = data_url(image)
    result["encode_s"] = time.perf_counter() - started
    result["encoded_mb"] = len(encoded) / 1e6
    engine.close()
    return result


CHILDREN = {"local": child_local, "remote": child_remote}


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
        f"remote engine. {size} document screenshots, "
        f"{tokens} new tokens; each row the median over {images} screenshots. Measured end to "
        "end on each side; the difference column is computed from the two.",
        "",
        "| | this computer | through the server | difference | ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
        row("a new screenshot's first question: first token", "cold_ttft"),
        row("a text follow-up on it: first token", "follow_ttft"),
        row("decode speed after the first token", "tok_s", "tok/s", 1),
        row(f"the whole first answer ({tokens} tokens)", "total"),
        "",
        f"Sending one {size} screenshot: PNG + base64 {remote['encode_s'] * 1000:.0f} ms on the "
        f"client, {remote['encoded_mb']:.2f} MB in the request. On a shared server the first "
        "token also waits for other users' requests; these figures are one user.",
    ])  # fmt: skip


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
            remote = children.run_child(__file__, "remote", url, token, SIZE, images, tokens)
            local = children.run_child(__file__, "local", ir, SIZE, images, tokens)
        finally:
            server.terminate()
            server.wait(60)
    for side, result in (("local", local), ("remote", remote)):
        if "error" in result:
            raise SystemExit(f"the {side} run failed: {result['error']}")
    command = "python bench/remote_bench.py" + (" --smoke" if args.smoke else " --write")
    model = "the tests' tiny model" if args.smoke else "Qwen3-VL-2B shape, random weights, INT8"
    publish(HEADING, report(local, remote, command, model, SIZE, images, tokens), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
