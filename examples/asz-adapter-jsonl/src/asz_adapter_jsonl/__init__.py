"""An asz adapter for plain JSONL files; see ``adapter``."""
