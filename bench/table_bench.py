#!/usr/bin/env python3
"""Table rows read exactly on layouts the layout rules were not written on (issue 28).

    python bench/table_bench.py --write
    git archive 1ffa651 desktop | tar -x -C /tmp/before   # the code before issue 28
    python bench/table_bench.py --before /tmp/before --write

Pages from devkit/table_pages.py (invoices with a narrow Qty column, bank statements with empty
debit/credit cells and zebra rows in light and dark, ruled timetables, spec sheets, price lists
with a rule under the header only, a dark data grid, a packing slip with a key-value block
beside its items; fonts the benchmark's renderings do not use), read by the default engine
(INT8). A drawn row counts as exact when the found table matching its drawn table best holds a
row with exactly its cells (same number of columns, same texts, empty cells empty). Lone
characters: drawn one-character cells ("1", "-", "0", "x") found in their place in the row
that matches their drawn row best. `--before DIR` also reads the same pages with the
`desktop` package of another checkout (in a child process) and shows its figures beside.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OTHER_CODE = os.environ.get("TABLE_BENCH_CODE")  # the checkout --before reads with
sys.path[:0] = [*([OTHER_CODE] if OTHER_CODE else []), str(ROOT), str(ROOT / "bench")]
from results import publish  # noqa: E402
from smoke import add_smoke_options  # noqa: E402

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
                misses.append(f"{page.name}: drawn `{row}`, found `{_closest_row(best, row)}`")
            closest = _closest_row(best, row) if not exact else row
            for index, cell in enumerate(row):
                if len(cell) == 1:
                    score.lone += 1
                    score.lone_kept += index < len(closest) and closest[index].strip() == cell
    return score


def run(per_kind: int, seed: int, misses: list[str]) -> dict[str, Score]:
    from desktop.core.ocr import OcrEngine

    engine = OcrEngine()
    engine.warm_up()
    scores: dict[str, Score] = defaultdict(Score)
    for page in table_pages(per_kind, seed):
        scores[page.kind].add(score_page(engine.extract(page.image), page, misses))
    return scores


def run_before(code: Path, per_kind: int, seed: int) -> dict[str, Score]:
    """`run` with the desktop package of another checkout, in a child process."""
    command = [sys.executable, __file__, "--json", "--per-kind", str(per_kind), "--seed", str(seed)]
    env = {**os.environ, "TABLE_BENCH_CODE": str(code.resolve())}
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return {kind: Score(**score) for kind, score in json.loads(output).items()}


def _share(score: Score) -> float:
    return score.exact / max(score.rows, 1)


def report(
    scores: dict[str, Score], command: str, before: dict[str, Score] | None, misses: list[str]
) -> str:
    extra = " | Exact rows before | One-character cells kept before" if before else ""
    lines = [
        HEADING,
        "",
        f"Command: `{command}`",
        "",
        f"| Kind | Rows | Exact rows | One-character cells kept{extra} |",
        "|---|---:|---:|---:|" + ("---:|---:|" if before else ""),
    ]
    total, total_before = Score(), Score()
    for kind in [*KINDS, "**all**"]:
        score = total if kind == "**all**" else scores[kind]
        old = total_before if kind == "**all**" else (before or {}).get(kind, Score())
        if kind != "**all**":
            total.add(score)
            total_before.add(old)
        cells = [kind, str(score.rows), f"{_share(score):.1%}", f"{score.lone_kept}/{score.lone}"]
        if before:
            cells += [f"{_share(old):.1%}", f"{old.lone_kept}/{old.lone}"]
        lines.append("| " + " | ".join(cells) + " |")
    overall, worst = _share(total), min(_share(scores[kind]) for kind in KINDS)
    verdict = "PASS" if overall >= TARGET and worst >= KIND_FLOOR else "FAIL"
    lines += [
        "",
        f"- {verdict}: {overall:.1%} of rows exact (target >= {TARGET:.0%}), "
        f"lowest kind {worst:.1%} (floor {KIND_FLOOR:.0%})",
    ]
    if misses:
        lines += ["", "Rows not read exactly (this code):", ""]
        lines += [f"- {miss}" for miss in misses]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=5, help="pages of each kind")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    add_smoke_options(parser)
    parser.add_argument("--before", type=Path, help="another checkout's root, read beside")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # --before's child
    args = parser.parse_args()
    per_kind = 1 if args.smoke else args.per_kind
    misses: list[str] = []
    scores = run(per_kind, args.seed, misses)
    if args.json:
        print(json.dumps({kind: dataclasses.asdict(score) for kind, score in scores.items()}))
        return
    before = run_before(args.before, per_kind, args.seed) if args.before else None
    command = "python bench/table_bench.py" + (f" --per-kind {per_kind}" if per_kind != 5 else "")
    command += " --before /tmp/before" if args.before else ""
    text = report(scores, command + " --write", before, misses)
    publish(HEADING, text, args.write and not args.smoke)


if __name__ == "__main__":
    main()
