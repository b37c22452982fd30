"""Exact JSON bytes: parsing a line once, slicing its values byte for byte, encoding ours.

Session Data keeps a source's own JSON as the bytes the source wrote, with only the whitespace
between tokens removed. Re-encoding a parsed value would change escapes and number spellings, so
this module never does that for source bytes unless it has proved the result is identical:

* fast path: when ``orjson.dumps(orjson.loads(line)) == line``, the encoder is deterministic and
  compositional, so re-encoding any sub-value yields exactly the slice of the line it came from;
* slow path (odd escapes, lone surrogates, integers past 64 bits, whitespace, duplicate keys):
  the value's span is found by scanning the line's bytes and compacted outside strings.

Strings the writer encodes itself follow upstream's rules instead (:func:`encode_value`: ``<``,
``>`` and ``&`` literal, U+2028 and U+2029 escaped, a lone surrogate written as U+FFFD), and
the values upstream builds with ``json.Marshal`` escape ``<``, ``>`` and ``&`` too
(:func:`marshal_value`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any, Final

import orjson

__all__ = [
    "MAX_DEPTH",
    "NOT_PROVED",
    "PROVED_CANONICAL",
    "PROVED_NOT_CANONICAL",
    "RECORD_DATA_DEPTH",
    "JSONLine",
    "NotJSON",
    "compact",
    "depth_exceeds",
    "encode_value",
    "holds_separator",
    "is_compact",
    "loads_strict",
    "marshal_value",
    "slice_at",
]

#: orjson's two calls, bound once: compiled, ``orjson.dumps(...)`` looks the name up on the module
#: at each call (several times a line), a Final name is a constant in C
_orjson_loads: Final = orjson.loads
_orjson_dumps: Final = orjson.dumps

#: The most objects and lists a record line may hold open at once (spec, "Reading a record").
MAX_DEPTH: Final = 256
#: The deepest a part's data may nest: the record, its ``parts`` list and the part hold it.
RECORD_DATA_DEPTH: Final = MAX_DEPTH - 3

_LINE_SEP: Final = b"\xe2\x80\xa8"
_PARA_SEP: Final = b"\xe2\x80\xa9"
#: either of them: one search, where searching for each costs two
_SEPARATOR: Final = re.compile(b"\xe2\x80[\xa8\xa9]")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")  # the escapes, not the code points: mypyc compiles no lone surrogate
_TOKEN_OR_SPACE: Final = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*")|[ \t\r\n]+', re.DOTALL)
_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STRING_OR_BRACKET: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
#: the byte after a number, true, false or null
_SCALAR_END: Final = re.compile(rb"[,}\] \t\r\n]")
_NOT_BRACKET: Final = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_OPENER: Final = bytes(b for b in range(256) if b not in b"[{")
_BRACKET_STEP: Final = [1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256)]


#: what orjson refused, for the exact parser to try
_REFUSED: Final = object()


class NotJSON(ValueError):
    """The bytes are not one JSON value (or nest deeper than :data:`MAX_DEPTH`)."""


def _reject_constant(name: str) -> Any:
    raise NotJSON(f"{name} is not JSON")


def depth_exceeds(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when ``raw`` holds more than ``limit`` objects and lists open at once.

    Counting brackets is a cheap upper bound, so only a line that could be that deep is
    scanned: its strings are cut out and what is left is reduced to its brackets, whose running
    depth is summed without a Python loop over the bytes. It is the check for bytes that do not
    parse; a parsed value's depth is found by walking its containers (:func:`_value_depth`).
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if len(brackets) <= limit:
        return False
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets))) > limit


def _value_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How many objects and lists ``value`` holds open at once at its deepest, walking its
    containers; once past ``limit``, a number past it (the walk stops there)."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if depth > limit:
                return depth
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return deepest


def _encoder_refuses_depth(depth: int) -> bool:
    """Whether ``orjson.dumps`` refuses ``depth`` lists nested in one another."""
    nested: list[Any] = []
    for _ in range(depth - 1):
        nested = [nested]
    try:
        _orjson_dumps(nested)
    except orjson.JSONEncodeError:
        return True
    return False


#: orjson's encoder refuses to nest past 254 objects and lists, so a parsed value that encodes
#: inside one more list nests at most :data:`RECORD_DATA_DEPTH` deep: a proof made in C, where
#: walking a value's containers would be made in Python. The limit is orjson's, not a promise of
#: its interface, so it is tried once here; an encoder that allows more proves nothing, and the
#: containers are walked.
_ENCODER_PROVES_SHALLOW: Final = _encoder_refuses_depth(RECORD_DATA_DEPTH + 2)
#: :class:`JSONLine` encodes a line shorter than this whole as it parses it; a longer one is not,
#: so its encoding is never held beside its bytes and its parse (it is proved as it is needed)
_PROVE_WHOLE_BELOW = 1 << 20

#: What parsing a line proves of it with the one encoding :class:`JSONLine` makes
#: (:attr:`JSONLine.proof`): nothing (it is not JSON, too long to encode whole, or the encoder
#: refused it), or that it nests no deeper than a record holds and re-encodes to its own bytes,
#: or to other bytes.
NOT_PROVED: Final = 0
PROVED_CANONICAL: Final = 1
PROVED_NOT_CANONICAL: Final = 2


def loads_strict(raw: bytes) -> Any:
    """Parse one JSON value the way every reader of Session Data must.

    orjson first; the standard library only for what orjson refuses but JSON allows (lone
    surrogate escapes, numbers past a double's range). An integer past 64 bits that a double
    holds reads as that double, as Go reads an untyped number. ``NaN``/``Infinity`` and
    over-deep nesting are refused. Raises :class:`NotJSON`.
    """
    return _loads(raw)[0]


def _loads(raw: bytes) -> tuple[Any, bool]:
    """:func:`loads_strict`'s value, and whether it nests deeper than :data:`RECORD_DATA_DEPTH`
    (rare, and what a record holding a slice of it must be checked for)."""
    value = _parse(raw)
    if isinstance(value, (dict, list)) and _may_nest_deeper(raw, RECORD_DATA_DEPTH):
        return value, _deeper_than_a_record_holds(value)
    return value, False


def _parse(raw: bytes) -> Any:
    """The parsed value, its depth not checked yet (:func:`_deeper_than_a_record_holds`)."""
    try:
        value = _orjson_loads(raw)
    except orjson.JSONDecodeError:
        value = _REFUSED
    if value is _REFUSED:
        # not inside the ``except``: orjson's error holds the whole line decoded as its ``doc``
        value = _loads_slow(raw)
    return value


def _deeper_than_a_record_holds(value: Any) -> bool:
    """Whether a parsed value nests deeper than :data:`RECORD_DATA_DEPTH`; :class:`NotJSON`
    past :data:`MAX_DEPTH`. Encoding it inside one more list proves the usual case (many
    containers side by side, few nested) in C; only a value it does not prove is walked."""
    if _ENCODER_PROVES_SHALLOW:
        try:
            _orjson_dumps([value])
        except orjson.JSONEncodeError:
            pass  # nested past the encoder's limit, or a value orjson cannot encode: walked
        else:
            return False
    depth = _value_depth(value)
    if depth > MAX_DEPTH:
        raise NotJSON(f"nested deeper than {MAX_DEPTH}")
    return depth > RECORD_DATA_DEPTH


def _may_nest_deeper(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """A cheap upper bound for parsed bytes: whether ``raw`` could hold more than ``limit``
    objects and lists open at once.

    That takes ``limit + 1`` opening brackets and as many closing ones, so a shorter line
    cannot (two in five transcript lines); the opening ones are counted in one pass, by
    deleting every other byte, where two ``bytes.count`` make two, on every line.
    """
    return len(raw) >= 2 * (limit + 1) and len(raw.translate(None, _NOT_OPENER)) > limit


def _loads_slow(raw: bytes) -> Any:
    if depth_exceeds(raw):  # before the recursive parser meets it
        raise NotJSON(f"nested deeper than {MAX_DEPTH}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotJSON(f"not valid UTF-8: {exc.reason} at byte {exc.start}") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise NotJSON(str(exc)) from None


def compact(raw: bytes) -> bytes:
    """Remove whitespace between tokens, keeping every byte inside strings."""
    if is_compact(raw):
        return raw  # as every value a writer wrote is: rewriting calls into Python per string
    return _TOKEN_OR_SPACE.sub(lambda m: m.group(1) or b"", raw)


def is_compact(raw: bytes) -> bool:
    """No whitespace between tokens (strings cut out first: whitespace inside them is theirs)."""
    return _has_no_whitespace(raw) or _has_no_whitespace(_STRING.sub(b"", raw))


def encode_value(value: Any) -> bytes:
    """Encode a value asz builds itself (a text, a label, a manifest) by the writer's rules.

    The rules of Go's encoder with HTML escaping off, which upstream's writer uses for the
    fields it owns: ``<``, ``>`` and ``&`` stay literal; U+2028 and U+2029 are escaped; a lone
    surrogate, which Go's decoder would have read as U+FFFD, is written as U+FFFD. An integer
    past 64 bits raises ``orjson.JSONEncodeError``. Never for a source's own bytes.
    """
    try:
        out = _orjson_dumps(value)
    except orjson.JSONEncodeError:
        return _encode_slow(value)
    if holds_separator(out):
        # orjson writes them raw inside strings; the writer escapes them
        out = out.replace(_LINE_SEP, b"\\u2028").replace(_PARA_SEP, b"\\u2029")
    return out


def holds_separator(encoded: bytes) -> bool:
    """Whether ``encoded`` holds U+2028 or U+2029 unescaped, which orjson writes raw and the
    writer's rules escape. (Most lines are ASCII, which is checked far faster than either is
    searched for.)"""
    return not encoded.isascii() and _SEPARATOR.search(encoded) is not None


def marshal_value(value: Any) -> bytes:
    """Encode a value as Go's ``json.Marshal`` does: :func:`encode_value`'s rules, with ``<``,
    ``>`` and ``&`` escaped as ``\\u003c``, ``\\u003e`` and ``\\u0026``.

    Upstream builds an unknown part's string, a media part's base64 and a derived
    ``changes/1`` record this way, so their bytes carry those escapes (they never occur in
    JSON outside a string, so every one replaced is inside one).
    """
    out = encode_value(value)
    if 0x3C in out or 0x3E in out or 0x26 in out:
        out = out.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    return out


def _encode_slow(value: Any) -> bytes:
    """The same encoding for values holding lone surrogates: each becomes U+FFFD."""
    if isinstance(value, str):
        return encode_value(_SURROGATE.sub("\ufffd", value))
    if isinstance(value, dict):
        items = (_encode_slow(str(k)) + b":" + _encode_slow(v) for k, v in value.items())
        return b"{" + b",".join(items) + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(_encode_slow(v) for v in value) + b"]"
    if isinstance(value, orjson.Fragment):
        contents = value.contents
        return contents if isinstance(contents, bytes) else contents.encode("utf-8")
    return _orjson_dumps(value)


class JSONLine:
    """One line of JSON bytes, parsed once, whose values can be taken out byte for byte.

    ``value`` is the parsed line (``NotJSON`` is raised by the constructor when it is not one
    JSON value). :meth:`raw_at` returns the compacted source bytes of the value at a path of keys
    and indexes.
    """

    __slots__ = ("_canonical", "deep", "raw", "value")

    def __init__(self, raw: bytes, proved: int = NOT_PROVED) -> None:
        """Parse ``raw``. ``proved``: what :attr:`proof` of a parse of these very bytes said, in
        another process (:mod:`asz_core.collect.prove`), so that this one does not encode the
        line again to learn it."""
        self.raw = raw
        self._canonical: bool | None = None
        try:  # :func:`_parse`, written out: this runs for every line
            value = _orjson_loads(raw)
        except orjson.JSONDecodeError:
            value = _REFUSED
        if value is _REFUSED:
            value = _loads_slow(raw)
        self.value = value
        #: whether the line nests deeper than :data:`RECORD_DATA_DEPTH`, so that a slice of it
        #: put inside a record could nest too deep there (a record is checked only then)
        self.deep = False
        if proved:
            self._canonical = proved == PROVED_CANONICAL
            return
        if _ENCODER_PROVES_SHALLOW and len(raw) < _PROVE_WHOLE_BELOW:
            # One encoding of the line, inside one more list, answers both questions asked of
            # it: whether it nests too deep (:func:`_deeper_than_a_record_holds`), and whether
            # it is canonical (:attr:`canonical`), which :meth:`raw_at` would otherwise encode
            # it to learn for four lines in ten; the brackets are not counted at all.
            try:
                encoded = _orjson_dumps([value])
            except orjson.JSONEncodeError:
                pass  # too deep for the encoder, or not encodable: proved the long way below
            else:
                self._canonical = len(encoded) == len(raw) + 2 and encoded.startswith(raw, 1)
                return
        if isinstance(value, (dict, list)) and _may_nest_deeper(raw, RECORD_DATA_DEPTH):
            self.deep = _deeper_than_a_record_holds(value)

    @property
    def proof(self) -> int:
        """What parsing the line proved of it (:data:`NOT_PROVED`, :data:`PROVED_CANONICAL`,
        :data:`PROVED_NOT_CANONICAL`): what another parse of the same bytes may be told."""
        if self._canonical is None or self.deep:
            return NOT_PROVED
        return PROVED_CANONICAL if self._canonical else PROVED_NOT_CANONICAL

    @property
    def canonical(self) -> bool:
        """Whether re-encoding the parsed line reproduces its bytes exactly."""
        if self._canonical is None:
            try:
                self._canonical = _orjson_dumps(self.value) == self.raw
            except orjson.JSONEncodeError:
                self._canonical = False
        return self._canonical

    def raw_at(self, *path: str | int) -> bytes:
        """The source bytes of the value at ``path``, compacted. ``KeyError`` if absent."""
        return self.raw_at_path(path)

    def raw_at_path(self, path: tuple[str | int, ...]) -> bytes:
        """:meth:`raw_at` with its path as one tuple: compiled, a call that passes its own
        ``*path`` on is a generic Python call, this one a native call (a line's data part)."""
        value = self.value
        for step in path:
            value = value[step]
        if not path and (self._canonical or _has_no_whitespace(self.raw)):
            # The whole line, proved canonical or with no whitespace byte anywhere, is
            # compacted already: its own bytes, with no encoding to prove them (a large line is
            # not proved when parsed, and a third of a transcript's lines land whole this way).
            return self.raw
        if self.canonical:
            return self.raw if not path else _orjson_dumps(value)
        start, end = _span(self.raw, path)
        return compact(self.raw[start:end])

    def items_at(self, *path: str | int) -> Iterator[bytes]:
        """The source bytes of each element of the list at ``path``, compacted, in one scan.

        ``[line.raw_at(*path, i) for i in ...]`` finds every element from the start of the line
        again, which is quadratic for a long list (a document holding a whole conversation);
        this walks the list once. ``KeyError`` if absent, ``TypeError`` if not a list.
        """
        value = self.value
        for step in path:
            value = value[step]
        if not isinstance(value, list):
            raise TypeError(f"the value at {list(path)} is not a list")
        if self.canonical:
            for item in value:
                yield _orjson_dumps(item)
            return
        start, _ = _span(self.raw, path)
        s = self.raw
        # a line with no whitespace between its tokens has none in any element either
        whole_compact = is_compact(s)
        i = _skip_ws(s, start + 1)
        if s[i] == 0x5D:
            return
        while True:
            end = _skip_value(s, i)
            yield s[i:end] if whole_compact else compact(s[i:end])
            i = _skip_ws(s, end)
            if s[i] == 0x5D:
                return
            i = _skip_ws(s, i + 1)


def slice_at(raw: bytes, *path: str | int) -> bytes:
    """The bytes of the value at ``path`` inside ``raw``: compact JSON bytes that parsed (an
    element :meth:`JSONLine.items_at` sliced), so the slice is compact too. ``KeyError`` if
    absent."""
    start, end = _span(raw, path)
    return raw[start:end]


def _has_no_whitespace(raw: bytes) -> bool:
    """Whether no byte of ``raw`` is JSON whitespace, so none lies between its tokens.

    Looked for as byte values: ``b" " in raw`` first tries ``b" "`` as an integer, and raising
    and clearing that error costs more than the search.
    """
    return 0x20 not in raw and 0x09 not in raw and 0x0A not in raw and 0x0D not in raw


# ---- the slow path: spans of values inside raw bytes -------------------------------------

_WS: Final = b" \t\r\n"


def _skip_ws(s: bytes, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _skip_string(s: bytes, i: int) -> int:
    match = _STRING.match(s, i)
    if match is None:  # only a parsed line is scanned, and its strings close
        raise ValueError(f"no string closes at byte {i}")
    return match.end()


def _skip_value(s: bytes, i: int) -> int:
    c = s[i]
    if c == 0x22:
        return _skip_string(s, i)
    if c in (0x7B, 0x5B):
        # from one bracket to the next, a whole string at a time: a byte at a time in Python,
        # the scan was most of what reading a landed file's part data cost
        depth = 0
        for token in _STRING_OR_BRACKET.finditer(s, i):
            step = _BRACKET_STEP[s[token.start()]]
            if step:
                depth += step
                if depth == 0:
                    return token.end()
        raise ValueError(f"no bracket closes the one at byte {i}")
    end = _SCALAR_END.search(s, i)
    return len(s) if end is None else end.start()


def _span(raw: bytes, path: tuple[str | int, ...]) -> tuple[int, int]:
    start = _skip_ws(raw, 0)
    for step in path:
        start = _child_start(raw, start, step)
    return start, _skip_value(raw, start)


def _child_start(s: bytes, i: int, step: str | int) -> int:
    opener = s[i]
    i = _skip_ws(s, i + 1)
    found = -1
    index = 0
    if s[i] in (0x7D, 0x5D):
        raise KeyError(step)
    # a key with no escape is its name's own bytes, compared without decoding it
    name = f'"{step}"'.encode() if isinstance(step, str) else b""
    while True:
        if opener == 0x7B:
            key_end = _skip_string(s, i)
            key = s[i:key_end]
            i = _skip_ws(s, key_end) + 1  # past the colon
            i = _skip_ws(s, i)
            if key == name or (0x5C in key and loads_strict(key) == step):
                found = i  # the last duplicate wins, as it does when parsing
        else:
            if index == step:
                return i
            index += 1
        i = _skip_ws(s, _skip_value(s, i))
        if s[i] in (0x7D, 0x5D):
            break
        i = _skip_ws(s, i + 1)
    if found < 0:
        raise KeyError(step)
    return found
