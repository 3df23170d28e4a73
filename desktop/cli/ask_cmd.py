"""`desklens ask IMAGE... -q "…"`: one question, the answer streamed to stdout."""

from __future__ import annotations

import argparse
import json
import sys

from desktop.cli import exit_codes
from desktop.cli.common import (
    CliError,
    add_generation_options,
    add_model_options,
    ctrl_c_stops,
    fail,
    generation_overrides,
    load_engine,
    load_images,
)
from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.presets import PRESETS, get_preset


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="ask a question about images; streams the answer",
        description="Ask a question about one or more images; the answer streams to stdout.",
    )
    parser.add_argument("images", nargs="*", metavar="IMAGE", help="image files or folders")
    parser.add_argument("-q", "--question", help="the question")
    parser.add_argument("--preset", choices=list(PRESETS), help="a ready-made request")
    parser.add_argument(
        "--json", action="store_true", help="print the answer and its stats as one JSON object"
    )
    parser.add_argument(
        "--ground",
        action="store_true",
        help="give the model the fast-OCR text of the images with the question",
    )
    add_model_options(parser)
    add_generation_options(parser)
    parser.set_defaults(run=run)


def generation_settings(args: argparse.Namespace) -> tuple[str, GenerationSettings]:
    """The prompt and settings from --question / --preset and the generation options."""
    overrides = generation_overrides(args)
    if args.preset:
        preset = get_preset(args.preset)
        prompt = preset.prompt if not args.question else f"{preset.prompt}\n{args.question}"
        return prompt, preset.settings_with(**overrides)
    if not args.question:
        raise CliError("give a question with -q/--question or a --preset", exit_codes.USAGE)
    return args.question, GenerationSettings(**overrides)


def grounded_prompt(question: str, images) -> str:
    from desktop.core.ocr import OcrEngine, grounding_text
    from desktop.core.refine import grounded_question

    ocr = OcrEngine()
    return grounded_question(question, [grounding_text(ocr.extract(image)) for image in images])


def run(args: argparse.Namespace) -> int:
    try:
        prompt, settings = generation_settings(args)
        images = load_images(args.images)
        if args.ground:
            prompt = grounded_prompt(prompt, images)
        engine = load_engine(args)
    except CliError as exc:
        return fail(exc)

    def stream(chunk: str) -> None:
        sys.stdout.write(chunk)
        sys.stdout.flush()

    with ctrl_c_stops(engine):
        answer = engine.ask(
            Conversation(), prompt, images, settings, on_text=None if args.json else stream
        )
    if answer.error:
        return fail(CliError(answer.error, exit_codes.FAILED))
    if args.json:
        print(
            json.dumps(
                {
                    "answer": answer.text,
                    "prompt": prompt,
                    "finish_reason": answer.finish_reason,
                    "model": engine.info.name,
                    "images": [image.name for image in images],
                    "stats": answer.stats.to_dict(),
                },
                ensure_ascii=False,
            )
        )
    else:
        stream("\n")
        stats = answer.stats
        print(
            f"[{answer.finish_reason}] {stats.generated_tokens} tokens, first token "
            f"{stats.ttft_s:.2f} s, {stats.tokens_per_s:.1f} tok/s, "
            f"{stats.visual_tokens} visual tokens",
            file=sys.stderr,
        )
    return exit_codes.OK
