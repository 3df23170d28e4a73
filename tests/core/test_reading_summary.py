"""The answer's figures in a user's words (desktop/core/reading_summary.py): the card and the
export show this one line."""

from __future__ import annotations

from desktop.core.chat import AnswerStats
from desktop.core.reading_summary import answer_summary, image_reading, stats_of


def test_a_pruned_image_says_how_many_blocks_were_read_and_why_not_the_rest():
    stats = AnswerStats(
        visual_tokens=215, visual_tokens_full=682, vision_s=0.41, prefill_s=1.5, ttft_s=2.05,
        tokens_per_s=9.14, generated_tokens=40,
    )  # fmt: skip
    assert answer_summary(stats) == (
        "read 215 of 682 image blocks; the rest repeat a neighbour · reading 1.91 s · "
        "2.05 s to first token · 9.1 tokens/s · 40 tokens"
    )


def test_a_whole_image_a_text_question_and_a_server_answer():
    assert image_reading(AnswerStats(visual_tokens=880, visual_tokens_full=880)) == (
        "read all 880 image blocks"
    )
    assert image_reading(AnswerStats()) == ""  # no image: nothing to say about one
    served = AnswerStats(server="gpu-box:8000", visual_tokens=500, ttft_s=0.8, prefill_s=0.3)
    assert answer_summary(served) == "from server gpu-box:8000 · 0.80 s to first token"


def test_a_stored_answers_figures_give_the_same_line():
    stats = AnswerStats(visual_tokens=3, visual_tokens_full=12, ttft_s=0.5, generated_tokens=4)
    stored = {**stats.to_dict(), "a_later_field": 1}  # a newer version's field is ignored
    again = stats_of(stored)
    assert again is not None and answer_summary(again) == answer_summary(stats)
    assert stats_of(None) is None and stats_of({}) is None
