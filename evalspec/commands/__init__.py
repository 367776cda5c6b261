"""Subcommands of the evalspec CLI, one module each, imported lazily by evalspec.cli."""
