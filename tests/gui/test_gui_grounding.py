"""The composer's "Use the extracted text": the fast-OCR lines of the question's images go
before the question (the engine is fed them: more tokens), the stored question is what the
model read, and the bubble and Edit show the words typed. A system prompt opens a new chat."""

from __future__ import annotations

from gui_support import send, text_image

from desktop.core.engine import VLMEngine
from desktop.core.user_presets import PresetBook
from desktop.gui.widgets.messages import UserMessage


def asked_questions(monkeypatch) -> list[str]:
    questions: list[str] = []
    original = VLMEngine.ask

    def ask(self, conversation, question, *args, **kwargs):
        questions.append(question)
        return original(self, conversation, question, *args, **kwargs)

    monkeypatch.setattr(VLMEngine, "ask", ask)
    return questions


def test_grounding_puts_the_ocr_text_before_the_question(qtbot, launch, tiny_ir, monkeypatch):
    questions = asked_questions(monkeypatch)
    window = launch(model_dir=tiny_ir)
    picture = text_image("Invoice 4471")

    plain = send(qtbot, window, "What is the number?", [picture])
    window.sidebar.select(None)
    window.composer.ground_check.setChecked(True)
    grounded = send(qtbot, window, "What is the number?", [picture])

    assert questions[0] == "What is the number?"
    assert "4471" in questions[1] and questions[1].endswith("Question: What is the number?")
    fed_plain, fed_grounded = plain.answer.stats.input_tokens, grounded.answer.stats.input_tokens
    assert fed_grounded > fed_plain + 10  # the OCR lines were fed, before the question
    stored = window.store.messages(grounded.request.conversation_id)[0]
    assert stored.model_text == questions[1]  # replayed as read: the KV prefix stays valid
    assert (stored.text, stored.asked.grounded) == ("What is the number?", True)
    bubble = next(m for m in window.chat.messages() if isinstance(m, UserMessage))
    [entry] = window.session.transcript.questions()
    assert bubble.text() == entry.text == "What is the number?" and entry.prompt == questions[1]
    assert bubble.entry_id == entry.id

    window.composer.ground_check.setChecked(False)
    window.rewinding.edit(bubble.entry_id)
    assert window.composer.editor.toPlainText() == "What is the number?"


def test_the_system_prompt_opens_only_the_first_question(qtbot, launch, tiny_ir, monkeypatch):
    questions = asked_questions(monkeypatch)
    window = launch(model_dir=tiny_ir)
    window.own_presets.replace(PresetBook(system_prompt="Answer in French."))
    send(qtbot, window, "Hello?")
    send(qtbot, window, "And then?")
    assert questions == ["Answer in French.\n\nQuestion: Hello?", "And then?"]
    assert [m.text() for m in window.chat.messages() if isinstance(m, UserMessage)] == [
        "Hello?",
        "And then?",
    ]
