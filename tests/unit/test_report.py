"""The self-evolution report: round records from the catalog → one self-contained HTML file
that renders in headless Chromium."""

from __future__ import annotations

import re
import shutil

import pytest

from agent_world.envs.catalog import Catalog
from agent_world.errors import AgentWorldError
from agent_world.evolution.report import load_rounds, render, screenshot, write_report
from agent_world.evolution.rounds import CurvePoint, RoundRecord


def _summary(rate: float, errors: dict[str, int]) -> dict:
    return {"pass_rate": rate, "attempts": 10, "passes": int(rate * 10),
            "by_env": {"clinic": {"pass_rate": rate}, "library": {"pass_rate": rate / 2}},
            "by_level": {"1": {"pass_rate": min(1, rate + .2)}, "2": {"pass_rate": rate}},
            "errors": errors}


def _rounds() -> list[RoundRecord]:
    return [
        RoundRecord(thread="t1", round=1, status="done", before=_summary(.2, {"gave_up": 6}),
                    after=_summary(.4, {"gave_up": 3}), target_error="gave_up",
                    diagnosis_text="Held-out pass rate 20%; dominant error: gave_up <b>",
                    counts={"train_envs": 3, "heldout_envs": 1, "tools": 12,
                            "targeted_tasks": 8, "train_tasks": 20},
                    curve=[CurvePoint(step=i, reward=.1 * i) for i in range(5)],
                    warm_start=[2.0, 1.4, 1.1], checkpoint="/x/policies/round-1"),
        RoundRecord(thread="t1", round=2, status="done", before=_summary(.4, {"gave_up": 3}),
                    after=_summary(.5, {"gave_up": 1}), target_error="gave_up",
                    diagnosis_text="round two", counts={"targeted_tasks": 6, "train_tasks": 26},
                    curve=[CurvePoint(step=i, reward=.3 + .05 * i) for i in range(5)]),
    ]


def test_report_is_self_contained_with_every_section(tmp_path):
    page = render(_rounds())
    assert len(re.findall(r'src="data:image/png;base64,', page)) == 6
    assert 'alt="Warm start"' in page
    assert "http://" not in page and "https://" not in page  # nothing fetched
    for text in ("20% → 50%", "gave_up", "3 → 1", "round two", "&lt;b&gt;", "train_envs",
                 "<td>round-1</td>"):  # the checkpoint from its round folder on
        assert text in page


def test_rounds_round_trip_through_the_catalog(tmp_path):
    cat = Catalog.open(tmp_path)
    with pytest.raises(AgentWorldError, match="agent-world evolve"):
        load_rounds(cat)
    for r in _rounds():
        cat.put_round(r.thread, r.round, r.model_dump(mode="json"))
    cat.put_round("t1", 2, _rounds()[1].model_copy(update={"diagnosis_text": "v2"})
                  .model_dump(mode="json"))  # replaced, not duplicated
    got = load_rounds(cat)
    assert [r.round for r in got] == [1, 2] and got[1].diagnosis_text == "v2"


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                    reason="headless Chromium not installed (Debian: apt-get install chromium)")
def test_report_renders_in_headless_chromium(tmp_path):
    from PIL import Image

    path = write_report(_rounds(), tmp_path / "report.html")
    png = screenshot(path, tmp_path / "report.png", height=1600)
    img = Image.open(png).convert("RGB")
    assert img.size == (1200, 1600)
    colors = img.getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 50  # text and plots, not a blank page
    # the pass-rate plot's blue line is drawn
    assert any(c[1] == (31, 111, 235) for c in colors)
