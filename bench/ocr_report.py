"""The OCR benchmark's Markdown section: CER and seconds per style and engine, DeskLens's
table-structure F1 and decorations read, and the verdicts against the targets of issues 3
and 20."""

from __future__ import annotations

import statistics

from bench.ocr_engines import TESSERACT
from bench.ocr_scoring import Score

HEADING = "## OCR: DeskLens vs Tesseract"
# Issue 20's bar: its styles at the documents' level, the earlier styles kept where they are.
NEW_STYLE_MAX_CER = 0.01
OLD_STYLES_MAX_MEAN_CER = 0.001
MIN_TABLE_F1 = 0.95


def _mean(values: list[float]) -> float:
    return statistics.mean(values) if values else float("nan")


def _cer(group: list[Score], label: str) -> float:
    return _mean([score.readings[label].cer for score in group])


def _by_style(scores: list[Score]) -> dict[str, list[Score]]:
    styles: dict[str, list[Score]] = {}
    for score in scores:
        styles.setdefault(score.sample.style, []).append(score)
    return styles


def _f1(group: list[Score], label: str) -> float | None:
    values = [s.readings[label].table_f1 for s in group if s.readings[label].table_f1 is not None]
    return statistics.mean(values) if values else None


def _decorations(group: list[Score], label: str) -> tuple[int, int]:
    read = sum(s.readings[label].decorations_read or 0 for s in group)
    return read, sum(len(s.sample.decorations) for s in group)


def _row(style: str, group: list[Score], columns: list[str], *, bold: bool) -> str:
    mark = "**" if bold else ""
    cers = [_cer(group, label) for label in columns]
    seconds = [statistics.median(s.readings[label].seconds for s in group) for label in columns]
    cells = [f"{mark}{value:.4f}{mark}" for value in cers]
    cells += [f"{mark}{value:.2f}{mark}" for value in seconds]
    f1 = _f1(group, columns[0])
    read, drawn = _decorations(group, columns[0])
    cells += [f"{f1:.3f}" if f1 is not None else "", f"{read}/{drawn}" if drawn else ""]
    return f"| {mark}{style}{mark} | {len(group)} | " + " | ".join(cells) + " |"


def _verdict(passed: bool, text: str) -> str:
    return f"- {'PASS' if passed else 'MISS'}: {text}"


def _document_verdicts(scores: list[Score], label: str) -> list[str]:
    """Issue 3: half of Tesseract's CER, no style worse, no slower."""
    ours, theirs = _cer(scores, label), _cer(scores, TESSERACT)
    worse = [
        style
        for style, group in _by_style(scores).items()
        if _cer(group, label) > _cer(group, TESSERACT)
    ]
    our_time = statistics.median(score.readings[label].seconds for score in scores)
    their_time = statistics.median(score.readings[TESSERACT].seconds for score in scores)
    return [
        _verdict(
            ours <= theirs / 2,
            f"{label}: mean CER {ours:.4f} is at most half of Tesseract's {theirs:.4f}",
        ),
        _verdict(
            not worse,
            f"{label}: no style class is worse than Tesseract"
            + (f" (worse: {', '.join(worse)})" if worse else ""),
        ),
        _verdict(
            our_time <= their_time,
            f"{label}: median time {our_time:.2f} s is no slower than "
            f"Tesseract's {their_time:.2f} s",
        ),
    ]


def _screen_verdicts(
    scores: list[Score], label: str, new_styles: set[str], earlier: set[str]
) -> list[str]:
    """Issue 20: new styles at the documents' CER, table F1, decorations, earlier styles kept."""
    styles = _by_style(scores)
    new = {style: group for style, group in styles.items() if style in new_styles}
    old = [score for style, group in styles.items() if style in earlier for score in group]
    if not new:
        return []
    cers = {style: _cer(group, label) for style, group in new.items()}
    over = [f"{style} {value:.4f}" for style, value in cers.items() if value > NEW_STYLE_MAX_CER]
    f1s = {style: _f1(group, label) for style, group in styles.items()}
    low = [f"{s} {f1:.3f}" for s, f1 in f1s.items() if f1 is not None and f1 < MIN_TABLE_F1]
    read, drawn = _decorations(scores, label)
    lines = [
        _verdict(
            not over,
            f"{label}: mean CER <= {NEW_STYLE_MAX_CER} on every issue-20 style"
            + (f" (over: {', '.join(over)})" if over else ""),
        ),
        _verdict(
            not low,
            f"{label}: table-structure F1 >= {MIN_TABLE_F1} on every style with tables"
            + (f" (under: {', '.join(low)})" if low else ""),
        ),
        _verdict(read == 0, f"{label}: decorations read as text: {read} of {drawn}"),
    ]
    if old:
        old_cer = _cer(old, label)
        lines.append(
            _verdict(
                old_cer <= OLD_STYLES_MAX_MEAN_CER,
                f"{label}: the earlier styles' mean CER {old_cer:.4f} stays <= "
                f"{OLD_STYLES_MAX_MEAN_CER}",
            )
        )
    return lines


def report(
    scores: list[Score],
    labels: list[str],
    command: str,
    setup: str,
    new_styles: set[str],
    earlier: set[str],
) -> str:
    """Markdown: a row per style (CER, seconds, table F1, decorations), the totals, verdicts.
    new_styles: issue 20's; earlier: the styles before them (issue 3's, tuning seed)."""
    columns = [*labels, TESSERACT]
    rows = [
        "| Style | Images | "
        + " | ".join(f"CER {label}" for label in columns)
        + " | "
        + " | ".join(f"s/image {label}" for label in columns)
        + f" | Table F1 {labels[0]} | Decorations read |",
        "|---|---:|" + "---:|" * (2 * len(columns) + 2),
    ]
    rows += [_row(style, group, columns, bold=False) for style, group in _by_style(scores).items()]
    rows.append(_row("all", scores, columns, bold=True))
    verdicts = [line for label in labels for line in _document_verdicts(scores, label)]
    verdicts += [
        line for label in labels for line in _screen_verdicts(scores, label, new_styles, earlier)
    ]
    return "\n".join(
        [
            HEADING,
            "",
            f"Command: `{command}`",
            "",
            setup,
            "",
            "CER: edit distance / reference length after whitespace normalisation (reading order "
            "counts), mean over the images. Seconds: fastest of the repeated runs (median over "
            "the images); DeskLens was warmed up on other rendered screenshots first. Table F1: "
            "cell-level precision/recall of (row, column, text) against the rendered cells, per "
            "drawn table the found table matching it best, mean over the images (not TEDS). "
            "Decorations read: drawn avatars, dots, bullets, swatches, checkboxes, radios, "
            "toggles and icons covered by half or more by an output line's box.",
            "",
            *rows,
            "",
            *verdicts,
            "",
        ]
    )
