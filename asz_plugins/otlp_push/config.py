"""The values a push runs with: the ``export.otlp`` section (:mod:`~asz_plugins.otlp_push.section`)
with its defaults filled in. Built only by a pass or a command that pushes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from asz_core.config import parse_duration
from asz_core.redact import redact_url

__all__ = ["OtlpConfig", "default_instance_id"]


def default_instance_id() -> str:
    """``user@host`` of this machine: who is pushing, stable across restarts."""
    import getpass  # only when pushing: a pass that pushes nothing does not load them
    import socket

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's anonymous user)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


@dataclass(frozen=True)
class OtlpConfig:
    """``export.otlp`` as a push uses it, defaults filled in."""

    protocol: str = "grpc"
    endpoint: str = ""
    tls: bool = False
    service_name: str = ""
    instance_id: str = ""
    layer: str = "AI_AGENT"
    headers: Mapping[str, str] = field(default_factory=dict)
    batch_bytes: int = 8 * 1024 * 1024
    max_bytes_per_minute: int = 0
    timeout_s: float = 30.0
    logs: bool = True
    metrics: bool = True

    @classmethod
    def from_section(cls, section: Mapping[str, Any]) -> OtlpConfig:
        """From the validated section (``Config.section("export.otlp")``)."""
        timeout = parse_duration(str(section.get("timeout") or "30s"))
        return cls(
            protocol=str(section.get("protocol", "grpc")),
            endpoint=str(section.get("endpoint", "")).strip(),
            tls=bool(section.get("tls", False)),
            service_name=str(section.get("service_name", "")),
            instance_id=str(section.get("instance_id", "")) or default_instance_id(),
            layer=str(section.get("layer", "AI_AGENT")),
            headers={str(k): str(v) for k, v in (section.get("headers") or {}).items()},
            batch_bytes=int(section.get("batch_bytes", 8 * 1024 * 1024)),
            max_bytes_per_minute=int(section.get("max_bytes_per_minute", 0)),
            timeout_s=timeout if timeout > 0 else 30.0,
            logs=bool(section.get("logs", True)),
            metrics=bool(section.get("metrics", True)),
        )

    @property
    def enabled(self) -> bool:
        """Whether anything is sent: an endpoint is set, and logs or metrics are on (what
        :func:`~asz_plugins.otlp_push.section.sends` says of the section)."""
        return bool(self.endpoint) and (self.logs or self.metrics)

    @property
    def receiver(self) -> str:
        """The receiver as ``push.state`` names it and every line printed shows it:
        ``grpc://host:port``, ``grpcs://host:port`` with ``tls``, or the HTTP base URL without a
        trailing slash, its password (if any) redacted."""
        if self.protocol == "http":
            return redact_url(self.endpoint.rstrip("/"))
        return f"{'grpcs' if self.tls else 'grpc'}://{self.endpoint}"

    def plain_text_secret(self) -> str | None:
        """Why this configuration sends a secret (a header, a URL's password) unencrypted to
        another machine, or ``None``."""
        secret = "export.otlp.headers" if self.headers else ""
        if self.protocol == "http":
            scheme, _, rest = self.endpoint.partition("://")
            if "@" in rest.split("/", 1)[0]:
                secret = secret or "the password in export.otlp.endpoint"
            if not secret or scheme.lower() != "http" or _loopback(rest.split("/", 1)[0].rsplit("@", 1)[-1]):
                return None
            return (f"{secret} go to {self.receiver} over plain http://, readable by anyone on the way; "
                    f"use an https:// endpoint")
        if not secret or self.tls or _loopback(self.endpoint):
            return None
        return f"{secret} go to {self.receiver} unencrypted (tls: false), readable by anyone on the way; set tls: true"


def _loopback(hostport: str) -> bool:
    """Whether ``host:port`` is this machine (a secret sent there crosses no network)."""
    host = hostport.rsplit(":", 1)[0] if hostport.count(":") == 1 else hostport.rpartition("]")[0] or hostport
    host = host.strip("[]").lower()
    return host == "localhost" or host.startswith("127.") or host == "::1"
