"""The chapters of the book as packages of the library, and their registries."""

from __future__ import annotations

import importlib
import pkgutil

import causalbandits_lib

__all__ = ["LAYERS", "chapter_names", "registry_entries"]

#: The two packages that are not chapters.
LAYERS = ("core", "book")


def chapter_names() -> list[str]:
    """Every chapter package of the library, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(causalbandits_lib.__path__) if m.ispkg and m.name not in LAYERS)


def registry_entries(chapters: list[str] | None = None) -> list:
    """The ``ENTRIES`` of every chapter's ``registry`` module (or of the chapters named).

    Raises
    ------
    LookupError
        If a chapter has no registry, or two entries share a name.
    """
    entries, seen = [], set()
    for chapter in chapter_names() if chapters is None else chapters:
        try:
            module = importlib.import_module(f"causalbandits_lib.{chapter}.registry")
        except ModuleNotFoundError as exc:
            raise LookupError(
                f"chapter {chapter!r} has no registry module (causalbandits_lib/{chapter}/registry.py)"
            ) from exc
        for entry in module.ENTRIES:
            if entry.name in seen:
                raise LookupError(f"registry entry {entry.name!r} is declared twice")
            if not entry.name.startswith(chapter + "."):
                raise LookupError(f"registry entry {entry.name!r} of chapter {chapter!r} must start with '{chapter}.'")
            seen.add(entry.name)
            entries.append(entry)
    return entries
