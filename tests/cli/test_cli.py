"""`desklens ask | chat | models` and their exit codes, as a user runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from cli_runner import ROOT, desklens

from desktop.cli import main


def test_ask_streams_the_answer(models_dir, screenshot):
    result = desklens("ask", str(screenshot), "-q", "What is the total?", "--max-new-tokens", "8")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()  # the (gibberish) answer
    assert "image tokens kept" in result.stderr and "first token" in result.stderr


def test_ask_json_prints_answer_and_stats(models_dir, screenshot, capsys):
    code = main(["ask", str(screenshot), "--preset", "text", "--json", "--max-new-tokens", "6"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "tiny" and data["images"] == ["screenshot.png"]
    assert data["stats"]["generated_tokens"] <= 6 and data["stats"]["visual_tokens"] > 0
    assert data["finish_reason"] in ("eos", "length")


def test_no_skip_repeats_reads_every_block(models_dir, screenshot, capsys):
    counts = {}
    for flags in ([], ["--no-skip-repeats"]):
        code = main(
            ["ask", str(screenshot), "-q", "Total?", "--json", "--max-new-tokens", "2", *flags]
        )
        assert code == 0
        stats = json.loads(capsys.readouterr().out)["stats"]
        counts[bool(flags)] = (stats["visual_tokens"], stats["visual_tokens_full"])
    full = counts[True][1]
    assert counts[True] == (full, full)  # everything read
    assert 0 < counts[False][0] < full == counts[False][1]  # the page's white repeats


def test_ask_each_answers_every_image_on_its_own(models_dir, screenshot, tmp_path, capsys):
    from PIL import Image

    other = tmp_path / "other.png"
    Image.open(screenshot).rotate(90, expand=True).save(other)
    args = ["ask", str(screenshot), str(other), "-q", "Extract the text.", "--max-new-tokens", "5"]
    assert main([*args, "--each", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["images"] for r in records] == [["screenshot.png"], ["other.png"]]
    assert all(0 < r["stats"]["generated_tokens"] <= 5 for r in records if r["answer"])
    assert main([*args, "--each"]) == 0
    out = capsys.readouterr()
    assert "== screenshot.png ==" in out.out and "== other.png ==" in out.out
    assert "[2 answers]" in out.err
    assert main([*args[:1], *args[3:], "--each"]) == 2  # no image: usage error


def test_ask_without_a_question_is_a_usage_error(models_dir, screenshot, capsys):
    assert main(["ask", str(screenshot)]) == 2
    assert "give a question" in capsys.readouterr().err


def test_unknown_flag_is_a_usage_error():
    result = desklens("ask", "--no-such-flag")
    assert result.returncode == 2 and "unrecognized arguments" in result.stderr


def test_no_model_is_exit_code_3(tmp_path, monkeypatch, screenshot, capsys):
    monkeypatch.setenv("DESKLENS_MODELS_DIR", str(tmp_path / "empty"))
    assert main(["ask", str(screenshot), "-q", "Hi"]) == 3
    err = capsys.readouterr().err
    assert "No converted model found" in err and "convert.py" in err


def test_damaged_model_is_exit_code_3(models_dir, screenshot, capsys):
    (models_dir / "tiny" / "openvino_tokenizer.xml").unlink()
    assert main(["ask", str(screenshot), "-q", "Hi"]) == 3
    assert "openvino_tokenizer.xml is missing" in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"", b"not an image at all", b"\x89PNG\r\n\x1a\n\0\0"])
def test_bad_image_is_exit_code_4(models_dir, tmp_path, content, capsys):
    bad = tmp_path / "broken.png"
    bad.write_bytes(content)
    assert main(["ask", str(bad), "-q", "Hi"]) == 4
    assert "broken.png" in capsys.readouterr().err


def test_non_image_file_is_exit_code_4(models_dir, tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    assert main(["ask", str(notes), "-q", "Hi"]) == 4
    assert "notes.txt" in capsys.readouterr().err


def test_models_lists_converted_models(models_dir, capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "tiny" in out and "int8" in out
    assert main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["name"] == "tiny" and rows[0]["weight_format"] == "int8"


def test_chat_holds_a_multi_turn_conversation(models_dir, screenshot):
    script = "What is this?\nAnd the total?\n/clear\nNew question\n"
    result = desklens("chat", str(screenshot), "--max-new-tokens", "5", stdin=script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("desklens> ") == 3
    assert "(new conversation)" in result.stderr


@pytest.mark.parametrize("first_ocr", [False, True], ids=["verdict kept", "first OCR here"])
def test_ctrl_c_stops_the_answer_and_keeps_it(models_dir, screenshot, tmp_path, first_ocr):
    """Also right after the first OCR on a CPU (its INT8 check in the same process): OpenVINO
    crashed there (exit -11, 3 of 3) while the check's OCR engines had been dropped."""
    env = dict(os.environ)
    if first_ocr:  # no verdict kept: the checks' OCR runs the INT8 check in this process
        env["DESKLENS_OCR_VERDICTS"] = str(tmp_path / "new-verdicts.json")
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "ask", str(screenshot), "-q", "Go on.",
         "--max-new-tokens", "6000", "--ignore-eos"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True, env=env,
    )  # fmt: skip
    first = proc.stdout.read(1)  # the answer has started streaming: interrupt it now
    assert first
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "[stopped]" in err


def test_ocr_refine_streams_the_models_markdown(models_dir, screenshot):
    result = desklens("ocr", str(screenshot), "--refine")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()  # the tiny model's (gibberish) Markdown


def test_ocr_refine_takes_one_image(models_dir, screenshot, capsys):
    assert main(["ocr", str(screenshot), str(screenshot), "--refine", "--combined", "x.md"]) == 2
    assert "--refine works on one image at a time" in capsys.readouterr().err


@pytest.fixture
def total_png(tmp_path):
    """A screenshot with one line of text the fast OCR reads exactly."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (640, 160), "white")
    font = ImageFont.load_default(size=36)
    ImageDraw.Draw(image).text((20, 50), "Total due 320.04 GBP", fill="black", font=font)
    path = tmp_path / "total.png"
    image.save(path)
    return path


def test_ask_grounded_gives_the_model_the_ocr_lines(models_dir, total_png, capsys):
    path = total_png
    code = main(["ask", str(path), "-q", "What is the total?", "--ground", "--json",
                 "--max-new-tokens", "4"])  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert "320.04" in data["prompt"] and data["prompt"].endswith("Question: What is the total?")


def test_extraction_presets_draft_from_the_ocr_and_answer_the_same(models_dir, total_png, capsys):
    import argparse

    from desktop.cli.common import drafting_hints, load_images

    path = total_png
    images = load_images([str(path)])

    def hints(preset, mode, results=None):
        args = argparse.Namespace(preset=preset, ocr_drafts=mode, threads=None)
        return drafting_hints(args, images, results)

    assert hints("text", "auto") == ["Total due 320.04 GBP"]
    assert hints("describe", "auto") == [] and hints("text", "off") == []
    assert hints(None, "on") == ["Total due 320.04 GBP"]
    assert hints(None, "auto", results=[]) == []  # --ground's results are reused, not re-read
    answers = {}
    for mode in ("auto", "off"):
        code = main(["ask", str(path), "--preset", "text", "--json", "--ocr-drafts", mode,
                     "--max-new-tokens", "24", "--ignore-eos"])  # fmt: skip
        assert code == 0
        answers[mode] = json.loads(capsys.readouterr().out)["answer"]
    assert answers["auto"] == answers["off"]


def test_chat_reads_attached_images_while_the_question_is_typed(tiny_ir, sample_image):
    from desktop.cli.chat_cmd import ReadAhead
    from desktop.core.chat import GenerationSettings
    from desktop.core.conversation import AskRequest, ConversationService, FollowUp
    from desktop.core.engine import VLMEngine
    from desktop.core.images import load_image

    engine = VLMEngine.load(tiny_ir)
    service = ConversationService(engine)
    image = load_image(sample_image)
    settings = GenerationSettings(max_new_tokens=4)
    ahead = ReadAhead(service)
    ahead.start([image], settings)
    ahead._thread.join()  # the user is still typing when it is done
    held = engine.language.kv_length
    ahead.finish()
    request = AskRequest("What is the total?", (image,), settings, where=FollowUp())
    answer = service.ask(request).answer
    assert held > answer.stats.visual_tokens > 0  # the image's kept tokens were read ahead
    assert (
        answer.stats.images_cached == 1
        and answer.stats.input_tokens == len(engine.last_sequence) - held
    )
