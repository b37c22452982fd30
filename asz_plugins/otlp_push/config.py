"""The ``export.otlp`` section of ``asz.yaml``: its JSON Schema, and the values a push runs with.

The keys are the upstream file's (protocol, endpoint, tls, service_name, instance_id, layer,
headers, batch_bytes, max_bytes_per_minute, logs, metrics), so an ``asz.yaml`` written for the
Go asz validates here too; ``timeout`` is this implementation's own. The host validates the
section with the rest of the file, so a wrong type is reported with its file, line and key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from asz_core.config import parse_duration
from asz_core.redact import redact_url

__all__ = ["SCHEMA", "SECTION", "OtlpConfig", "default_instance_id"]

SECTION: Final = "export.otlp"

_GRPC_ENDPOINT = r"^$|^[^/\s]+:[0-9]{1,5}$"
_HTTP_ENDPOINT = r"^$|^https?://[^\s/]+(/\S*)?$"

SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "protocol": {"enum": ["grpc", "http"], "default": "grpc"},
        "endpoint": {"type": "string", "default": ""},
        "tls": {"type": "boolean", "default": False},
        "service_name": {"type": "string", "default": ""},
        "instance_id": {"type": "string", "default": ""},
        "layer": {"type": "string", "pattern": r"^[A-Z][A-Z0-9_]*$", "default": "AI_AGENT"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}},
        "batch_bytes": {"type": "integer", "minimum": 1, "default": 8 * 1024 * 1024},
        "max_bytes_per_minute": {"type": "integer", "minimum": 0, "default": 0},
        "timeout": {"type": "string", "pattern": r"^(?=.)(\d+h)?(\d+m)?(\d+s)?$", "default": "30s"},
        # The upstream file's two switches: landed files and rounds as logs, the metrics spool
        # (``_metrics/``, derived at the end of a pass) as metrics.
        "logs": {"type": "boolean", "default": True},
        "metrics": {"type": "boolean", "default": True},
    },
    # host:port for gRPC, a base URL for HTTP: a URL given to gRPC is the usual mistake.
    "if": {"properties": {"protocol": {"const": "http"}}, "required": ["protocol"]},
    "then": {"properties": {"endpoint": {"pattern": _HTTP_ENDPOINT}}},
    "else": {"properties": {"endpoint": {"pattern": _GRPC_ENDPOINT}}},
}


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
        """Whether anything is sent: an endpoint is set, and logs or metrics are on."""
        return bool(self.endpoint) and (self.logs or self.metrics)

    @staticmethod
    def sends(section: Mapping[str, Any]) -> bool:
        """:attr:`enabled`, from the section alone: a pass that pushes nothing neither builds the
        configuration nor looks up its user and host names."""
        return bool(str(section.get("endpoint", "")).strip()) and (
            bool(section.get("logs", True)) or bool(section.get("metrics", True)))

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
