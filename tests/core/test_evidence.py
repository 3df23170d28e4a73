"""Evidence matching (issue 40) on its own: figures by value whatever their formatting, phrases
fuzzily, and only figures that look copied from the image are checked."""

from __future__ import annotations

from desktop.core.evidence import evidence_links, figures, find_evidence, normalise, similar
from desktop.core.ocr.models import OcrLine, OcrResult


def page(*texts: str) -> OcrResult:
    lines = [OcrLine(text, (10, 30 * n, 400, 30 * n + 20), 0.9, n) for n, text in enumerate(texts)]
    return OcrResult(lines, 500, 30 * len(texts) + 10, 0.1)


def test_a_figure_matches_its_line_in_any_formatting():
    ocr = page("Total 12,450.50", "Net 12 450,50", "Gross 12.450,50", "Rate 7.5%", "Ref 0099")
    for written in ("12450.50", "12,450.5", "12.450,50", "12 450.50", "$12,450.50"):
        found = find_evidence(f"The amount is {written}.", [ocr])
        assert [line.line for line in found.lines] == [0, 1, 2], written
        assert found.not_found == ()
    assert [line.line for line in find_evidence("It is 7.50 %", [ocr]).lines] == [3]
    assert find_evidence("It is 12,450.55.", [ocr]).not_found == ("12,450.55",)
    assert find_evidence("Ref 0099 holds.", [ocr]).lines[0].text == "Ref 0099"


def test_only_figures_that_look_copied_are_checked():
    assert figures("There are 2 rows and 14 items; see step 3.") == []
    assert figures("Paid 1,200 on 2024-05-01 (98%), id 4471.") == [
        "1,200", "2024", "98%", "4471"
    ]  # fmt: skip
    assert find_evidence("There are 2 rows.", [page("Total 9")]).not_found == ()


def test_phrases_match_through_case_spacing_punctuation_and_a_misread_letter():
    assert similar(
        normalise("customer acme widgets gmbh"), normalise("Customer: ACME Widgets GmbH")
    )
    assert similar(
        normalise("Custonner Acme Widgets GmbH"), normalise("Customer: Acme Widgets GmbH")
    )
    assert not similar(
        normalise("Invoice from Globex Ltd"), normalise("Customer: Acme Widgets GmbH")
    )
    ocr = page("Invoice INV-4471", "Customer: Acme Widgets GmbH", "Thank you")
    found = find_evidence('Billed to "Acme Widgets GmbH" as agreed.', [ocr])
    assert [line.text for line in found.lines] == ["Customer: Acme Widgets GmbH"]
    assert found.to_dict()["lines"][0]["box"] == [10, 30, 400, 50]


def test_links_name_the_answers_words_as_written_with_the_line_that_holds_them():
    """What the app makes clickable: a found figure as the answer writes it (digit groups
    apart too), a quoted phrase and a name; a figure found nowhere is no link."""
    ocr = page("Invoice 4471", "Customer: Acme Widgets GmbH", "Total due 12,450.50")
    answer = 'Acme Widgets owes 12 450.50 on "invoice 4471"; tax 7,777.00.'
    found = find_evidence(answer, [ocr])
    links = {link.text: found.lines[link.line].line for link in evidence_links(answer, found)}
    assert links == {"12 450.50": 2, "invoice 4471": 0, "Acme Widgets": 1, "4471": 0}
    assert all(text in answer for text in links) and found.not_found == ("7,777.00",)
    assert evidence_links(answer, find_evidence(answer, [page("Nothing here")])) == ()


def test_a_json_key_is_not_evidence_only_its_value_is():
    """{"total": "786.52"} once linked "total" to "Subtotal 660.94" and counted that line."""
    ocr = page("Subtotal 660.94", "Tax 125.58", "Total 786.52")
    for answer in ('{"total":"786.52"}', '{\n  "total": "786.52"\n}', "{'Total Due': '786.52'}"):
        evidence = find_evidence(answer, [ocr])
        assert [line.text for line in evidence.lines] == ["Total 786.52"], answer
        assert [link.text for link in evidence_links(answer, evidence)] == ["786.52"], answer
    # A quoted phrase in prose still is one.
    prose = find_evidence('The line "Subtotal" says 660.94.', [ocr])
    assert [line.text for line in prose.lines] == ["Subtotal 660.94"]
