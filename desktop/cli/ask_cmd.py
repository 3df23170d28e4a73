"""`desklens ask IMAGE... -q "…"`: one question, the answer streamed to stdout."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from desktop.cli import ask_checks, exit_codes
from desktop.cli.ask_checks import add_check_options
from desktop.cli.common import (
    CliError,
    add_drafting_option,
    add_generation_options,
    add_model_options,
    add_server_options,
    ctrl_c_stops,
    drafting_hints,
    fail,
    generation_overrides,
    load_answer_engine,
    load_images,
    local_model_hint,
    ocr_kept,
    stdout_closed,
)
from desktop.core import paths
from desktop.core.chat import Answer, AnswerStats, GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService, GroundTexts, NoContext
from desktop.core.presets import PRESETS, Preset
from desktop.core.refine import COPYING_PRESETS
from desktop.core.terminal_text import terminal_text
from desktop.core.user_presets import find_preset, load_book

if TYPE_CHECKING:
    from desktop.core.conversation.engine_protocol import AnswerEngine
    from desktop.core.images import LoadedImage
    from desktop.core.ocr.models import OcrResult


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="ask a question about images; streams the answer",
        description="Ask a question about one or more images; the answer streams to stdout.",
    )
    parser.add_argument("images", nargs="*", metavar="IMAGE", help="image files or folders")
    parser.add_argument("-q", "--question", help="the question")
    parser.add_argument(
        "--preset",
        metavar="NAME",
        help=f"a ready-made request: {', '.join(PRESETS)}, or one of your own prompts (the "
        "app's Settings > My prompts)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the answer and its stats as one JSON object"
    )
    parser.add_argument(
        "--ground",
        action="store_true",
        help="give the model the fast-OCR text of the images with the question",
    )
    parser.add_argument(
        "--each",
        action="store_true",
        help="ask the question of every image on its own (answered side by side, faster than "
        "one run per image)",
    )
    add_check_options(parser)
    add_drafting_option(parser)
    add_model_options(parser)
    add_server_options(parser)
    add_generation_options(parser)
    parser.set_defaults(run=run)


def generation_settings(args: argparse.Namespace) -> tuple[str, GenerationSettings]:
    """The prompt and settings from --question / --preset and the generation options."""
    overrides = generation_overrides(args)
    if args.preset:
        preset = user_or_builtin_preset(args.preset)
        prompt = preset.prompt if not args.question else f"{preset.prompt}\n{args.question}"
        return prompt, preset.settings_with(**overrides)
    if not args.question:
        raise CliError("give a question with -q/--question or a --preset", exit_codes.USAGE)
    return args.question, GenerationSettings(**overrides)


def user_or_builtin_preset(name: str) -> Preset:
    """--preset NAME: a built-in key, or a name from the app's presets file (no Qt needed)."""
    if name in PRESETS:
        return PRESETS[name]
    loaded = load_book(paths.user_data_dir())
    try:
        return find_preset(name, loaded.book)
    except ValueError as exc:
        message = f"{exc} {loaded.problem}" if loaded.problem else str(exc)
        raise CliError(message, exit_codes.USAGE) from None


def grounding_texts(results: Sequence[OcrResult] | None) -> tuple[str, ...]:
    """What `--ground` puts before the question: each image's fast-OCR lines."""
    if results is None:
        return ()
    from desktop.core.ocr import grounding_text

    return tuple(grounding_text(result) for result in results)


def run(args: argparse.Namespace) -> int:
    with ocr_kept():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        prompt, settings = generation_settings(args)
        images = load_images(args.images)
        if args.each and (not images or args.ground or settings.json_schema or args.region):
            raise CliError(
                "--each needs images and works without --ground, --region or the JSON preset",
                exit_codes.USAGE,
            )
        asked = ask_checks.regions(args, images)
        engine = load_answer_engine(args)
        if args.each:
            return run_each(
                ConversationService(engine), engine, prompt, images, settings, as_json=args.json
            )
        results = ask_checks.ocr_results(args, images)
        remote = bool(engine.info.server)  # a server drafts as it does: no OCR for hints
        # The checks' OCR also drafts, where drafting would have run an OCR of its own.
        drafts = args.ground or args.ocr_drafts == "on" or args.preset in COPYING_PRESETS
        hints = [] if remote else drafting_hints(args, images, results if drafts else None)
    except CliError as exc:
        return fail(exc)
    service = ConversationService(engine)
    sizes = ask_checks.text_sizes(results, images, asked, ask_checks.vision_spec(engine))
    ask_checks.warn(sizes)  # before the model reads: the user may stop it and ask otherwise
    stream = _AnswerPrinter(engine)
    ground_texts = grounding_texts(results if args.ground else None)
    context = GroundTexts(ground_texts) if ground_texts else NoContext()
    request = AskRequest(
        prompt, tuple(images), settings, hints=tuple(hints), context=context, regions=asked
    )
    with ctrl_c_stops(engine):
        result = service.ask(request, on_text=None if args.json else stream)
    answer = result.answer
    if stream.closed:
        return stdout_closed()
    if answer.error:
        hint = local_model_hint() if engine.info.server else ""
        return fail(CliError(answer.error + hint, exit_codes.FAILED))
    found = ask_checks.evidence(answer.text, results)
    if args.json:
        record = answer_record(answer, result.prompt, engine, images)
        record.update(ask_checks.json_fields(sizes, found, asked))
        print(json.dumps(record, ensure_ascii=False))
    else:
        stream("\n")
        stats = answer.stats
        drafted = (
            f", {stats.accepted_tokens}/{stats.drafted_tokens} drafted tokens accepted"
            if stats.drafted_tokens
            else ""
        )
        print(
            f"[{answer.finish_reason}] {stats.generated_tokens} tokens, first token "
            f"{stats.ttft_s:.2f} s, {stats.tokens_per_s:.1f} tok/s, "
            f"{where_answered(stats)}{drafted}",
            file=sys.stderr,
        )
        ask_checks.report_not_found(found)
    if answer.cut_off is not None:  # the words came, but not as the server should send them
        return fail(CliError(answer.cut_off, exit_codes.FAILED))
    return exit_codes.OK


class _AnswerPrinter:
    """Streams an answer to stdout, shown and never run; when stdout's reader leaves
    (`| head -c 3`) the answer stops, quietly."""

    def __init__(self, engine: AnswerEngine) -> None:
        self.engine = engine
        self.closed = False

    def __call__(self, chunk: str) -> None:
        if self.closed:
            return
        try:
            sys.stdout.write(terminal_text(chunk))
            sys.stdout.flush()
        except BrokenPipeError:
            self.closed = True
            self.engine.stop()


def run_each(
    service: ConversationService,
    engine: AnswerEngine,
    prompt: str,
    images: Sequence[LoadedImage],
    settings: GenerationSettings,
    *,
    as_json: bool,
) -> int:
    """One answer per image, decoded side by side; printed in the order given."""
    with ctrl_c_stops(engine):
        answers = service.ask_each(prompt, images, settings)
    failed = next((a.error or a.cut_off for a in answers if a.error or a.cut_off), None)
    if failed:
        return fail(CliError(failed, exit_codes.FAILED))
    if as_json:
        for image, answer in zip(images, answers, strict=True):
            print(json.dumps(answer_record(answer, prompt, engine, [image]), ensure_ascii=False))
        return exit_codes.OK
    for image, answer in zip(images, answers, strict=True):
        print(f"== {image.name} ==\n{answer.text}\n")
    stats = answers[0].stats
    print(
        f"[{len(answers)} answers] {sum(a.stats.generated_tokens for a in answers)} tokens in "
        f"{stats.total_s:.1f} s",
        file=sys.stderr,
    )
    return exit_codes.OK


def answer_record(
    answer: Answer, prompt: str, engine: AnswerEngine, images: Sequence[LoadedImage]
) -> dict[str, Any]:
    return {
        "answer": answer.text,
        "prompt": prompt,
        "finish_reason": answer.finish_reason,
        "model": engine.info.name,
        "images": [image.name for image in images],
        "stats": answer.stats.to_dict(),
    }


def where_answered(stats: AnswerStats) -> str:
    """The server that answered, or this computer's image-token count."""
    if stats.server:
        return f"answered by the server at {stats.server}"
    return stats.image_tokens() or "no images"
