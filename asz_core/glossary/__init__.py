"""Glossaries: what each runtime calls the names the model uses, and where it records them.

An adapter owns its runtime's vocabulary: it declares one :class:`Glossary` per dialect it reads
through the hook ``asz_glossary``, from data kept beside its dialect code, so a rename in the
runtime changes the reading and the glossary in one package. The host only gathers them
(:func:`gather`); ``asz-pipeline glossary`` prints them.
"""

from __future__ import annotations

from asz_core.glossary.terms import Glossary, Term, gather

__all__ = ["Glossary", "Term", "gather"]
