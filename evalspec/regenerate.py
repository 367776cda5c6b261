"""Regenerate every checked-in file that is generated from the models: one command.

``python -m evalspec.regenerate`` rewrites, from the current code:

* ``schemas/plan.schema.json``: the plan's JSON Schema (``evalspec schema``);
* ``schemas/claim.schema.json``: the claim's JSON Schema (``evalspec schema --claim``);
* ``README.md``, between ``<!-- plan-reference:begin -->`` and ``<!-- plan-reference:end -->``:
  the plan reference (every key and every analysis kind's parameters).

``--check`` writes nothing and exits 1 naming the files that differ. ``tests/test_generated.py``
compares the full text of each file with what this module generates. Run it from the
repository root (or pass ``--root``) after changing a model, a description or a kind.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

__all__ = ["README_MARKERS", "generated", "main"]

README_MARKERS = ("<!-- plan-reference:begin -->\n", "<!-- plan-reference:end -->")


def _readme(current: str) -> str:
    from evalspec.plan.reference import markdown_reference

    begin, end = README_MARKERS
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(current):
        raise SystemExit(f"README.md lacks the plan reference markers {begin.strip()} ... {end}")
    return pattern.sub(lambda _: begin + markdown_reference() + end, current, count=1)


def generated(root: Path) -> dict[Path, str]:
    """Each generated file under ``root`` -> the full text it should have."""
    from evalspec.claim_model import claim_schema_text
    from evalspec.plan.schema import schema_text

    readme = root / "README.md"
    return {
        root / "schemas" / "plan.schema.json": schema_text(),
        root / "schemas" / "claim.schema.json": claim_schema_text(),
        readme: _readme(readme.read_text(encoding="utf-8")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalspec.regenerate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository root (default: here)")
    args = parser.parse_args(argv)
    from evalspec._atomic import write_text_atomic

    stale = []
    for path, text in generated(args.root).items():
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not args.check:
            write_text_atomic(path, text)
            print(f"wrote {path}", file=sys.stderr)
    if args.check and stale:
        print("out of date: " + ", ".join(str(p) for p in stale) + "; regenerate: python -m evalspec.regenerate",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
