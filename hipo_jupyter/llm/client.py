"""The anthropic client hipo makes for `%%ask` and the summarizers, and its errors as one line.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from .prompt import NO_KEY_MESSAGE
from .replies import MalformedReply

if TYPE_CHECKING:  # imported where used: `import anthropic` costs seconds at %load_ext
    import anthropic

log = logging.getLogger(__name__)


# --- clients and errors ---------------------------------------------------------------------------
def credentials_in_env() -> bool:
    """An API key or token in the environment: what `Hipo.summarizer = "auto"` looks for."""
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


class ClaudeUnavailable(Exception):
    """No client can be made: no key, or the SDK's credential configuration is broken."""


def make_client(*, max_retries: int = 2, timeout: float = 600.0) -> anthropic.Anthropic:
    """A client as the user's own would be (key and ANTHROPIC_BASE_URL from the environment).

    Raises ClaudeUnavailable, with one line saying what to do, instead of a request that
    would fail for want of credentials.
    """
    import anthropic

    try:
        client = anthropic.Anthropic(max_retries=max_retries, timeout=timeout)
    except anthropic.AnthropicError as error:  # a credentials profile that cannot be read
        raise ClaudeUnavailable(f"Claude credentials: {_first_line(error)}") from None
    if not has_credentials(client):
        raise ClaudeUnavailable(NO_KEY_MESSAGE)
    return client


def has_credentials(client: Any) -> bool:
    return bool(
        getattr(client, "api_key", None)
        or getattr(client, "auth_token", None)
        or getattr(client, "credentials", None)
    )


def _first_line(error: BaseException, limit: int = 200) -> str:
    """The API's own message when the error body has one, else the exception's text."""
    body = getattr(error, "body", None)
    detail = body.get("error") if isinstance(body, dict) else None
    message = detail.get("message") if isinstance(detail, dict) else None
    text = message or getattr(error, "message", "") or str(error)
    return " ".join(str(text).split())[:limit]


def error_line(error: BaseException, *, retries: int, timeout: float | None = None) -> str | None:
    """One line naming what went wrong with a Claude call, or None for an error that is not
    the API's (a bug, which should keep its traceback)."""
    import anthropic

    if isinstance(error, MalformedReply):
        return str(error)
    tried = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
    if isinstance(error, TypeError) and "authentication" in str(error):
        return NO_KEY_MESSAGE
    if isinstance(error, anthropic.AuthenticationError):
        return "Claude API: the API key was rejected (401): check ANTHROPIC_API_KEY"
    if isinstance(error, anthropic.PermissionDeniedError):
        return "Claude API: this key may not use that model or feature (403)"
    if isinstance(error, anthropic.RateLimitError):
        return f"Claude API: rate limited (429){tried}: wait a minute, then run the cell again"
    if isinstance(error, anthropic.OverloadedError):
        return f"Claude API: overloaded (529){tried}: try again in a little while"
    if isinstance(error, anthropic.APITimeoutError):
        limit = f" (Hipo.timeout = {timeout:g}s)" if timeout else ""
        return f"Claude API: the request timed out{tried}{limit}"
    if isinstance(error, anthropic.APIConnectionError):
        return f"Claude API: could not connect{tried}: check the network or ANTHROPIC_BASE_URL"
    if isinstance(error, anthropic.APIStatusError):
        return f"Claude API: error {error.status_code}{tried}: {_first_line(error)}"
    if isinstance(error, anthropic.AnthropicError):
        return f"Claude API: {_first_line(error)}"
    return None


