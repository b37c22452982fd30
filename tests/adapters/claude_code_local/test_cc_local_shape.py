"""The typed read's plain path reads every object exactly as the field-by-field read does.

An object that is plain (each key a field's own name or one naming no field, every value of its
field's type) is read as itself, without a copy; every other object is read field by field. The
two must agree on what each field holds, its key and whether the object read whole, for every
object, or a line would land differently depending on which path it took. They are compared on
every line, content block and tool result of the shared corpus, and on the same objects changed
at random in the ways that decide the read: a field given another type, a key written in another
case, a key that names no field, an integer past 64 bits.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from asz_adapters.claude_code_local import shape
from asz_adapters.claude_code_local.shape import (
    BLOCK,
    RECORD,
    TOOL_RESULT,
    Fields,
    ListOf,
    Shape,
    read,
    strings_typed,
)

pytestmark = pytest.mark.corpus

_ODD_VALUES: list[Any] = [None, True, False, 0, -1, 1 << 63, -(1 << 63) - 1, (1 << 63) - 1, 1.5, "", "x",
                          [], ["x"], [1], {}, {"type": "text"}, {"Type": 1}]


def _normal(value: Any, kind: Any) -> Any:
    """What a read value says, the same whichever path read it: a shape's fields (a plain
    object's by its field names only) with their keys, and whether it read whole."""
    if isinstance(kind, Shape):
        if isinstance(value, dict):  # a nested shape of a plain object is its object
            value = Fields(value, None, True)
        if not isinstance(value, Fields):
            return ("not fields", value)
        return ({name: (value.key(name), _normal(value.values[name], kind.fields[name]))
                 for name in kind.fields if name in value.values}, value.typed)
    if isinstance(kind, ListOf) and isinstance(value, list):
        return [_normal(item, kind.item) for item in value]
    return (type(value).__name__, value)


def _read_both_ways(objects: list[tuple[Any, Shape]], monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    """Each object read as it is, then read with no object taken as plain."""
    def normal(value: Any, kind: Shape) -> Any:
        found = read(value, kind)
        return found if found is None else _normal(found, kind)
    found = [normal(value, kind) for value, kind in objects]
    with monkeypatch.context() as patched:
        patched.setattr(Shape, "plain", lambda self, value: False)
        slow = [normal(value, kind) for value, kind in objects]
    return found, slow


def _objects(corpus: Path) -> list[tuple[Any, Shape]]:
    """Every line of the corpus's transcripts with the blocks and tool results in it."""
    out: list[tuple[Any, Shape]] = []
    for path in sorted((corpus / "claude-code" / "projects").rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            out.append((line, RECORD))
            if not isinstance(line, dict):
                continue
            if isinstance(line.get("toolUseResult"), dict):
                out.append((line["toolUseResult"], TOOL_RESULT))
            content = line.get("message", {}).get("content") if isinstance(line.get("message"), dict) else None
            for block in content if isinstance(content, list) else ():
                out.append((block, BLOCK))
    return out


def _changed(value: dict[str, Any], kind: Shape, rng: random.Random) -> dict[str, Any]:
    """``value`` with one thing changed at a random depth: a value, a key's case, a new key."""
    out = copy.deepcopy(value)
    target, target_kind = out, kind
    while True:  # go down into a nested object now and then
        fields = target_kind.fields
        nested = [(target[k], fields[k]) for k in target
                  if isinstance(fields.get(k), Shape) and isinstance(target[k], dict)]
        nested += [(item, fields[k].item) for k in target  # an object in a list field
                   if isinstance(fields.get(k), ListOf) and isinstance(target[k], list)
                   for item in target[k] if isinstance(item, dict)]
        if not nested or rng.random() < 0.5:
            break
        target, target_kind = rng.choice(nested)
    keys = list(target) or ["type"]
    what = rng.randrange(4)
    key = rng.choice(keys)
    if what == 0:
        target[key] = copy.deepcopy(rng.choice(_ODD_VALUES))
    elif what == 1 and key in target:
        target[key.upper() if rng.random() < 0.5 else key.swapcase()] = target[key]
    elif what == 2:
        target[rng.choice(list(target_kind.fields))] = copy.deepcopy(rng.choice(_ODD_VALUES))
    else:
        target[f"unheard{rng.randrange(3)}"] = copy.deepcopy(rng.choice(_ODD_VALUES))
    return out


def test_corpus_objects_read_the_same_plain_or_field_by_field(corpus: Path, monkeypatch: pytest.MonkeyPatch,
                                                               slow: bool) -> None:
    objects = _objects(corpus)[::1 if slow else 4]  # every object in the slow lane
    found, field_by_field = _read_both_ways(objects, monkeypatch)
    for (value, _), one, other in zip(objects, found, field_by_field, strict=True):
        assert one == other, value
    plain = sum(isinstance(value, dict) and kind.plain(value) for value, kind in objects)
    assert len(objects) > (10_131 if slow else 2_500)
    assert plain > 0.9 * len(objects), "the corpus's objects are nearly all plain"


def test_changed_objects_read_the_same_plain_or_field_by_field(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(21)
    objects = [(v, k) for v, k in _objects(corpus) if isinstance(v, dict)]
    changed = [(_changed(value, kind, rng), kind) for value, kind in rng.sample(objects, 3000)]
    found, field_by_field = _read_both_ways(changed, monkeypatch)
    for (value, _), one, other in zip(changed, found, field_by_field, strict=True):
        assert one == other, value
    plain = sum(kind.plain(value) for value, kind in changed)
    assert 300 < plain < len(changed) - 300, plain  # both paths were taken, often


def _plain_by_layout(value: dict[str, Any], kind: Shape) -> bool:
    """How the dialect judges a line: its order of keys' layout, the strings it fetched, the rest."""
    layout = kind.layout(tuple(value))
    strings = layout.strings(value) if layout.strings is not None else ()
    return strings_typed(strings) and (layout.only_strings or kind.plain_past_strings(layout, value))


def test_an_object_judged_by_its_layout_is_judged_as_plain_judges_it(corpus: Path) -> None:
    rng = random.Random(7)
    objects = [(v, k) for v, k in _objects(corpus) if isinstance(v, dict)]
    changed = [(_changed(value, kind, rng), kind) for value, kind in rng.sample(objects, 3000)]
    for value, kind in objects[::4] + changed:
        assert _plain_by_layout(value, kind) == kind.plain(value), value


def test_a_plain_string_field_holds_exactly_a_str_or_null_and_a_boolean_field_a_bool_or_null() -> None:
    class Text(str):
        pass

    assert strings_typed(("a", None, ""))
    assert strings_typed(())
    assert not strings_typed(("a", Text("b")))  # exact types, as a JSON parser makes them
    assert not strings_typed(("a", b"b"))
    assert RECORD.plain({"type": "user", "isMeta": False, "isCompactSummary": None})
    assert not RECORD.plain({"type": "user", "isMeta": 0})
    assert not RECORD.plain({"type": Text("user")})
    assert not RECORD.plain({"uuid": "u", "parentUuid": 7})
    assert not TOOL_RESULT.plain({"structuredPatch": [{"lines": ["a", Text("b")]}]})


def test_a_key_in_another_case_or_a_mistyped_field_is_never_plain() -> None:
    assert RECORD.plain({"type": "user", "uuid": "u"})
    assert not RECORD.plain({"Type": "user"})
    assert not RECORD.plain({"type": 1})
    assert not RECORD.plain({"isMeta": "yes"})
    assert not RECORD.plain({"message": {"usage": {"input_tokens": 1 << 63}}})
    assert RECORD.plain({"message": {"usage": {"input_tokens": (1 << 63) - 1}}})
    assert not RECORD.plain({"message": {"usage": {"input_tokens": True}}})
    assert not RECORD.plain({"message": []})
    assert TOOL_RESULT.plain({"structuredPatch": None})
    assert TOOL_RESULT.plain({"structuredPatch": [None, {"lines": ["a", None], "oldStart": 1}]})
    assert not TOOL_RESULT.plain({"structuredPatch": [{"lines": ["a", 1]}]})
    assert not TOOL_RESULT.plain({"structuredPatch": [{"Lines": []}]})
    assert not TOOL_RESULT.plain({"structuredPatch": {}})


def test_a_key_naming_no_field_leaves_an_object_plain_whatever_it_holds() -> None:
    kind = Shape({"type": shape.STR})
    assert kind.plain({"type": "x", "newKey": [1]})
    assert kind.plain({"newKey": {"any": "value"}, "type": None})
    assert not kind.plain({"newKey": 1, "TYPE": "x"})  # a key in another case names the field
    fields = read({"type": "x", "newKey": [1]}, kind)
    assert fields is not None and fields.typed and fields.text("type") == "x"


def test_a_source_with_endless_key_orders_is_still_read_exactly_and_held_small() -> None:
    kind = Shape({"type": shape.STR, "n": shape.INT})
    for i in range(3000):
        keys = [f"k{i}-{j}" for j in range(i % 100)] + ["type"]
        value = dict.fromkeys(keys, 1) | {"type": "x" if i % 3 else 7}
        fields = read(value, kind)
        assert fields is not None and fields.typed == bool(i % 3)
    assert len(kind._layouts) <= shape._MAX_LAYOUTS
    assert all(len(keys) <= shape._MAX_LAYOUT_KEYS for keys in kind._layouts)


def _slow_typed(value: dict[str, Any], kind: Shape, monkeypatch: pytest.MonkeyPatch) -> bool:
    with monkeypatch.context() as patched:
        patched.setattr(Shape, "plain", lambda self, value: False)
        found = read(value, kind)
    return found is not None and found.typed


def test_every_field_given_every_other_type_is_judged_as_the_field_by_field_read_judges_it(
        corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # one object of each key order met, each of its shape's fields (nested ones too) set in turn
    # to each odd value: with no key in another case, plain is exactly "read whole"
    seen: dict[tuple[Shape, tuple[str, ...]], dict[str, Any]] = {}
    for value, kind in _objects(corpus):
        if isinstance(value, dict):
            seen.setdefault((kind, tuple(value)), value)
    judged = 0
    for (kind, _), value in seen.items():
        targets: list[tuple[dict[str, Any], Shape]] = [(value, kind)]
        targets += [(value[name], nested) for name, nested in kind.fields.items()
                    if isinstance(nested, Shape) and isinstance(value.get(name), dict)]
        for target, target_kind in targets:
            for name in target_kind.fields:
                for odd in _ODD_VALUES:
                    saved = target.get(name, KeyError)
                    target[name] = copy.deepcopy(odd)
                    try:
                        assert kind.plain(value) == _slow_typed(value, kind, monkeypatch), (name, odd, value)
                    finally:
                        if saved is KeyError:
                            del target[name]
                        else:
                            target[name] = saved
                    judged += 1
    assert judged > 10_000


def test_an_object_of_string_fields_only_is_judged_by_their_types_alone() -> None:
    assert BLOCK.plain({"type": "text", "text": "hi"})
    assert BLOCK.plain({"type": "text", "text": None, "input": [1, {"a": 2}]})  # a raw field holds anything
    assert BLOCK.plain({"text": "x"})  # one string field
    assert not BLOCK.plain({"text": 1})
    assert not BLOCK.plain({"type": "text", "text": ["a"]})
    assert not BLOCK.plain({"type": "text", "is_error": "no"})  # a boolean field beside them
    assert BLOCK.plain({"type": "tool_result", "is_error": False, "content": "x"})
    assert not BLOCK.plain({"type": "text", "Text": "x"})  # a key in another case
