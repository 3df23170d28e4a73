"""`desklens ask`'s evidence, regions and readability warning (issue 40), as a user runs them.

The evidence tests use a stand-in engine with a fixed answer (the conversation service takes
any `AnswerEngine`) on rendered pages read by the real fast OCR; the region and warning tests
use the tiny model, whose words are gibberish: they test the mechanics, not the reading."""

from __future__ import annotations

import json

import pytest

from desktop.cli import ask_cmd, main
from desktop.core.chat import Answer, AnswerStats
from desktop.core.conversation.engine_protocol import ModelInfo
from desktop.core.ocr.rendered_pages import render_lines

INVOICE = ["Invoice INV-4471", "Customer: Acme Widgets GmbH", "Total due: 12,450.50 EUR"]


class FixedAnswer:
    """An engine that answers every question with the same words."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.info = ModelInfo("stand-in", None, "CPU", "none", None)
        self.questions: list[str] = []

    def ask(self, conversation, question, images=(), settings=None, on_text=None, hints=()):
        self.questions.append(question)
        if on_text is not None:
            on_text(self.text)
        return Answer(self.text, "eos", AnswerStats(generated_tokens=1))

    def stop(self) -> None: ...

    def reset(self) -> None: ...

    def use_lane(self, lane) -> None: ...  # one state: every lane is the same


@pytest.fixture
def invoice(tmp_path):
    path = tmp_path / "invoice.png"
    render_lines(INVOICE, size=22, width=700).save(path)
    return path


def ask_fixed(monkeypatch, capsys, text: str, *args: str) -> tuple[int, str, str]:
    engine = FixedAnswer(text)
    monkeypatch.setattr(ask_cmd, "load_answer_engine", lambda args: engine)
    code = main(["ask", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_answers_evidence_is_the_lines_it_quotes_and_an_invented_figure_is_flagged(
    monkeypatch, capsys, invoice
):
    answer = (
        'The total due is 12450.50 EUR on invoice 4471, billed to "Acme Widgets GmbH"; '
        "a late fee of 7,777.00 EUR is added."
    )
    code, out, _ = ask_fixed(monkeypatch, capsys, answer, str(invoice), "-q", "Total?", "--json")
    assert code == 0
    evidence = json.loads(out)["evidence"]
    by_text = {line["text"]: line for line in evidence["lines"]}
    assert set(by_text) == set(INVOICE)  # every quoted line, formatting variants too
    assert by_text["Total due: 12,450.50 EUR"]["quotes"] == ["12450.50"]
    assert by_text["Invoice INV-4471"]["quotes"] == ["4471"]
    assert "acme widgets gmbh" in by_text["Customer: Acme Widgets GmbH"]["quotes"]
    left, top, right, bottom = by_text["Total due: 12,450.50 EUR"]["box"]
    assert left < 40 and 60 < top < bottom < 130 and right > 300  # the third line's box
    assert all(line["image"] == 0 for line in evidence["lines"])
    assert evidence["not_found"] == ["7,777.00"]


def test_a_streamed_answer_says_which_figures_are_not_on_the_image(monkeypatch, capsys, invoice):
    answer = "It is 12.450,50 (European style), not 12,999.00."
    code, out, err = ask_fixed(monkeypatch, capsys, answer, str(invoice), "-q", "Total?")
    assert code == 0 and out.startswith(answer)
    assert "not found on the image: 12,999.00 (check these figures)" in err
    assert "12.450,50" not in err.split("not found on the image:")[1]
    code, out, err = ask_fixed(monkeypatch, capsys, answer, str(invoice), "-q", "T?", "--no-checks")
    assert code == 0 and "not found" not in err  # no checks, no OCR run for them


def test_a_region_goes_to_the_model_as_a_box_and_a_crop(monkeypatch, capsys, invoice):
    engine = FixedAnswer("Acme Widgets GmbH")
    monkeypatch.setattr(ask_cmd, "load_answer_engine", lambda args: engine)
    code = main(["ask", str(invoice), "-q", "Who?", "--region", "20,50,400,40", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["regions"] == [{"image": 0, "x": 20, "y": 50, "w": 400, "h": 40}]
    assert '{"bbox_2d": [29, ' in engine.questions[0] and engine.questions[0].endswith("Who?")
    assert data["prompt"] == engine.questions[0]


def test_a_region_off_the_image_is_a_usage_error(monkeypatch, capsys, invoice):
    code, _, err = ask_fixed(monkeypatch, capsys, "x", str(invoice), "-q", "?", "--region", "1,2")
    assert code == 2 and "is not a region: give X,Y,W,H" in err
    code, _, err = ask_fixed(
        monkeypatch, capsys, "x", str(invoice), "-q", "?", "--region", "600,0,400,40"
    )
    assert code == 2 and "is not inside invoice.png" in err


def test_the_tiny_model_warns_before_reading_text_it_would_shrink_too_far(
    models_dir, tmp_path, capsys
):
    path = tmp_path / "small.png"
    render_lines(INVOICE * 4, size=12, width=1400, height=1000).save(path)
    args = ["ask", str(path), "-q", "Total?", "--json", "--max-new-tokens", "2"]
    assert main([*args, "--max-visual-tokens", "64"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["text_too_small"] is True and data["readability"][0]["too_small"] is True
    [line] = [line for line in err.splitlines() if "too small to read" in line]
    assert "--max-visual-tokens" in line and "--region" in line and "--ground" in line
    assert main(args) == 0  # the default budget keeps 12 px text readable on this page
    out, err = capsys.readouterr()
    assert json.loads(out)["text_too_small"] is False and "too small" not in err
