"""Locate the bundled ``templates/`` and ``schemas/`` folders.

In a wheel they live inside the package (``evalspec/templates``); in a source
checkout or an editable install they are the top-level folders beside the package.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    """Return the folder ``name`` (``"templates"`` or ``"schemas"``)."""
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"evalspec resource folder {name!r} not found next to {_PKG}; the installation is incomplete"
    )


def templates_dir() -> Path:
    return resource_dir("templates")


def schemas_dir() -> Path:
    return resource_dir("schemas")
