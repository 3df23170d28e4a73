"""Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}` with a status."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.responses import JSONResponse

# The `type` OpenAI's clients map each status to (openai.BadRequestError for 400, ...).
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "server_error",
    504: "timeout_error",
}


@dataclass
class ApiError(Exception):
    """Raised anywhere in a request; the route turns it into its JSON response."""

    status: int
    message: str
    code: str | None = None
    param: str | None = None

    def __str__(self) -> str:
        return self.message

    def body(self) -> dict:
        kind = _TYPES.get(
            self.status, "server_error" if self.status >= 500 else "invalid_request_error"
        )
        return {
            "error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}
        }

    def response(self) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if self.status == 401 else None
        return JSONResponse(self.body(), status_code=self.status, headers=headers)


def invalid(message: str, param: str | None = None) -> ApiError:
    """A 400 for a request the API cannot take as it is."""
    return ApiError(400, message, "invalid_request", param)


def invalid_image(message: str) -> ApiError:
    """A 400 for an image the model cannot read or use: the code a model server's client
    (our own RemoteEngine too) tells apart from a malformed request."""
    return ApiError(400, message, "invalid_image", "messages")
