"""Upstream's ``claude-code/1`` conversion, written again from the facts alone, for the tests.

``spec/upstream/MAPPING-FACTS.md`` states what upstream's Go writer lands for one Claude Code
source line; where it is silent, upstream's source was read for the fact (a field's Go type, what
a failed decode still fills, when a ``changes/1`` record is refused). This module is a second,
deliberately plain reading of those facts, sharing no code with
``asz_adapters.claude_code_local`` or ``asz_core.sessiondata``: :func:`convert` turns a line's
bytes, its place and its source into the exact record line upstream writes.

It reads JSON as Go's decoder reads it, because that decides most of the mapping:

- a string's bytes that are not UTF-8, and an unpaired surrogate escape, read as U+FFFD, one
  for each bad byte;
- a key names a field in any case (``UUID`` is ``uuid``), and the last of two keys wins; two
  objects for one struct field are merged, two for a raw field replace;
- a value of another type than its field's (a number for a string, a fraction for an int, a
  string for an object) fails the decode, yet every other field is still filled;
- a raw field keeps the value's bytes as written, white space inside included.

The one thing it does not restate is the line differ upstream runs for an edit that carries no
patch (``changes.Diff``, not read): for such a file :func:`convert` raises :class:`NeedsDiffer`
with everything else it knows, and the test checks the landed hunks by applying them.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

# ---- reading JSON as Go does ---------------------------------------------------------------------


class NotJSON(Exception):
    """The bytes are not one JSON value (Go's decoder reports a syntax error)."""


@dataclass
class Node:
    """One JSON value: its kind, its bytes as written, and what it holds."""

    kind: str  # object, array, string, number, true, false, null
    raw: bytes
    text: str = ""  # a string's value, as Go decodes it
    items: list[Node] = field(default_factory=list)  # an array's values
    pairs: list[tuple[str, Node]] = field(default_factory=list)  # an object's keys, as written


_WS = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ESCAPES = {ord("b"): "\b", ord("f"): "\f", ord("n"): "\n", ord("r"): "\r", ord("t"): "\t",
            ord('"'): '"', ord("\\"): "\\", ord("/"): "/"}
MAX_DEPTH = 10000  # Go's decoder refuses deeper nesting


def go_text(data: bytes) -> str:
    """Bytes as a Go string read as text: each byte of a bad sequence is one U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    i = 0
    while i < len(data):
        b = data[i]
        size = 1 if b < 0x80 else 2 if 0xC2 <= b <= 0xDF else 3 if 0xE0 <= b <= 0xEF else 4 if 0xF0 <= b <= 0xF4 else 0
        if size:
            try:
                out.append(data[i:i + size].decode("utf-8"))
                i += size
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)


def _unquote(raw: bytes) -> str:
    body = raw[1:-1]
    if b"\\" not in body:
        return go_text(body)
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        j = body.find(b"\\", i)
        if j < 0:
            out.append(go_text(body[i:]))
            break
        out.append(go_text(body[i:j]))
        c = body[j + 1]
        if c != ord("u"):
            out.append(_ESCAPES[c])
            i = j + 2
            continue
        code = int(body[j + 2:j + 6], 16)
        i = j + 6
        if 0xD800 <= code <= 0xDFFF:
            if code < 0xDC00 and body[i:i + 2] == b"\\u":
                low = int(body[i + 2:i + 6], 16)
                if 0xDC00 <= low <= 0xDFFF:
                    out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                    i += 6
                    continue
            out.append("\ufffd")
            continue
        out.append(chr(code))
    return "".join(out)


class _Parser:
    def __init__(self, data: bytes) -> None:
        self.b = data

    def ws(self, i: int) -> int:
        m = _WS.match(self.b, i)
        assert m is not None
        return m.end()

    def value(self, i: int, depth: int) -> tuple[Node, int]:
        if depth > MAX_DEPTH:
            raise NotJSON("exceeded max depth")
        if i >= len(self.b):
            raise NotJSON("unexpected end")
        c = self.b[i]
        if c == 0x7B:
            return self.obj(i, depth)
        if c == 0x5B:
            return self.arr(i, depth)
        if c == 0x22:
            m = _STRING.match(self.b, i)
            if m is None:
                raise NotJSON("bad string")
            raw = m.group()
            return Node("string", raw, text=_unquote(raw)), m.end()
        for word in (b"true", b"false", b"null"):
            if self.b.startswith(word, i):
                return Node(word.decode(), word), i + len(word)
        m = _NUMBER.match(self.b, i)
        if m is None or m.end() == i:
            raise NotJSON("invalid character")
        return Node("number", m.group()), m.end()

    def obj(self, start: int, depth: int) -> tuple[Node, int]:
        node = Node("object", b"")
        i = self.ws(start + 1)
        if self.b[i:i + 1] == b"}":
            node.raw = self.b[start:i + 1]
            return node, i + 1
        while True:
            m = _STRING.match(self.b, i)
            if m is None:
                raise NotJSON("bad key")
            key = _unquote(m.group())
            i = self.ws(m.end())
            if self.b[i:i + 1] != b":":
                raise NotJSON("missing colon")
            value, i = self.value(self.ws(i + 1), depth + 1)
            node.pairs.append((key, value))
            i = self.ws(i)
            c = self.b[i:i + 1]
            if c == b"}":
                node.raw = self.b[start:i + 1]
                return node, i + 1
            if c != b",":
                raise NotJSON("missing comma")
            i = self.ws(i + 1)

    def arr(self, start: int, depth: int) -> tuple[Node, int]:
        node = Node("array", b"")
        i = self.ws(start + 1)
        if self.b[i:i + 1] == b"]":
            node.raw = self.b[start:i + 1]
            return node, i + 1
        while True:
            value, i = self.value(i, depth + 1)
            node.items.append(value)
            i = self.ws(i)
            c = self.b[i:i + 1]
            if c == b"]":
                node.raw = self.b[start:i + 1]
                return node, i + 1
            if c != b",":
                raise NotJSON("missing comma")
            i = self.ws(i + 1)


def parse(data: bytes) -> Node:
    """The one JSON value ``data`` holds, white space around it allowed, or :class:`NotJSON`."""
    p = _Parser(data)
    try:
        node, end = p.value(p.ws(0), 1)
    except IndexError as e:
        raise NotJSON("unexpected end") from e
    if p.ws(end) != len(data):
        raise NotJSON("invalid character after top-level value")
    return node


# ---- decoding into a typed shape (Go's struct rules) ---------------------------------------------

# A shape is "str", "bool", "int", "raw", "ptrstr" (a *string), a dict of field name → shape (a
# struct), ("ptr", struct) (a *struct), ("list", shape) (a slice), or "map" (map[string]raw).

ORIGIN = {"kind": "str"}
RECORD = {
    "type": "str", "uuid": "str", "parentUuid": "str", "timestamp": "str", "promptId": "str",
    "agentId": "str", "subtype": "str", "cwd": "str", "logicalParentUuid": "str",
    "isCompactSummary": "bool", "isMeta": "bool", "aiTitle": "str", "description": "str",
    "workflowName": "str", "runId": "str", "result": "raw", "parentAgentId": "str",
    "origin": ORIGIN, "promptSource": "str",
    "message": {"id": "str", "model": "str", "stop_reason": "ptrstr", "content": "raw",
                "usage": ("ptr", {"input_tokens": "int", "output_tokens": "int",
                                  "cache_read_input_tokens": "int", "cache_creation_input_tokens": "int"})},
    "toolUseResult": "raw",
    "attachment": {"type": "str", "commandMode": "str", "origin": ORIGIN},
}
HUNK = {"oldStart": "int", "oldLines": "int", "newStart": "int", "newLines": "int", "lines": ("list", "str")}
TOOL_RESULT = {
    "agentId": "str", "toolUseId": "str", "status": "str", "runId": "str", "transcriptDir": "str",
    "taskId": "str", "filePath": "str", "originalFile": "ptrstr", "content": "ptrstr",
    "oldString": "str", "newString": "str", "replaceAll": "bool", "structuredPatch": ("list", HUNK),
    "notebook_path": "str", "original_file": "ptrstr", "updated_file": "ptrstr",
}
BLOCK = {
    "type": "str", "text": "str", "thinking": "str", "signature": "str", "id": "str", "name": "str",
    "input": "raw", "tool_use_id": "str", "content": "raw", "is_error": ("ptr", "bool"),
    "source": {"media_type": "str", "data": "str"},
}
ATTACHMENT_TEXT = {"text": "str", "content": "raw"}
INT64 = (-(1 << 63), (1 << 63) - 1)


def _fold(name: str) -> str:
    """A key as Go compares it with a field name: ASCII upper case, other letters by their fold."""
    out = []
    for ch in name:
        if ch < "\x80":
            out.append(ch.upper())
        else:
            options = [ch] + [c for c in (ch.upper(), ch.lower()) if len(c) == 1]
            if ch in "\u212a\u017f":  # Kelvin sign, long s: fold to ASCII K, S
                options.append("K" if ch == "\u212a" else "S")
            out.append(min(options))
    return "".join(out)


class Decoded:
    """What Go's ``json.Unmarshal`` leaves in a value of a shape, and whether it reported an error."""

    def __init__(self) -> None:
        self.failed = False


def decode(node: Node, shape: Any, into: Any, errors: Decoded) -> Any:
    """The value ``node`` decodes to in ``shape``, given what ``into`` held before."""
    if shape == "raw":
        return node.raw
    if node.kind == "null":
        if shape == "ptrstr" or (isinstance(shape, tuple) and shape[0] in ("ptr", "list")) or shape == "map":
            return None
        return into  # a null leaves a plain value as it was
    if shape in ("str", "ptrstr"):
        if node.kind == "string":
            return node.text
        errors.failed = True
        return into
    if shape == "bool":
        if node.kind in ("true", "false"):
            return node.kind == "true"
        errors.failed = True
        return into
    if shape == "int":
        if node.kind == "number" and re.fullmatch(rb"-?[0-9]+", node.raw) and INT64[0] <= int(node.raw) <= INT64[1]:
            return int(node.raw)
        errors.failed = True
        return into
    if shape == "map":
        if node.kind != "object":
            errors.failed = True
            return into
        held = dict(into or {})
        for key, value in node.pairs:
            held[key] = value.raw
        return held
    if isinstance(shape, tuple) and shape[0] == "ptr":
        return decode(node, shape[1], into if into is not None else _zero(shape[1]), errors)
    if isinstance(shape, tuple) and shape[0] == "list":
        if node.kind != "array":
            errors.failed = True
            return into
        return [decode(item, shape[1], _zero(shape[1]), errors) for item in node.items]
    assert isinstance(shape, dict)
    if node.kind != "object":
        errors.failed = True
        return into
    out = dict(into) if into is not None else _zero(shape)
    folded = {_fold(name): name for name in shape}
    for key, value in node.pairs:
        name = key if key in shape else folded.get(_fold(key))
        if name is not None:
            out[name] = decode(value, shape[name], out[name], errors)
    return out


def _zero(shape: Any) -> Any:
    if shape == "str":
        return ""
    if shape == "bool":
        return False
    if shape == "int":
        return 0
    if isinstance(shape, dict):
        return {name: _zero(sub) for name, sub in shape.items()}
    return None  # raw (absent), pointers, slices, maps


def unmarshal(raw: bytes | None, shape: Any) -> tuple[Any, bool]:
    """``(value, ok)``: Go's ``json.Unmarshal(raw, &v)`` into a zero ``v`` of ``shape``."""
    errors = Decoded()
    if raw is None:
        return _zero(shape), False
    try:
        node = parse(raw)
    except NotJSON:
        return _zero(shape), False
    value = decode(node, shape, _zero(shape), errors)
    return value, not errors.failed


# ---- writing JSON as Go does ---------------------------------------------------------------------

_SHORT = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
          "\u2028": "\\u2028", "\u2029": "\\u2029"}
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def go_string(text: str, html: bool) -> bytes:
    """A string as Go's encoder writes it: HTML escaping on for ``json.Marshal``, off for the writer."""
    out = ['"']
    for ch in text:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ch < " ":
            out.append(f"\\u00{ord(ch):02x}")
        elif html and ch in _HTML:
            out.append(_HTML[ch])
        elif "\ud800" <= ch <= "\udfff":
            out.append("\\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out).encode("utf-8")


def compact(raw: bytes) -> bytes:
    """Go's ``json.Compact``: the white space between tokens removed, nothing else changed."""
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == 0x22:
            m = _STRING.match(raw, i)
            end = m.end() if m else n
            out += raw[i:end]
            i = end
        elif c in b" \t\r\n":
            i += 1
        else:
            out.append(c)
            i += 1
    return bytes(out)


def obj(pairs: list[tuple[str, bytes]]) -> bytes:
    """An object from keys and their encoded values, in the order given."""
    return b"{" + b",".join(b'"' + k.encode() + b'":' + v for k, v in pairs) + b"}"


# ---- the source a line comes from ----------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """What a line's path says: its kind, session, stream and run (upstream knows nothing more)."""

    kind: str  # transcript, agent_meta, journal, workflow_manifest, workflow_script
    session: str
    stream: str = "main"
    run: str = ""


class NeedsDiffer(Exception):
    """An edit with no patch: upstream runs its line differ, which this module does not restate."""

    def __init__(self, before: bytes, after: bytes) -> None:
        super().__init__("a computed line diff")
        self.before, self.after = before, after


# ---- parts ---------------------------------------------------------------------------------------


def part(k: str, *, text: str = "", data: bytes | None = None, id: str = "", of: str = "", name: str = "",
         server: str = "", server_tool: str = "", failed: bool | None = None, media: str = "",
         encoding: str = "", state: str = "available", size: int = 0) -> bytes:
    """One part line piece: keys in upstream's order, every empty one left out (``k`` always)."""
    pairs: list[tuple[str, bytes]] = [("k", go_string(k, False))]
    if text:
        pairs.append(("text", go_string(text, False)))
    if data:
        pairs.append(("data", compact(data)))
    for key, value in (("id", id), ("of", of), ("name", name), ("server", server), ("server_tool", server_tool)):
        if value:
            pairs.append((key, go_string(value, False)))
    if failed is not None:
        pairs.append(("failed", b"true" if failed else b"false"))
    for key, value in (("media", media), ("encoding", encoding), ("state", state)):
        if value:
            pairs.append((key, go_string(value, False)))
    if size:
        pairs.append(("bytes", str(size).encode()))
    return obj(pairs)


def unknown_part(kept: bytes, why: str) -> bytes:
    """Bytes kept whole: one JSON string (HTML-escaped), or base64 when they are not UTF-8."""
    try:
        text, encoding = kept.decode("utf-8"), ""
    except UnicodeDecodeError:
        text, encoding = base64.b64encode(kept).decode(), "base64"
    return part("unknown", text=why, data=go_string(text, True), encoding=encoding, size=len(kept))


def mcp_split(name: str) -> tuple[str, str]:
    """``(server, tool)`` of an MCP tool name that splits on exactly one ``__``, else empty."""
    if not name.startswith("mcp__"):
        return "", ""
    rest = name[len("mcp__"):]
    places = [i for i in range(len(rest) - 1) if rest[i:i + 2] == "__"]
    if len(places) != 1 or places[0] == 0 or places[0] + 2 == len(rest):
        return "", ""
    return rest[:places[0]], rest[places[0] + 2:]


def result_text(content: bytes | None) -> tuple[str, int]:
    if content is None:
        return "", 0
    if content[:1] == b'"':
        text, ok = unmarshal(content, "str")
        if ok:
            return text, len(text.encode())
    blocks, ok = unmarshal(content, ("list", BLOCK))
    if ok:
        texts = [b["text"] for b in blocks or [] if b["text"]]
        if texts:
            joined = "\n".join(texts)
            return joined, len(joined.encode())
    return "", len(content)


def block_part(raw: bytes, tur_raw: bytes | None) -> tuple[bytes, bytes | None]:
    """One content block's part, and its dropped entry when it drops a signature."""
    b, ok = unmarshal(raw, BLOCK)
    if not ok:
        return unknown_part(raw, "the block is not an object"), None
    kind = b["type"]
    if kind == "text":
        return part("text", text=b["text"], size=len(b["text"].encode())), None
    if kind in ("thinking", "redacted_thinking"):
        state = "redacted" if kind == "redacted_thinking" else "unavailable" if not b["thinking"] else "available"
        p = part("reasoning", text=b["thinking"], state=state, size=len(b["thinking"].encode()))
        if not b["signature"]:
            return p, None
        drop = obj([("what", go_string("reasoning signature", False)),
                    ("bytes", str(len(b["signature"].encode())).encode()),
                    ("why", go_string("a provider verifies it; a reader cannot read it", False))])
        return p, drop
    if kind in ("tool_use", "server_tool_use"):
        server, tool = mcp_split(b["name"]) if kind == "tool_use" else ("", "")
        inp = b["input"]
        return part("call", id=b["id"], name=b["name"], data=inp, server=server, server_tool=tool,
                    size=len(inp) if inp else 0), None
    if kind == "tool_result":
        text, size = result_text(b["content"])
        data = None
        if not text and b["content"]:
            data, size = b["content"], len(b["content"])
        if tur_raw is not None:
            data = tur_raw
        return part("result", text=text, data=data, of=b["tool_use_id"], failed=b["is_error"], size=size), None
    if kind == "image":
        img = b["source"]["data"]
        return part("media", media=b["source"]["media_type"], data=go_string(img, True),
                    size=len(img.encode())), None
    return unknown_part(raw, f'block type "{kind}" is not one this dialect describes'), None


def attachment_part(payload: bytes) -> bytes:
    holder, _ = unmarshal(payload, {"attachment": "raw"})
    att = holder["attachment"]
    a, ok = unmarshal(att, ATTACHMENT_TEXT)
    text = ""
    if ok:
        if a["text"]:
            text = a["text"]
        elif a["content"] and a["content"][:1] == b'"':
            s, sok = unmarshal(a["content"], "str")
            text = s if sok else ""
    if text:
        return part("text", text=text, size=len(text.encode()))
    return part("data", data=att, size=len(att) if att else 0)


# ---- flags, links ----------------------------------------------------------------------------------


def holds_value(raw: bytes) -> bool:
    v = raw.strip(b" \t\r\n\v\f")
    if not v or v in (b"null", b'""'):
        return False
    if len(v) >= 2 and (v[:1] + v[-1:] in (b"[]", b"{}")):
        return bool(v[1:-1].strip(b" \t\r\n\v\f"))
    return True


def sent_flags(d: dict[str, Any], payload: bytes) -> list[str]:
    if d["type"] != "attachment":
        return []
    keys, _ = unmarshal(payload, {"attachment": "map"})
    entries = (keys["attachment"] or {}).items()
    kind = d["attachment"]["type"]
    if kind == "prompt_snapshot":
        tools = any("tool" in k.lower() and v.strip()[:1] in (b"[", b"{", b'"') and holds_value(v)
                    for k, v in entries)
        return ["system_prompt", "tool_schemas"] if tools else ["system_prompt"]
    if kind == "deferred_tools_record" and any(
            k not in ("type", "toolInputCopies") and v.strip()[:1] in (b"[", b"{") and holds_value(v)
            for k, v in entries):
        return ["tool_schemas"]
    return []


def structural_flags(d: dict[str, Any], tur: dict[str, Any], has_tur: bool, src: Source) -> list[str]:
    kind, msg, meta = d["type"], d["message"], d["isMeta"]
    sdk = kind == "user" and d["origin"]["kind"] == "" and d["promptSource"] == "sdk" and not meta
    system = kind == "system"
    sub = d["subtype"]
    external = (kind == "attachment" and d["attachment"]["type"] == "queued_command"
                and d["attachment"]["commandMode"] == "prompt") or \
               (kind == "user" and (d["origin"]["kind"] == "human" or sdk) and not meta)
    if meta or src.kind in ("agent_meta", "journal"):
        external = False
    injected = meta or (kind == "attachment" and not (d["attachment"]["type"] == "queued_command"
                                                       and d["attachment"]["commandMode"] == "prompt"))
    child_result = (src.kind == "journal" and d["result"] is not None) or (has_tur and tur["status"] == "completed")
    on = [
        ("synthetic", kind == "assistant" and msg["model"] == "<synthetic>"),
        ("context_reset", system and sub == "compact_boundary"),
        ("reset_summary", d["isCompactSummary"]),
        ("finished", kind == "assistant" and bool(msg["stop_reason"])),
        ("external_input", external),
        ("injected", injected),
        ("child_result", child_result),
        ("error", system and sub == "api_error"),
        ("launch_ack", has_tur and tur["status"] == "async_launched"),
        ("turn_duration", system and sub == "turn_duration"),
        ("command", system and sub == "local_command"),
        ("notice", system and sub not in ("compact_boundary", "api_error", "turn_duration", "local_command")),
    ]
    return [name for name, is_on in on if is_on]


def trigger(d: dict[str, Any]) -> str:
    kind = d["origin"]["kind"] or d["attachment"]["origin"]["kind"]
    if not kind:
        sdk = d["type"] == "user" and d["origin"]["kind"] == "" and d["promptSource"] == "sdk" and not d["isMeta"]
        return "external" if sdk else ""
    return {"human": "external", "task-notification": "notification"}.get(kind, "unknown")


#: what Go's strings.TrimSpace trims (unicode.IsSpace), which Python's str.strip() does not match
GO_SPACE = " \t\n\r\v\f\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    rest = text[i + len(start):]
    j = rest.find(end)
    return rest[:j].strip(GO_SPACE) if j >= 0 else ""


def notification_ids(content: bytes | None) -> tuple[str, str]:
    if not content or content[:1] != b'"':
        return "", ""
    text, ok = unmarshal(content, "str")
    if not ok or "<task-notification>" not in text:
        return "", ""
    tool = _between(text, "<tool-use-id>", "</tool-use-id>")
    child, rest = "", text
    while True:
        task = _between(rest, "<task-id>", "</task-id>")
        if not task:
            break
        if re.fullmatch(r"a[0-9a-f]{16}", task):
            child = task
            break
        i = rest.find("</task-id>")
        if i < 0:
            break
        rest = rest[i + len("</task-id>"):]
    return tool, child


def links(d: dict[str, Any], tur: dict[str, Any], src: Source) -> tuple[str, str]:
    if src.kind == "agent_meta":
        tool, child = tur["toolUseId"], d["agentId"] or src.stream
    elif src.kind == "journal":
        tool, child = "", d["agentId"]
    else:
        tool, child = tur["toolUseId"], tur["agentId"]
    n_tool, n_child = notification_ids(d["message"]["content"])
    return tool or n_tool, child or n_child


# ---- changes/1 -----------------------------------------------------------------------------------


def _go_clean(path: str) -> str:
    cleaned = posixpath.normpath(path) if path else "."
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def _rel(root: str, target: str) -> str | None:
    base, targ = _go_clean(root), _go_clean(target)
    if base.startswith("/") != targ.startswith("/"):
        return None
    if base == targ:
        return "."
    if not base.startswith("/"):
        base, targ = "/" + base, "/" + targ
        if ".." in base.split("/"):
            return None
    return posixpath.relpath(targ, base)


def endpoint(data: bytes | None, present: bool) -> bytes:
    if not present:
        return b'{"present":false,"bytes":null}'
    if data is None:
        return b'{"present":true,"bytes":null}'
    pairs = [("present", b"true"), ("bytes", str(len(data)).encode()),
             ("sha256", go_string(hashlib.sha256(data).hexdigest(), True))]
    if data and not data.endswith(b"\n"):
        pairs.append(("no_newline_at_end", b"true"))
    return obj(pairs)


@dataclass
class FileDiff:
    """A file change's ``diff``, ``additions``, ``deletions`` and ``hunks``, as encoded pieces."""

    diff: str
    additions: int | None
    deletions: int | None
    hunks: list[bytes]


def changes_part(d: dict[str, Any], tur: dict[str, Any], src: Source, tool: str,
                 differ: FileDiff | None = None) -> bytes | None:
    path, original, content = tur["filePath"], tur["originalFile"], tur["content"]
    if not path and tur["notebook_path"]:
        path, original, content = tur["notebook_path"], tur["original_file"], tur["updated_file"]
    if not path:
        return None
    created = original is None
    before = None if created else original.encode()
    after: bytes | None = None
    if content is not None:
        after = content.encode()
    elif tur["oldString"] and not created:
        after = original.replace(tur["oldString"], tur["newString"], -1 if tur["replaceAll"] else 1).encode()
    patch = tur["structuredPatch"] or []
    if not patch and after is None:
        return None
    if not (d["timestamp"] and src.session and src.stream):  # upstream's record check refuses it
        return None
    cwd = d["cwd"]
    if cwd:
        rel = _rel(cwd, path)
        if rel is not None and not rel.startswith(".."):
            path = rel
    if patch:
        hunks = []
        adds = dels = 0
        for h in patch:
            lines = h["lines"]
            hunks.append(obj([("old_start", str(h["oldStart"]).encode()), ("old_lines", str(h["oldLines"]).encode()),
                              ("new_start", str(h["newStart"]).encode()), ("new_lines", str(h["newLines"]).encode()),
                              ("lines", b"null" if lines is None else
                               b"[" + b",".join(go_string(x, True) for x in lines) + b"]")]))
            adds += sum(1 for x in lines or [] if x.startswith("+"))
            dels += sum(1 for x in lines or [] if x.startswith("-"))
        fd = FileDiff("available", adds, dels, hunks)
    elif differ is None and created and after is not None and b"\x00" not in after:
        # a file created: whatever the differ's method, its one hunk adds every line after an
        # empty start (a unified diff's ``-0,0``)
        lines = after.decode("utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        added = [go_string("+" + x, True) for x in lines]
        hunk = obj([("old_start", b"0"), ("old_lines", b"0"), ("new_start", b"1"),
                    ("new_lines", str(len(lines)).encode()), ("lines", b"[" + b",".join(added) + b"]")])
        fd = FileDiff("available", len(lines), 0, [hunk] if lines else [])
    elif differ is None:
        raise NeedsDiffer(before or b"", after or b"")
    else:
        fd = differ
    null = b"null"
    one = [("path", go_string(path, True)), ("operation", go_string("create" if created else "modify", True)),
           ("before", endpoint(before, not created)), ("after", endpoint(after, True)),
           ("diff", go_string(fd.diff, True)),
           ("additions", null if fd.additions is None else str(fd.additions).encode()),
           ("deletions", null if fd.deletions is None else str(fd.deletions).encode())]
    if fd.hunks:
        one.append(("hunks", b"[" + b",".join(fd.hunks) + b"]"))
    record = [("schema", go_string("changes/1", True)), ("id", go_string(tool, True)),
              ("captured_by", go_string("claude-code", True)), ("session", go_string(src.session, True)),
              ("stream", go_string(src.stream, True)), ("tool", go_string(tool, True)),
              ("time", go_string(d["timestamp"], True)), ("basis", go_string("runtime_reported", True))]
    if cwd:
        record.append(("root", obj([("path", go_string(cwd, True))])))
    record += [("changed_files", b"1"), ("changes", b"[" + obj(one) + b"]")]
    data = obj(record)
    return part("data", data=data, size=len(data))


# ---- the record ----------------------------------------------------------------------------------


def record_line(ord_: int, off: int, payload: bytes, fields: list[tuple[str, bytes]]) -> bytes:
    head = [("ord", str(ord_).encode()), ("off", str(off).encode()),
            ("sha", go_string(hashlib.sha256(payload).hexdigest()[:12], False)),
            ("bytes", str(len(payload)).encode())]
    return obj(head + fields)


def _s(value: str) -> bytes:
    return go_string(value, False)


def convert(payload: bytes, ord_: int, off: int, src: Source, differ: FileDiff | None = None) -> bytes:
    """The record line (no newline) upstream's writer lands for ``payload`` of ``src``."""
    parts: list[bytes]
    if src.kind == "workflow_script":
        parts = [unknown_part(payload, "the source is a program, not data")]
        return record_line(ord_, off, payload, [("from", _s("runtime")), ("parts", b"[" + b",".join(parts) + b"]")])
    if src.kind == "workflow_manifest":
        m, ok = unmarshal(payload, RECORD)
        fields: list[tuple[str, bytes]] = []
        if ok:
            batch = m["runId"] or src.run
            if batch:
                fields.append(("batch", _s(batch)))
            if m["workflowName"]:
                fields.append(("label", _s(m["workflowName"])))
        fields += [("from", _s("runtime")),
                   ("parts", b"[" + part("data", data=payload, size=len(payload)) + b"]")]
        return record_line(ord_, off, payload, fields)
    d, ok = unmarshal(payload, RECORD)
    if not ok:
        flags: list[str] = []
        if b'"prompt_snapshot"' in payload:
            flags = ["system_prompt", "tool_schemas"]
        elif b'"deferred_tools_record"' in payload:
            flags = ["tool_schemas"]
        fields = [("from", _s("runtime"))]
        if flags:
            fields.append(("flags", b"[" + b",".join(_s(f) for f in flags) + b"]"))
        fields.append(("parts", b"[" + unknown_part(payload, "the record is not valid JSON") + b"]"))
        return record_line(ord_, off, payload, fields)

    tur_raw = d["toolUseResult"]
    tur, has_tur = (unmarshal(tur_raw, TOOL_RESULT) if tur_raw and tur_raw[:1] == b"{"
                    else (_zero(TOOL_RESULT), False))
    msg = d["message"]
    tool, child = links(d, tur, src)
    kind = d["type"]
    frm = "runtime" if src.kind in ("agent_meta", "journal") else \
        {"assistant": "agent", "user": "external"}.get(kind, "runtime")
    flags = structural_flags(d, tur, has_tur, src) + sent_flags(d, payload)

    parts, dropped = [], []
    if kind == "attachment":
        parts.append(attachment_part(payload))
    elif msg["content"] is not None:
        content = msg["content"]
        text, sok = unmarshal(content, "str") if content[:1] == b'"' else ("", False)
        if sok:
            parts.append(part("text", text=text, size=len(text.encode())))
        else:
            blocks_node: Node | None = None
            try:
                node = parse(content)
                blocks_node = node if node.kind in ("array", "null") else None
            except NotJSON:
                pass
            if blocks_node is None:
                parts.append(unknown_part(content, "the content is neither text nor a list of blocks"))
            else:
                for block in blocks_node.items:
                    p, drop = block_part(block.raw, tur_raw if has_tur else None)
                    parts.append(p)
                    if drop is not None:
                        dropped.append(drop)
    if has_tur:
        of = _first_result_of(msg["content"]) if kind != "attachment" else ""
        if of:
            p2 = changes_part(d, tur, src, of, differ)
            if p2 is not None:
                parts.append(p2)
    if not parts:
        parts.append(part("data", data=payload, size=len(payload)))

    fields = []
    for key, value in (("id", d["uuid"]), ("parent", d["parentUuid"]), ("call", msg["id"]), ("run", d["promptId"]),
                       ("continues", d["logicalParentUuid"]), ("tool", tool), ("child", child),
                       ("batch", tur["runId"] or src.run),
                       ("label", d["aiTitle"] or d["description"] or d["workflowName"]),
                       ("started_by", d["parentAgentId"]), ("from", frm), ("time", d["timestamp"]),
                       ("trigger", trigger(d))):
        if value:
            fields.append((key, _s(value)))
    if flags:
        fields.append(("flags", b"[" + b",".join(_s(f) for f in flags) + b"]"))
    usage = msg["usage"]
    if usage is not None:
        fields.append(("usage", obj([(k, str(usage[n]).encode()) for k, n in (
            ("in", "input_tokens"), ("out", "output_tokens"), ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens")) if usage[n]])))
    if msg["model"]:
        fields.append(("model", _s(msg["model"])))
    fields.append(("parts", b"[" + b",".join(parts) + b"]"))
    if dropped:
        fields.append(("dropped", b"[" + b",".join(dropped) + b"]"))
    return record_line(ord_, off, payload, fields)


def _first_result_of(content: bytes | None) -> str:
    """The ``tool_use_id`` of the first result part with one (the id a ``changes/1`` record joins)."""
    if not content or content[:1] == b'"':
        return ""
    try:
        node = parse(content)
    except NotJSON:
        return ""
    for block in node.items if node.kind == "array" else []:
        b, ok = unmarshal(block.raw, BLOCK)
        if ok and b["type"] == "tool_result" and b["tool_use_id"]:
            return str(b["tool_use_id"])
    return ""


# ---- the file around the records -----------------------------------------------------------------


def header_line(seq: int, at: str, src: str, source: Source) -> bytes:
    """A landed file's first line (no newline) for ``source`` at ``src``, as upstream's collector heads it."""
    pairs = [("h", b"1"), ("schema", _s("sd/1")), ("seq", str(seq).encode()), ("at", _s(at)),
             ("kind", _s(source.kind)), ("adapter", _s("claude-code-local/0.1.0")), ("dialect", _s("claude-code/1")),
             ("src", _s(src)), ("session", _s(source.session))]
    if source.stream:
        pairs.append(("stream", _s(source.stream)))
    if source.run:
        pairs.append(("batch", _s(source.run)))
    return obj(pairs)


def end_line(before: bytes, records: int) -> bytes:
    """The last line (no newline): how many records, and the digest of every byte before it."""
    return obj([("t", _s("end")), ("records", str(records).encode()),
                ("digest", _s(hashlib.sha256(before).hexdigest()))])
