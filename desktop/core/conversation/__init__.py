"""The ask use case, once, for every front end: the app's engine worker, `desklens ask` and
`chat`, the local API's chat completions and `ocr --refine` all ask through
`ConversationService`, over the `AnswerEngine` protocol (the local `VLMEngine` today; a second
engine, such as a remote model server, plugs in there). Qt-free."""

from desktop.core.conversation.engine_protocol import AnswerEngine
from desktop.core.conversation.models import (
    AskRequest,
    AskResult,
    Context,
    FollowUp,
    GivenTurns,
    Ground,
    GroundTexts,
    KnownRead,
    NoContext,
    OneShot,
    PrepareRequest,
    QuestionImage,
    StoredChat,
    Where,
)
from desktop.core.conversation.service import ConversationService

__all__ = [
    "AnswerEngine",
    "AskRequest",
    "AskResult",
    "Context",
    "ConversationService",
    "FollowUp",
    "GivenTurns",
    "Ground",
    "GroundTexts",
    "KnownRead",
    "NoContext",
    "OneShot",
    "PrepareRequest",
    "QuestionImage",
    "StoredChat",
    "Where",
]
