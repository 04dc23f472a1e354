"""A stand-in for a notebook's ``nb`` in the chapters' unit tests: it keeps what a result object's
``record(nb)`` registers, through the same calls as :class:`causalbandits_lib.book.notebook.NotebookRun`
(the library may not import the book layer, so results take ``nb`` duck-typed)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np


class RecordingNotebook:
    """Keeps ``nb.metric`` / ``nb.metric_items`` values in ``metrics`` and ``nb.curve`` arrays in
    ``curves`` (with their ``cumulative`` flag in ``cumulative``). A chapter that stores summarised
    curves itself writes into ``curves`` directly, as it does on a real notebook."""

    def __init__(self) -> None:
        self.metrics: dict[str, Any] = {}
        self.curves: dict[str, Any] = {}
        self.cumulative: dict[str, bool] = {}

    def metric(self, name: str, value: Any) -> None:
        self.metrics[name] = value

    def metric_items(self, items: Mapping[str, Any]) -> None:
        for name, value in items.items():
            self.metric(name, value)

    def curve(self, name: str, values: Any, cumulative: bool = True, n_points: int = 200) -> None:
        self.curves[name] = np.asarray(values)
        self.cumulative[name] = cumulative
