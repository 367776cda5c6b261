"""Page 1 says only what is true of this study (issue: boilerplate where a fitted sentence belongs)."""

from __future__ import annotations

import re
from pathlib import Path

from report_claims import load_fixture

from evalspec.report import render


def _cases_line(html: str) -> str:
    m = re.search(r"<dt>Cases</dt><dd>(.*?)</dd>", html, re.S)
    assert m, "no Cases line in the report"
    return m.group(1)


def test_a_single_candidate_study_does_not_call_its_cases_paired(tmp_path: Path) -> None:
    claim = load_fixture("single_candidate")
    assert len(claim["coverage"]["candidates"]) == 1
    (html,) = render(claim, tmp_path, ("html",))
    assert "paired" not in _cases_line(html.read_text(encoding="utf-8"))


def test_a_comparison_still_says_how_many_cases_are_paired(tmp_path: Path) -> None:
    claim = load_fixture("superiority")
    (html,) = render(claim, tmp_path, ("html",))
    assert "paired" in _cases_line(html.read_text(encoding="utf-8"))


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_no_interval_is_not_shown_as_a_95_percent_interval_from_minus_to_plus_100(tmp_path: Path) -> None:
    """Four clusters: no interval was computed; page 1 must not print the placeholder [-1, 1] as a 95% interval."""
    claim = load_fixture("superiority")
    why = "only 4 clusters; a cluster interval needs at least 5 to mean anything"
    claim["decision"]["primary"].update(informative=False, why_uninformative=why, low=-1.0, high=1.0,
                                        method=f"none ({why})")
    claim["coverage"]["interval"]["method"] = f"none ({why})"
    (html,) = render(claim, tmp_path, ("html",))
    text = _text(html.read_text(encoding="utf-8"))
    assert f"A − B : +4.0 points, with no usable interval ({why})." in text
    assert "−100.0" not in text and "+100.0" not in text
    assert "Interval none usable (the reason is given above) " in text  # no level for an interval that does not exist
    assert f"none ({why}), 95%" not in text
    assert "no interval was computed, so the difference has no stated uncertainty" in text
    assert "A 95% procedure covers the true value" not in text
    assert "Worth acting on from +3.0 points." in text and "(dashed line)" not in text  # no number line is drawn


def test_an_informative_interval_is_still_given_with_its_level(tmp_path: Path) -> None:
    (html,) = render(load_fixture("superiority"), tmp_path, ("html",))
    text = _text(html.read_text(encoding="utf-8"))
    bca = "cluster bootstrap, bias-corrected and accelerated (BCa) interval"
    page1, body = text.split(" Contents ", 1)
    assert "(95% interval −3.0 to +11.0 points)." in page1  # page 1: the number and what it means
    assert bca not in page1 and "Interval 95%, each cluster one independent unit" in page1
    assert "Assumes the clusters are a random sample" in page1
    assert bca in body  # the method by name is in the body
    assert "Worth acting on from +3.0 points (dashed line)." in text


def test_the_reason_for_no_interval_is_not_repeated_in_the_caption_when_a_caveat_gives_it(tmp_path: Path) -> None:
    claim = load_fixture("superiority")
    why = "only 4 clusters; a cluster interval needs at least 5 to mean anything"
    claim["decision"]["primary"].update(informative=False, why_uninformative=why, low=-1.0, high=1.0,
                                        method=f"none ({why})")
    claim["decision"]["caveats"] = [{"code": "uninformative_interval", "severity": "verdict",
                                     "message": f"The interval cannot decide anything: {why}."}]
    (html,) = render(claim, tmp_path, ("html",))
    text = _text(html.read_text(encoding="utf-8"))
    assert "A − B : +4.0 points, with no usable interval (the caveat below says why)." in text
    assert f"The interval cannot decide anything: {why}." in text


def test_method_codes_are_put_in_words_and_unknown_text_is_kept() -> None:
    from evalspec.report.fmt import method_words
    from evalspec.stats.paired import MCNEMAR_METHODS, PAIRED_METHODS
    from evalspec.stats.proportion import PROPORTION_METHODS

    for code in (*PROPORTION_METHODS, *PAIRED_METHODS, *MCNEMAR_METHODS, "durkalski", "wilson_cluster_deff",
                 "cluster_t (CR2, t on 57.1 df)", "cluster_bootstrap (percentile)", "case_bootstrap (bca)",
                 "clustered_mean_t (CR2)", "newcombe on 12 clusters (no disagreement)"):
        words = method_words(code)
        assert words != code and "_" not in words, code
    assert method_words("cluster_t (CR2, t on 57.1 df)") == (
        "cluster-robust t interval (CR2 small-sample correction, 57.1 degrees of freedom)")
    for kept in ("none (only 4 clusters)", "Clopper-Pearson on 55.0 effective cases (40 clusters)", "something new"):
        assert method_words(kept) == kept


def test_page_1_of_the_examples_names_no_method_by_its_code(tmp_path: Path) -> None:
    import html as htmllib

    from report_claims import real_claim_file

    from evalspec.report.load import load_claim
    from evalspec.report.render import render_html

    for name in ("policy-migration", "support-triage", "repeated-trials"):
        claim = load_claim(real_claim_file(tmp_path / name, name))
        page1 = htmllib.unescape(render_html(claim, with_plots=False).split('<nav class="toc"')[0])
        method = (claim["decision"].get("primary") or {}).get("method")
        if method:
            assert method not in _text(page1), (name, method)
