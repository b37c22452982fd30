"""Upstream's ``provider_body/1`` rules, written again from the facts alone, for the tests.

``spec/upstream/MAPPING-FACTS.md`` §11 states what upstream's reader accepts and what its writer
lands. This module is a second, deliberately plain reading of those facts, sharing no code with
``asz_core.providerbody``: a reader (:meth:`Session.add`, strict as upstream's: a copy must name
its base's whole digest and be one deeper; every reference must point backwards) and a writer
(:meth:`Session.encode`: pieces, tips, the copy base, the manifest) working on records as plain
JSON values. The tests hold the project's code to it both ways: this reader rebuilds what the
project lands, and the project's reader rebuilds what this writer lands, the same records.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MIN_PIECE = 1024
MIN_COPY = 4096
MAX_DEPTH = 32
MAX_TIPS = 64
OTHER_TIPS = 8


class Refused(Exception):
    """A record upstream's reader does not take."""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def part_bytes(part: dict[str, Any]) -> bytes:
    if part.get("k") == "unknown":
        data = part["data"]
        return base64.b64decode(data) if part.get("encoding") == "base64" else data.encode("utf-8")
    raw: RawBytes = part["data"]
    return raw.raw


@dataclass
class RawBytes:
    """A data part's bytes as landed (json.loads would lose them: key order, number spelling)."""

    raw: bytes


# ---- the scanner: pieces and the first message ---------------------------------------------------


class _Scan:
    def __init__(self, body: bytes) -> None:
        self.b = body
        self.spans: list[tuple[int, int]] = []
        self.first: tuple[int, int] | None = None

    def ws(self, i: int) -> int:
        while i < len(self.b) and self.b[i] in b" \t\r\n":
            i += 1
        return i

    def string_end(self, i: int) -> int:
        j = i + 1
        while self.b[j] != 0x22:
            j += 2 if self.b[j] == 0x5C else 1
        return j + 1

    def value(self, i: int, top: bool, whole: bool) -> int:
        c = self.b[i]
        if c == 0x7B:
            return self.obj(i, top, whole)
        if c == 0x5B:
            return self.arr(i, False, whole)
        if c == 0x22:
            z = self.string_end(i)
            if not whole and z - i >= MIN_PIECE:
                self.spans.append((i, z))
            return z
        z = i
        while z < len(self.b) and self.b[z] not in b",}] \t\r\n":
            z += 1
        return z

    def obj(self, i: int, top: bool, whole: bool) -> int:
        i = self.ws(i + 1)
        if self.b[i] == 0x7D:
            return i + 1
        while True:
            kz = self.string_end(i)
            key = self.b[i:kz]
            i = self.ws(self.ws(kz) + 1)
            if top and key == b'"tools"' and self.b[i] == 0x5B:
                i = self.arr(i, True, whole)
            elif top and key == b'"messages"' and self.b[i] == 0x5B:
                j = self.ws(i + 1)
                if self.b[j] != 0x5D:
                    saved = list(self.spans)
                    self.first = (j, self.value(j, False, True))
                    self.spans = saved
                i = self.arr(i, False, whole)
            else:
                i = self.value(i, False, whole)
            i = self.ws(i)
            if self.b[i] == 0x7D:
                return i + 1
            i = self.ws(i + 1)

    def arr(self, i: int, each: bool, whole: bool) -> int:
        i = self.ws(i + 1)
        if self.b[i] == 0x5D:
            return i + 1
        while True:
            start = i
            z = self.value(i, False, whole or each)
            if each and not whole:
                self.spans.append((start, z))
            i = self.ws(z)
            if self.b[i] == 0x5D:
                return i + 1
            i = self.ws(i + 1)


# ---- the keys and the chain (plainly: the corpus's bodies are well formed) --------------------------


def lift(name: str, body: bytes) -> dict[str, str]:
    """The keys upstream's adapter reads from a body file (§11.2)."""
    keys: dict[str, str] = {}
    if name.endswith(".response.json"):
        stem = name.removesuffix(".response.json")
        if not re.fullmatch(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", stem):
            keys["request"] = stem
    try:
        value = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        return keys
    if not isinstance(value, dict):
        return keys
    text = {k: v for k, v in value.items() if isinstance(v, str)}
    keys["model"] = text.get("model", "")
    if name.endswith(".response.json"):
        keys["call"] = text.get("id", "")
        return keys
    with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):
        keys["session"] = json.loads(value["metadata"]["user_id"]).get("session_id") or ""
    system = value.get("system")
    first = system if isinstance(system, str) else (system[0].get("text", "") if system else "")
    for key, word in (("run", "cc_prompt_id"), ("previous_request", "cc_prev_req")):
        found = re.search(word + r"=([^;\s]+)", first)
        if found:
            keys[key] = found.group(1)
    return keys


def chain_of(first: bytes) -> str:
    """§11.4: 16 hex of the SHA-256 of the first message, normalised, as Go marshals a map."""
    try:
        message = json.loads(first)
    except ValueError:
        return sha(first)[:16]
    if not isinstance(message, dict):
        return sha(first)[:16]
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                block.pop("cache_control", None)
        if len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "text" \
                and len(content[0]) == 2:
            message["content"] = content[0]["text"]
    return sha(_marshal(message))[:16]


def _marshal(value: object) -> bytes:
    if isinstance(value, dict):
        return b"{" + b",".join(_marshal(k) + b":" + _marshal(v) for k, v in sorted(value.items())) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(_marshal(v) for v in value) + b"]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value).encode()
    if isinstance(value, (int, float)):
        number = float(value)
        return str(int(number)).encode() if number.is_integer() and abs(number) < 1e21 else repr(number).encode()
    return _html(go_json(value))


def _html(out: bytes) -> bytes:
    return out.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


# ---- a session ------------------------------------------------------------------------------------


@dataclass
class Held:
    record: dict[str, Any]
    manifest: dict[str, Any]


@dataclass
class Session:
    records: dict[str, Held] = field(default_factory=dict)
    pieces: dict[str, tuple[str, int]] = field(default_factory=dict)
    tips: dict[str, str] = field(default_factory=dict)
    tip_order: list[str] = field(default_factory=list)

    # -- reading --------------------------------------------------------------------------------

    def add(self, record: dict[str, Any]) -> None:
        """Take a landed record (parts' ``data`` as :class:`RawBytes`), as upstream's reader does."""
        parts = record["parts"]
        manifest = json.loads(parts[-1]["data"].raw)
        if manifest.get("schema") != "provider_body/1":
            raise Refused("no manifest")
        rid = record.get("id")
        if not rid:
            raise Refused("a record without an id")
        if not 0 <= manifest["depth"] <= MAX_DEPTH:
            raise Refused(f"{rid}: depth {manifest['depth']}")
        own = len(parts) - 1
        copies = 0
        for seg in manifest["segments"]:
            if "part" in seg and not 0 <= seg["part"] < own:
                raise Refused(f"{rid}: names part {seg['part']}")
            if "piece" in seg and seg["piece"] not in self.pieces:
                raise Refused(f"{rid}: names piece {seg['piece']}, which no earlier record holds")
            if "copy" in seg:
                copies += 1
                c = seg["copy"]
                base = self.records.get(c["from"])
                if base is None:
                    raise Refused(f"{rid}: copies from {c['from']}, which no earlier record holds")
                if base.manifest["sha256"] != c["sha256"] or not 0 <= c["len"] <= base.manifest["bytes"]:
                    raise Refused(f"{rid}: copies from {c['from']} with a digest or length it does not have")
                if manifest["depth"] != base.manifest["depth"] + 1:
                    raise Refused(f"{rid}: depth {manifest['depth']} over a base of {base.manifest['depth']}")
        if copies == 0 and manifest["depth"] != 0:
            raise Refused(f"{rid}: depth {manifest['depth']} and copies nothing")
        if rid in self.records:
            raise Refused(f"{rid}: landed twice")
        self.records[rid] = Held(record, manifest)
        for i, part in enumerate(parts[:own]):
            if part["k"] == "data":
                self.pieces.setdefault(sha(part["data"].raw), (rid, i))
        if manifest["role"] == "request" and manifest.get("chain"):
            self._tip(manifest["chain"], rid)

    def _tip(self, chain: str, rid: str) -> None:
        if chain in self.tips:
            self.tip_order.remove(chain)
        self.tips[chain] = rid
        self.tip_order.append(chain)
        if len(self.tip_order) > MAX_TIPS:
            del self.tips[self.tip_order.pop(0)]

    def body(self, rid: str) -> bytes:
        held = self.records[rid]
        return self.rebuild(held.record, held.manifest)

    def rebuild(self, record: dict[str, Any], manifest: dict[str, Any]) -> bytes:
        out = b""
        for seg in manifest["segments"]:
            if "lit" in seg:
                out += seg["lit"].encode("utf-8")
            elif "part" in seg:
                out += part_bytes(record["parts"][seg["part"]])
            elif "piece" in seg:
                rid, i = self.pieces[seg["piece"]]
                out += part_bytes(self.records[rid].record["parts"][i])
            else:
                out += self.body(seg["copy"]["from"])[: seg["copy"]["len"]]
        if len(out) != manifest["bytes"] or sha(out) != manifest["sha256"]:
            raise Refused(f"{record.get('id')}: rebuilds to {len(out)} bytes that do not match its digest")
        return out

    # -- writing --------------------------------------------------------------------------------

    def encode(self, name: str, body: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(record, manifest)`` as upstream lands the body file ``name``: the record's parts hold
        :class:`RawBytes`, the manifest last (its bytes: :func:`manifest_bytes`)."""
        rid = name.removesuffix(".json")
        role = "request" if name.endswith(".request.json") else "response"
        keys = lift(name, body)
        manifest: dict[str, Any] = {"schema": "provider_body/1", "role": role, "src": name, "sha256": sha(body),
                                    "bytes": len(body), "depth": 0}
        extra = {k: keys.get(k, "") for k in ("model", "session", "run", "call", "request", "previous_request")}
        record: dict[str, Any] = {"ord": 1, "off": 0, "sha": sha(body)[:12], "bytes": len(body), "id": rid}
        if role == "request" and keys.get("run"):
            record["run"] = keys["run"]
        if role == "response" and keys.get("call"):
            record["call"] = keys["call"]
        if keys.get("model"):
            record["model"] = keys["model"]
        parts, segments, why = self._cut(body, role, manifest)
        if why:
            segments, parts = [{"part": 0}], [{"k": "unknown", "text": why, "raw": body}]
            manifest["depth"] = 0
            manifest["why"] = why
        for key, item in extra.items():
            if item:
                manifest[key] = item
        manifest["segments"] = segments
        record["parts"] = parts
        return record, manifest

    def _cut(self, body: bytes, role: str, manifest: dict[str, Any]) -> tuple[list[Any], list[Any], str]:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return [], [], "the body is not valid UTF-8"
        try:
            json.loads(body)
        except ValueError:
            return [], [], "the body is not valid JSON"
        scan = _Scan(body)
        start = scan.ws(0)
        if body[start] != 0x7B:
            return [], [], "the body is not a JSON object"
        scan.value(start, True, False)
        spans = sorted(scan.spans)
        segments: list[dict[str, Any]] = []
        pos = 0
        if role == "request" and scan.first is not None:
            chain = chain_of(body[scan.first[0] : scan.first[1]])
            manifest["chain"] = chain
            copy = self._base(body, spans, chain)
            if copy is not None:
                segments.append({"copy": copy})
                manifest["depth"] = self.records[copy["from"]].manifest["depth"] + 1
                pos = copy["len"]
        parts: list[dict[str, Any]] = []
        local: dict[str, int] = {}
        for a, z in spans:
            if a < pos:
                continue
            if a > pos:
                segments.append({"lit": body[pos:a].decode("utf-8")})
            d = sha(body[a:z])
            if d in local:
                segments.append({"part": local[d]})
            elif d in self.pieces:
                segments.append({"piece": d})
            else:
                local[d] = len(parts)
                segments.append({"part": len(parts)})
                parts.append({"k": "data", "data": RawBytes(body[a:z])})
            pos = z
        if pos < len(body):
            segments.append({"lit": body[pos:].decode("utf-8")})
        return parts, segments, ""

    def _base(self, body: bytes, spans: list[tuple[int, int]], chain: str) -> dict[str, Any] | None:
        candidates = [self.tips[chain]] if chain in self.tips else []
        for other in reversed(self.tip_order):
            if len(candidates) >= OTHER_TIPS + 1:
                break
            if other != chain:
                candidates.append(self.tips[other])
        best: dict[str, Any] | None = None
        for rid in candidates:
            held = self.records[rid]
            if held.manifest["depth"] + 1 > MAX_DEPTH:
                continue
            try:
                base = self.body(rid)
            except Refused:
                continue
            n = 0
            while n < min(len(base), len(body)) and base[n] == body[n]:
                n += 1
            if best is None or n > best["len"]:
                best = {"from": rid, "sha256": held.manifest["sha256"], "len": n}
        if best is None:
            return None
        for a, z in spans:
            if z > best["len"]:
                if a < best["len"]:
                    best["len"] = a
                break
        while 0 < best["len"] < len(body) and 0x80 <= body[best["len"]] < 0xC0:
            best["len"] -= 1
        return best if best["len"] >= MIN_COPY else None


def read_landed(line: bytes) -> dict[str, Any]:
    """A landed record line with each part's ``data`` kept as its bytes."""
    record = json.loads(line)
    for part, raw in zip(record["parts"], _data_spans(line), strict=True):
        if raw is not None and part.get("k") != "unknown":
            part["data"] = RawBytes(raw)
    return record


def _data_spans(line: bytes) -> list[bytes | None]:
    """The raw bytes of each part's ``data`` in a record line (parts are compact objects)."""
    from asz_core.sessiondata.reader import decode_record  # the project's reader knows the bytes

    record = decode_record(line)
    return [bytes(p.data) if p.data is not None else None for p in record.parts]


# ---- lines and files, as upstream's writer writes them ---------------------------------------------


def go_json(value: object) -> bytes:
    """A value upstream's writer encodes itself (HTML escaping off), for the ASCII-safe and UTF-8
    strings these records hold: Python's compact encoding with U+2028 and U+2029 escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode("utf-8")


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return go_json(manifest)


def record_line(record: dict[str, Any], manifest: dict[str, Any]) -> bytes:
    """The record as a line of a landed file, with its parts and the manifest last."""
    head = go_json({k: v for k, v in record.items() if k != "parts"})[:-1]
    parts = []
    for part in record["parts"]:
        if part["k"] == "data":
            raw = part["data"].raw
            parts.append(b'{"k":"data","data":' + raw + b',"state":"available","bytes":%d}' % len(raw))
            continue
        body = part["raw"]
        try:  # json.Marshal: <, > and & escaped
            data, encoding = _html(go_json(body.decode("utf-8"))), b""
        except UnicodeDecodeError:
            data, encoding = go_json(base64.b64encode(body).decode("ascii")), b',"encoding":"base64"'
        parts.append(b'{"k":"unknown","text":' + go_json(part["text"]) + b',"data":' + data + encoding
                     + b',"state":"available","bytes":%d}' % len(body))
    own = manifest_bytes(manifest)
    parts.append(b'{"k":"data","data":' + own + b',"state":"available","bytes":%d}' % len(own))
    return head + b',"parts":[' + b",".join(parts) + b"]}"


def write_file(session_dir: Path, seq: int, session: str, lines: list[bytes]) -> Path:
    """A ``provider_body`` file as upstream lands one: its header, the lines, the closing line."""
    directory = session_dir / "provider_body"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    at = "2026-10-01T00:00:00Z"
    header = go_json({"h": 1, "schema": "sd/1", "seq": seq, "at": at, "kind": "provider_body",
                      "adapter": "claude-code-provider/0.6.0", "dialect": "claude-code-provider/1", "src": ".",
                      "session": session})
    data = header + b"\n" + b"".join(line + b"\n" for line in lines)
    data += go_json({"t": "end", "records": len(lines), "digest": sha(data)}) + b"\n"
    path = directory / f"provider_body-20261001T000000Z-{seq:06d}.sd"
    path.write_bytes(data)
    path.chmod(0o600)
    return path
