"""The global shortcut: a real key grab on a private Xvfb, pressed by real XTEST key events
from xdotool; what a second client grabbing the same keys is told; and the shortcut strings a
user may write (or mistype)."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator

import pytest
from fake_shortcuts_portal import FakeShortcutsPortal
from PySide6.QtCore import QObject, Signal
from xserver import XServer, start_xvfb

from desktop.gui.tray import wayland, win32
from desktop.gui.tray.hotkey import GlobalHotkey
from desktop.gui.tray.keys import (
    DEFAULT_SHORTCUT,
    Shortcut,
    ShortcutError,
    ShortcutUnavailable,
    parse_shortcut,
)
from desktop.gui.tray.win32 import WindowsHotkey
from desktop.gui.tray.x11 import X11Grab

WAIT_MS = 30_000


class Presses(QObject):
    """Counts the shortcut's activations; `fired` for qtbot to wait on."""

    fired = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self.fired.connect(self._count)

    def _count(self) -> None:
        self.count += 1


@pytest.fixture(scope="module")
def xserver() -> Iterator[XServer]:
    server = start_xvfb()
    yield server
    server.stop()


@pytest.fixture
def grab(xserver: XServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[X11Grab, Presses]]:
    monkeypatch.setenv("DISPLAY", xserver.display)  # the grab's own X connection goes there
    presses = Presses()
    grab = X11Grab(parse_shortcut(DEFAULT_SHORTCUT), presses.fired.emit)
    grab.start()
    yield grab, presses
    grab.stop()


def test_the_real_key_chord_fires_the_shortcut(qtbot, xserver: XServer, grab) -> None:
    _grab, presses = grab
    with qtbot.waitSignal(presses.fired, timeout=WAIT_MS):
        xserver.xdotool("key", "ctrl+alt+shift+t")
    assert presses.count == 1


def test_it_fires_with_num_lock_and_caps_lock_on(qtbot, xserver: XServer, grab) -> None:
    _grab, presses = grab
    xserver.xdotool("key", "Num_Lock", "Caps_Lock")
    try:
        with qtbot.waitSignal(presses.fired, timeout=WAIT_MS):
            xserver.xdotool("key", "ctrl+alt+shift+t")
    finally:
        xserver.xdotool("key", "Num_Lock", "Caps_Lock")
    assert presses.count == 1


def test_other_chords_and_a_long_hold_do_not_fire(qtbot, xserver: XServer, grab) -> None:
    _grab, presses = grab
    # X delivers events in order: had Ctrl+Alt+T or Ctrl+Shift+T fired, the count would be
    # above one once the real chord's activation arrives.
    xserver.xdotool("key", "ctrl+alt+t", "ctrl+shift+t", "t")
    with qtbot.waitSignal(presses.fired, timeout=WAIT_MS):
        xserver.xdotool("keydown", "ctrl+alt+shift+t", "keydown", "t", "keyup", "t",
                        "keyup", "ctrl+alt+shift+t")  # fmt: skip
    assert presses.count == 1


def test_a_super_chord_with_a_function_key_fires(
    qtbot, xserver: XServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", xserver.display)
    presses = Presses()
    grab = X11Grab(parse_shortcut("Win+Shift+F9"), presses.fired.emit)
    grab.start()
    try:
        with qtbot.waitSignal(presses.fired, timeout=WAIT_MS):
            xserver.xdotool("key", "super+shift+F9")
    finally:
        grab.stop()


def test_windows_hot_key_messages_fire_the_shortcut() -> None:
    """The native event filter, fed a WM_HOTKEY as Qt's dispatcher hands it over on Windows
    (registering needs Windows itself: not here)."""
    presses = Presses()
    hotkey = WindowsHotkey(parse_shortcut(DEFAULT_SHORTCUT), presses.fired.emit)
    message = win32.Msg(message=win32.WM_HOTKEY, wParam=win32.HOTKEY_ID)
    address = ctypes.addressof(message)
    assert hotkey.nativeEventFilter(b"windows_generic_MSG", address) == (True, 0)
    assert presses.count == 1
    message.wParam = win32.HOTKEY_ID + 1  # another program's hot key id: not ours
    assert hotkey.nativeEventFilter(b"windows_generic_MSG", address) == (False, 0)
    message.message = 0x0100  # WM_KEYDOWN
    assert hotkey.nativeEventFilter(b"windows_generic_MSG", address) == (False, 0)
    assert presses.count == 1


def test_a_second_client_is_told_the_keys_are_taken(xserver: XServer, grab) -> None:
    first, _presses = grab
    second = X11Grab(first.shortcut, lambda: None)  # its own X connection: another client
    with pytest.raises(ShortcutUnavailable) as refused:
        second.start()
    assert str(refused.value) == (
        "Ctrl+Alt+Shift+T is already taken by another program on this X display: close that "
        "program, or choose another shortcut (Settings > Tray, or `desklens tray --shortcut "
        "KEYS`)."
    )
    first.stop()  # the keys are given back: now the other client gets them
    second.start()
    second.stop()


def test_a_key_the_keyboard_lacks_and_no_display_are_sentences(
    xserver: XServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", xserver.display)
    with pytest.raises(ShortcutUnavailable, match="This keyboard layout has no F24 key"):
        X11Grab(parse_shortcut("Ctrl+F24"), lambda: None).start()
    monkeypatch.setenv("DISPLAY", ":4999")
    with pytest.raises(
        ShortcutUnavailable, match=r"X display could not be opened \(DISPLAY is :4999"
    ):
        X11Grab(parse_shortcut(DEFAULT_SHORTCUT), lambda: None).start()


def test_without_a_desktop_the_hotkey_says_why(qtbot) -> None:
    hotkey = GlobalHotkey()  # the tests' Qt runs offscreen: no desktop to take keys from
    assert "no global shortcut on Qt's 'offscreen' platform" in hotkey.start(DEFAULT_SHORTCUT)
    assert hotkey.backend is None
    assert hotkey.start("Ctrl+Banana").startswith("'Banana' in the shortcut 'Ctrl+Banana'")


@pytest.fixture
def session_bus(private_bus: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    return private_bus


class Refusals(QObject):
    said = Signal(str)


def test_wayland_without_the_portal_names_what_to_bind(session_bus: str) -> None:
    shortcut = wayland.PortalShortcut(parse_shortcut("super+shift+t"), print, print)
    with pytest.raises(ShortcutUnavailable) as refused:
        shortcut.start()  # a session bus, but no portal on it
    assert str(refused.value).startswith(
        "Wayland does not let programs grab keys: bind `desklens capture` to Shift+Super+T in "
        "your desktop's keyboard settings (GNOME: Settings > Keyboard"
    )


def test_the_portal_binds_the_shortcut_and_its_activation_fires(qtbot, session_bus) -> None:
    portal = FakeShortcutsPortal(session_bus)
    presses, refusals = Presses(), Refusals()
    shortcut = wayland.PortalShortcut(
        parse_shortcut(DEFAULT_SHORTCUT), presses.fired.emit, refusals.said.emit
    )
    try:
        shortcut.start()
        qtbot.waitUntil(shortcut.bound.is_set, timeout=WAIT_MS)
        assert portal.registered == ["desklens"]  # named before the session: listed as ours
        [(shortcut_id, options)] = portal.bound
        assert shortcut_id == "capture"
        assert options["preferred_trigger"] == ("s", "CTRL+ALT+SHIFT+t")
        portal.activate("/not/our/session", "capture")  # another program's: ignored
        portal.activate(portal.sessions[0], "other")  # not our shortcut
        portal.activate(portal.sessions[0], "capture")
        qtbot.waitUntil(lambda: shortcut.heard == 3, timeout=WAIT_MS)
        # Every emission was queued before `heard` counted it: all are delivered by now.
        qtbot.waitUntil(lambda: presses.count >= 1, timeout=WAIT_MS)
        assert presses.count == 1
    finally:
        shortcut.stop()
        portal.close()


def test_a_declined_binding_is_told(qtbot, session_bus) -> None:
    portal = FakeShortcutsPortal(session_bus, answer=1)  # the user cancelled the desktop's dialog
    refusals = Refusals()
    shortcut = wayland.PortalShortcut(parse_shortcut(DEFAULT_SHORTCUT), print, refusals.said.emit)
    try:
        with qtbot.waitSignal(refusals.said, timeout=WAIT_MS) as said:
            shortcut.start()
        assert said.args == ["The desktop declined the global shortcut (cancelled)."]
        assert not shortcut.bound.is_set()
    finally:
        shortcut.stop()
        portal.close()


@pytest.mark.parametrize(
    ("text", "label", "keysym", "vk"),
    [
        ("Ctrl+Alt+Shift+T", "Ctrl+Alt+Shift+T", "t", 0x54),
        (" shift + ALT + control + t ", "Ctrl+Alt+Shift+T", "t", 0x54),
        ("Super+Shift+7", "Shift+Super+7", "7", 0x37),
        ("Win+f9", "Super+F9", "F9", 0x78),
        ("Print", "Print", "Print", 0x2C),
        ("Ctrl+PgDn", "Ctrl+PageDown", "Next", 0x22),
        ("Meta+space", "Super+Space", "space", 0x20),
        ("F12", "F12", "F12", 0x7B),
    ],
)
def test_shortcut_strings_are_read_and_written_back(
    text: str, label: str, keysym: str, vk: int
) -> None:
    shortcut = parse_shortcut(text)
    assert (shortcut.label, shortcut.x11_keysym, shortcut.windows_vk) == (label, keysym, vk)
    assert parse_shortcut(shortcut.label) == shortcut


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("", "The shortcut '' is incomplete"),
        ("Ctrl+", "The shortcut 'Ctrl+' is incomplete"),
        ("Ctrl+Alt", "The shortcut 'Ctrl+Alt' has no key after its modifiers"),
        ("Hyper+T", "'Hyper' in the shortcut 'Hyper+T' is not a modifier"),
        ("Ctrl+Banana", "'Banana' in the shortcut 'Ctrl+Banana' is not a key DeskLens can grab"),
        ("T", "The shortcut 'T' would take a key away from typing"),
        ("Shift+T", "The shortcut 'Shift+T' would take a key away from typing"),
        ("Ctrl+é", "'é' in the shortcut 'Ctrl+é' is not a key"),
    ],
)
def test_a_bad_shortcut_string_is_one_sentence(text: str, sentence: str) -> None:
    with pytest.raises(ShortcutError) as refused:
        parse_shortcut(text)
    assert str(refused.value).startswith(sentence)
    assert "e.g. Ctrl+Alt+Shift+T" in str(refused.value) or "F1-F24" in str(refused.value)


def test_the_default_is_a_shortcut() -> None:
    assert parse_shortcut(DEFAULT_SHORTCUT) == Shortcut(frozenset({"ctrl", "alt", "shift"}), "T")
