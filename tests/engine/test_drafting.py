"""Prompt-lookup drafting (desktop/core/engine/drafting.py): lookup, re-sync, k rule, safety."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.core.draft_texts import joined_paragraphs, ocr_source_texts, plain_ocr_text
from desktop.core.engine.drafting import PromptLookupDrafter, add_two_drop_one

PAD = 999  # an image pad id: never to be proposed
SOURCE = list(range(100, 160))  # distinct tokens: every n-gram occurs once


def greedy_run(drafter: PromptLookupDrafter, prompt: list[int], target: list[int]) -> int:
    """A perfect greedy model writing `target`, verifying each draft: the number of steps.
    Each step emits the accepted draft tokens plus the model's own next token."""
    drafter.start(prompt)
    done = steps = 0
    while done < len(target):
        draft = drafter.propose(target[:done])
        accepted = 0
        while accepted < len(draft) and done + accepted < len(target):
            if draft[accepted] != target[done + accepted]:
                break
            accepted += 1
        drafter.record(len(draft), accepted)
        done += min(accepted + 1, len(target) - done)
        steps += 1
    return steps


def test_proposes_what_follows_the_matched_ocr_ngram():
    drafter = PromptLookupDrafter([SOURCE], k=4)
    drafter.start([1, 2, 3])
    assert drafter.propose([7, 120, 121]) == [122, 123, 124, 125]


def test_no_match_proposes_nothing():
    drafter = PromptLookupDrafter([SOURCE])
    drafter.start([1, 2, 3])
    assert drafter.propose([42]) == []
    assert PromptLookupDrafter().propose([]) == []


def test_ocr_source_is_preferred_to_the_prompt_and_the_prompt_to_the_answer():
    drafter = PromptLookupDrafter([[5, 6, 70, 71]], k=2)
    drafter.start([5, 6, 80, 81, 9])
    assert drafter.propose([5, 6]) == [70, 71]
    no_ocr = PromptLookupDrafter(k=2)
    no_ocr.start([5, 6, 80, 81, 9])
    assert no_ocr.propose([5, 6, 90, 91, 5, 6]) == [80, 81]
    no_ocr.start([1])
    assert no_ocr.propose([5, 6, 90, 91, 5, 6]) == [90, 91]


def test_lookup_continues_after_the_position_it_was_reading():
    # "7 8" occurs three times; the drafter had read up to the second: it continues there,
    # not at the first occurrence nor at the last.
    source = [7, 8, 10, 11, 12, 13, 7, 8, 20, 21, 7, 8, 30]
    drafter = PromptLookupDrafter([source], k=4, k_min=4, k_max=4)
    drafter.start([1])
    assert drafter.propose([7]) == [8, 10, 11, 12]  # the first token came from the prefill
    drafter.record(4, 4)  # the model then wrote 13 itself
    assert drafter.propose([7, 8, 10, 11, 12, 13]) == [7, 8, 20, 21]
    drafter.record(4, 1)  # the model wrote 7, then 50 instead of 8, then 7 8
    assert drafter.propose([7, 8, 10, 11, 12, 13, 7, 50, 7, 8]) == [20, 21, 7, 8]


def test_resynchronises_past_a_misread_token():
    target = SOURCE[:10] + [555] + SOURCE[11:40]  # the OCR misread one token as SOURCE[10]
    drafter = PromptLookupDrafter([SOURCE], k=8, k_min=8, k_max=8)
    drafter.start([1])
    assert drafter.propose(target[:1]) == SOURCE[1:9]
    drafter.record(8, 8)  # the model also wrote SOURCE[9]
    assert drafter.propose(target[:10]) == SOURCE[10:18]
    drafter.record(8, 0)  # the model wrote 555
    assert drafter.propose(target[:11]) == SOURCE[11:19]


def test_resynchronises_past_an_extra_ocr_token():
    target = SOURCE[:10] + SOURCE[11:40]  # the OCR read a stray token: SOURCE[10]
    drafter = PromptLookupDrafter([SOURCE], k=8, k_min=8, k_max=8)
    drafter.start([1])
    drafter.propose(target[:1])
    drafter.record(8, 8)
    assert drafter.propose(target[:10]) == SOURCE[10:18]
    drafter.record(8, 0)  # the model wrote SOURCE[11]
    assert drafter.propose(target[:11]) == SOURCE[12:20]


def test_resynchronises_when_the_ocr_split_a_word_into_more_tokens():
    target = SOURCE[:5] + [555] + SOURCE[7:30]  # the model wrote one token for SOURCE[5:7]
    drafter = PromptLookupDrafter([SOURCE], k=8, k_min=8, k_max=8)
    drafter.start([1])
    assert drafter.propose(target[:1]) == SOURCE[1:9]
    drafter.record(8, 4)  # the model wrote 555 where the OCR has SOURCE[5], SOURCE[6]
    # 555 is in no stream: the first guess reads on at SOURCE[6] (as if 555 replaced
    # SOURCE[5]), the model has SOURCE[7], which the window then finds one position ahead.
    assert drafter.propose(target[:6]) == SOURCE[6:14]
    drafter.record(8, 0)
    assert drafter.propose(target[:7]) == SOURCE[8:16]


def test_a_perfect_model_accepts_most_of_a_slightly_misread_ocr_text():
    rng = random.Random(3)
    target = [rng.randrange(200, 1200) for _ in range(600)]
    ocr: list[int] = []
    for token in target:  # ~3 % misread, ~1 % dropped, ~1 % extra tokens
        roll = rng.random()
        if roll < 0.03:
            ocr.append(rng.randrange(2000, 3000))
        elif roll < 0.04:
            continue
        else:
            ocr.append(token)
            if roll > 0.99:
                ocr.append(rng.randrange(2000, 3000))
    prompt = [1, 2, PAD, PAD, 3]
    with_ocr = greedy_run(PromptLookupDrafter([ocr], ignore=frozenset({PAD})), prompt, target)
    without = greedy_run(PromptLookupDrafter(ignore=frozenset({PAD})), prompt, target)
    assert len(target) / with_ocr > 6.5  # tokens per verification step (5.6 without guessing)
    assert without > 0.9 * len(target)  # random tokens do not repeat: lookup alone gains ~0


def test_never_proposes_an_ignored_id():
    drafter = PromptLookupDrafter([[5, 6, PAD, PAD, 7]], k=4, ignore=frozenset({PAD}))
    drafter.start([8, 9, PAD, 10, 11])
    assert drafter.propose([5, 6]) == []  # what follows is a pad
    assert drafter.propose([5, 6, 8, 9]) == []
    assert drafter.propose([5, 6, 8, 9, 3, PAD, 10]) == [11, 5, 6, 8]


def test_k_grows_after_full_accepts_and_shrinks_after_rejections():
    drafter = PromptLookupDrafter([SOURCE], k=4, k_min=2, k_max=9)
    drafter.record(4, 4)
    assert drafter.k == 6
    drafter.record(6, 6)
    drafter.record(8, 8)
    assert drafter.k == 9  # clamped to k_max
    for _ in range(10):
        drafter.record(3, 1)
    assert drafter.k == 2  # clamped to k_min
    drafter.start([1])
    assert drafter.k == 4


def test_k_rule_is_plus_two_after_a_full_accept_and_minus_one_after_a_rejection():
    assert add_two_drop_one(4, 4, 4) == 6 and add_two_drop_one(4, 4, 1) == 3
    # A draft cut short by the end of its stream and fully accepted counts as a full accept.
    drafter = PromptLookupDrafter([SOURCE], k=4)
    drafter.record(2, 2)
    assert drafter.k == 6


def test_drafting_backs_off_while_nothing_is_accepted_and_resumes_after_an_accept():
    drafter = PromptLookupDrafter([SOURCE], k=2)
    drafter.start([1])
    answer = [100]
    proposed_at = []
    for step in range(60):  # every draft is wrong
        draft = drafter.propose(answer)
        if draft:
            proposed_at.append(step)
        drafter.record(len(draft), 0)
        answer = answer + [100]  # the model keeps writing what the draft did not say
    gaps = [b - a for a, b in zip(proposed_at, proposed_at[1:], strict=False)]
    assert gaps[:5] == [1, 2, 3, 4, 5] and max(gaps) <= 32  # 0, 1, 2, 3 ... steps skipped
    while not (draft := drafter.propose(answer)):
        drafter.record(0, 0)
        answer = answer + [100]
    drafter.record(len(draft), 1)  # one accepted token ends the back-off
    assert drafter.propose(answer + [101, 102])


def test_stats_count_drafted_and_accepted_tokens_per_answer():
    drafter = PromptLookupDrafter([SOURCE])
    drafter.record(4, 4)
    drafter.record(6, 2)
    drafter.record(0, 0)  # no draft: a plain decoding step
    assert (drafter.stats.drafted, drafter.stats.accepted, drafter.stats.steps) == (10, 6, 2)
    assert drafter.stats.acceptance == 0.6
    drafter.start([1])
    assert drafter.stats.drafted == 0


def test_ocr_source_texts_offer_the_forms_a_model_writes():
    text = "Title\n\nItem\tQty\nPen\t2\n\nFirst line of a\nparagraph."
    assert plain_ocr_text(text) == "Title\nItem Qty\nPen 2\nFirst line of a\nparagraph."
    markdown = "## Title\n\n| Item | Qty |\n|---|---|\n\nFirst line of a\nparagraph.\n\n今天\n会议"
    assert joined_paragraphs(markdown) == (
        "## Title\n\n| Item | Qty |\n|---|---|\n\nFirst line of a paragraph.\n\n今天会议"
    )
    assert ocr_source_texts(text, markdown)[:2] == [text, plain_ocr_text(text)]
    assert ocr_source_texts("one line", "") == ["one line"]  # no duplicates, no empty text


tokens = st.integers(min_value=0, max_value=12)  # a small alphabet: many n-gram matches


@settings(max_examples=300, deadline=None)
@given(
    sources=st.lists(st.lists(tokens, max_size=30), max_size=3),
    prompt=st.lists(tokens, max_size=20),
    answer=st.lists(tokens, max_size=40),
    outcomes=st.lists(st.integers(min_value=0, max_value=20), max_size=40),
    k=st.integers(min_value=1, max_value=8),
    ngrams=st.tuples(st.integers(1, 4), st.integers(1, 4)),
)
def test_propose_never_raises_and_stays_within_k_and_the_streams(
    sources, prompt, answer, outcomes, k, ngrams
):
    ignored = frozenset({0})
    drafter = PromptLookupDrafter(
        sources, k=k, k_max=8, min_ngram=min(ngrams), max_ngram=max(ngrams), ignore=ignored
    )
    drafter.start(prompt)
    allowed = {t for stream in [*sources, prompt, answer] for t in stream} - ignored
    for step in range(len(answer) + 1):
        # The answer grows by one to three tokens a step; now and then it is cut back.
        length = step if step % 7 != 6 else step // 2
        draft = drafter.propose(answer[:length])
        assert len(draft) <= drafter.k
        assert set(draft) <= allowed
        accepted = outcomes[step % len(outcomes)] % (len(draft) + 1) if outcomes else 0
        drafter.record(len(draft), accepted)
        assert drafter.k_min <= drafter.k <= drafter.k_max
