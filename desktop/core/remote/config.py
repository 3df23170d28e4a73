"""Which server, with which key: checked before any byte is sent, kept in the data folder.

The address and model name go in `server.json`; the key in `server.key`, readable by this user
only (0600), never logged and never shown in full. Plain `http://` is for this computer and
private networks: elsewhere the key and the images would cross the internet in clear, so it
needs the user's explicit `insecure=True` ("I understand").
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from desktop.core import atomic
from desktop.core.bounded_json import read_json_object
from desktop.core.remote.errors import RemoteError

SETTINGS_FILE = "server.json"
KEY_FILE = "server.key"
ENV_URL = "DESKLENS_SERVER"
ENV_KEY = "DESKLENS_SERVER_KEY"
ENV_MODEL = "DESKLENS_SERVER_MODEL"
MAX_KEY_CHARS = 4096


@dataclass(frozen=True)
class ServerConfig:
    url: str  # the API's base, e.g. http://10.0.0.5:8000/v3 (OVMS) or http://127.0.0.1:8765/v1
    api_key: str = ""
    model: str = ""  # "" = the server's only (or first) model
    insecure: bool = False  # plain http:// to a public address, asked for by the user

    def __repr__(self) -> str:  # the key never reaches a log or a traceback
        key = "…" if self.api_key else ""
        return f"ServerConfig(url={self.url!r}, api_key={key!r}, model={self.model!r})"

    @property
    def host(self) -> str:
        """What the window and the stats say answered: the server's host (and port)."""
        return urlsplit(self.url).netloc.rpartition("@")[2]

    def with_model(self, model: str) -> ServerConfig:
        return replace(self, model=model)


def normalized_url(url: str, *, insecure: bool = False) -> str:
    """The API base URL to call (`/v1` added to a bare host), or RemoteError in one sentence."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    not_an_address = RemoteError(f"{url!r} is not a server address (e.g. http://10.0.0.5:8000/v3).")
    try:
        parts = urlsplit(_printable(text))
        parts.hostname  # noqa: B018  (an unclosed "[" raises only here)
    except ValueError:
        raise not_an_address from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise not_an_address
    if parts.username or parts.password:
        raise RemoteError("Put the key in the key field, not in the server address.")
    if parts.query or parts.fragment:
        raise RemoteError("A server address has no ?query or #part; give the API's base URL.")
    try:
        parts.port  # noqa: B018  (raises on a port out of range)
    except ValueError:
        raise RemoteError(f"{url!r} has a port that is not a number from 1 to 65535.") from None
    if parts.scheme == "http" and not insecure and not is_local_address(parts.hostname):
        raise RemoteError(
            f"{parts.hostname} is not on this computer or a private network, so plain http:// "
            "would send your images and key across the internet unencrypted. Use https://, "
            "or allow plain http explicitly (--allow-http; in Settings, its checkbox)."
        )
    path = parts.path.rstrip("/") or "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _printable(text: str) -> str:
    """`text`, or ValueError for a control character or a space (the HTTP client would fail
    on it with a traceback of its own)."""
    if not text.isprintable() or any(c.isspace() for c in text):
        raise ValueError("not printable")
    return text


def is_local_address(host: str) -> bool:
    """Loopback, private (RFC 1918, unique-local, link-local) or a single-label/.local name."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith((".localhost", ".local", ".lan", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        if "." not in name:  # a machine on the LAN by its bare name
            return True
        return _resolves_privately(name)
    return address.is_private or address.is_loopback or address.is_link_local


def _resolves_privately(name: str) -> bool:
    """A name whose every address is private (a company DNS for its own servers)."""
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos}
    return bool(addresses) and all(a.is_private or a.is_loopback for a in addresses)


def check_config(config: ServerConfig) -> ServerConfig:
    """The config with its URL normalized; RemoteError when it cannot be used."""
    if len(config.api_key) > MAX_KEY_CHARS or any(c in config.api_key for c in "\r\n"):
        raise RemoteError("The server key is not a single line of text.")
    return replace(config, url=normalized_url(config.url, insecure=config.insecure))


# --- kept in the data folder ----------------------------------------------------------------


def load_saved(data_dir: Path, *, repair: bool = True) -> ServerConfig | None:
    """The server saved in Settings (key included), or None when none is saved. `repair`
    tightens a key file's loose rights (a write: not on the GUI thread)."""
    try:
        data = read_json_object(data_dir / SETTINGS_FILE, max_bytes=64_000)
    except (OSError, ValueError):
        return None
    url = data.get("url")
    if not isinstance(url, str) or not url:
        return None
    model = data.get("model") if isinstance(data.get("model"), str) else ""
    key = load_key(data_dir, repair=repair)
    return ServerConfig(url, key, str(model), bool(data.get("insecure", False)))


def save(data_dir: Path, config: ServerConfig) -> None:
    """Writes the address (server.json) and the key (server.key, 0600); OSError if it cannot."""
    import json

    fields = {"url": config.url, "model": config.model, "insecure": config.insecure}
    atomic.write_text(data_dir / SETTINGS_FILE, json.dumps(fields, indent=2) + "\n", mkdir=True)
    save_key(data_dir, config.api_key)


def load_key(data_dir: Path, *, repair: bool = True) -> str:
    path = data_dir / KEY_FILE
    try:
        key = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    if repair and os.name == "posix" and path.stat().st_mode & 0o077:
        path.chmod(0o600)  # copied or restored with looser rights
    return key[:MAX_KEY_CHARS]


def save_key(data_dir: Path, key: str) -> None:
    path = data_dir / KEY_FILE
    if not key:
        path.unlink(missing_ok=True)
        return
    atomic.write_bytes(path, f"{key}\n".encode(), mkdir=True, private=True)


def from_environment(
    url: str | None,
    data_dir: Path,
    model: str | None = None,
    environ: dict[str, str] | None = None,
    *,
    insecure: bool = False,
) -> ServerConfig | None:
    """The server a command should use: `url` (--server) or $DESKLENS_SERVER; the key from
    $DESKLENS_SERVER_KEY, or the one saved in Settings for that same server; None when no
    server is asked for."""
    env = os.environ if environ is None else environ
    url = url or env.get(ENV_URL) or None
    if url is None:
        return None
    saved = load_saved(data_dir)
    same = saved is not None and saved.url.rstrip("/") == url.strip().rstrip("/")
    # The saved key goes only to the server it was saved for, never to another address.
    key = env.get(ENV_KEY) or (saved.api_key if same and saved else "") or ""
    model = model or env.get(ENV_MODEL) or (saved.model if same and saved else "") or ""
    insecure = insecure or bool(same and saved and saved.insecure)
    return check_config(ServerConfig(url, key, model, insecure))
