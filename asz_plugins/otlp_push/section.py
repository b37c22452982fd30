"""The ``export.otlp`` section of ``asz.yaml``: its JSON Schema, and whether it sends anything.

The keys are the upstream file's (protocol, endpoint, tls, service_name, instance_id, layer,
headers, batch_bytes, max_bytes_per_minute, logs, metrics), so an ``asz.yaml`` written for the
Go asz validates here too; ``timeout`` is this implementation's own. The host validates the
section with the rest of the file, so a wrong type is reported with its file, line and key.

Every command loads the plugin, and every pass asks whether it pushes: this module is all they
import for that. The values a push runs with (:class:`~asz_plugins.otlp_push.config.OtlpConfig`)
are built only when it does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["SCHEMA", "SECTION", "sends"]

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


def sends(section: Mapping[str, Any]) -> bool:
    """Whether a push with the validated ``section`` sends anything: an endpoint is set, and logs
    or metrics are on (:attr:`OtlpConfig.enabled <asz_plugins.otlp_push.config.OtlpConfig.enabled>`,
    from the section alone)."""
    return bool(str(section.get("endpoint", "")).strip()) and (
        bool(section.get("logs", True)) or bool(section.get("metrics", True)))
