"""``evalspec attest CLAIM``: write an in-toto statement about a claim, for its owner to sign.

The statement (``claim.intoto.json`` beside the claim, or ``--out FILE``) names the claim,
its reports and its data by SHA-256 and records the plan hash, the lock, the ledger entry of
this look, the software and the verdict. evalspec signs nothing and ships no key: sign the
statement with a key you already trust, for example
``ssh-keygen -Y sign -f ~/.ssh/id_ed25519 -n evalspec out/claim.intoto.json``, and check it
later with ``evalspec audit out/claim.json --verify allowed_signers``. Exit 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["attest"]


@click.command("attest")
@click.argument("claim", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write the statement (default: claim.intoto.json beside the claim).")
def attest(claim: Path, out: Path | None) -> None:
    """Write an in-toto Statement v1 about CLAIM (claim, report and data digests; plan, lock, ledger, verdict)."""
    from evalspec.audit.attest import NAMESPACE, write_statement
    from evalspec.audit.core import gather

    path = write_statement(gather(claim, reproduce=False), claim, out)
    click.echo(f"statement written to {path}")
    click.echo(f"sign it with your own key: ssh-keygen -Y sign -f KEY -n {NAMESPACE} {path}", err=True)
