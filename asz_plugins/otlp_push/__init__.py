"""``otlp-push``: send the storage root to an OTLP logs receiver (SkyWalking OAP ≥ 11.1, an
OpenTelemetry Collector), one log record per landed file. See ``README.md`` beside this file.

Modules: :mod:`.config` (the ``export.otlp`` section), :mod:`.records` (a file as a log record),
:mod:`.state` (``push.state``), :mod:`.transport_grpc` / :mod:`.transport_http` (the two
transports, answering in :mod:`.transport`'s terms), :mod:`.limiter` (``max_bytes_per_minute``),
:mod:`.push` (one push), :mod:`.plugin` (the hooks and ``asz-pipeline push``).
"""
