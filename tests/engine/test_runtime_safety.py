"""Read-only model folders, and a runtime that never unpickles or runs code from elsewhere.

Root ignores file modes, and CI may run as root: there the subprocesses that must not be able
to write run with CAP_DAC_OVERRIDE and CAP_FOWNER dropped, so `chmod a-w` binds them as it
binds a normal user. A probe checks that the mechanism really blocks writes first.
"""

from __future__ import annotations

import ast
import ctypes
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import VLMEngine
from desktop.core.images import load_image
from desktop.core.model_registry import find_models

ROOT = Path(__file__).resolve().parents[2]

PR_CAPBSET_DROP = 24  # <linux/prctl.h>
CAP_DAC_OVERRIDE = 1  # <linux/capability.h>
CAP_FOWNER = 3


def _drop_write_override() -> None:
    """preexec_fn: the exec'd program keeps uid 0 but loses the capabilities that let root
    write where the file modes forbid it."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_FOWNER):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _unprivileged() -> Callable[[], None] | None:
    return _drop_write_override if os.geteuid() == 0 else None


def _run(args: list[str], env: dict[str, str] | None = None, timeout: int = 300):
    """`args` run by this Python, unable to write into read-only folders even as root."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        preexec_fn=_unprivileged(),
    )


def _make_read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _make_writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every entry with its size and modification time: any write shows up."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in [folder, *folder.rglob("*")]
    }


@pytest.fixture
def read_only_models(tiny_ir, tmp_path):
    """A models folder holding one converted model, the folder and the model read-only."""
    models = tmp_path / "models"
    models.mkdir()
    shutil.copytree(tiny_ir, models / "tiny")
    _make_read_only(models)
    yield models
    _make_writable(models)  # lets pytest remove tmp_path as a normal user


def test_the_write_block_is_real(read_only_models):
    """The mechanism the other tests rely on: a write into the folder fails."""
    probe = read_only_models / "tiny" / "probe.txt"
    result = _run(["-c", f"open({str(probe)!r}, 'w')"])
    assert result.returncode != 0
    assert "PermissionError" in result.stderr
    assert not probe.exists()


def test_read_only_model_loads_and_answers_in_process(read_only_models, sample_image):
    folder = read_only_models / "tiny"
    before = _snapshot(read_only_models)
    engine = VLMEngine.load(folder)
    conversation = Conversation()
    answer = engine.ask(
        conversation, "What is it?", [load_image(sample_image)], GenerationSettings(6)
    )
    assert answer.ok, answer.error
    assert answer.stats.generated_tokens > 0
    assert _snapshot(read_only_models) == before  # no cache or lock file was written there


def test_read_only_model_answers_from_the_cli(read_only_models, sample_image, tmp_path):
    shot = tmp_path / "shot.png"
    sample_image.save(shot)
    before = _snapshot(read_only_models)
    env = {"DESKLENS_MODELS_DIR": str(read_only_models), "DESKLENS_DATA_DIR": str(tmp_path / "d")}
    asked = _run(
        ["-m", "desktop", "ask", str(shot), "-q", "What is it?", "--max-new-tokens", "5"], env
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip()
    listed = _run(["-m", "desktop", "models", "--json"], env)
    assert listed.returncode == 0, listed.stderr
    assert '"problem": null' in listed.stdout and '"name": "tiny"' in listed.stdout
    assert _snapshot(read_only_models) == before
    assert [e.name for e in find_models([read_only_models])] == ["tiny"]


@pytest.mark.parametrize("where", ["beside", "inside"])
def test_converting_into_a_read_only_folder_says_so(read_only_models, tiny_ir, where):
    """Importing a model into the read-only models folder (or into the model folder itself)
    ends with one convert.py error sentence naming the folder; nothing is left behind."""
    parent = read_only_models if where == "beside" else read_only_models / "tiny"
    before = _snapshot(read_only_models)
    result = _run(["convert.py", "--model", str(tiny_ir), "--output", str(parent / "copy")])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("convert.py: error: ")]
    assert "Permission denied" in line and str(parent) in line
    assert "writable output folder" in line
    assert _snapshot(read_only_models) == before
    assert [e.name for e in find_models([read_only_models])] == ["tiny"]


# --- no pickles, no remote code -----------------------------------------------------------

BANNED_MODULES = frozenset(
    {
        "torch", "transformers", "optimum", "nncf", "huggingface_hub", "transformers_modules",
        "dill", "joblib", "cloudpickle", "shelve",
    }
)  # fmt: skip
PICKLE_SUFFIXES = (".pkl", ".pickle", ".pt", ".pth", ".ckpt", ".joblib", ".npy", ".npz")

AUDIT_GUARD = textwrap.dedent(
    """
    import atexit, os, pickle, sys

    _LOG = os.environ["DESKLENS_AUDIT_LOG"]
    _BANNED = set(os.environ["DESKLENS_AUDIT_BANNED"].split(","))
    _SUFFIXES = tuple(os.environ["DESKLENS_AUDIT_SUFFIXES"].split(","))
    _ROOTS = tuple(
        os.path.realpath(p) + os.sep
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, *os.environ[
            "DESKLENS_AUDIT_ROOTS"].split(os.pathsep))
    )

    def _log(kind, detail):
        with open(_LOG, "a") as handle:
            handle.write(f"{kind} {detail}\\n")

    def _hook(event, args):
        if event == "pickle.find_class":
            _log("unpickle", f"{args[0]}.{args[1]}")
        elif event == "import" and args[0].split(".")[0] in _BANNED:
            _log("import", args[0])
        elif event == "open" and isinstance(args[0], str) and args[0].endswith(_SUFFIXES):
            _log("open", args[0])
        elif event == "exec":
            # Module bodies run from files: only from the install or the repo. Relative names
            # that are no file here (shiboken's modules embedded in its library) are skipped.
            name = getattr(args[0], "co_filename", "")
            if not name or name.startswith("<"):
                return
            if not os.path.isabs(name) and not os.path.exists(name):
                return
            if not (os.path.realpath(name) + os.sep).startswith(_ROOTS):
                _log("exec", name)

    def _logged(name, original):
        def call(*args, **kwargs):
            _log("pickle", name)
            return original(*args, **kwargs)
        return call

    pickle.load = _logged("pickle.load", pickle.load)
    pickle.loads = _logged("pickle.loads", pickle.loads)
    sys.addaudithook(_hook)

    @atexit.register
    def _report():
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in _BANNED)
        for module in loaded:
            _log("module", module)
        _log("done", len(sys.modules))
    """
)


@pytest.fixture
def audited(tmp_path) -> Callable[..., list[str]]:
    """audited(*argv) runs `python argv...` under the audit guard; returns what it logged
    (besides its closing "done" line, which proves the guard ran to the end)."""
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(AUDIT_GUARD)
    log = tmp_path / "audit.log"

    def run(*argv: str) -> list[str]:
        log.unlink(missing_ok=True)
        env = {
            **os.environ,
            "PYTHONPATH": f"{guard}{os.pathsep}{ROOT}",
            "DESKLENS_AUDIT_LOG": str(log),
            "DESKLENS_AUDIT_BANNED": ",".join(sorted(BANNED_MODULES)),
            "DESKLENS_AUDIT_SUFFIXES": ",".join(PICKLE_SUFFIXES),
            "DESKLENS_AUDIT_ROOTS": os.pathsep.join([str(ROOT), str(guard)]),
            "DESKLENS_DATA_DIR": str(tmp_path / "data"),
        }
        result = subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, env=env, cwd=tmp_path,
            timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, (argv, result.stderr)
        lines = log.read_text().splitlines()
        assert lines and lines[-1].startswith("done "), lines
        return lines[:-1]

    return run


def test_audit_guard_sees_pickles_foreign_code_and_banned_imports(audited, tmp_path):
    """The guard itself: each thing it looks for is reported when it happens."""
    foreign = tmp_path / "elsewhere"
    foreign.mkdir()
    (foreign / "remote_code.py").write_text("VALUE = 1\n")
    (foreign / "weights.pt").write_bytes(b"")
    script = textwrap.dedent(
        f"""
        import collections, importlib, pickle, sys
        pickle.loads(pickle.dumps(collections.OrderedDict(a=1)))
        sys.path.insert(0, {str(foreign)!r})
        importlib.import_module("remote_code")
        open({str(foreign / "weights.pt")!r}, "rb").close()
        try:
            import joblib
        except ImportError:
            pass
        """
    )
    lines = audited("-c", script)
    assert "pickle pickle.loads" in lines
    assert "unpickle collections.OrderedDict" in lines
    assert f"exec {foreign / 'remote_code.py'}" in lines
    assert f"open {foreign / 'weights.pt'}" in lines
    assert "import joblib" in lines


def test_runtime_never_loads_pickles_or_remote_code(audited, tiny_ir, sample_image, tmp_path):
    """`desklens ask` (with OCR grounding) and `desklens ocr` on the tiny model: no pickle
    is read, no code runs from outside the install, and torch, transformers and friends are
    never imported (not even tried)."""
    shot = tmp_path / "shot.png"
    sample_image.save(shot)
    model = ["--model", str(tiny_ir)]
    for args in (
        ["ask", str(shot), "-q", "What is it?", *model, "--max-new-tokens", "4"],
        ["ask", str(shot), "--ground", "-q", "Total?", *model, "--max-new-tokens", "4"],
        ["ocr", str(shot), "--format", "json"],
        ["--self-test", *model],
    ):
        assert audited("-m", "desktop", *args) == [], args


def _imported_modules(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("__import__",)
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value))
    return names


# Build-time helpers that may use the `convert` extra; the runtime never imports them.
CONVERT_HELPERS = {
    "desktop/core/ocr/quantize.py": {"nncf"},
    # The model download (issue 15): huggingface_hub, imported only when the user downloads.
    "desktop/core/model_setup/download.py": {"huggingface_hub"},
    "desktop/core/model_setup/hub_errors.py": {"huggingface_hub"},
}
STATIC_BANNED = BANNED_MODULES | {"pickle", "_pickle", "cPickle", "marshal"}


def test_desktop_package_never_imports_pickle_torch_or_transformers():
    """A static check over every module of the app: no pickle-family or PyTorch-family
    import, no eval/exec, no trust_remote_code, no allow_pickle."""
    problems = []
    for path in sorted((ROOT / "desktop").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(), filename=relative)
        allowed = CONVERT_HELPERS.get(relative, set())
        for module in _imported_modules(tree):
            top = module.split(".")[0]
            if top in STATIC_BANNED and top not in allowed:
                problems.append(f"{relative}: imports {module}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("eval", "exec"):
                problems.append(f"{relative}:{node.lineno}: calls {node.func.id}")
            risky = ("trust_remote_code", "allow_pickle")
            if (
                isinstance(node, ast.keyword)
                and node.arg in risky
                and not (isinstance(node.value, ast.Constant) and node.value.value is False)
            ):
                problems.append(f"{relative}: passes {node.arg}")
    assert problems == []
    # The module scan itself finds what it looks for.
    assert _imported_modules(ast.parse("import torch.nn\nfrom pickle import loads")) == {
        "torch.nn",
        "pickle",
    }
