"""Schema versions of event data: old versions are upcast to the current one when read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from events.envelope import Recorded

Upcaster = Callable[[Mapping[str, Any]], Mapping[str, Any]]


class Upcasters:
    """Functions turning `(type, v)` data into version `v + 1`, applied in a chain on read.

    The hash chain is verified over the stored form; upcasting happens after, so an upgraded
    reader never breaks an old log.
    """

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}

    @classmethod
    def of(cls, steps: Iterable[tuple[str, int, Upcaster]]) -> Upcasters:
        """Upcasters with each `(event type, from version, function)` registered."""
        upcasters = cls()
        for event_type, from_version, step in steps:
            upcasters.register(event_type, from_version, step)
        return upcasters

    def register(self, event_type: str, from_version: int, step: Upcaster) -> None:
        if (event_type, from_version) in self._steps:
            raise ValueError(f"{event_type} v{from_version} already has an upcaster")
        self._steps[(event_type, from_version)] = step

    def upcast(self, record: Recorded) -> Recorded:
        data, v = record.data, record.v
        while (step := self._steps.get((record.type, v))) is not None:
            data, v = step(data), v + 1
        return record if v == record.v else replace(record, data=data, v=v)
