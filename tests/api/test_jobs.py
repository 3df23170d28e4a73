"""The Qt-free pieces: the job queue the owner thread empties, and stop-sequence scanning."""

from __future__ import annotations

import threading
import weakref
from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.core.api.completion import StopScanner
from desktop.core.api.jobs import EngineJob, JobQueue, QueueClosed, QueueFull, run_next


def recording(log: list, name: str) -> EngineJob:
    return EngineJob(lambda engine: log.append((name, engine)), on_skip=lambda: log.append(name))


def test_jobs_run_in_order_on_the_taking_thread_with_its_engine() -> None:
    log: list = []
    queue = JobQueue(4)
    for name in "abc":
        queue.put(recording(log, name))
    engine = object()
    while run_next(queue, engine):
        pass
    assert log == [("a", engine), ("b", engine), ("c", engine)]


class _Images:
    """Stands for a request's decoded images (weak-referenceable)."""


def test_a_finished_job_has_let_its_request_go_and_runs_no_more() -> None:
    """The server gives a large image's memory back once `finished` is set: by then nothing
    of the owner's may hold the request (the reply is sent before the job returns)."""
    images = _Images()
    held = weakref.ref(images)
    seen_when_finished: list[bool] = []
    job = EngineJob(partial(lambda request, engine: None, images))
    waiter = threading.Thread(
        target=lambda: (job.finished.wait(30), seen_when_finished.append(held() is None))
    )
    waiter.start()
    queue = JobQueue(1)
    queue.put(job)
    del images
    assert held() is not None  # the job's request holds them until it has run
    assert run_next(queue, object())
    waiter.join(30)
    assert seen_when_finished == [True]
    with pytest.raises(RuntimeError):
        job.execute(object())


def test_a_skipped_job_is_finished_too() -> None:
    queue = JobQueue(2)
    job = EngineJob(lambda engine: None)
    queue.put(job)
    job.cancel.set()
    assert not run_next(queue, object())
    assert job.finished.is_set()


def test_past_max_waiting_a_put_is_refused() -> None:
    queue = JobQueue(2)
    queue.put(EngineJob(lambda engine: None))
    queue.put(EngineJob(lambda engine: None))
    with pytest.raises(QueueFull):
        queue.put(EngineJob(lambda engine: None))
    assert queue.waiting == 2


def test_a_job_cancelled_while_waiting_is_skipped_and_told() -> None:
    log: list = []
    queue = JobQueue(4)
    first, second = recording(log, "a"), recording(log, "b")
    queue.put(first)
    queue.put(second)
    first.cancel.set()
    assert queue.take() is second
    assert log == ["a"]


def test_jobs_given_up_while_waiting_free_their_place() -> None:
    log: list = []
    queue = JobQueue(1)
    gone = recording(log, "gone")
    queue.put(gone)
    gone.cancel.set()  # its client timed out or left
    queue.put(recording(log, "next"))  # not refused: the given-up job holds no place
    assert log == ["gone"] and queue.waiting == 1


def test_close_cancels_what_waits_wakes_the_owner_and_refuses_more() -> None:
    log: list = []
    queue = JobQueue(4)
    taken: list = []
    owner = threading.Thread(target=lambda: taken.append(queue.take(timeout=None)))
    owner.start()  # blocks in take() until a job comes or the queue closes
    queue.close()
    owner.join(30)
    assert taken == [None] and not owner.is_alive()
    with pytest.raises(QueueClosed):
        queue.put(recording(log, "late"))


def test_on_put_tells_an_event_loop_owner() -> None:
    told: list = []
    queue = JobQueue(4, on_put=lambda: told.append(queue.waiting))
    queue.put(EngineJob(lambda engine: None))
    assert told == [1]


@given(
    st.lists(st.sampled_from(["a", "b", "ab", "x", "ba", " "]), max_size=12),
    st.lists(st.sampled_from(["ab", "bab", "x"]), min_size=1, max_size=2),
)
def test_stop_scanner_outputs_exactly_the_text_before_the_first_stop(chunks, stops) -> None:
    scanner = StopScanner(tuple(stops))
    out = "".join(scanner.push(chunk) for chunk in chunks) + scanner.flush()
    text = "".join(chunks)
    hits = [i for i in (text.find(s) for s in stops) if i >= 0]
    assert out == (text[: min(hits)] if hits else text)
    assert scanner.hit == bool(hits)
