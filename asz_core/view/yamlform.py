"""``-yaml``: the document rendered as YAML, a rendering of the JSON and not a second format.

The keys are the same and in the same order; mappings are blocks, indented four; an empty map is
``{}``; a text with line breaks is a block scalar; a scalar is plain, and quoted only where YAML
would otherwise read it as something else (``version`` is ``"1.0"``, a time is quoted, a title
with a colon is quoted). Reading the YAML back gives the same values as the JSON (asz-view,
"The YAML rendering").
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["render_yaml"]

_STR = "tag:yaml.org,2002:str"


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # as upstream's encoder writes it: a sequence under a key is indented like a mapping, and
        # a mapping that is a sequence's item starts two past its dash
        self.indents.append(self.indent)
        if self.indent is None:
            self.indent = 0
            return
        item = bool(self.states) and self.states[-1] == self.expect_block_sequence_item
        self.indent += 2 if item and isinstance(self.event, yaml.MappingStartEvent) else self.best_indent


def _text(dumper: _Dumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar(_STR, value, style="|")
    if dumper.resolve(yaml.ScalarNode, value, (True, False)) != _STR:  # type: ignore[no-untyped-call]
        return dumper.represent_scalar(_STR, value, style='"')
    return dumper.represent_scalar(_STR, value)


_Dumper.add_representer(str, _text)


def render_yaml(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, indent=4, allow_unicode=True, width=1 << 30)
