"""Reading a Claude Code line's fields the way upstream reads them: typed, or not at all.

Upstream decodes every line into a fixed set of typed fields and describes the line only when
that decode succeeds. Which lines it describes therefore depends on these rules, not on what a
line means, and this module states them once for every shape the dialect reads (a record, a
content block, a tool result):

1. A JSON object is read field by field; ``null`` reads as an object with no fields. Anything
   else (a list, a string, a number, a boolean) does not read.
2. A key names a field when it equals the field's name, or equals it ignoring case; of several
   keys naming one field, the last written wins. Keys that name no field are ignored, whatever
   they hold.
3. A field's value must have the field's type, or be ``null`` (which leaves the field empty):
   a string field takes a string; a boolean field ``true`` or ``false``; an integer field a
   number with no fraction and no exponent that fits in 64 bits; a nested shape an object; a
   list field a list whose every element has the element's type; a raw field anything. One
   field of another type, anywhere in the shape, and the shape does not read (:attr:`Fields.typed`
   is false; the fields that did read are still there, as upstream fills them).

A field left out and a field written ``null`` read the same, as an empty value, except for a raw
field: upstream keeps a raw ``null`` as the four bytes ``null``, so :meth:`Fields.has` is true
for it.

Most objects are plain: no key names a field in another case, every field has its type, and
every nested shape, and every object in a list field, is plain. Such an object reads as itself,
with no copy: :attr:`Fields.values` is the object, a nested shape's value its object, a list
field's value its list. Which fields an
object's keys name is worked out once for each order of keys met (objects of one kind repeat a
few orders), so an object is then judged by the types of its fields' values alone
(:meth:`Shape.plain`); any other object is read field by field, as the rules say.
"""

from __future__ import annotations

from collections.abc import KeysView, Mapping
from operator import itemgetter
from types import MappingProxyType
from typing import Any, Final, NamedTuple

__all__ = ["ATTACHMENT_TEXT", "BLOCK", "BOOL", "INT", "NO_FIELDS", "RAW", "RECORD", "STR", "TOOL_RESULT",
           "Fields", "Layout", "ListOf", "Shape", "read", "remembered", "strings_typed"]

STR: Final = "string"
BOOL: Final = "boolean"
INT: Final = "integer"
RAW: Final = "raw"

_INT_MIN: Final = -(1 << 63)
_INT_MAX: Final = (1 << 63) - 1


class ListOf(NamedTuple):
    """A list field whose every element has the type ``item``. A named tuple
    (docs/architecture.md, "Classes a pass imports")."""

    item: Kind


class Layout:
    """The fields one order of keys names, by the check each takes. ``strings`` returns the
    values of the string fields, in the order of ``names`` (one name is asked twice, so that a
    tuple comes back for one too), or is ``None`` when no key names one; ``only_strings`` says
    that no key names a field of any other kind but raw, which needs no check, so that the
    strings' types alone judge the object. A plain class, only built and read by name
    (docs/architecture.md, "Classes a pass imports"): compiled, each field is read natively,
    where a named tuple's is an attribute looked up on a Python object, several times a line."""

    __slots__ = ("booleans", "by_case", "integers", "lists", "names", "only_strings", "shapes", "strings")

    def __init__(self, names: tuple[str, ...], strings: itemgetter[Any] | None, only_strings: bool,
                 booleans: itemgetter[Any] | None, integers: tuple[str, ...], shapes: tuple[tuple[str, Shape], ...],
                 lists: tuple[tuple[str, Kind], ...], by_case: bool = False) -> None:
        self.names = names
        self.strings = strings
        self.only_strings = only_strings
        self.booleans = booleans
        self.integers = integers
        self.shapes = shapes
        self.lists = lists
        #: a key names a field in another case: no object with these keys is plain
        self.by_case = by_case


def strings_typed(values: tuple[Any, ...]) -> bool:
    """Whether each of ``values`` is a string or ``null``, as a plain string field's must be
    (exact types, as a JSON parser makes them): the check every line takes, on each of its
    string fields. Typed, so that compiled it is a loop in C over the tuple (mypyc makes
    ``all`` of a generator a loop), where ``issuperset(map(type, ...))`` is three generic calls."""
    return all(value is None or type(value) is str for value in values)


def _booleans_typed(values: tuple[Any, ...]) -> bool:
    """Whether each of ``values`` is ``true``, ``false`` or ``null`` (as :func:`strings_typed`)."""
    return all(value is None or type(value) is bool for value in values)


#: the layout of keys one of which names a field in another case
_NEVER_PLAIN: Final = Layout((), None, False, None, (), (), (), by_case=True)


def _plain_list(items: Any, item: Kind) -> bool:
    """Whether a list field's value is ``null``, or a list of strings or of plain objects (each
    element may be ``null``); a list of any other kind is read element by element."""
    if items is None:
        return True
    if type(items) is not list:
        return False
    if item is STR:
        strings: list[Any] = items  # typed, so that compiled the loop below is in C
        return all(value is None or type(value) is str for value in strings)
    if isinstance(item, Shape):
        return all(element is None or (type(element) is dict and item.plain(element)) for element in items)
    return False


def _getter(names: list[str]) -> itemgetter[Any] | None:
    """A getter of ``names``' values as a tuple (one name is asked twice, so that it returns a
    tuple for one name too), or ``None`` for no name."""
    if not names:
        return None
    return itemgetter(*names) if len(names) > 1 else itemgetter(names[0], names[0])


class Shape:
    """The typed fields of one object, by name."""

    __slots__ = ("_known", "_layouts", "_names", "fields")

    def __init__(self, fields: Mapping[str, Kind]) -> None:
        self.fields = fields
        self._names = frozenset(fields)
        #: the field names and the keys met so far that name no field: keys repeat from line
        #: to line, so each is folded once
        self._known: set[str] = set(fields)
        #: each order of keys met so far, and how an object with them is judged: the getter of
        #: its string fields when it names no other field, else its layout
        self._layouts: dict[tuple[str, ...], Layout | itemgetter[Any]] = {}

    def plain(self, value: dict[str, Any]) -> bool:
        """Whether ``value`` reads whole as this shape by its own keys (see the module's notes)."""
        layout = self._layouts.get(tuple(value)) or self._layout(tuple(value))
        if type(layout) is itemgetter:  # string fields only: most objects
            return strings_typed(layout(value))
        strings = layout.strings
        if strings is not None and not strings_typed(strings(value)):
            return False
        return self.plain_past_strings(layout, value)

    def plain_past_strings(self, layout: Layout, value: dict[str, Any]) -> bool:
        """Whether ``value``, whose keys are ``layout``'s and whose string fields were found to
        be strings, reads whole: the rest of :meth:`plain`, for a caller that took the strings
        itself (:meth:`layout`)."""
        if layout.by_case:
            return False
        booleans, integers, shapes, lists = layout.booleans, layout.integers, layout.shapes, layout.lists
        if booleans is not None and not _booleans_typed(booleans(value)):
            return False
        if integers:
            for name in integers:
                number = value[name]
                if number is not None and not (type(number) is int and _INT_MIN <= number <= _INT_MAX):
                    return False
        if shapes:
            for name, nested in shapes:
                inner = value[name]
                if inner is not None and not (type(inner) is dict and nested.plain(inner)):
                    return False
        return not lists or all(_plain_list(value[name], item) for name, item in lists)

    def layout(self, keys: tuple[str, ...]) -> Layout:
        """What an object with ``keys``, in this order, names, by the check each field takes
        (worked out each time: :meth:`plain` remembers it per order of keys, and so may a caller)."""
        named, by_case = self.split(dict.fromkeys(keys).keys())
        if by_case:
            return _NEVER_PLAIN
        kinds = [(name, self.fields[name]) for name in keys if name in named]
        names = [name for name, kind in kinds if kind is STR]
        return Layout(
            names=tuple(names) if len(names) != 1 else (names[0], names[0]),
            strings=_getter(names),
            only_strings=all(kind is STR or kind is RAW for _, kind in kinds),
            booleans=_getter([name for name, kind in kinds if kind is BOOL]),
            integers=tuple(name for name, kind in kinds if kind is INT),
            shapes=tuple((name, kind) for name, kind in kinds if isinstance(kind, Shape)),
            lists=tuple((name, kind.item) for name, kind in kinds if isinstance(kind, ListOf)))

    def _layout(self, keys: tuple[str, ...]) -> Layout | itemgetter[Any]:
        """How :meth:`plain` judges an object with ``keys`` (see :attr:`_layouts`), remembered
        for the next object with them."""
        layout = self.layout(keys)
        judged: Layout | itemgetter[Any] = layout
        if layout.only_strings and layout.strings is not None:
            judged = layout.strings  # judged by its strings' types alone
        if remembered(keys, len(self._layouts)):
            self._layouts[keys] = judged
        return judged

    def name_of(self, key: str) -> str | None:
        """The field ``key`` names: its own name, or one equal to it ignoring case."""
        if key in self.fields:
            return key
        folded = key.lower()
        return next((name for name in self.fields if name.lower() == folded), None)

    def split(self, keys: KeysView[str]) -> tuple[frozenset[str] | set[str], bool]:
        """The fields ``keys`` name by their own names, and whether another key names one
        by a different case (then the keys must be read in order, the last one winning)."""
        strange = keys - self._known
        for key in strange:
            if self.name_of(key) is not None:
                return self._names, True
            if len(self._known) < _MAX_KEYS:
                self._known.add(key)
        return keys & self._names, False


Kind = str | Shape | ListOf

#: keys remembered per shape; a source with more distinct keys than this is folded each time
_MAX_KEYS: Final = 4096
#: orders of keys remembered per shape (the shared corpus has under a hundred of lines), each of
#: at most so many keys and characters, so that what a source's keys can make a pass hold stays
#: small (a few MB at most); another order is worked out each time it is met
_MAX_LAYOUTS: Final = 1024
_MAX_LAYOUT_KEYS: Final = 64
_MAX_LAYOUT_CHARS: Final = 2048


def remembered(keys: tuple[str, ...], held: int) -> bool:
    """Whether what an order of keys decides may be kept beside ``held`` others (the bounds
    above), for a cache of such decisions."""
    return held < _MAX_LAYOUTS and len(keys) <= _MAX_LAYOUT_KEYS and sum(map(len, keys)) <= _MAX_LAYOUT_CHARS


class Fields:
    """What one object read as, by field name (see the module's rules).

    ``values`` maps each field a key named to the value read (``None`` for ``null``; a nested
    shape's :class:`Fields`, a list field's list); a field no key named is not in it. When
    ``typed``, a string field's value is a ``str`` or ``None``, and so on for every type. A plain
    object's ``values`` is the object itself (see the module's notes): it holds the keys that
    name no field too, and a nested shape's value is its object, so a nested shape is taken
    with :meth:`sub`, never from ``values``.
    """

    __slots__ = ("keys", "typed", "values")

    def __init__(self, values: dict[str, Any], keys: dict[str, str] | None, typed: bool) -> None:
        self.values = values
        #: each field's key as the line wrote it, when one differs from the field's name
        self.keys = keys
        #: every field had its type (upstream's decode succeeded)
        self.typed = typed

    def has(self, name: str) -> bool:
        """Whether a key named the field, ``null`` included."""
        return name in self.values

    def key(self, name: str) -> str:
        """The key as the line wrote it (for taking the field's bytes)."""
        return self.keys[name] if self.keys is not None else name

    def value(self, name: str) -> Any:
        """The field's value as read; ``None`` if empty."""
        return self.values.get(name)

    def text(self, name: str) -> str:
        """A string field; ``""`` when empty."""
        value = self.values.get(name)
        return value if isinstance(value, str) else ""

    def flag(self, name: str) -> bool:
        """A boolean field; false when empty."""
        return self.values.get(name) is True

    def number(self, name: str) -> int:
        """An integer field; 0 when empty."""
        value = self.values.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def sub(self, name: str) -> Fields:
        """A nested shape; no fields when empty."""
        value = self.values.get(name)
        if value is None:
            return NO_FIELDS
        if type(value) is dict:  # only a plain object holds a nested shape as its object, checked plain
            return Fields(value, None, True)
        return value if isinstance(value, Fields) else NO_FIELDS

    def inner(self, name: str) -> Mapping[str, Any]:
        """A nested shape's fields by name, as :attr:`values` holds them; empty when no key named
        it or it was ``null``. Where only a nested shape's values are read, this takes them
        without building its :class:`Fields`."""
        value = self.values.get(name)
        if type(value) is dict:
            return value
        return value.values if isinstance(value, Fields) else _NOTHING

    def subs(self, name: str) -> list[Fields]:
        """A list field of a nested shape, each element as it read (no fields for ``null``)."""
        return [item if isinstance(item, Fields) else Fields(item, None, True) if type(item) is dict
                else NO_FIELDS for item in self.values.get(name) or ()]

    def is_object(self, name: str) -> bool:
        """Whether a nested shape was written as an object (not ``null``, not left out)."""
        return isinstance(self.values.get(name), (Fields, dict))


NO_FIELDS: Final = Fields({}, None, True)
_NOTHING: Final[Mapping[str, Any]] = MappingProxyType({})


def read(value: Any, shape: Shape) -> Fields | None:
    """``value`` read as ``shape``; ``None`` when it is not an object or ``null``."""
    if value is None:
        return NO_FIELDS
    if not isinstance(value, dict):
        return None
    if shape.plain(value):
        return Fields(value, None, True)
    fields = shape.fields
    named, by_case = shape.split(value.keys())
    if by_case:
        return _read_in_order(value, shape)
    values: dict[str, Any] = {}
    typed = True
    for name in named:
        item, kind = value[name], fields[name]
        if item is None or (kind is STR and isinstance(item, str)) or kind is RAW:
            values[name] = item  # most fields, checked without a call
            continue
        ok, parsed = _typed(item, kind)
        if ok or isinstance(parsed, Fields):
            values[name] = parsed  # a nested shape keeps what did read, as upstream's does
        typed = typed and ok  # a value of another type leaves the field as it was
    return Fields(values, None, typed)


def _read_in_order(value: dict[str, Any], shape: Shape) -> Fields:
    """:func:`read` for an object some of whose keys name a field in another case: every key
    in the order written, so that the last of those naming one field wins."""
    fields = shape.fields
    values: dict[str, Any] = {}
    keys: dict[str, str] = {}
    typed = True
    for key, item in value.items():
        name = shape.name_of(key)
        if name is None:
            continue
        kind = fields[name]
        if item is None or (kind is STR and isinstance(item, str)) or kind is RAW:
            ok, parsed = True, item  # most fields, checked without a call
        else:
            ok, parsed = _typed(item, kind)
        if ok or isinstance(parsed, Fields):
            values[name] = parsed  # a nested shape keeps what did read, as upstream's does
            keys[name] = key
        typed = typed and ok  # a value of another type leaves the field as it was
    return Fields(values, keys, typed)


def _typed(value: Any, kind: Kind) -> tuple[bool, Any]:
    """Whether ``value`` has type ``kind`` (``null`` always has), and what it reads as."""
    if value is None:
        return True, None
    if isinstance(kind, str):
        if kind == STR:
            return isinstance(value, str), value
        if kind == RAW:
            return True, value
        if kind == BOOL:
            return isinstance(value, bool), value
        return (isinstance(value, int) and not isinstance(value, bool)
                and _INT_MIN <= value <= _INT_MAX), value
    if isinstance(kind, Shape):
        fields = read(value, kind)
        return fields is not None and fields.typed, fields
    if not isinstance(value, list):
        return False, None
    items = [_typed(item, kind.item) for item in value]
    return all(ok for ok, _ in items), [parsed for _, parsed in items]


_ORIGIN = Shape({"kind": STR})

#: the fields upstream reads of every line
RECORD: Final = Shape({
    "type": STR, "uuid": STR, "parentUuid": STR, "timestamp": STR, "promptId": STR,
    "agentId": STR, "subtype": STR, "cwd": STR, "logicalParentUuid": STR,
    "isCompactSummary": BOOL, "isMeta": BOOL, "aiTitle": STR, "description": STR,
    "workflowName": STR, "runId": STR, "result": RAW, "parentAgentId": STR, "origin": _ORIGIN,
    "promptSource": STR,
    "message": Shape({
        "id": STR, "model": STR, "stop_reason": STR, "content": RAW,
        "usage": Shape({"input_tokens": INT, "output_tokens": INT,
                        "cache_read_input_tokens": INT, "cache_creation_input_tokens": INT}),
    }),
    "toolUseResult": RAW,
    "attachment": Shape({"type": STR, "commandMode": STR, "origin": _ORIGIN}),
})

#: the fields upstream reads of one content block (and of each block of a result's content)
BLOCK: Final = Shape({
    "type": STR, "text": STR, "thinking": STR, "signature": STR, "id": STR, "name": STR,
    "input": RAW, "tool_use_id": STR, "content": RAW, "is_error": BOOL,
    "source": Shape({"media_type": STR, "data": STR}),
})

#: the fields upstream reads of a ``toolUseResult`` object
TOOL_RESULT: Final = Shape({
    "agentId": STR, "toolUseId": STR, "status": STR, "runId": STR, "transcriptDir": STR,
    "taskId": STR, "filePath": STR, "originalFile": STR, "content": STR, "oldString": STR,
    "newString": STR, "replaceAll": BOOL,
    "structuredPatch": ListOf(Shape({"oldStart": INT, "oldLines": INT, "newStart": INT,
                                     "newLines": INT, "lines": ListOf(STR)})),
    "notebook_path": STR, "original_file": STR, "updated_file": STR,
})

#: the fields upstream reads of an attachment to find its text
ATTACHMENT_TEXT: Final = Shape({"text": STR, "content": RAW})
