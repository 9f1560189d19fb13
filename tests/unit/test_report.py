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
    assert len(re.findall(r'src="data:image/png;base64,', page)) == 8
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


def _scored(cat: Catalog, eval_id: str, plan: list[tuple[str, bool]]):
    """Store an evaluation of hand-made attempts: (env, passed) each, one call of `lookup`."""
    from agent_world.evolution.eval_store import load_evaluation, record_evaluation
    from agent_world.tasks.model import Difficulty, Step, Task, ToolCall, Trajectory

    tasks, trajs = [], []
    for i, (env, ok) in enumerate(plan):
        t = Task(kind="graph", env_name=env, env_fingerprint=f"fp-{env}",
                 instruction=f"What is the status of record {i} in {env}?",
                 reference_answer="open", chain=[ToolCall(tool="lookup", arguments={"id": i})],
                 difficulty=Difficulty(chain_length=1, level=1 + i % 2)).with_id()
        cat.put_task(t.id, t.env_fingerprint, t.kind, t.model_dump(mode="json"))
        call = Step(tool="lookup" if ok else "list_all", arguments={"id": i}, ok=True,
                    result={"status": "open"})
        trajs.append(Trajectory(task_id=t.id, steps=[call], finished=True,
                                final_answer="open" if ok else "closed",
                                reward=1.0 if ok else 0.0,
                                reward_components={"check": 1.0 if ok else 0.0,
                                                   "format.repeat": 0.0},
                                messages=[{"type": "human", "content": t.instruction}]))
        tasks.append(t)
    report = record_evaluation(cat, eval_id, tasks, trajs)
    return report, load_evaluation(cat, eval_id)


def test_report_links_resolve_to_the_trajectories_it_embeds(tmp_path):
    from agent_world.evolution.diagnosis import diagnose
    from agent_world.evolution.eval_store import evaluation_tasks
    from agent_world.evolution.report import anchor

    cat = Catalog.open(tmp_path)
    before, (attempts, traces) = _scored(cat, "t/r1/baseline", [("clinic", False)] * 3
                                         + [("library", False)] * 3 + [("clinic", True)])
    after, _ = _scored(cat, "t/r1/after", [("clinic", True), ("clinic", False),
                                           ("library", False), ("library", False)])
    d = diagnose(attempts, [], traces, evaluation_tasks(cat, attempts))
    assert d.findings and d.evidence_ids()
    rec = RoundRecord(thread="t", round=1, status="done", before_eval="t/r1/baseline",
                      after_eval="t/r1/after", diagnosed_eval="t/r1/baseline",
                      before=before.summary(), after=after.summary(),
                      diagnosis=d.model_dump(mode="json"), diagnosis_text=d.text(),
                      target_error=d.target_error,
                      settings={"seed": 7, "policy": "smollm2", "train_steps": 3,
                                "versions": {"torch": "2.x"}},
                      links={"experiment": "https://smith.example/p/1"})
    cat.put_round("t", 1, rec.model_dump(mode="json"))
    path = write_report(load_rounds(cat, "t"), tmp_path / "r.html", catalog=cat)
    page = path.read_text()
    targets = set(re.findall(r'href="#([^"]+)"', page))
    ids = set(re.findall(r'id="([^"]+)"', page))
    assert targets and targets <= ids  # every link lands on an embedded trajectory
    # every attempt the diagnosis cites is linked and embedded
    for tid in d.evidence_ids():
        assert f'href="#{anchor(tid)}"' in page and f'id="{anchor(tid)}"' in page
    # a passing and a failing trajectory for each environment, with calls, observations and
    # reward components
    for env in ("clinic", "library"):
        blocks = re.findall(rf'<details class="traj" id="[^"]+"><summary><b>[^<]+</b> · {env} '
                            r"[^<]*· (pass|fail)", page)
        assert "fail" in blocks, env
    assert re.search(r"clinic · level \d · pass", page)
    assert "list_all" in page and "format.repeat" in page and "&quot;status&quot;" in page
    # intervals on every rate; 0 % is a rate with its count, not a blank
    assert "0% (0/3; 95% CI 0%–56%)" in page  # library at baseline
    assert "seed" in page and "smollm2" in page and "torch 2.x" in page
    assert 'href="https://smith.example/p/1"' in page
