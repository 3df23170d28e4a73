"""House rules of the source tree, checked on every run: no import circle between the app's
modules (counting every import: lazy ones inside functions and TYPE_CHECKING ones too, since
each is a dependency a reader must follow), no module over 400 lines, and ruff clean."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "desktop"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path, name: str, known: set[str]) -> set[str]:
    """The project modules `path` imports: `from a.b import c` is a.b.c when that is a
    module, else a.b (the package's __init__)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if candidate in known:
                    found.add(candidate)
                elif base in known:
                    found.add(base)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    known = set(modules)
    return {name: imported_modules(path, name, known) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_between_the_apps_modules():
    graph = import_graph()
    assert "desktop.gui.main_window" in graph and graph["desktop.gui.main_window"]
    assert circles(graph) == []


def test_no_flow_imports_the_main_window():
    graph = import_graph()
    importers = sorted(
        name for name, targets in graph.items() if "desktop.gui.main_window" in targets
    )
    assert importers == ["desktop.gui.app"]


def test_the_core_never_imports_qt():
    for name, path in project_modules().items():
        if name.startswith("desktop.core"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    names = (
                        [a.name for a in node.names]
                        if isinstance(node, ast.Import)
                        else [node.module or ""]
                    )
                    assert not any(n.startswith("PySide6") for n in names), name


UNTYPED_SIGNALS_MAX = 5  # issue 58: a signal names what it carries; `object` only for a union


def untyped_signals(modules: dict[str, Path]) -> dict[str, int]:
    """Per module, its signals declared with a payload of `object`."""
    found: dict[str, int] = {}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_signal = isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Signal"
            if is_signal and any(getattr(arg, "id", None) == "object" for arg in node.args):
                found[name] = found.get(name, 0) + 1
    return found


def test_signals_say_what_they_carry():
    untyped = untyped_signals(project_modules())
    assert sum(untyped.values()) <= UNTYPED_SIGNALS_MAX, untyped


def test_the_signal_counter_counts_object_payloads(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("a = Signal(object)\nb = Signal(int, object)\nc = Signal(Thing)\n")
    assert untyped_signals({"m": module}) == {"m": 2}


def test_no_module_is_over_400_lines():
    long = {
        name: count
        for name, path in project_modules().items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_ruff_is_clean():  # ruff is part of the test extra
    checked = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


# Who may call the engine's ask/ask_each/prepare: the conversation service (every front end
# asks through it), the engine itself, and the model check that runs a new folder's engine on
# a probe image before it is listed (it validates the engine, it asks no question).
ENGINE_CALLERS = ("desktop/core/conversation/", "desktop/core/engine/",
                  "desktop/core/model_setup/checks.py")  # fmt: skip
ENGINE_METHODS = {"ask", "ask_each", "prepare"}


def _receiver_name(node: ast.expr) -> str:
    """`engine` for `engine.ask`, `self._engine.ask`, `self.engine().ask`."""
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def engine_calls(path: Path, root: Path = ROOT) -> list[str]:
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        receiver = _receiver_name(node.func.value).lower()
        if node.func.attr in ENGINE_METHODS and receiver.endswith("engine"):
            calls.append(f"{path.relative_to(root)}:{node.lineno} {receiver}.{node.func.attr}")
    return calls


def test_only_the_conversation_service_asks_the_engine():
    found = [
        call
        for path in sorted(PACKAGE.rglob("*.py"))
        if not str(path.relative_to(ROOT)).startswith(ENGINE_CALLERS)
        for call in engine_calls(path)
    ]
    assert found == [], "ask through desktop.core.conversation.ConversationService: " + str(found)


def test_the_engine_call_finder_finds_direct_calls(tmp_path):
    source = tmp_path / "front_end.py"
    source.write_text(
        "def f(self, c, engine, service):\n"
        "    self._engine.ask(c, 'q')\n"
        "    engine.prepare(c)\n"
        "    service.ask(c)\n"  # the service: allowed
    )
    found = engine_calls(source, tmp_path)
    assert found == ["front_end.py:2 _engine.ask", "front_end.py:3 engine.prepare"]


def test_the_type_checker_passes():
    """mypy over desktop/ as pyproject.toml configures it (strict where the modules are clean
    of --strict's checks); it would have caught Retry's chat id given where the chat was
    expected (gui/widgets/history_view.py) before a user did."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--no-error-summary"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def worker_reads(path: Path, root: Path = ROOT) -> list[str]:
    """Every `<x>.worker` in `path`: a flow or widget reaching past a controller."""
    return [
        f"{path.relative_to(root)}:{node.lineno}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "worker"
    ]


def test_only_the_controllers_touch_their_workers():
    """Flows connect to what a controller re-emits; only desktop/gui/workers/ (where each
    controller lives beside its worker) reaches a controller's `.worker`."""
    found = [
        read
        for path in sorted((PACKAGE / "gui").rglob("*.py"))
        if "workers" not in path.relative_to(PACKAGE / "gui").parts
        for read in worker_reads(path)
    ]
    assert found == []


def test_the_worker_finder_finds_a_reach_past_the_controller(tmp_path):
    source = tmp_path / "flow.py"
    source.write_text(
        "def f(ocr, worker):\n    ocr.worker.extracted.connect(print)\n    worker.x\n"
    )
    assert worker_reads(source, tmp_path) == ["flow.py:2"]


# What a message widget shows is the transcript's (desktop/core/conversation/transcript.py):
# outside the chat view's own modules, nothing reaches a widget for a question's settings,
# prompt or stored id, and the widgets keep none of them.
MESSAGE_WIDGETS = {
    "MessageWidget", "UserMessage", "AssistantMessage", "OcrMessage", "ErrorMessage",
    "NoteMessage",
}  # fmt: skip
DOMAIN_ATTRIBUTES = {"message_id", "settings", "prompt", "retry_request", "result"}
RENDERERS = {"chat_view.py", "history_view.py", "messages.py"}


def widget_domain_reads(path: Path, root: Path = PACKAGE) -> list[str]:
    """`path`'s imports of message widgets (a flow would then look inside one), and, in the
    widget module itself, the domain state a widget keeps as an attribute."""
    where = path.relative_to(root).as_posix()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and path.name not in RENDERERS:
            found += [f"{where}:{node.lineno}" for a in node.names if a.name in MESSAGE_WIDGETS]
        elif isinstance(node, ast.Attribute) and path.name == "messages.py":
            owner = node.value
            on_self = isinstance(owner, ast.Name) and owner.id == "self"
            if on_self and node.attr in DOMAIN_ATTRIBUTES and isinstance(node.ctx, ast.Store):
                found.append(f"{where}:{node.lineno}")
    return found


def test_no_gui_module_reads_domain_state_off_a_widget():
    found = [
        read
        for path in sorted((PACKAGE / "gui").rglob("*.py"))
        for read in widget_domain_reads(path)
    ]
    assert found == []


def test_the_widget_reader_finder_finds_both(tmp_path):
    flow = tmp_path / "flow.py"
    flow.write_text("from x import UserMessage, ChatActions\n")
    widgets = tmp_path / "messages.py"
    widgets.write_text(
        "class A:\n    def f(self):\n        self.settings = 1\n        self.view = 2\n"
    )
    assert widget_domain_reads(flow, tmp_path) == ["flow.py:1"]
    assert widget_domain_reads(widgets, tmp_path) == ["messages.py:3"]


def modules_the_tree_leaves_out(tree: str, root: Path = PACKAGE) -> list[str]:
    """Modules of `root` whose name is not a word of ARCHITECTURE.md's tree."""
    import re

    return [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        if path.name != "__init__.py" and not re.search(rf"\b{re.escape(path.stem)}\b", tree)
    ]


def test_architecture_md_names_every_module():
    """The tree at the top of docs/ARCHITECTURE.md is where a newcomer looks for a module."""
    tree = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8").split("```")[1]
    assert modules_the_tree_leaves_out(tree) == []


def test_the_tree_reader_finds_a_module_left_out(tmp_path):
    (tmp_path / "named.py").write_text("")
    (tmp_path / "forgotten_part.py").write_text("")
    assert modules_the_tree_leaves_out("named.py  what it does", tmp_path) == ["forgotten_part.py"]
