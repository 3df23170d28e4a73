#!/usr/bin/env python3
"""Table rows read exactly on layouts the layout rules were not written on (issue 28).

    python bench/table_bench.py --write

Pages from devkit/table_pages.py (invoices with a narrow Qty column, bank statements with empty
debit/credit cells and zebra rows in light and dark, ruled timetables, spec sheets, price lists
with a rule under the header only, a dark data grid, a packing slip with a key-value block
beside its items; fonts the benchmark's renderings do not use), read by the default engine
(INT8). A drawn row counts as exact when the found table matching its drawn table best holds a
row with exactly its cells (same number of columns, same texts, empty cells empty). Lone
characters: drawn one-character cells ("1", "-", "0", "x") found in their place in the row
that matches their drawn row best.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
from results import publish  # noqa: E402

from desktop.core.ocr.models import OcrResult  # noqa: E402
from devkit.table_pages import KINDS, TablePage, best_table, same_row, table_pages  # noqa: E402

HEADING = "## Tables on unseen layouts"
TARGET, KIND_FLOOR = 0.97, 0.90


@dataclass
class Score:
    rows: int = 0
    exact: int = 0
    lone: int = 0
    lone_kept: int = 0

    def add(self, other: Score) -> None:
        self.rows += other.rows
        self.exact += other.exact
        self.lone += other.lone
        self.lone_kept += other.lone_kept


def _closest_row(table: list[list[str]], drawn: list[str]) -> list[str]:
    def shared(row: list[str]) -> int:
        return sum(1 for a, b in zip(row, drawn, strict=False) if a.strip() == b)

    return max(table, key=shared, default=[])


def score_page(result: OcrResult, page: TablePage, misses: list[str] | None = None) -> Score:
    """Exact rows and kept one-character cells of the page's drawn tables."""
    found = [[list(row) for row in table.rows] for table in result.tables]
    score = Score()
    for drawn in page.tables:
        best = best_table(found, drawn)
        for row in drawn:
            score.rows += 1
            exact = any(same_row(r, row) for r in best)
            score.exact += exact
            if not exact and misses is not None:
                misses.append(f"{page.name}: drawn {row} found {_closest_row(best, row)}")
            closest = _closest_row(best, row) if not exact else row
            for index, cell in enumerate(row):
                if len(cell) == 1:
                    score.lone += 1
                    score.lone_kept += index < len(closest) and closest[index].strip() == cell
    return score


def run(per_kind: int, seed: int, show: bool) -> dict[str, Score]:
    from desktop.core.ocr import OcrEngine

    engine = OcrEngine()
    engine.warm_up()
    scores: dict[str, Score] = defaultdict(Score)
    misses: list[str] = []
    for page in table_pages(per_kind, seed):
        scores[page.kind].add(score_page(engine.extract(page.image), page, misses))
    if show:
        print("\n".join(misses), file=sys.stderr)
    return scores


def report(scores: dict[str, Score], command: str) -> str:
    lines = [
        HEADING,
        "",
        f"Command: `{command}`",
        "",
        "| Kind | Rows | Exact rows | One-character cells kept |",
        "|---|---:|---:|---:|",
    ]
    total = Score()
    for kind in KINDS:
        score = scores[kind]
        total.add(score)
        lines.append(
            f"| {kind} | {score.rows} | {score.exact / max(score.rows, 1):.1%} "
            f"| {score.lone_kept}/{score.lone} |"
        )
    overall = total.exact / max(total.rows, 1)
    lines.append(f"| **all** | {total.rows} | **{overall:.1%}** | {total.lone_kept}/{total.lone} |")
    worst = min(scores[kind].exact / max(scores[kind].rows, 1) for kind in KINDS)
    verdict = "PASS" if overall >= TARGET and worst >= KIND_FLOOR else "FAIL"
    lines += [
        "",
        f"- {verdict}: {overall:.1%} of rows exact (target >= {TARGET:.0%}), "
        f"lowest kind {worst:.1%} (floor {KIND_FLOOR:.0%})",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=5, help="pages of each kind")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--show", action="store_true", help="print the rows not read exactly")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--smoke", action="store_true", help="one page per kind; never writes")
    args = parser.parse_args()
    per_kind = 1 if args.smoke else args.per_kind
    command = "python bench/table_bench.py" + (f" --per-kind {per_kind}" if per_kind != 5 else "")
    scores = run(per_kind, args.seed, args.show)
    publish(HEADING, report(scores, command + " --write"), args.write and not args.smoke)


if __name__ == "__main__":
    main()
