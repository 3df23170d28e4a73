"""Download a ready-made OpenVINO model folder from the Hugging Face hub (or a mirror given by
HF_ENDPOINT), resumably, then install it like an import.

huggingface_hub does the HTTP (proxies, tokens for gated repos, HF_ENDPOINT, HF_HUB_OFFLINE,
Range requests). Files go to a hidden `.desklens-download-<name>` folder beside the target; a
file cut off by Cancel, a crash, kill -9 or a lost connection stays there as `.incomplete` and
the next try continues it by range, while finished files are not fetched again. This is the
only code in DeskLens that opens a network connection, and only when the user asks.

The listing is the server's word: every file name in it is checked (names.py) when the
Listing is made, before anything touches the disk, and every path is built with
`names.inside`; the staging folder is made with `staging.own_folder` (no links followed).
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.core.manifest import REQUIRED_FILES, sha256_file
from desktop.core.model_setup.errors import ModelRejected, SetupError
from desktop.core.model_setup.hub_errors import explain
from desktop.core.model_setup.install import (
    Installed,
    Say,
    default_models_dir,
    finish_ir_folder,
    prepare_target,
)
from desktop.core.model_setup.names import check_name, inside
from desktop.core.model_setup.progress import Progress, ProgressMeter
from desktop.core.model_setup.staging import check_free_space, download_folder, own_folder

DEFAULT_REPO = "OpenVINO/Qwen3-VL-2B-Instruct-int8-ov"
# huggingface_hub writes a download in chunks of this size: a cut-off file keeps every whole
# chunk, so it is also how much a kill can lose (its default, 10 MB, made progress jumpy).
CHUNK_BYTES = 1 << 20
POLL_S = 0.5  # how often the bytes on disk are counted for the progress report
FREE_MARGIN = 64 << 20
BOOKKEEPING = ".cache"  # huggingface_hub's metadata and .incomplete files inside local_dir

OnProgress = Callable[[Progress], None]


@dataclass(frozen=True)
class RemoteFile:
    name: str
    size: int
    sha256: str | None  # of the content, for LFS files
    blob_id: str | None  # git blob sha1, for the others


@dataclass(frozen=True)
class Listing:
    repo: str
    revision: str  # the commit: every file comes from the same one
    files: tuple[RemoteFile, ...]

    def __post_init__(self) -> None:  # a listing with an unsafe name cannot exist
        for remote in self.files:
            check_name(remote.name, self.repo)
            if remote.size < 0:
                raise ModelRejected(f"{self.repo} lists {remote.name!r} with a negative size.")

    @property
    def total(self) -> int:
        return sum(f.size for f in self.files)


def target_name(repo: str) -> str:
    return repo.rstrip("/").split("/")[-1] or "model"


def endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def _fetch_failure(exc: BaseException, repo: str, where: Path) -> BaseException:
    return explain(exc, repo=repo, endpoint=endpoint(), where=str(where)) or exc


def list_repo(repo: str, revision: str | None = None) -> Listing:
    """The repo's files with sizes and checksums, at one commit (one API call)."""
    from huggingface_hub import HfApi

    info = HfApi().model_info(repo, revision=revision, files_metadata=True)
    files = []
    for sibling in info.siblings or []:
        name = check_name(sibling.rfilename, repo)  # refused, not skipped, when unsafe
        if any(part.startswith(".") for part in name.split("/")):
            continue  # .gitattributes and the like: repository plumbing, not the model
        lfs = sibling.lfs
        sha256 = lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)
        files.append(RemoteFile(name, int(sibling.size or 0), sha256, sibling.blob_id))
    files.sort(key=lambda f: (f.size, f.name))  # configs first: a bad repo fails in seconds
    return Listing(repo, info.sha or revision or "main", tuple(files))


def check_listing(listing: Listing) -> None:
    names = {f.name for f in listing.files}
    missing = [name for name in REQUIRED_FILES if name not in names]
    if "openvino_language_model.xml" in missing:
        raise ModelRejected(
            f"{listing.repo} holds no OpenVINO model (no openvino_language_model.xml): "
            f"DeskLens downloads converted folders such as {DEFAULT_REPO}; a Hugging Face "
            "checkpoint needs convert.py."
        )
    if missing:
        raise ModelRejected(f"{listing.repo} is incomplete: it has no {missing[0]}.")


def bytes_on_disk(folder: Path, listing: Listing) -> int:
    """Finished files plus the parts of cut-off ones."""
    done = 0
    for remote in listing.files:
        path = inside(folder, remote.name)
        if path.is_file():
            done += path.stat().st_size
    partial = folder / BOOKKEEPING
    if partial.is_dir() and not partial.is_symlink():
        done += sum(p.stat().st_size for p in partial.rglob("*.incomplete") if p.is_file())
    return done


def _git_blob_sha1(path: Path, size: int) -> str:
    digest = hashlib.sha1(f"blob {size}\0".encode())
    with path.open("rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def damaged_files(folder: Path, listing: Listing) -> list[str]:
    """Files whose size or checksum differs from the listing."""
    bad = []
    for remote in listing.files:
        path = inside(folder, remote.name)
        if not path.is_file() or path.stat().st_size != remote.size:
            bad.append(remote.name)
        elif remote.sha256:
            if sha256_file(path) != remote.sha256:
                bad.append(remote.name)
        elif remote.blob_id and _git_blob_sha1(path, remote.size) != remote.blob_id:
            bad.append(remote.name)
    return bad


class _Reporter:
    """Counts the bytes on disk every POLL_S in a thread and reports them."""

    def __init__(self, folder: Path, listing: Listing, on_progress: OnProgress | None) -> None:
        self.folder, self.listing, self.on_progress = folder, listing, on_progress
        self.meter = ProgressMeter(listing.total)
        self.file = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="download-progress", daemon=True)

    def report(self) -> None:
        if self.on_progress is not None:
            done = bytes_on_disk(self.folder, self.listing)
            self.on_progress(self.meter.update(done, self.file))

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            self.report()

    def __enter__(self) -> _Reporter:
        self.report()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        if exc_info[0] is None:
            self.file = ""
            self.report()


class _WrongSize(Exception):
    """The server sent a file of another size than it announced (huggingface_hub's
    "Consistency check failed"): other bytes, not a network cut (that one is resumed)."""


def _get(listing: Listing, folder: Path, name: str, *, anew: bool = False) -> None:
    from huggingface_hub import hf_hub_download

    inside(folder, name)  # checked again right before huggingface_hub writes it
    try:
        hf_hub_download(
            listing.repo, name, revision=listing.revision, local_dir=folder, force_download=anew
        )
    except OSError as exc:
        if "Consistency check failed" in str(exc):
            raise _WrongSize(name) from exc
        raise


def _fetch(listing: Listing, folder: Path, names: list[str], reporter: _Reporter) -> None:
    from huggingface_hub import constants

    constants.DOWNLOAD_CHUNK_SIZE = CHUNK_BYTES
    # Plain HTTP: resumable .incomplete files we can count; the Xet client keeps its own cache.
    constants.HF_HUB_DISABLE_XET = True
    for name in names:
        reporter.file = name
        try:
            _get(listing, folder, name)
        except _WrongSize:  # once more from the start (no resume of the wrong bytes)
            _refetch(listing, folder, [name], reporter)


def _refetch(listing: Listing, folder: Path, names: list[str], reporter: _Reporter) -> None:
    """Fetches damaged files anew (a transfer error, or a file we adapted on an earlier try)."""
    for name in names:
        reporter.file = name
        inside(folder, name).unlink(missing_ok=True)
        try:
            _get(listing, folder, name, anew=True)
        except _WrongSize:
            raise ModelRejected(
                f"{name} from {listing.repo} arrived with another size than the server "
                "announced, twice: the server (or a proxy) sends other bytes than it lists. "
                "Nothing was installed."
            ) from None


def download_files(listing: Listing, folder: Path, on_progress: OnProgress | None) -> None:
    """Brings every listed file into `folder`, verified; raises ModelRejected for a file that
    arrives damaged twice (it is removed, so the next try fetches it afresh)."""
    with _Reporter(folder, listing, on_progress) as reporter:
        _fetch(listing, folder, [f.name for f in listing.files], reporter)
        damaged = damaged_files(folder, listing)
        if damaged:
            _refetch(listing, folder, damaged, reporter)
            damaged = damaged_files(folder, listing)
    if damaged:
        for name in damaged:
            inside(folder, name).unlink(missing_ok=True)
        raise ModelRejected(
            f"{damaged[0]} from {listing.repo} does not match its published checksum, twice: "
            "the file on the server is damaged. Nothing was installed."
        )


def download_model(
    repo: str = DEFAULT_REPO,
    models_dir: Path | None = None,
    *,
    name: str | None = None,
    revision: str | None = None,
    force: bool = False,
    on_progress: OnProgress | None = None,
    say: Say = print,
) -> Installed:
    """Downloads `repo` into `models_dir/<name>` and installs it (checked, validated,
    manifest written). Raises SetupError subclasses with one sentence; KeyboardInterrupt
    leaves the staging folder for the next try."""
    models_dir = models_dir or default_models_dir()
    target = (models_dir / (name or target_name(repo))).absolute()
    prepare_target(target, force, say)
    staging = download_folder(target)
    try:
        say(f"Listing {repo} on {endpoint()} ...")
        listing = list_repo(repo, revision)
        check_listing(listing)
        own_folder(staging)  # a link planted there is removed, never written through
        have = bytes_on_disk(staging, listing)
        if have:
            say(f"Resuming: {have} of {listing.total} bytes are already here.")
        check_free_space(
            models_dir,
            listing.total - have + FREE_MARGIN,
            "the download",
            "Free some space or choose another models folder.",
        )
        say(f"Downloading {len(listing.files)} files ({listing.total} bytes) ...")
        download_files(listing, staging, on_progress)
    except SetupError:
        raise
    except Exception as exc:
        raise _fetch_failure(exc, repo, models_dir) from exc
    say("Download complete; checking the model ...")
    installed = finish_ir_folder(
        staging,
        target,
        source=repo,
        imported=True,
        force=force,
        say=say,
        extra={"revision": listing.revision, "endpoint": endpoint()},
    )
    shutil.rmtree(target / BOOKKEEPING, ignore_errors=True)
    return installed
