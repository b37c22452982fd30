"""Secrets never printed: what stands in for a header value or a URL's password wherever asz
prints, logs or writes outside the configuration itself.

- a header value (``export.otlp.headers``: tokens) is replaced whole by :data:`HIDDEN`; its
  name stays, so a person can see which headers are sent;
- a URL's password is replaced by :data:`HIDDEN`, the user name kept (``https://me:***@host``);
- text that may quote a URL (an error from a transport) has every such password replaced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["HIDDEN", "redact_headers", "redact_text", "redact_url"]

HIDDEN = "***"

#: ``scheme://user:password@`` anywhere in a text; the password ends at the last ``@`` before the host
_USERINFO = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/@:]*):(?P<password>[^\s/]*)@")


def redact_url(url: str) -> str:
    """``url`` with its password, if it has one, replaced."""
    return redact_text(url)


def redact_text(text: str) -> str:
    """``text`` with the password of every URL in it replaced."""
    return _USERINFO.sub(lambda m: f"{m.group('head')}:{HIDDEN}@", text)


def redact_headers(headers: Mapping[str, object]) -> dict[str, str]:
    """Each header name with its value replaced."""
    return {str(name): HIDDEN for name in headers}
