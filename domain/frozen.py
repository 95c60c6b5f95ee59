"""Changing one field of an immutable game state, or one item of a tuple in it, at the speed
the engines need."""

from __future__ import annotations

from typing import Any, TypeVar

Frozen = TypeVar("Frozen")
Item = TypeVar("Item")


def replace(frozen: Frozen, **changes: Any) -> Frozen:
    """A copy of the frozen dataclass `frozen` with `changes`: `dataclasses.replace` without
    re-running `__init__` and its per-call checks, which dominated the games' playouts.

    For dataclasses without `slots` (their fields live in `__dict__`); every field given in
    `changes` must be one of theirs, which the type checker and the conformance tests catch.
    The fields are copied into a dict of their own and set past the frozen dataclass's
    `__setattr__`, as its own `__init__` does. `{**fields, **changes}` rather than `dict.copy`:
    a state built by `__init__` keeps its fields in a key table CPython shares among a class's
    instances, which `dict.copy` passes on to every copy, and reading a field from such a table
    misses the interpreter's specialised attribute lookup (CPython 3.11). Merged into a new dict,
    the first copy gets a table of its own, which later copies clone at once: 6-7% fewer
    instructions per action in Pig 10, Krass Kariert and Wobble (`bench/engine.py --callgrind`).
    """
    fields = {**frozen.__dict__, **changes}
    copy = _new(type(frozen))
    _set_attribute(copy, "__dict__", fields)
    return copy


def with_item(items: tuple[Item, ...], index: int, value: Item) -> tuple[Item, ...]:
    """`items` with `value` in place of the item at `index`: a seat's hand or score, say.

    Copied to a list and set there: half the instructions of splicing two slices around the new
    item (`bench/engine.py --callgrind`, Krumme10, 2026-11-29)."""
    changed = list(items)
    changed[index] = value
    return tuple(changed)


# `object`'s own, looked up once: two attribute lookups less in each copy.
_new = object.__new__
_set_attribute = object.__setattr__
