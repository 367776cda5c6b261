"""The plots are drawn once per run and shared by the screen HTML and the PDF's print HTML."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_claims import load_fixture

import importlib

render_mod = importlib.import_module("evalspec.report.render")


@pytest.mark.parametrize("name", ["superiority", "single_candidate"])
def test_shared_plots_give_the_same_documents(name: str) -> None:
    claim = load_fixture(name)
    drawn: dict = {}
    screen = render_mod.render_html(claim, "screen", drawn=drawn)
    printed = render_mod.render_html(claim, "print", drawn=drawn)
    assert screen == render_mod.render_html(claim, "screen")
    assert printed == render_mod.render_html(claim, "print")


def test_render_draws_each_plot_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = render_mod._plots

    def counting(view):  # type: ignore[no-untyped-def]
        calls.append(view.medium)
        return real(view)

    monkeypatch.setattr(render_mod, "_plots", counting)
    monkeypatch.setattr(render_mod, "render_pdf_bytes", lambda html: b"%PDF-stub")
    render_mod.render(load_fixture("superiority"), tmp_path, ("html", "pdf"))
    assert calls == ["screen"]
