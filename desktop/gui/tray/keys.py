"""A global shortcut as the user writes it ("Ctrl+Alt+Shift+T"), checked and spelled out for
each platform's key-grabbing API. Pure Python: parsing needs no display."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Ctrl+Alt+T opens a terminal on Ubuntu, Super+Shift+T cycles the taskbar on Windows and
# Print Screen belongs to the desktop's own screenshot tool: all four modifiers' cousin here
# is free on GNOME, KDE and Windows.
DEFAULT_SHORTCUT = "Ctrl+Alt+Shift+T"

MODIFIERS = ("ctrl", "alt", "shift", "super")  # canonical order, as written back
_MODIFIER_NAMES = {
    "ctrl": "ctrl", "control": "ctrl", "ctl": "ctrl",
    "alt": "alt", "option": "alt",
    "shift": "shift",
    "super": "super", "meta": "super", "win": "super", "windows": "super", "cmd": "super",
}  # fmt: skip
_LABELS = {"ctrl": "Ctrl", "alt": "Alt", "shift": "Shift", "super": "Super"}

# Named keys: canonical name -> (X11 keysym name, Windows virtual-key code).
NAMED_KEYS: dict[str, tuple[str, int]] = {
    "Space": ("space", 0x20),
    "Print": ("Print", 0x2C),
    "Insert": ("Insert", 0x2D),
    "Delete": ("Delete", 0x2E),
    "Home": ("Home", 0x24),
    "End": ("End", 0x23),
    "PageUp": ("Prior", 0x21),
    "PageDown": ("Next", 0x22),
    "Pause": ("Pause", 0x13),
    "Tab": ("Tab", 0x09),
    "Enter": ("Return", 0x0D),
    "Backspace": ("BackSpace", 0x08),
    "Up": ("Up", 0x26),
    "Down": ("Down", 0x28),
    "Left": ("Left", 0x25),
    "Right": ("Right", 0x27),
}
_ALIASES = {
    "printscreen": "Print", "prtsc": "Print", "ins": "Insert", "del": "Delete",
    "pgup": "PageUp", "pgdown": "PageDown", "pgdn": "PageDown", "return": "Enter",
}  # fmt: skip
_FUNCTION_KEY = re.compile(r"F([1-9]|1[0-9]|2[0-4])")
EXAMPLE = f"write it as modifiers and one key joined by '+', e.g. {DEFAULT_SHORTCUT}"


class ShortcutError(ValueError):
    """A shortcut that cannot be parsed; str(error) is one sentence for the user."""


class ShortcutUnavailable(Exception):
    """A shortcut this platform cannot take (taken, no display); str(error) says why."""


@dataclass(frozen=True)
class Shortcut:
    modifiers: frozenset[str]  # of MODIFIERS
    key: str  # "T", "7", "F9", or a NAMED_KEYS name

    @property
    def label(self) -> str:
        names = [_LABELS[m] for m in MODIFIERS if m in self.modifiers]
        return "+".join([*names, self.key])

    @property
    def x11_keysym(self) -> str:
        """The key's X11 keysym name (XStringToKeysym)."""
        if self.key in NAMED_KEYS:
            return NAMED_KEYS[self.key][0]
        return self.key.lower() if len(self.key) == 1 else self.key

    @property
    def windows_vk(self) -> int:
        """The key's Windows virtual-key code (RegisterHotKey)."""
        if self.key in NAMED_KEYS:
            return NAMED_KEYS[self.key][1]
        if len(self.key) == 1:
            return ord(self.key)  # VK_0..VK_9 and VK_A..VK_Z are the ASCII codes
        return 0x70 + int(self.key[1:]) - 1  # VK_F1 = 0x70


def parse_shortcut(text: str) -> Shortcut:
    """Reads "Ctrl+Alt+Shift+T" (any case, any order of modifiers) -> Shortcut; raises
    ShortcutError with a sentence naming what is wrong."""
    parts = [part.strip() for part in text.strip().split("+")]
    if not text.strip() or any(not part for part in parts):
        raise ShortcutError(f"The shortcut {text.strip()!r} is incomplete: {EXAMPLE}.")
    *named_modifiers, named_key = parts
    modifiers: set[str] = set()
    for name in named_modifiers:
        modifier = _MODIFIER_NAMES.get(name.lower())
        if modifier is None:
            raise ShortcutError(
                f"{name!r} in the shortcut {text.strip()!r} is not a modifier (Ctrl, Alt, "
                f"Shift or Super): {EXAMPLE}."
            )
        modifiers.add(modifier)
    key = _key(named_key, text.strip())
    function_key = _FUNCTION_KEY.fullmatch(key) is not None or key in ("Print", "Pause")
    if not function_key and not modifiers - {"shift"}:
        raise ShortcutError(
            f"The shortcut {text.strip()!r} would take a key away from typing: add Ctrl, Alt "
            f"or Super ({EXAMPLE})."
        )
    return Shortcut(frozenset(modifiers), key)


def _key(name: str, text: str) -> str:
    if len(name) == 1 and name.isascii() and name.isalnum():
        return name.upper()
    upper = name.upper()
    if _FUNCTION_KEY.fullmatch(upper):
        return upper
    for canonical in NAMED_KEYS:
        if canonical.lower() == name.lower():
            return canonical
    if name.lower() in _ALIASES:
        return _ALIASES[name.lower()]
    if name.lower() in _MODIFIER_NAMES:
        raise ShortcutError(f"The shortcut {text!r} has no key after its modifiers: {EXAMPLE}.")
    raise ShortcutError(
        f"{name!r} in the shortcut {text!r} is not a key DeskLens can grab (a letter, a digit, "
        f"F1-F24, or one of {', '.join(NAMED_KEYS)})."
    )
