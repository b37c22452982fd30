"""The ``claude-code-provider`` adapter (entry point ``asz_adapters.claude_code_provider.adapter``)."""
