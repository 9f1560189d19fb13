"""The diagnosis agent: failure traces + error statistics + environment metadata → a diagnosis.

    diagnosis = diagnose(attempts, envs, trajectories, tasks)

`attempts` are scored evaluation attempts (`agent_world.tasks.evaluation.Attempt`), `envs` the
metadata of every environment involved (held-out and training), `trajectories` the failure traces
and `tasks` the tasks they attempted, by id. The diagnosis is read from the failures themselves:

* **per failed attempt** (`AttemptFinding`, from its trace against the task's gold chain): which
  tool it called instead of which (`wrong_tool`), which argument was wrong, what it gave, what
  the chain needed and where that value was (stated in the request, or in an earlier
  observation), or that it answered without a call / stopped after k of n calls (`gave_up`);
* **weak environments and tools** are those these failures involve (the tools it should have
  called, the tools it called instead, the tools whose arguments it got wrong), worst first;
* **skills**: what the failures have in common (`choose_tool` between the confusable tools it
  mixed up, `fill_arguments` from the request or from an observation, `call_before_answering`,
  `finish_chain`, `track_state`, `call_format`);
* **guidelines** for the synthesizer — training environments, their tools analogous to the weak
  ones (name, verb, parameters and description compared; a held-out tool is never trained on),
  `confusable` pairs the targeted tasks' tool views must hold (for `choose_tool`), difficulty
  features from the failed tasks' chains, the failed tasks' shape (levels, opaque names, many
  distractors, programs: targeted tasks are drawn in it), databases to grow — each with a
  `Citation` naming the attempt ids behind it.

Two strategies, chosen by `chat_model("diagnoser")`:

* Offline: the reading above, deterministic (`failure_reading` reads each failure,
  `offline_diagnosis` the rest, with `similarity`; the models are in `diagnosis_model`).
* LLM: the model gets the statistics, the failure traces (calls, observations, answer, gold
  chain) and the offline draft, and answers a `Diagnosis` (structured output, JSON in the text
  where the model has none). Answers are checked — every evidence id must be a real failing
  attempt, every environment and tool must exist, guideline tools must be training tools — and
  retried with the error up to twice; then the offline diagnosis is used and the note says why.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import ValidationError

from agent_world.envs.spec import format_validation_error
from agent_world.evolution import diagnosis_prompts as prompts
from agent_world.evolution.diagnosis_model import Diagnosis, EnvMeta
from agent_world.evolution.failure_reading import read_failure
from agent_world.evolution.offline_diagnosis import offline_diagnosis
from agent_world.evolution.similarity import split_ref
from agent_world.models import chat_model
from agent_world.plain_chat import ask_structured
from agent_world.tasks.evaluation import Attempt, EvalReport, score
from agent_world.tasks.model import Task, Trajectory

log = logging.getLogger(__name__)

LLM_ATTEMPTS = 3
MAX_TRACES = 12  # failure traces shown to the LLM


# -- LLM strategy --------------------------------------------------------------------------------
def _check(d: Diagnosis, report: EvalReport, envs: Mapping[str, EnvMeta]) -> Diagnosis:
    """Reject invented evidence, environments or tools (ValueError with what is wrong)."""
    failing = {i for ids in report.errors.values() for i in ids}
    failing |= {i for c in report.by_env.values() for i in c.failures}
    env_names = set(envs) | set(report.by_env)
    train = {n for n, m in envs.items() if m.split == "train"}
    tools = {f"{n}/{t}" for n, m in envs.items() for t in m.tools} | set(report.by_tool)
    problems: list[str] = []
    claims: list[tuple[str, list[str]]] = [(f"weak environment {w.name}", w.evidence)
                                           for w in d.weak_environments]
    claims += [(f"weak tool {w.name}", w.evidence) for w in d.weak_tools]
    claims += [(f"error {e.error_class}", e.evidence) for e in d.errors]
    claims += [(f"confusion {c.called} for {c.expected}", c.evidence) for c in d.confusions]
    claims += [(f"argument {a.argument} of {a.tool}", a.evidence) for a in d.argument_slips]
    claims += [(f"skill {s.name}", s.evidence) for s in d.skills]
    claims += [(f"guideline {c.kind} {c.name}", c.evidence) for c in d.guidelines.cites]
    claims += [(f"finding on {f.trajectory_id}", [f.trajectory_id]) for f in d.findings]
    for what, evidence in claims:
        if not evidence:
            problems.append(f"{what} cites no evidence")
        bad = [i for i in evidence if i not in failing]
        if bad:
            problems.append(f"{what} cites unknown trajectory ids {bad[:3]}")
    for name in [w.name for w in d.weak_environments]:
        if name not in env_names:
            problems.append(f"unknown environment {name!r}")
    for name in d.guidelines.environments + d.guidelines.complexify_databases:
        if name not in train:
            problems.append(f"{name!r} is not a training environment")
    for name in [w.name for w in d.weak_tools]:
        if name not in tools:
            problems.append(f"unknown tool {name!r} (write tools as env/tool)")
    for name in d.guidelines.tools:
        if name not in tools or split_ref(name)[0] not in train:
            problems.append(f"guideline tool {name!r} is not a training tool (env/tool)")
    for key, others in d.guidelines.confusable.items():
        env = split_ref(key)[0]
        if key not in tools or env not in train or any(f"{env}/{o}" not in tools
                                                      for o in others):
            problems.append(f"confusable {key!r}: {others} are not tools of one training "
                            "environment")
    cited = {(c.kind, c.name) for c in d.guidelines.cites}
    for name in d.guidelines.environments:
        if ("environment", name) not in cited:
            problems.append(f"guideline environment {name!r} has no citation")
    if problems:
        raise ValueError("; ".join(problems[:8]))
    return d.model_copy(update={"pass_rate": round(report.pass_rate, 4),
                                "attempts": report.attempts, "strategy": "llm"})


def _trace_text(tid: str, traj: Trajectory, task: Task | None, limit: int = 1500) -> str:
    steps = []
    for s in traj.steps[:8]:
        if s.tool:
            out = (json.dumps(s.result, default=str)[:160] if s.ok
                   else f"{s.error_kind}: {s.error_message or ''}")
            steps.append(f"{s.tool}({json.dumps(s.arguments, default=str)[:120]}) -> {out[:160]}")
        elif s.text:
            steps.append(f"said: {s.text[:120]}")
    answer = json.dumps(traj.final_answer, default=str)[:120]
    text = f"- {tid} [task {traj.task_id}]"
    if task is not None:
        gold = ", ".join(f"{c.tool}({json.dumps(c.arguments, default=str)[:80]})"
                         for c in task.chain)
        text += (f" request: {task.instruction[:240]!r}; gold: {gold}; reference: "
                 f"{json.dumps(task.reference_answer, default=str)[:80]}; tools offered: "
                 f"{', '.join(f'{k}={v}' if k != v else k for k, v in task.tool_view.items())}")
    text += " | calls: " + (" | ".join(steps) or "none") + f" | answer: {answer}"
    return text[:limit]


def _user_prompt(report: EvalReport, envs: Mapping[str, EnvMeta],
                 trajectories: Mapping[str, Trajectory], tasks: Mapping[str, Task],
                 draft: Diagnosis) -> str:
    rows = lambda cells: "\n".join(  # noqa: E731
        f"- {k}: {c.passes}/{c.attempts} = {c.pass_rate:.2f}" for k, c in sorted(cells.items()))
    failing = [i for ids in report.errors.values() for i in ids]
    traces = [_trace_text(i, trajectories[i], tasks.get(trajectories[i].task_id))
              for i in failing[:MAX_TRACES] if i in trajectories]
    return prompts.USER.format(
        pass_rate=report.pass_rate, attempts=report.attempts, by_env=rows(report.by_env),
        by_level=rows(report.by_level),
        errors="\n".join(f"- {k}: {v}" for k, v in report.errors.items()) or "(none)",
        errors_by_tool=json.dumps(report.errors_by_tool, sort_keys=True),
        envs="\n".join(f"- {m.name} [{m.split}] {m.taxonomy}: {', '.join(m.tools)}"
                       for m in envs.values()) or "(none)",
        traces="\n".join(traces) or "(none)", draft=draft.model_dump_json(indent=1))


def _llm_diagnosis(model: Any, report: EvalReport, envs: Mapping[str, EnvMeta],
                   trajectories: Mapping[str, Trajectory], tasks: Mapping[str, Task],
                   draft: Diagnosis) -> tuple[Diagnosis | None, list[str]]:
    messages: list[Any] = [SystemMessage(content=prompts.SYSTEM), HumanMessage(
        content=_user_prompt(report, envs, trajectories, tasks, draft))]
    errors: list[str] = []
    for _ in range(LLM_ATTEMPTS):
        try:
            answer = ask_structured(model, Diagnosis, messages)
            return _check(answer, report, envs), errors
        except ValidationError as exc:
            err = format_validation_error(exc, "Diagnosis")
        except Exception as exc:  # transport, JSON, or a check above
            err = f"{type(exc).__name__}: {exc}"
        errors.append(err)
        log.info("diagnoser: LLM answer rejected (%s)", err.splitlines()[0][:200])
        messages = [*messages, HumanMessage(content=prompts.RETRY.format(error=err[:1500]))]
    return None, errors


def diagnose(attempts: Iterable[Attempt], envs: Iterable[EnvMeta] = (),
             trajectories: Mapping[str, Trajectory] | None = None,
             tasks: Mapping[str, Task] | None = None) -> Diagnosis:
    """Diagnose an evaluation (see the module docstring). `tasks` by task id (their gold
    chains say which tool and which argument each failure missed)."""
    attempts = list(attempts)
    report = score(attempts)
    env_map = {m.name: m for m in envs}
    trajectories, tasks = trajectories or {}, tasks or {}
    findings = [f for a in attempts
                if (f := read_failure(a, tasks.get(a.task_id),
                                      trajectories.get(a.trajectory_id))) is not None]
    draft = offline_diagnosis(report, env_map, findings)
    model = chat_model("diagnoser")
    if model is None or report.attempts == 0:
        return draft
    answer, errors = _llm_diagnosis(model, report, env_map, trajectories, tasks, draft)
    if answer is not None:
        # the failures' shape is a count, not a reading: the model's guidelines get the draft's
        guidelines = answer.guidelines.model_copy(update={"shape": draft.guidelines.shape})
        return answer.model_copy(update={"guidelines": guidelines})
    note = (f"LLM diagnosis rejected {len(errors)} times "
            f"({errors[-1].splitlines()[0][:200] if errors else 'no answer'}); offline used")
    return draft.model_copy(update={"notes": [*draft.notes, note]})




__all__ = ["diagnose"]
