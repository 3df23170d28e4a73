"""A stand-in for the Hugging Face hub on 127.0.0.1, for the real huggingface_hub client.

Serves folders as model repos in the hub's layout: `GET /api/models/{repo}[/revision/{rev}]`
(the listing with sizes, git blob ids and LFS sha256) and `HEAD/GET /{repo}/resolve/{rev}/
{file}` (ETag / X-Linked-Etag, X-Repo-Commit, ranges). Every request is logged. A file can be
served damaged (`corrupt`), or cut off after some bytes (`stall`: the handler sets
`stalled`, waits for `release`, then drops the connection) so a test can kill the client
mid-file without guessing at timings.

Misbehaviours of a hostile or broken hub: a test may add files under any name to a repo
(`hub.repos[id].files[name] = data`: absolute, `..`, backslashes are listed as given);
`resize` sends a GET body longer or shorter than the size the listing and HEAD announce;
`redirect` answers a file's GET with a 302 to other bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO_ID = "OpenVINO/Tiny-Qwen3-VL-int8-ov"
# Every file of the tiny model is smaller than the 1 MiB the download writes at a time, so a
# larger file stands in for the real model's gigabytes: cut off mid-way, it keeps whole MiBs.
LARGE_FILE = "large_weights.bin"
LARGE_BYTES = 3 << 20
LFS_MIN_BYTES = 10_000  # the hub keeps big files in LFS (sha256 listed); small ones in git


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # file name for resolve requests, else the URL path
    range: str | None


@dataclass
class Repo:
    folder: Path
    files: dict[str, bytes] = field(default_factory=dict)

    @classmethod
    def of(cls, folder: Path, skip: tuple[str, ...] = ("desklens.json",)) -> Repo:
        files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in skip
        }
        return cls(folder, files)


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


class HubServer:
    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.log: list[Request] = []
        self.corrupt: set[str] = set()
        self.stall: tuple[str, int] | None = None  # (file, bytes sent before stalling)
        self.stalled = threading.Event()
        self.release = threading.Event()
        self.bytes_per_chunk: int | None = None
        self.resize: dict[str, int] = {}  # file -> bytes added (or, negative, cut) on GET
        self.redirect: dict[str, bytes] = {}  # file -> the bytes a GET is redirected to
        # file -> how a GET of it misbehaves: "bare 302" (no Location), "huge header" (1 MB)
        self.odd: dict[str, str] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, repo_id: str, folder: Path) -> Repo:
        self.repos[repo_id] = Repo.of(folder)
        return self.repos[repo_id]

    def gets(self, name: str) -> list[Request]:
        return [r for r in self.log if r.method == "GET" and r.path == name]

    def start(self) -> HubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def listing(self, repo_id: str) -> dict:
        siblings = []
        for name, data in self.repos[repo_id].files.items():
            entry = {"rfilename": name, "size": len(data), "blobId": git_blob_id(data)}
            if len(data) >= LFS_MIN_BYTES:
                sha = hashlib.sha256(data).hexdigest()
                entry["lfs"] = {"size": len(data), "sha256": sha, "pointerSize": 134}
            siblings.append(entry)
        return {"id": repo_id, "modelId": repo_id, "sha": COMMIT, "siblings": siblings}

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet: the test reads hub.log instead
                pass

            def _missing(self, code: str) -> None:
                body = json.dumps({"error": code}).encode()
                self.send_response(404)
                self.send_header("X-Error-Code", code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _serve(self) -> None:
                path = unquote(urlsplit(self.path).path)
                if path.startswith("/elsewhere/"):  # where `redirect` sends a client
                    hub.log.append(Request(self.command, path, self.headers.get("Range")))
                    return self._send_plain(hub.redirect[path[len("/elsewhere/") :]])
                api = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/[^/]+)?", path)
                resolve = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
                name = resolve[3] if resolve else path
                hub.log.append(Request(self.command, name, self.headers.get("Range")))
                if api:
                    if api[1] not in hub.repos:
                        return self._missing("RepoNotFound")
                    body = json.dumps(hub.listing(api[1])).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    return self.wfile.write(body) if self.command == "GET" else None
                if not resolve or resolve[1] not in hub.repos:
                    return self._missing("RepoNotFound")
                data = hub.repos[resolve[1]].files.get(name)
                if data is None:
                    return self._missing("EntryNotFound")
                self._send_file(name, data)

            def _send_plain(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command == "GET":
                    self.wfile.write(data)

            def _misbehave(self, how: str) -> None:
                self.send_response(302 if how == "bare 302" else 200)
                if how == "huge header":
                    self.send_header("X-Padding", "x" * 1_000_000)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _redirect(self, name: str) -> None:
                self.send_response(302)
                self.send_header("Location", f"/elsewhere/{name}")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send_file(self, name: str, data: bytes) -> None:
                if name in hub.corrupt:
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
                if self.command == "GET" and name in hub.redirect:
                    return self._redirect(name)
                if self.command == "GET" and name in hub.odd:
                    return self._misbehave(hub.odd[name])
                if self.command == "GET" and name in hub.resize:
                    extra = hub.resize[name]
                    data = data + b"\0" * extra if extra > 0 else data[: len(data) + extra]
                start = 0
                wanted = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
                status = 200
                if wanted and int(wanted[1]) < len(data):
                    start, status = int(wanted[1]), 206
                self.send_response(status)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("Accept-Ranges", "bytes")
                if len(data) >= LFS_MIN_BYTES:
                    sha = hashlib.sha256(hub.repos_data_sha(name)).hexdigest()
                    self.send_header("X-Linked-Etag", f'"{sha}"')
                    self.send_header("X-Linked-Size", str(len(data)))
                self.send_header("ETag", f'"{git_blob_id(data)}"')
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                if self.command == "HEAD":
                    return
                body = data[start:]
                if hub.stall and hub.stall[0] == name and start == 0:
                    self.wfile.write(body[: hub.stall[1]])
                    hub.stalled.set()
                    hub.release.wait()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            do_GET = do_HEAD = _serve

        return Handler

    def repos_data_sha(self, name: str) -> bytes:
        """The true content of `name` (the published checksum is of the undamaged file)."""
        for repo in self.repos.values():
            if name in repo.files:
                return repo.files[name]
        raise KeyError(name)


@contextlib.contextmanager
def serving() -> Iterator[HubServer]:
    hub = HubServer().start()
    try:
        yield hub
    finally:
        hub.stop()


def hub_env(endpoint: str, home: Path) -> dict[str, str]:
    """A user's environment with the hub at `endpoint`: online, its own HF cache and token."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "DESKLENS_"))}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(home / "hf"), HF_HUB_DISABLE_TELEMETRY="1")
    env.update(DESKLENS_DATA_DIR=str(home / "data"), PYTHONPATH=str(ROOT))
    return env


def download_command(models: Path, *extra: str, repo: str = REPO_ID) -> list[str]:
    return [
        sys.executable, "-m", "desktop", "models", "--download", repo,
        "--models-dir", str(models), *extra,
    ]  # fmt: skip


def run_download(models: Path, env: dict, *extra: str, repo: str = REPO_ID):
    return subprocess.run(
        download_command(models, *extra, repo=repo),
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
    )  # fmt: skip
