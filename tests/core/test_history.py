"""Conversation history store: CRUD, search, images, recovery, write failures, crash safety."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PIL import Image

from desktop.core.history import (
    DATABASE_NAME,
    PREVIEW_CHARS,
    HistoryError,
    HistoryStore,
    StoredMessage,
)
from desktop.core.images import LoadedImage, load_image

REPO_ROOT = Path(__file__).resolve().parents[2]


def picture(colour: tuple[int, int, int], name: str = "photo.png") -> LoadedImage:
    return load_image(Image.new("RGB", (8, 6), colour), name=name)


def files_under(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if path.is_file()}


def image_files(store: HistoryStore) -> set[Path]:
    return set(store.images_folder.glob("*/*.png"))


# --- conversations -------------------------------------------------------------------------


def test_create_rename_list_and_delete_conversations(store: HistoryStore) -> None:
    first = store.create_conversation()
    second = store.create_conversation("Receipts")

    assert [c.id for c in store.list_conversations()] == [second, first]
    assert store.list_conversations()[1].title == "New chat"

    assert store.rename_conversation(first, "  Holiday\nphotos ")
    assert [c.title for c in store.list_conversations()] == ["Holiday photos", "Receipts"]

    assert store.delete_conversation(second)
    assert not store.delete_conversation(second)
    assert not store.rename_conversation(second, "gone")
    assert [c.id for c in store.list_conversations()] == [first]


def test_a_new_message_moves_its_conversation_to_the_top(store: HistoryStore) -> None:
    older = store.create_conversation("older")
    newer = store.create_conversation("newer")
    store.add_message(older, "user", "bump")
    assert [c.id for c in store.list_conversations()] == [older, newer]


def test_summary_counts_messages_and_previews_the_latest_one(store: HistoryStore) -> None:
    conversation = store.create_conversation()
    store.add_message(conversation, "user", "What is on this receipt?")
    store.add_message(conversation, "assistant", "A  coffee\n\nfor " + "x" * 200)

    (summary,) = store.list_conversations()

    assert summary.message_count == 2
    assert summary.preview.startswith("A coffee for xxx")
    assert len(summary.preview) == PREVIEW_CHARS
    assert summary.preview.endswith("…")
    assert summary.updated_at >= summary.created_at


def test_search_matches_titles_and_message_text_ignoring_case(store: HistoryStore) -> None:
    invoices = store.create_conversation("Invoices March")
    street = store.create_conversation()
    store.add_message(street, "assistant", "The sign says ÜBERGANG and 100% off")
    store.create_conversation("Unrelated")

    assert [c.id for c in store.list_conversations("invoices")] == [invoices]
    assert [c.id for c in store.list_conversations("übergang")] == [street]
    assert [c.id for c in store.list_conversations("100%")] == [street]
    assert store.list_conversations("1_0") == []  # no LIKE wildcards
    assert store.list_conversations("nowhere") == []
    assert len(store.list_conversations("  ")) == 3


# --- messages ------------------------------------------------------------------------------


def test_messages_round_trip_with_images_answer_ids_and_stats(
    store: HistoryStore, tmp_path: Path
) -> None:
    original_file = tmp_path / "scan.png"
    Image.new("RGB", (20, 10), (10, 200, 30)).save(original_file)
    scan = load_image(original_file)
    conversation = store.create_conversation()

    question = store.add_message(conversation, "user", "Read this", [scan, picture((1, 2, 3))])
    answer = store.add_message(
        conversation,
        "assistant",
        "It says hello",
        answer_ids=[101, 7, 42],
        stats={"ttft_s": 0.25, "generated_tokens": 3},
        stopped=True,
    )
    original_file.unlink()  # the store keeps its own copy

    assert store.messages(conversation) == [question, answer]
    (read_back, _) = store.messages(conversation)
    assert [image.name for image in read_back.images] == ["scan.png", "photo.png"]
    stored_scan = read_back.images[0]
    assert (stored_scan.width, stored_scan.height) == (20, 10)
    assert stored_scan.path == store.images_folder / scan.digest[:2] / f"{scan.digest}.png"
    reloaded = store.load_image(stored_scan)
    assert reloaded.digest == scan.digest
    assert reloaded.name == "scan.png"

    stored_answer = store.messages(conversation)[1]
    assert stored_answer.answer_ids == [101, 7, 42]
    assert stored_answer.stats == {"ttft_s": 0.25, "generated_tokens": 3}
    assert stored_answer.stopped is True
    assert stored_answer.images == []
    assert read_back.answer_ids is None and read_back.stats is None


def test_update_message_changes_only_given_fields(store: HistoryStore) -> None:
    conversation = store.create_conversation()
    message = store.add_message(conversation, "assistant", "partial", answer_ids=[1])

    updated = store.update_message(message.id, text="partial answer", stopped=True)

    assert isinstance(updated, StoredMessage)
    assert (updated.text, updated.stopped, updated.answer_ids) == ("partial answer", True, [1])
    assert store.messages(conversation) == [updated]
    assert store.update_message(message.id + 100, text="nobody") is None


def test_unknown_role_and_missing_conversation_are_refused(store: HistoryStore) -> None:
    conversation = store.create_conversation()
    with pytest.raises(ValueError, match="role"):
        store.add_message(conversation, "system", "hi")
    store.delete_conversation(conversation)
    with pytest.raises(HistoryError, match="no longer exists"):
        store.add_message(conversation, "user", "hi", [picture((9, 9, 9))])
    assert image_files(store) == set()


def test_deleting_removes_orphaned_images_but_keeps_shared_ones(store: HistoryStore) -> None:
    only_here, shared = picture((255, 0, 0)), picture((0, 0, 255))
    first, second = store.create_conversation(), store.create_conversation()
    store.add_message(first, "user", "two pictures", [only_here, shared])
    kept = store.add_message(second, "user", "same blue one", [shared])
    assert len(image_files(store)) == 2

    store.delete_conversation(first)

    assert image_files(store) == {kept.images[0].path}
    assert store.load_image(kept.images[0]).digest == shared.digest

    assert store.delete_message(kept.id)
    assert not store.delete_message(kept.id)
    assert image_files(store) == set()
    assert store.messages(second) == []


def test_the_same_image_twice_in_one_message_is_stored_once(store: HistoryStore) -> None:
    conversation = store.create_conversation()
    blue = picture((0, 0, 255))
    message = store.add_message(conversation, "user", "twice", [blue, blue])
    assert len(message.images) == 2
    assert len(image_files(store)) == 1


def test_a_new_instance_on_the_same_folder_sees_everything(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    with HistoryStore(folder) as store:
        conversation = store.create_conversation("Kept")
        written = [
            store.add_message(conversation, "user", "question", [picture((5, 6, 7))]),
            store.add_message(conversation, "ocr", "extracted text", stats={"lines": 3}),
        ]

    with HistoryStore(folder) as reopened:
        assert [c.title for c in reopened.list_conversations()] == ["Kept"]
        assert reopened.messages(conversation) == written
        assert reopened.load_image(written[0].images[0]).size == (8, 6)
        assert reopened.recovered_from is None and reopened.notice is None


def test_a_worker_thread_can_write_while_the_gui_thread_does(store: HistoryStore) -> None:
    conversation = store.create_conversation()

    def add_messages(role: str) -> None:
        for index in range(15):
            store.add_message(conversation, role, f"{role} {index}")

    worker = threading.Thread(target=add_messages, args=("assistant",))
    worker.start()
    add_messages("user")
    worker.join()

    messages = store.messages(conversation)
    assert len(messages) == 30
    assert len({message.id for message in messages}) == 30


# --- recovery ------------------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_moved_aside(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    garbage = b"this is not SQLite at all\n" * 100
    (folder / DATABASE_NAME).write_bytes(garbage)

    with HistoryStore(folder) as store:
        assert store.recovered_from is not None
        assert store.recovered_from.name.startswith(f"{DATABASE_NAME}.corrupt-")
        assert store.recovered_from.read_bytes() == garbage
        assert store.notice is not None and store.recovered_from.name in store.notice
        assert store.list_conversations() == []
        store.create_conversation("fresh start")

    with HistoryStore(folder) as reopened:
        assert [c.title for c in reopened.list_conversations()] == ["fresh start"]
        assert reopened.recovered_from is None


def test_a_malformed_database_is_moved_aside(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    with HistoryStore(folder) as store:
        conversation = store.create_conversation()
        for index in range(200):
            store.add_message(conversation, "user", f"message {index} " + "x" * 500)
    database = folder / DATABASE_NAME
    data = bytearray(database.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[page_size:] = b"\xa5" * (len(data) - page_size)  # keep the header, wreck every page
    database.write_bytes(bytes(data))

    with HistoryStore(folder) as recovered:
        assert recovered.recovered_from is not None
        assert recovered.notice is not None
        assert recovered.list_conversations() == []


def test_a_database_from_a_newer_version_is_refused_and_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    connection = sqlite3.connect(folder / DATABASE_NAME)
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    before = (folder / DATABASE_NAME).read_bytes()

    with pytest.raises(HistoryError, match="newer version"):
        HistoryStore(folder)
    assert (folder / DATABASE_NAME).read_bytes() == before


# --- write failures ------------------------------------------------------------------------


def test_a_full_disk_raises_history_error_and_keeps_earlier_messages(
    store: HistoryStore,
) -> None:
    conversation = store.create_conversation()
    kept = store.add_message(conversation, "user", "saved before the disk filled up")
    connection = store._connection  # fault injection: SQLite's own quota makes it "full"
    page_count = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {page_count}")

    with pytest.raises(HistoryError, match="full") as caught:
        store.add_message(conversation, "assistant", "y" * 200_000)
    assert "earlier messages are kept" in str(caught.value)

    assert store.messages(conversation) == [kept]
    connection.execute("PRAGMA max_page_count = 1073741823")
    store.add_message(conversation, "assistant", "works again once there is space")
    assert len(store.messages(conversation)) == 2


def test_an_image_write_failure_saves_nothing(
    store: HistoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = store.create_conversation()
    kept = store.add_message(conversation, "user", "first", [picture((1, 1, 1))])
    files_before = files_under(store.images_folder)

    def no_space(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    with pytest.raises(HistoryError, match="No space left on device"):
        store.add_message(conversation, "user", "second", [picture((2, 2, 2))])
    monkeypatch.undo()

    assert store.messages(conversation) == [kept]
    assert files_under(store.images_folder) == files_before  # no partial file left either


def test_writes_after_close_raise_history_error(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history")
    store.close()
    with pytest.raises(HistoryError):
        store.create_conversation()


# --- containment ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hostile_name",
    ["../../escape.png", "{outside}/absolute.png", "..\\..\\windows.png", "images/../../up.png"],
)
def test_image_names_never_choose_where_files_go(tmp_path: Path, hostile_name: str) -> None:
    hostile_name = hostile_name.format(outside=tmp_path)
    folder = tmp_path / "history"
    with HistoryStore(folder) as store:
        conversation = store.create_conversation()
        message = store.add_message(conversation, "user", "hi", [picture((3, 4, 5), hostile_name)])

        assert files_under(tmp_path) <= files_under(folder)
        (stored,) = store.messages(conversation)[0].images
        assert stored.name == hostile_name
        assert stored.path == message.images[0].path
        assert stored.path.parent.parent == store.images_folder


def test_a_forged_digest_is_refused_before_anything_is_written(store: HistoryStore) -> None:
    conversation = store.create_conversation()
    real = picture((7, 7, 7))
    forged = LoadedImage(image=real.image, name="x.png", digest="../../../outside")
    with pytest.raises(ValueError, match="digest"):
        store.add_message(conversation, "user", "hi", [forged])
    assert store.messages(conversation) == []
    assert image_files(store) == set()


# --- crash safety --------------------------------------------------------------------------

CHILD_WRITER = """
import sys
from PIL import Image
from desktop.core.history import HistoryStore
from desktop.core.images import load_image

store = HistoryStore(sys.argv[1])
conversation = store.create_conversation("crash test")
print("conversation", conversation, flush=True)
for index in range(100_000):
    colour = (index % 256, index // 256 % 256, 99)
    images = [load_image(Image.new("RGB", (64, 48), colour))] if index % 3 == 0 else []
    message = store.add_message(conversation, "user", f"message {index}", images)
    print("committed", message.id, flush=True)
"""


@pytest.mark.timeout(120)
def test_every_message_reported_committed_survives_sigkill(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_WRITER, str(folder)],
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
    )
    assert child.stdout is not None
    reported: list[int] = []
    conversation = -1
    try:
        for line in child.stdout:
            kind, number = line.split()
            if kind == "conversation":
                conversation = int(number)
            else:
                reported.append(int(number))
            if len(reported) == 40:
                child.send_signal(signal.SIGKILL)
                break
        # Lines already printed before the kill were committed too.
        reported += [int(line.split()[1]) for line in child.stdout]
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert len(reported) >= 40

    with HistoryStore(folder) as reopened:
        assert reopened.recovered_from is None
        stored = {message.id: message for message in reopened.messages(conversation)}
        assert set(reported) <= set(stored)
        for image in (image for message in stored.values() for image in message.images):
            assert reopened.load_image(image).digest == image.digest  # never a half image
