"""Arena environments and tasks for TRL's `GRPOTrainer(environment_factory=...)`.

    from trl import GRPOConfig, GRPOTrainer
    from agent_world.integrations.trl import trl_setup

    setup = trl_setup("drill:cancel")       # or tasks, an export directory, a tasks JSONL file
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=GRPOConfig(...),
                          train_dataset=setup.dataset(), reward_funcs=setup.reward_funcs,
                          environment_factory=setup.environment_factory)
    trainer.train()

What TRL sees, per arena environment and tool view (tasks whose agents see the same tools):

* a class whose public methods are the tools the task's agent sees (obscured names included),
  each with a signature and Google docstring built from the tool's JSON schema (types, enums
  as `Literal`, optional arguments), so TRL's chat template renders their schemas and TRL's
  parser calls them with the model's arguments. A call runs on the rollout's own episode and
  returns the observation text, errors included (`Error (invalid_arguments): ...`): the
  episode goes on as in the arena's own rollouts.
* `reset(**row)`: a fresh episode (its own database copy) for the task named by the row's
  `task_id`; the row's `prompt` already carries the instruction.
* `reward_funcs = [arena_reward]`: the last assistant message is the answer (`<answer>…</answer>`
  or plain text), scored on the episode's final state by the arena's reward (the one task
  check minus the format penalty; an environment fault scores 0).

With more than one class the factory is a dict (TRL's multi-environment mode) and every row
carries its class's name in `environment`.
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_world.envs.episode import EnvRuntime, default_runtime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.integrations.taskfiles import TaskSource, resolve_tasks, write_tasks
from agent_world.rollout.library_attempt import TaskAttempt
from agent_world.rollout.toolcall import tool_views
from agent_world.tasks.model import Task

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                               "object": dict}
# method names TRL treats specially or that the class needs for itself
_RESERVED = {"reset", "get_reward"}


def _annotation(schema: Any) -> Any:
    """A Python type hint that transformers' `get_json_schema` turns back into `schema`."""
    if not isinstance(schema, dict):
        return str
    enum = schema.get("enum")
    if enum and all(isinstance(v, str | int | float | bool) for v in enum):
        return Literal[tuple(enum)]  # type: ignore[valid-type]
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        base = _annotation({**schema, "type": kinds[0]}) if kinds else str
        return base | None if "null" in kind else base
    if kind == "array":
        items = schema.get("items")
        return list[_annotation(items)] if isinstance(items, dict) and items else list
    return _JSON_TYPES.get(kind, str)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _python_name(name: str, taken: set[str]) -> str:
    """An identifier for a JSON argument name (`from` -> `from_`, `max-results` ->
    `max_results`), unique among `taken`."""
    out = re.sub(r"\W", "_", name) or "arg"
    if out[0].isdigit():
        out = "_" + out
    while keyword.iskeyword(out) or out in taken or out == "self":
        out += "_"
    return out


def tool_method(view: dict[str, Any], attempt_of: Callable[[Any], TaskAttempt]) -> Callable:
    """A method named after one visible tool, with the signature and docstring of its JSON
    schema; calling it runs the tool on the instance's current attempt."""
    name = view["name"]
    params = view.get("parameters") or {}
    props: dict[str, Any] = params.get("properties") or {}
    required = set(params.get("required") or [])
    taken: set[str] = set()
    to_json: dict[str, str] = {}
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    doc_args = []
    # required arguments first: a Python signature cannot put them after defaulted ones
    for arg in sorted(props, key=lambda a: a not in required):
        py = _python_name(arg, taken)
        taken.add(py)
        to_json[py] = arg
        hint = _annotation(props[arg])
        if arg not in required:
            hint = hint | None
        annotations[py] = hint
        parameters.append(inspect.Parameter(
            py, inspect.Parameter.KEYWORD_ONLY, annotation=hint,
            default=inspect.Parameter.empty if arg in required else None))
        desc = _one_line(props[arg].get("description", "")) if isinstance(props[arg], dict) \
            else ""
        doc_args.append(f"    {py}: {desc or arg.replace('_', ' ')}")

    def method(self: Any, **kwargs: Any) -> str:
        arguments = {to_json.get(k, k): v for k, v in kwargs.items()}
        return attempt_of(self).call(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    description = _one_line(view.get("description", "")) or name.replace("_", " ")
    method.__doc__ = description + ("\n\nArgs:\n" + "\n".join(doc_args) if doc_args else "")
    return method


class ArenaEnvironment:
    """Base of the generated classes: one TRL environment instance = one rollout at a time."""

    # class attributes of each generated class; private, since TRL takes every public
    # function of the class for a tool
    _tasks: dict[str, Task] = {}
    _spec: EnvSpec
    _runtime_of: Callable[[], EnvRuntime] = staticmethod(default_runtime)

    def __init__(self) -> None:
        self._attempt: TaskAttempt | None = None

    def reset(self, task_id: str | None = None, **row: Any) -> None:
        """Open a fresh episode for the row's task (TRL calls this before each rollout)."""
        if task_id not in self._tasks:
            raise AgentWorldError(f"{type(self).__name__}: the row's task_id {task_id!r} is "
                                  f"not one of its {len(self._tasks)} tasks")
        self._close()
        self._attempt = TaskAttempt.open(self._tasks[task_id], self._spec, self._runtime_of(),
                                         policy="trl")
        return None

    def _current(self) -> TaskAttempt:
        if self._attempt is None:
            raise AgentWorldError(f"{type(self).__name__}: a tool was called before reset()")
        return self._attempt

    def _finish(self, final_text: str | None) -> float:
        return self._current().finish(final_text).reward

    def _close(self) -> None:
        if self._attempt is not None:
            self._attempt.close()
            self._attempt = None


def environment_class(spec: EnvSpec, tasks: Sequence[Task], name: str | None = None,
                      runtime: Callable[[], EnvRuntime] | None = None) -> type[ArenaEnvironment]:
    """The `environment_factory` class of one environment and a task set whose agents see the
    same tools (their tool view)."""
    if not tasks:
        raise AgentWorldError(f"{spec.name}: an environment class needs at least one task")
    views = tool_views(tasks[0], spec)
    for t in tasks:
        if t.env_fingerprint != spec.fingerprint:
            raise AgentWorldError(f"task {t.id}: runs in {t.env_name}, not {spec.name}")
        if tool_views(t, spec) != views:
            raise AgentWorldError(f"task {t.id}: its tool view differs from task {tasks[0].id}'s"
                                  "; group tasks by view (trl_setup does)")
    body: dict[str, Any] = {"_tasks": {t.id: t for t in tasks}, "_spec": spec,
                            "__doc__": f"TRL environment: {spec.name} ({len(tasks)} tasks)."}
    if runtime is not None:
        body["_runtime_of"] = staticmethod(runtime)
    for view in views:
        if view["name"] in _RESERVED or view["name"].startswith("_") \
                or hasattr(ArenaEnvironment, view["name"]):
            raise AgentWorldError(f"{spec.name}: tool name {view['name']!r} clashes with the "
                                  "TRL environment interface")
        body[view["name"]] = tool_method(view, ArenaEnvironment._current)
    cls_name = name or "".join(p.title() for p in re.split(r"\W|_", spec.name) if p) + "Env"
    return type(cls_name, (ArenaEnvironment,), body)


def _last_assistant_text(completion: Any) -> str | None:
    if isinstance(completion, str):
        return completion
    for message in reversed(completion or []):
        if message.get("role") == "assistant":
            if message.get("tool_calls"):
                return None  # it was still calling tools when the rollout ended
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return content
    return None


def arena_reward(completions: list[Any], environments: list[Any] | None = None,
                 **_: Any) -> list[float | None]:
    """TRL reward function: each rollout's answer checked on its episode's final state."""
    if environments is None:
        raise AgentWorldError("arena_reward needs TRL's environments (environment_factory)")
    return [env._finish(_last_assistant_text(c)) if isinstance(env, ArenaEnvironment) else None
            for c, env in zip(completions, environments, strict=True)]


@dataclass
class TRLSetup:
    """What `GRPOTrainer` takes: the factory, the reward functions and the dataset rows."""

    environment_factory: type[ArenaEnvironment] | dict[str, type[ArenaEnvironment]]
    rows: list[dict[str, Any]]
    reward_funcs: list[Callable[..., list[float | None]]] = field(
        default_factory=lambda: [arena_reward])

    @property
    def classes(self) -> list[type[ArenaEnvironment]]:
        f = self.environment_factory
        return list(f.values()) if isinstance(f, dict) else [f]

    def dataset(self) -> Any:
        """The rows as a `datasets.Dataset` (prompt, task_id[, environment])."""
        from datasets import Dataset  # optional and heavy (pyarrow): only when TRL trains

        return Dataset.from_list(self.rows)


def trl_setup(source: TaskSource, specs: Iterable[EnvSpec] = (), limit: int | None = None,
              runtime: Callable[[], EnvRuntime] | None = None) -> TRLSetup:
    """Environment classes (one per environment and tool view), reward function and dataset
    rows for the tasks of `source` (see `taskfiles.resolve_tasks`)."""
    tasks, index = resolve_tasks(source, specs, limit)
    groups: dict[tuple[str, str], list[Task]] = {}
    for t in tasks:
        view = json.dumps(tool_views(t, index[t.env_fingerprint]), sort_keys=True)
        groups.setdefault((t.env_fingerprint, view), []).append(t)
    classes: dict[str, type[ArenaEnvironment]] = {}
    per_env: dict[str, int] = {}
    for (fp, _), members in groups.items():
        spec = index[fp]
        base = "".join(p.title() for p in re.split(r"\W|_", spec.name) if p) + "Env"
        n = per_env[base] = per_env.get(base, 0) + 1
        cls = environment_class(spec, members, base if n == 1 else f"{base}{n}", runtime)
        classes[cls.__name__] = cls
    multi = len(classes) > 1
    by_task = {tid: name for name, cls in classes.items() for tid in cls._tasks}
    rows = []
    for t in tasks:
        row: dict[str, Any] = {"prompt": [{"role": "user", "content": t.instruction}],
                               "task_id": t.id}
        if multi:
            row["environment"] = by_task[t.id]
        rows.append(row)
    factory = classes if multi else next(iter(classes.values()))
    return TRLSetup(factory, rows)


MODULE_FILE = '''"""TRL pieces for the arena tasks exported next to this file (`agent-world export trl`).

    import arena_trl
    from trl import GRPOTrainer
    GRPOTrainer(model=..., args=..., train_dataset=arena_trl.load_dataset(),
                reward_funcs=arena_trl.reward_funcs,
                environment_factory=arena_trl.environment_factory)
"""

from pathlib import Path

from agent_world.integrations.trl import trl_setup

HERE = Path(__file__).resolve().parent
SETUP = trl_setup(HERE)  # tasks.jsonl and envs/ of this directory
environment_factory = SETUP.environment_factory
reward_funcs = SETUP.reward_funcs


def load_dataset():
    """The rows of dataset.jsonl: prompt, task_id (and environment with several classes)."""
    return SETUP.dataset()
'''

TRAIN_FILE = '''"""GRPO with TRL on the arena tasks exported next to this file.

    python train_grpo.py --model Qwen/Qwen2.5-0.5B-Instruct --steps 100
    python train_grpo.py --lora                     # LoRA adapters instead of full weights
    python train_grpo.py --vllm-server http://127.0.0.1:8000   # generations from `trl vllm-serve`

The device is the GPU when torch sees one, else the CPU (bf16 only where the GPU supports it);
`--device cpu` forces the CPU.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import arena_trl  # noqa: E402
import torch  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="{model}", help="HF model id or path (a chat "
                        "template with tool calling)")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--num-generations", type=int, default={group_size})
    parser.add_argument("--batch-size", type=int, default={batch_size})
    parser.add_argument("--max-completion-length", type=int, default=1024)
    parser.add_argument("--max-turns", type=int, default={max_turns})
    parser.add_argument("--learning-rate", type=float, default=1e-6)
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                        help="auto: the GPU when torch sees one, else the CPU")
    parser.add_argument("--lora", action="store_true", help="train LoRA adapters (peft)")
    parser.add_argument("--lora-rank", type=int, default=16)
    parser.add_argument("--vllm-server", default=None, metavar="URL",
                        help="generate with a running `trl vllm-serve` server (GPU)")
    parser.add_argument("--save", action="store_true", help="save checkpoints while training")
    parser.add_argument("--output-dir", default=str(Path(__file__).resolve().parent / "run"))
    args = parser.parse_args()
    cuda = torch.cuda.is_available() if args.device == "auto" else args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no GPU")
    if args.vllm_server and not cuda:
        parser.error("--vllm-server trains on a GPU: no GPU here (or --device cpu)")
    config = GRPOConfig(output_dir=args.output_dir, max_steps=args.steps,
                        num_generations=args.num_generations,
                        per_device_train_batch_size=args.batch_size,
                        max_completion_length=args.max_completion_length,
                        max_tool_calling_iterations=args.max_turns,
                        learning_rate=args.learning_rate, beta={kl}, logging_steps=1,
                        use_cpu=not cuda, bf16=cuda and torch.cuda.is_bf16_supported(),
                        use_vllm=bool(args.vllm_server), vllm_mode="server",
                        vllm_server_base_url=args.vllm_server,
                        save_strategy="steps" if args.save else "no", report_to="none")
    peft_config = None
    if args.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=args.lora_rank, lora_alpha=2 * args.lora_rank,
                                 target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = GRPOTrainer(model=args.model, args=config, train_dataset=arena_trl.load_dataset(),
                          reward_funcs=arena_trl.reward_funcs, peft_config=peft_config,
                          environment_factory=arena_trl.environment_factory)
    trainer.train()
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
'''


def export_trl(tasks: Sequence[Task], specs: Mapping[str, EnvSpec], out: str | Path,
               model: str = "Qwen/Qwen2.5-0.5B-Instruct", group_size: int = 8,
               max_turns: int = 8, kl_coef: float = 0.04) -> Path:
    """Write DIR/tasks.jsonl, DIR/envs/, DIR/dataset.jsonl (TRL's rows), DIR/arena_trl.py (the
    environment factory, reward functions and dataset TRL takes) and DIR/train_grpo.py."""
    out = write_tasks(tasks, specs, out)
    setup = trl_setup(list(tasks), specs.values())
    (out / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in setup.rows))
    (out / "arena_trl.py").write_text(MODULE_FILE)
    (out / "train_grpo.py").write_text(TRAIN_FILE.format(
        model=model, group_size=group_size, batch_size=group_size, max_turns=max_turns,
        kl=kl_coef))
    return out


__all__ = ["ArenaEnvironment", "MODULE_FILE", "TRAIN_FILE", "TRLSetup", "arena_reward",
           "environment_class", "export_trl", "tool_method", "trl_setup"]
