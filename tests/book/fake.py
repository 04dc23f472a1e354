"""A small valid record for tests that build records by hand."""

from __future__ import annotations

from typing import Any

from causalbandits_lib.book import records


def fake_record(**fields: Any) -> dict[str, Any]:
    """Every required key with an empty but valid value, then ``fields`` on top."""
    rec: dict[str, Any] = {k: {} for k in records.REQUIRED_KEYS if k not in ("schema", "content_hash")}
    rec.update(
        notebook="primer/01_bandits_and_regret",
        profile="smoke",
        parameters={"profile": "smoke", "seed": 0},
        data=[],
        timings={"started": "2026-01-01T00:00:00+00:00"},
        claims=[],
    )
    rec.update(fields)
    return rec
