"""Light and dark palettes and the one style sheet that gives the widgets their look.

Widgets only set object names and a `role` property; every colour lives here, so the two
themes cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from desktop.gui.control_style import ControlStyle


@dataclass(frozen=True)
class Theme:
    name: str
    window: str  # main background
    sidebar: str
    surface: str  # cards, assistant bubbles, inputs
    border: str  # cards, bubbles, separators (decoration: no contrast asked)
    control: str  # the boundary of check boxes, radio buttons and fields: 3:1 (CONTROL_PAIRS)
    text: str
    muted: str  # secondary text
    accent: str  # links, focus borders, progress
    accent_text: str  # text on the primary buttons
    primary: str  # the primary buttons (Send, Download, OK)
    primary_hover: str
    stop_bg: str  # Stop, while an answer runs
    stop_text: str
    user_bubble: str
    hover: str
    selection: str
    error_bg: str
    error_text: str
    code_bg: str
    grid: str  # table lines in answers

    @property
    def is_dark(self) -> bool:
        return QColor(self.window).lightness() < 128


LIGHT = Theme(
    name="light",
    window="#f7f8fa",
    sidebar="#eef0f4",
    surface="#ffffff",
    border="#dfe3e8",
    control="#767e89",
    text="#1d2127",
    muted="#5a626d",
    accent="#2563eb",
    accent_text="#ffffff",
    primary="#2563eb",
    primary_hover="#1d4fd8",
    stop_bg="#b42318",
    stop_text="#ffffff",
    user_bubble="#e3ecfd",
    hover="#e4e8ee",
    selection="#d6e2fb",
    error_bg="#fdecec",
    error_text="#a61b1b",
    code_bg="#f3f4f7",
    grid="#c5cbd4",
)

DARK = Theme(
    name="dark",
    window="#1d1f23",
    sidebar="#17181b",
    surface="#272a30",
    border="#363a41",
    control="#80878f",
    text="#e7e9ec",
    muted="#aab1ba",
    accent="#7ea6f5",
    accent_text="#ffffff",
    primary="#2f62d0",
    primary_hover="#3a6fd8",
    stop_bg="#c42b2b",
    stop_text="#ffffff",
    user_bubble="#2c3a55",
    hover="#30343b",
    selection="#2f3f5e",
    error_bg="#4a2326",
    error_text="#ffb4b4",
    code_bg="#1f2226",
    grid="#4b5059",
)


# Every text colour of the style sheet (and the palette) on each background it is drawn on:
# (where, text field, background field). tests/gui/test_gui_contrast.py holds each pair to
# WCAG AA (4.5:1). Disabled controls are left out, as WCAG does (1.4.3: inactive components).
TEXT_PAIRS = (
    ("text on the window", "text", "window"),
    ("text in the sidebar", "text", "sidebar"),
    ("text in cards, answers, inputs, menus, tooltips", "text", "surface"),
    ("text in the user's bubbles", "text", "user_bubble"),
    ("a hovered button, chat or menu item", "text", "hover"),
    ("the selected chat; an info notice", "text", "selection"),
    ("an error notice", "text", "error_bg"),
    ("code blocks", "text", "code_bg"),
    ("muted text on the window (flat buttons)", "muted", "window"),
    ("the status bar, the chats' dates, No chats yet", "muted", "sidebar"),
    ("muted text in cards and the composer", "muted", "surface"),
    ("a hovered chat's date", "muted", "hover"),
    ("the selected chat's date; Dismiss on an info notice", "muted", "selection"),
    ("the question's context note in the user's bubble", "muted", "user_bubble"),
    ("Dismiss on an error notice", "muted", "error_bg"),
    ("links in answers and extracted text", "accent", "surface"),
    ("links on the window", "accent", "window"),
    ("primary buttons (Send, Download, OK)", "accent_text", "primary"),
    ("a hovered primary button", "accent_text", "primary_hover"),
    ("Stop", "stop_text", "stop_bg"),
    ("error text in a card or an answer", "error_text", "surface"),
    ("error messages and the stopped badge", "error_text", "error_bg"),
)

# The boundary of every check box, radio button and field on each background it sits on
# (dialogs and the window, the chats, cards and the composer): 3:1 (WCAG 1.4.11, non-text
# contrast), held by tests/gui/test_gui_contrast.py; the app's style draws it (control_style).
CONTROL_PAIRS = (
    ("a control on the window or in a dialog", "control", "window"),
    ("a control in the sidebar", "control", "sidebar"),
    ("a control in a card or the composer", "control", "surface"),
)


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio of two #rrggbb colours (1 to 21)."""
    lighter, darker = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _luminance(colour: str) -> float:
    channels = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def resolve_theme(choice: str) -> Theme:
    """ "system" follows the desktop's light/dark setting."""
    if choice == "dark":
        return DARK
    if choice == "light":
        return LIGHT
    hints = QApplication.styleHints()
    return DARK if hints.colorScheme() == Qt.ColorScheme.Dark else LIGHT


def apply_theme(app: QApplication, choice: str, font_size: int = 0) -> Theme:
    """Each of style, palette, font and style sheet restyles every widget when set: only what
    differs is set (a theme or font change in a long chat took seconds with all four)."""
    theme = resolve_theme(choice)
    # Fusion: the same, predictable metrics on every platform; controls outlined at 3:1.
    style = app.style()
    if isinstance(style, ControlStyle):
        style.set_colours(theme.control, theme.accent)  # drawn anew with the style sheet below
    else:
        app.setStyle(ControlStyle(theme.control, theme.accent))
    palette = _palette(theme)
    if app.palette() != palette:
        app.setPalette(palette)
    font = QFont(app.property("desklens_base_font") or app.font())
    if app.property("desklens_base_font") is None:
        app.setProperty("desklens_base_font", QFont(font))  # the system's, before any change
    if font_size > 0:
        font.setPointSize(font_size)
    if app.font() != font:
        app.setFont(font)
    sheet = style_sheet(theme, font.pointSizeF())
    if app.styleSheet() != sheet:
        app.setStyleSheet(sheet)
    app.setProperty("desklens_theme", theme.name)
    return theme


def current_theme() -> Theme:
    app = QApplication.instance()
    name = app.property("desklens_theme") if app is not None else None
    return DARK if name == "dark" else LIGHT


def _palette(theme: Theme) -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: theme.window,
        QPalette.ColorRole.WindowText: theme.text,
        QPalette.ColorRole.Base: theme.surface,
        QPalette.ColorRole.AlternateBase: theme.sidebar,
        QPalette.ColorRole.Text: theme.text,
        QPalette.ColorRole.Button: theme.surface,
        QPalette.ColorRole.ButtonText: theme.text,
        QPalette.ColorRole.Highlight: theme.primary,
        QPalette.ColorRole.HighlightedText: theme.accent_text,
        QPalette.ColorRole.ToolTipBase: theme.surface,
        QPalette.ColorRole.ToolTipText: theme.text,
        QPalette.ColorRole.PlaceholderText: theme.muted,
        QPalette.ColorRole.Link: theme.accent,
        QPalette.ColorRole.Mid: theme.border,
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(theme.muted))
    return palette


def style_sheet(t: Theme, base_pt: float = 10.0) -> str:
    """Titles scale with the chosen font size (Qt style sheets know no relative units)."""
    title, card, section = (f"{base_pt * k:.1f}pt" for k in (1.6, 1.35, 1.2))
    return f"""
QMainWindow, QWidget#chatPage {{ background: {t.window}; }}
QWidget#sidebar {{ background: {t.sidebar}; border-right: 1px solid {t.border}; }}
QLabel#sidebarTitle {{ font-weight: 600; font-size: {section}; }}
QListWidget#conversationList {{
    background: transparent; border: 2px solid transparent; border-radius: 8px; outline: none;
}}
QListWidget#conversationList:focus {{ border-color: {t.accent}; }}
QListWidget#conversationList::item {{ padding: 8px 10px; border-radius: 8px; margin: 1px 0; }}
QListWidget#conversationList::item:hover {{ background: {t.hover}; }}
QListWidget#conversationList::item:selected {{ background: {t.selection}; color: {t.text}; }}
QLineEdit {{
    background: {t.surface}; border: 1px solid {t.control}; border-radius: 8px; padding: 6px 8px;
}}
QPlainTextEdit {{ background: {t.surface}; border: 1px solid {t.control}; border-radius: 6px; }}
QLineEdit:focus {{ border: 2px solid {t.accent}; padding: 5px 7px; }}
QPlainTextEdit:focus {{ border: 2px solid {t.accent}; }}
QLineEdit:disabled, QPlainTextEdit:disabled {{ border-color: {t.border}; }}
QPushButton, QToolButton {{
    background: transparent; border: 1px solid {t.border}; border-radius: 8px;
    padding: 5px 12px; color: {t.text};
}}
QPushButton:hover, QToolButton:hover {{ background: {t.hover}; }}
QPushButton:disabled, QToolButton:disabled {{ color: {t.muted}; border-color: {t.border}; }}
QPushButton:focus, QToolButton:focus {{
    border: 2px solid {t.accent}; padding: 4px 11px; outline: none;
}}
QPushButton[role="primary"] {{
    background: {t.primary}; color: {t.accent_text}; border: none; font-weight: 600;
    padding: 6px 18px;
}}
QPushButton[role="primary"]:hover {{ background: {t.primary_hover}; }}
QPushButton[role="primary"]:disabled {{ background: {t.border}; color: {t.muted}; }}
QPushButton[role="stop"] {{
    background: {t.stop_bg}; color: {t.stop_text}; border: none; font-weight: 600;
    padding: 6px 18px;
}}
QToolButton[role="flat"], QPushButton[role="flat"] {{
    border: none; padding: 3px 8px; color: {t.muted};
}}
QToolButton[role="flat"]:hover, QPushButton[role="flat"]:hover {{
    color: {t.text}; background: {t.hover};
}}
QPushButton[role="chip"] {{ border-radius: 14px; padding: 4px 12px; }}
QPushButton[role="chip"]:focus {{ padding: 3px 11px; }}
QToolButton[role="flat"]:focus, QPushButton[role="flat"]:focus {{
    border: 2px solid {t.accent}; padding: 1px 6px;
}}
QPushButton[role="primary"]:focus {{ border: 2px solid {t.text}; padding: 4px 16px; }}
QPushButton[role="stop"]:focus {{ border: 2px solid {t.stop_text}; padding: 4px 16px; }}
QFrame#composer {{
    background: {t.surface}; border: 1px solid {t.control}; border-radius: 14px;
}}
QPlainTextEdit#composerEdit {{ background: transparent; border: none; }}
QScrollArea#attachStrip, QWidget#attachStrip {{ background: transparent; border: none; }}
QScrollArea#chatScroll, QWidget#chatColumn {{ background: {t.window}; border: none; }}
QFrame#userBubble {{ background: {t.user_bubble}; border-radius: 14px; }}
QFrame#assistantBubble, QFrame#ocrBubble {{
    background: {t.surface}; border: 1px solid {t.border}; border-radius: 14px;
}}
QFrame#errorBubble {{ background: {t.error_bg}; border-radius: 14px; }}
QLabel#errorText {{ color: {t.error_text}; }}
QLabel#messageAuthor {{ font-weight: 600; }}
QLabel#muted, QLabel#messageMeta, QLabel#noteText {{ color: {t.muted}; }}
QLabel#badge {{
    color: {t.error_text}; background: {t.error_bg}; border-radius: 6px; padding: 1px 6px;
}}
QFrame#codeBlock {{ background: {t.code_bg}; border: 1px solid {t.border}; border-radius: 8px; }}
QPlainTextEdit#codeText {{ background: transparent; border: none; }}
QToolButton#chipClose {{
    background: {t.surface}; color: {t.text}; border: 1px solid {t.border}; border-radius: 9px;
    padding: 0; font-weight: 600;
}}
QToolButton#chipClose:hover {{ background: {t.error_bg}; color: {t.error_text}; }}
QToolButton#chipClose:focus {{ border: 2px solid {t.accent}; }}
QFrame#thumbnail {{ border: 1px solid {t.border}; border-radius: 8px; background: {t.surface}; }}
QFrame#thumbnail:focus {{ border: 2px solid {t.accent}; }}
QFrame#card {{ background: {t.surface}; border: 1px solid {t.border}; border-radius: 14px; }}
QLabel#cardTitle {{ font-size: {card}; font-weight: 600; }}
QLabel#emptyTitle {{ font-size: {title}; font-weight: 600; }}
QLabel#emptyHint {{ color: {t.muted}; }}
QFrame#notice {{ background: {t.selection}; border-radius: 10px; }}
QFrame#notice[kind="error"] {{ background: {t.error_bg}; }}
QStatusBar {{ background: {t.sidebar}; border-top: 1px solid {t.border}; color: {t.muted}; }}
QStatusBar QLabel {{ color: {t.muted}; padding: 0 6px; }}
QToolBar {{ background: {t.window}; border: none; border-bottom: 1px solid {t.border};
    spacing: 6px; padding: 4px 8px; }}
QProgressBar {{
    background: {t.surface}; border: 1px solid {t.border}; border-radius: 5px;
    text-align: center; max-height: 12px;
}}
QProgressBar::chunk {{ background: {t.accent}; border-radius: 4px; }}
QSplitter::handle {{ background: {t.border}; }}
QScrollBar:vertical {{ background: transparent; width: 10px; margin: 2px; }}
QScrollBar::handle:vertical {{ background: {t.border}; border-radius: 4px; min-height: 30px; }}
QScrollBar::add-line, QScrollBar::sub-line {{ height: 0; width: 0; }}
QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 2px; }}
QScrollBar::handle:horizontal {{ background: {t.border}; border-radius: 4px; min-width: 30px; }}
QMenu {{ background: {t.surface}; border: 1px solid {t.border}; padding: 4px; }}
QMenu::item {{ padding: 5px 18px; border-radius: 6px; }}
QMenu::item:selected {{ background: {t.hover}; color: {t.text}; }}
"""
