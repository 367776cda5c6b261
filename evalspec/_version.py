"""The single source of evalspec's version (kept equal to ``pyproject.toml``)."""

__version__ = "0.1.0"
