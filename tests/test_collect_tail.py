"""The append cursor's tail digest, kept while lines are read, is the digest of the last MiB."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.collect.append import TAIL_BYTES, _Tail

_SIZES = st.sampled_from([0, 1, 100, 5000, TAIL_BYTES // 2, TAIL_BYTES - 1, TAIL_BYTES, TAIL_BYTES + 3])


@settings(max_examples=60, deadline=None)
@given(_SIZES, st.lists(_SIZES.filter(bool), max_size=6), st.integers(0, 255))
def test_the_tail_digest_is_the_sha256_of_the_last_mib(seed_size: int, sizes: list[int], byte: int) -> None:
    seed = bytes([byte]) * seed_size
    tail = _Tail(seed)
    everything = seed
    for n, size in enumerate(sizes):
        chunk = bytes([(byte + n + 1) % 256]) * (size - 1) + b"\n"
        tail.add(chunk)
        everything += chunk
    assert tail.digest() == hashlib.sha256(everything[-TAIL_BYTES:]).hexdigest()
