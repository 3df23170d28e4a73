"""The panes of an application window, split at the lines drawn between them.

A window with a sidebar draws a thin line down between the sidebar and its content. The
XY-cut sees only text: the sidebar's header row sits level with the content's toolbar, so
the two were read as one line ("Chats + New chat New chat Capture Export Settings"), and the
sidebar's last label came before the content. A drawn line that runs down most of the page,
that no text crosses and that has words on both sides is a stronger sign than any gap: the
text above it is read first, then each pane, left to right, then the text below it (a
status bar). A table's column rules are not panes: its table, claimed from the drawn grid,
runs across them, or its rows line up on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from desktop.core.ocr.layout_items import Item, Row, group_rows
from desktop.core.ocr.ruled_tables import vertical_rules

PANE_SHARE = 0.5  # a line between panes runs down at least this share of the page
# Rows level with the other side's, this share of each side's or more: a table whose columns
# are ruled but not its rows.
TABLE_LEVEL_SHARE = 0.8
LEVEL_SHARE = 0.3  # of the text height: two rows this close in the middle are level


@dataclass(frozen=True)
class PaneRule:
    x: int
    top: int
    bottom: int


def find_pane_rules(gray: np.ndarray) -> list[PaneRule]:
    """Thin vertical lines down at least PANE_SHARE of the page. A table's rules among them
    divide nothing: its claimed table runs across them, or its rows line up (`_divided`)."""
    min_length = round(PANE_SHARE * gray.shape[0])
    return [PaneRule(*rule) for rule in vertical_rules(gray, min_length)]


def split_panes(
    items: list[Item], rules: list[PaneRule], text_height: float
) -> list[list[Item]] | None:
    """The items in reading order of the panes: those above the leftmost rule that divides
    them, its left and right panes (each divided again by the other rules), those below it;
    None when no rule divides them."""
    for rule in sorted(rules, key=lambda rule: rule.x):
        parts = _divided(items, rule, text_height)
        if parts is None:
            continue
        others = [other for other in rules if other is not rule]
        return [
            piece for part in parts for piece in split_panes(part, others, text_height) or [part]
        ]
    return None


def _divided(items: list[Item], rule: PaneRule, text_height: float) -> list[list[Item]] | None:
    beside = [item for item in items if rule.top < item.centre_y < rule.bottom]
    left = [item for item in beside if item.right <= rule.x]
    right = [item for item in beside if item.left >= rule.x]
    if len(left) + len(right) < len(beside):
        return None  # text runs across the line: it is not between panes
    if not (_has_words(left) and _has_words(right)) or _rows_level(left, right, text_height):
        return None
    above = [item for item in items if item.centre_y <= rule.top]
    below = [item for item in items if item.centre_y >= rule.bottom]
    return [part for part in (above, left, right, below) if part]


def _has_words(items: list[Item]) -> bool:
    """A label of two letters or more: a chart's axis beside its ticks has only numbers."""
    return any(sum(char.isalpha() for char in item.text) >= 2 for item in items)


def _rows_level(left: list[Item], right: list[Item], text_height: float) -> bool:
    """Nearly every row of each side level with a row of the other: a table. A sidebar's
    rows meet some of the content's by chance (its header meets the toolbar)."""
    sides = group_rows(left), group_rows(right)
    if min(map(len, sides)) < 2:
        return False
    return all(
        sum(1 for row in rows if any(_level(row, other, text_height) for other in others))
        >= TABLE_LEVEL_SHARE * len(rows)
        for rows, others in (sides, sides[::-1])
    )


def _level(row: Row, other: Row, text_height: float) -> bool:
    return abs(row.centre_y - other.centre_y) < LEVEL_SHARE * text_height
