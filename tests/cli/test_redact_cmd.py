"""`desklens redact` end to end (issue 49): the real OCR, files on disk, what it says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from desktop.cli import main
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.privacy.user_patterns import read_patterns, write_patterns
from devkit import redaction_pages

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def letter(tmp_path: Path) -> tuple[Path, redaction_pages.RedactionPage]:
    page = redaction_pages.page(11)
    path = tmp_path / "letter.png"
    page.image.save(path, pnginfo=_with_metadata())
    return path, page


def _with_metadata():
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Author", "anna.schmidt@example.com")
    return info


def test_redacts_a_letter_in_a_child_process(letter, tmp_path, data_dir):
    path, page = letter
    out = tmp_path / "out.png"
    done = subprocess.run(
        [sys.executable, "-m", "desktop", "redact", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"Redacted 4 items (1 e-mail, 1 IBAN, 1 card number, 1 phone number) → {out}."
    )
    saved = Image.open(out)
    assert "Author" not in saved.info  # the original's metadata is not copied
    again = OcrEngine().extract(saved.convert("RGB")).text()
    for _, value in page.private:
        assert value not in again
    assert "Account summary" in again
    assert path.read_bytes() != out.read_bytes()  # the input was left as it was


def test_text_and_json(letter, tmp_path, data_dir, capsys):
    path, _ = letter
    assert main(["redact", str(path), "--out", str(tmp_path / "o.png"), "--text", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["outcome"] == "redacted"
    assert sorted(span["kind"] for span in data["spans"]) == ["card", "email", "iban", "phone"]
    assert all(span["boxes"] and not span["estimated"] for span in data["spans"])
    assert "E-mail: [email]" in data["text"] and "@" not in data["text"]
    assert captured.err.startswith("Redacted 4 items")


def test_default_output_name_and_in_place(letter, data_dir, capsys):
    path, _ = letter
    assert main(["redact", str(path)]) == 0
    assert path.with_name("letter.redacted.png").is_file()
    original = path.read_bytes()
    assert main(["redact", str(path), "--out", str(path)]) == 2
    assert "--in-place" in capsys.readouterr().err
    assert path.read_bytes() == original
    assert main(["redact", str(path), "--out", str(path), "--in-place"]) == 0
    assert path.read_bytes() != original


def test_saved_and_given_patterns(tmp_path, data_dir, capsys):
    image = tmp_path / "plan.png"
    render_lines(["Project FALCON-7 starts Monday", "Contact desk 42 for keys"]).save(image)
    write_patterns(data_dir, [r"FALCON-\d+"])
    assert read_patterns(data_dir) == (r"FALCON-\d+",)
    assert (
        main(
            [
                "redact",
                str(image),
                "--out",
                str(tmp_path / "a.png"),
                "--pattern",
                r"desk \d+",
                "--text",
            ]
        )
        == 0
    )
    out = capsys.readouterr()
    assert "Project [custom] starts Monday" in out.out and "Contact [custom] for keys" in out.out
    assert (
        main(["redact", str(image), "--out", str(tmp_path / "b.png"), "--no-saved-patterns"]) == 0
    )
    assert capsys.readouterr().out.startswith("Nothing to redact: the OCR read 2 lines")


def test_bad_pattern_and_bad_saved_file(letter, data_dir, capsys):
    path, _ = letter
    assert main(["redact", str(path), "--pattern", "a(b"]) == 2
    assert "not a valid regular expression" in capsys.readouterr().err
    (data_dir / "redaction.json").write_text('{"patterns": "oops"}')
    assert main(["redact", str(path)]) == 2
    assert "should hold a list of patterns" in capsys.readouterr().err


def test_clean_page_says_so_and_copies(tmp_path, data_dir, capsys):
    image = tmp_path / "notes.png"
    render_lines(["Meeting notes for Tuesday", "Total 1,284.50 EUR"]).save(image)
    out = tmp_path / "notes-out.png"
    assert main(["redact", str(image), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("Nothing to redact: the OCR read 2 lines and found no e-mail, IBAN")
    assert "unchanged copy" in said
    assert np.array_equal(
        np.asarray(Image.open(out).convert("RGB")), np.asarray(Image.open(image).convert("RGB"))
    )
    assert main(["redact", str(image), "--out", str(out), "--pattern", "FALCON"]) == 0
    assert "phone number or match of your patterns." in capsys.readouterr().out


def test_blank_page_is_not_called_clean(tmp_path, data_dir, capsys):
    image = tmp_path / "blank.png"
    Image.new("RGB", (500, 300), "white").save(image)
    out = tmp_path / "blank-out.png"
    assert main(["redact", str(image), "--out", str(out)]) == 1
    said = capsys.readouterr().out
    assert said.startswith("Could not read any text on this page: nothing was redacted")
    assert not out.exists()


def test_corrupt_file_and_missing_file(tmp_path, data_dir, capsys):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    assert main(["redact", str(broken)]) == 4
    assert "broken.png" in capsys.readouterr().err
    assert main(["redact", str(tmp_path / "absent.png")]) == 4
    assert "absent.png" in capsys.readouterr().err
    assert not (tmp_path / "broken.redacted.png").exists()


def test_lossy_output_is_refused(letter, tmp_path, data_dir, capsys):
    path, _ = letter
    assert main(["redact", str(path), "--out", str(tmp_path / "o.jpg")]) == 2
    assert "lossless" in capsys.readouterr().err


def test_several_images_are_saved_each_beside_itself_and_one_failing_stops_none(
    letter, tmp_path, data_dir, capsys
):
    path, page = letter
    notes, broken = tmp_path / "notes.png", tmp_path / "broken.png"
    render_lines(["Meeting notes for Tuesday", "Total 1,284.50 EUR"]).save(notes)
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    assert main(["redact", str(path), str(broken), str(notes)]) == 4  # the worst status
    captured = capsys.readouterr()
    said = captured.out.splitlines()
    copy = path.with_name("letter.redacted.png")
    assert said == [
        f"letter.png: Redacted 4 items (1 e-mail, 1 IBAN, 1 card number, 1 phone number) → {copy}.",
        f"notes.png: Nothing to redact: the OCR read 2 lines and found no e-mail, IBAN, card or "
        f"phone number. Saved an unchanged copy (without the file's metadata) → "
        f"{notes.with_name('notes.redacted.png')}.",
    ]
    assert "broken.png" in captured.err and not (tmp_path / "broken.redacted.png").exists()
    again = OcrEngine().extract(Image.open(copy).convert("RGB")).text()
    assert not any(value in again for _, value in page.private)

    assert main(["redact", str(path), str(notes), str(broken), "--json", "--text"]) == 4
    reports = json.loads(capsys.readouterr().out)
    assert [(r["source"], r["outcome"]) for r in reports] == [
        ("letter.png", "redacted"), ("notes.png", "clean"), ("broken.png", "error")
    ]  # fmt: skip
    assert "[email]" in reports[0]["text"] and "Meeting notes" in reports[1]["text"]


@pytest.mark.parametrize(
    ("names", "said"),
    [
        (["a.png", "b.png", "--out", "c.png"], "--out names one file"),
        (["a.png", "a.redacted.png"],
         "a.png's copy, a.redacted.png, would be written over the input a.redacted.png"),
        (["a.png", "a.jpg"], "a.jpg's copy, a.redacted.png, would be written over a.png's copy"),
        (["a.png", "a.png"], "a.png is given twice"),
    ],
)  # fmt: skip
def test_several_images_that_would_overwrite_are_refused_before_any_is_read(
    names, said, tmp_path, data_dir, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert main(["redact", *names]) == 2
    assert said in capsys.readouterr().err
    assert list(tmp_path.glob("*.png")) == [] and list(tmp_path.glob("*.jpg")) == []


def _scan(path: Path) -> None:
    """A two-page TIFF: the e-mail on page 2 only."""
    first = render_lines(["Page one of the statement", "Nothing private here today"])
    second = render_lines(["Page two of the statement", "Mail anna.schmidt@example.com now"])
    first.save(path, save_all=True, append_images=[second])


def test_every_page_of_a_multi_page_tiff_is_redacted_and_kept(tmp_path, data_dir, capsys):
    path = tmp_path / "scan.tif"
    _scan(path)
    assert main(["redact", str(path), "--out", str(tmp_path / "scan.png")]) == 2
    assert "scan.tif has 2 pages, which only a TIFF holds" in capsys.readouterr().err
    assert main(["redact", str(path)]) == 0
    out = path.with_name("scan.redacted.tif")
    assert capsys.readouterr().out.startswith("Redacted 1 item (1 e-mail) on 1 of 2 pages")
    assert main(["redact", str(path), "--out", str(path), "--in-place"]) == 0
    engine = OcrEngine()
    for saved in (out, path):
        with Image.open(saved) as image:
            assert image.n_frames == 2  # page 2 is not dropped
            pages = []
            for index in range(2):
                image.seek(index)
                pages.append(engine.extract(image.convert("RGB")).text())
        assert "Page one" in pages[0] and "Page two" in pages[1]
        assert "anna" not in pages[1] and "example" not in pages[1]


@pytest.mark.parametrize("kind", ["gif", "webp", "png"])
def test_every_frame_of_an_animation_is_redacted_and_kept(kind, tmp_path, data_dir, capsys):
    """An animation with the e-mail on its second frame only, and its first frame repeated
    (read once): no frame is dropped (the copy was its first frame alone, and --in-place on a
    WebP wrote that over the animation), none keeps the e-mail."""
    quiet = render_lines(["Page one of the statement", "Nothing private here today"])
    private = render_lines(["Page two of the statement", "Mail anna.schmidt@example.com now"])
    path, two = tmp_path / f"clip.{kind}", tmp_path / f"two.{kind}"
    exact = {"lossless": True} if kind == "webp" else {}  # a lossy repeat is not the same
    quiet.save(path, save_all=True, append_images=[private, quiet], duration=500, **exact)
    quiet.save(two, save_all=True, append_images=[private], duration=500, **exact)
    before = path.read_bytes()
    reads: dict[str, int] = {}
    real = OcrEngine.extract

    def counted(self, image, **options):
        reads[current] = reads.get(current, 0) + 1
        return real(self, image, **options)

    assert main(["redact", str(two)]) == 0  # the first OCR checks INT8 on this CPU: not counted
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OcrEngine, "extract", counted)
        for current in (two.name, path.name):
            assert main(["redact", str(tmp_path / current)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[2].startswith("Redacted 1 item (1 e-mail) on 1 of 3 pages")
    assert reads[path.name] == reads[two.name]  # the repeated frame is not read again
    assert main(["redact", str(path), "--out", str(path), "--in-place"]) == 2
    assert f"clip.{kind} has 3 frames, which only a TIFF holds" in capsys.readouterr().err
    assert path.read_bytes() == before  # refused before anything was written
    engine = OcrEngine()
    with Image.open(path.with_name("clip.redacted.tif")) as image:
        assert image.n_frames == 3
        frames = []
        for index in range(3):
            image.seek(index)
            frames.append(engine.extract(image.convert("RGB")).text())
    assert "Page one" in frames[0] and "Page two" in frames[1] and "Page one" in frames[2]
    assert not any("anna" in text or "example" in text for text in frames)


def test_a_page_that_cannot_be_proven_is_not_saved(tmp_path, data_dir, capsys, monkeypatch):
    from desktop.core.ocr.models import OcrLine, OcrResult

    def garbled(self, image, *, name=None):
        line = OcrLine("Aq 5 ,lJ x:; 0 uo", (20, 20, 300, 44), 0.55, 0)
        return OcrResult([line, line], image.size[0], image.size[1], 0.0)

    monkeypatch.setattr(OcrEngine, "extract", garbled)
    path = tmp_path / "photo.png"
    render_lines(["whatever it says"]).save(path)
    assert main(["redact", str(path)]) == 1
    assert capsys.readouterr().out.startswith("Could not prove this page clean")
    assert not path.with_name("photo.redacted.png").exists()
