"""What Claude Code names in the bodies it writes, and where: the one module that knows.

Claude Code (2.1.260) writes, with ``OTEL_LOG_RAW_API_BODIES=file:<dir>``, one file per body:

* ``<random UUID>.request.json`` — the Messages API request as built. ``metadata.user_id`` is a
  JSON string holding ``session_id``; the first ``system`` block's text names the prompt
  (``cc_prompt_id=<id>``) and the request id of the previous call of its chain
  (``cc_prev_req=<id>``);
* ``<provider request id>.response.json`` (a random UUID when there was none) — the final
  assistant message; its ``id`` is the message id a transcript records.

The values a body lands with (:func:`lift`) are read as upstream's adapter reads them, so its
manifest is upstream's byte for byte: Go's decoder (a field name matched without regard to case,
an invalid byte or a lone surrogate read as U+FFFD, a value of the wrong type read as none).
Which of them may place a body (a session id in Claude Code's form, ids that are one token) is
decided apart (:func:`request_names`), since a session id names a directory. A request's chain
is upstream's (:func:`chain_of`). Nothing else in the adapter reads a field of a body.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any, Final

import orjson

__all__ = [
    "FIRST_MESSAGE",
    "REQUEST",
    "RESPONSE",
    "TOOL_ARRAYS",
    "Keys",
    "RequestNames",
    "body_file",
    "chain_of",
    "is_file_id",
    "is_session_id",
    "lift",
    "parse_lenient",
    "request_id_of",
    "request_names",
    "response_call",
    "sha256_hex",
]

REQUEST: Final = "request"
RESPONSE: Final = "response"
_SUFFIXES: Final = ((".request.json", REQUEST), (".response.json", RESPONSE))

#: Each element of these arrays (paths of keys from the body's root) is one piece: a tool definition.
TOOL_ARRAYS: Final = (("tools",),)
#: The array whose first element (a request's first message) names its chain.
FIRST_MESSAGE: Final = ("messages",)

_ANY_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_FILE_STEM = re.compile(r"[A-Za-z0-9_-]+")  # the names upstream takes for body files
# Patterns only a body's reading uses, as text: ``re`` compiles each at its first use (and keeps
# it), so a pass that reads no body, which most do, never compiles them (the surrogates' range
# alone costs about as much as the pass's other provider patterns together).
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Go's \s is ASCII white space without \v; an id runs to the next ';' or white space
_PROMPT_ID = r"cc_prompt_id=([^;\t\n\f\r ]+)"
_PREV_REQ = r"cc_prev_req=([^;\t\n\f\r ]+)"
_SURROGATE = r"[\ud800-\udfff]"


def _go_replace(exc: UnicodeError) -> tuple[str, int]:
    """Go's decoding of a byte that does not start a valid UTF-8 sequence: one U+FFFD per byte."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "\ufffd", exc.start + 1


codecs.register_error("asz-go-replace", _go_replace)


def body_file(name: str) -> tuple[str, str] | None:
    """``(role, stem)`` of a body file's name, or ``None`` for any other file."""
    for suffix, role in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return role, name[: -len(suffix)]
    return None


def is_session_id(value: object) -> bool:
    """Claude Code's own form of a session id: a lower-case UUID."""
    return isinstance(value, str) and re.fullmatch(_UUID, value) is not None


def _safe(value: object) -> str | None:
    """An id as one token (no spaces, no path characters), else ``None``."""
    return value if isinstance(value, str) and _SAFE_ID.fullmatch(value) else None


def is_file_id(stem: str) -> bool:
    """A body file's name without its suffix is one upstream takes (letters, digits, ``_``,
    ``-``), so that a record id is made of it and both land the same files."""
    return _FILE_STEM.fullmatch(stem) is not None


def request_id_of(stem: str) -> str | None:
    """The provider request id a response's file name carries (``None`` for the random UUID
    Claude Code uses when there was none)."""
    return None if _ANY_UUID.fullmatch(stem) else _safe(stem)


# ---- the values a body lands with, read as upstream reads them -----------------------------


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _pairs(pairs: list[tuple[str, Any]]) -> _Object:
    return _Object(pairs)


class _Object(dict[str, Any]):
    """A JSON object as Python reads it (the last of a repeated key wins), with every key and
    value in the order written, for Go's matching of a struct's field names."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def parse_lenient(body: bytes) -> object:
    """``body`` as Go's decoder reads it: an invalid UTF-8 byte is U+FFFD; ``None`` when it is
    not JSON even so."""
    try:
        return json.loads(body.decode("utf-8", "asz-go-replace"), object_pairs_hook=_pairs,
                          parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None


def _text(value: object) -> str:
    """A JSON string as Go holds it (a lone surrogate is U+FFFD); anything else is ``""``."""
    return re.sub(_SURROGATE, "\ufffd", value) if isinstance(value, str) else ""


def _go_fold(name: str) -> str:
    return name.translate(_FOLD).lower()


_FOLD: Final = {0x17F: "s", 0x212A: "k"}  # the two non-ASCII letters Go folds to ASCII ones


def _field(value: object, name: str) -> tuple[str, bool]:
    """The string field ``name`` of a JSON object decoded into a Go struct: ``(value, ok)``.
    Keys match without regard to case, the last match wins; a match that is neither a string
    nor null, or a value that is neither an object nor null, fails the whole decode."""
    if value is None:
        return "", True
    if not isinstance(value, dict):
        return "", False
    found, ok = "", True
    pairs = value.pairs if isinstance(value, _Object) else list(value.items())
    for key, item in pairs:
        if key == name or _go_fold(key) == name:
            if isinstance(item, str):
                found = _text(item)
            elif item is not None:
                ok = False
    return found, ok


def _session_id(metadata: object) -> str:
    user_id = _text(metadata.get("user_id")) if isinstance(metadata, dict) else ""
    try:
        inner = json.loads(user_id, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return ""
    session, ok = _field(inner, "session_id")
    return session if ok else ""


def _first_system_text(system: object) -> str:
    """The text of the first system block, or the system prompt when it is one string."""
    if isinstance(system, str):
        return _text(system)
    if not isinstance(system, list):
        return ""
    texts = [_field(block, "text") for block in system]
    if not texts or not all(ok for _, ok in texts):
        return ""
    return texts[0][0]


class Keys:
    """The values a body carries that join it, as upstream's adapter reads them (``""``: none).

    A plain class, as :class:`RequestNames` is
    (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("call", "model", "previous_request", "request", "run", "session")

    def __init__(self, model: str = "", session: str = "", run: str = "", previous_request: str = "",
                 call: str = "", request: str = "") -> None:
        self.model = model
        self.session = session                    #: the session a request names, as written
        self.run = run                            #: a request's ``cc_prompt_id``
        self.previous_request = previous_request  #: a request's ``cc_prev_req``
        self.call = call                          #: a response's ``id``
        self.request = request                    #: a response's provider request id, from its file name


def lift(name: str, value: object) -> Keys:
    """The keys of the body file ``name`` whose bytes read as ``value`` (:func:`parse_lenient`,
    or the strict parse of a body in valid UTF-8)."""
    parsed = body_file(name)
    role = parsed[0] if parsed else ""
    request = ""
    if role == RESPONSE and parsed and not _ANY_UUID.fullmatch(parsed[1]):
        request = parsed[1]  # the name holds even when the body is not what a response is
    if not isinstance(value, dict):
        return Keys(request=request)
    model = _text(value.get("model"))
    if role == REQUEST:
        header = _first_system_text(value.get("system"))
        run = re.search(_PROMPT_ID, header)
        previous = re.search(_PREV_REQ, header)
        return Keys(model=model, session=_session_id(value.get("metadata")),
                    run=run.group(1) if run else "", previous_request=previous.group(1) if previous else "")
    if role == RESPONSE:
        return Keys(model=model, call=_text(value.get("id")), request=request)
    return Keys(model=model)


# ---- what may place a body -----------------------------------------------------------------


class RequestNames:
    """The ids a request carries that may place it and join a response to its session."""

    __slots__ = ("previous_request", "prompt", "refused", "session", "session_problem")

    def __init__(self, session: str | None, session_problem: str | None, refused: bool, prompt: str | None,
                 previous_request: str | None) -> None:
        self.session = session                    #: the session it names, in Claude Code's form
        self.session_problem = session_problem    #: why no session is taken from it
        self.refused = refused                    #: it names a session, in a form that is not Claude Code's
        self.prompt = prompt                      #: ``cc_prompt_id``, when it is one token
        self.previous_request = previous_request  #: ``cc_prev_req``, when it is one token


def request_names(keys: Keys) -> RequestNames:
    """Which of a request's keys may place it."""
    prompt, previous = _safe(keys.run), _safe(keys.previous_request)
    if not keys.session:
        return RequestNames(None, "metadata.user_id names no session_id", False, prompt, previous)
    if not is_session_id(keys.session):
        return RequestNames(None, (f"session id {keys.session[:80]!r} is not in Claude Code's form (a lower-case "
                                   f"UUID); it could name a directory, so it is not taken"), True, prompt, previous)
    return RequestNames(keys.session, None, False, prompt, previous)


def response_call(keys: Keys) -> str | None:
    """The message id a response may be found by in a transcript, when it is one token."""
    return _safe(keys.call)


# ---- a request's chain -----------------------------------------------------------------------


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex. ``hashlib`` is imported at the first body read, not with
    the adapter: it loads OpenSSL, and a pass that reads no body (a no-op's) need not."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


def chain_of(first: bytes) -> str:
    """A request's chain from the bytes of its first message, as upstream names it: the first 16
    hex characters of the SHA-256 of that message with ``cache_control`` taken out of each of its
    content blocks and a content of one text block (and nothing else) read as that text, encoded
    as Go encodes a decoded object (keys sorted, ``<>&`` escaped, every number a float64). A first
    message that is not an object, or holds a number no float64 holds, is named by its bytes."""
    try:
        message = json.loads(first, object_pairs_hook=dict, parse_constant=_no_constant,
                             parse_int=_float_of, parse_float=_float_of)
    except (ValueError, RecursionError, UnicodeDecodeError):
        message = _RAW
    if message is not None and not isinstance(message, dict):
        return sha256_hex(first)[:16]
    if message is not None:
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    block.pop("cache_control", None)
            if len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "text" \
                    and len(content[0]) == 2:
                message["content"] = content[0]["text"]
    return sha256_hex(_go_marshal(message))[:16]


_RAW: Final = object()  # what does not decode into an object: named by its bytes


def _float_of(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:20]} is out of a float64's range")
    return value


def _go_marshal(value: object) -> bytes:
    """``value`` (decoded, every number a float) as Go's ``json.Marshal`` writes it."""
    if value is None:
        return b"null"
    if value is True:
        return b"true"
    if value is False:
        return b"false"
    if isinstance(value, float):
        return _go_float(value).encode("ascii")
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, list):
        return b"[" + b",".join(_go_marshal(v) for v in value) + b"]"
    if isinstance(value, dict):
        items = sorted((re.sub(_SURROGATE, "\ufffd", k), v) for k, v in value.items())
        return b"{" + b",".join(_go_string(k) + b":" + _go_marshal(v) for k, v in items) + b"}"
    raise TypeError(f"not a decoded JSON value: {type(value).__name__}")


_HTML: Final = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
                ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def _go_string(text: str) -> bytes:
    out = orjson.dumps(re.sub(_SURROGATE, "\ufffd", text))  # \b \f \n \r \t, else \u00xx: as Go 1.22
    for raw, escaped in _HTML:
        if raw in out:
            out = out.replace(raw, escaped)
    return out


def _go_float(value: float) -> str:
    """Go's shortest float64 text: plain from 1e-6 up to 1e21, else an exponent (``1e+21``,
    ``1e-7``)."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest(abs(value))
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        point = exponent + 1  # digits before the point
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return f"{sign}{digits[:point]}.{digits[point:]}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}".replace("e-0", "e-")


def _shortest(value: float) -> tuple[str, int]:
    """The shortest digits that read back as ``value``, and the exponent of the first digit."""
    text = repr(value)
    mantissa, _, exp = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    exponent = int(exp or 0) + len(whole) - 1
    digits = (whole + fraction).lstrip("0")
    exponent -= len(whole + fraction) - len((whole + fraction).lstrip("0"))
    return digits.rstrip("0") or "0", exponent
