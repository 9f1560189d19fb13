"""The `evolve` graph's context (the settings of a self-evolution thread, what LangGraph Studio
shows), input and output schemas. Its state schema stays in `agent_world.graphs.evolve_graph`:
the state schema's module names the graph (`runner.graph_name`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from agent_world.graphs.context import ScaledContext, model_field, setting

HELDOUT_TOTAL = 48
HELDOUT_MIN_PER_ENV = 4
# servers of the shipped MCP corpus mined beside the six embedded sources by default: 12
# environments, 6 held out with 8 tasks each (10 min 36 s on a 2-core Xeon VM,
# docs/evolution.md)
DEFAULT_CORPUS_SAMPLE = 6


@dataclass
class EvolveContext(ScaledContext):
    """Settings of a self-evolution thread (what LangGraph Studio shows)."""

    sources: list[str] = setting([], "Sources to mine (\"mcp:CMD\", \"mcp-url:URL\", "
                                 "\"file:PATH\"); empty: the embedded default sources.")
    # breadth: more environments to train on and hold out
    corpus_sample: int | None = setting(
        None, "Also mine a seeded sample of this many servers of the shipped MCP corpus; "
              f"none: {DEFAULT_CORPUS_SAMPLE} beside the embedded default sources, 0 beside "
              "sources you name.")
    iterations: int = setting(2, "Database complexification iterations when mining.")
    seed: int = setting(0, "Seed of every stage of the thread.")
    heldout_fraction: float = setting(0.5, "Share of environments never trained on.")
    # "category": evaluation on kinds of service the policy never trained on
    heldout_by: str = setting("environment", "What is held out: \"environment\" (a share of "
                              "the environments) or \"category\" (whole L2 taxonomy "
                              "categories).")
    tasks_per_env: int = setting(6, "Initial training tasks per training environment.")
    # 48 in all (16 on each of the three held-out default environments): one task is 2 points
    # of pass rate (with 24 on two, one lucky task moved it by 4 points; with 12, by 8); a
    # wider arena shares them out rather than multiplying the evaluation's cost
    heldout_tasks_per_env: int | None = setting(
        None, f"Evaluation tasks per held-out environment; none: {HELDOUT_TOTAL} in all, shared "
              f"out over the held-out environments (at least {HELDOUT_MIN_PER_ENV} each).")
    # 6 on 3 environments are about half of a round's mix beside the replay (with 4, a third
    # of the mix: the targeted tasks were too few to tell from random ones, docs/ablation.md)
    targeted_tasks_per_env: int = setting(6, "New training tasks per targeted environment "
                                          "each round.")
    # held-out environments are unseen: a skill may transfer where an environment cannot, so
    # the `spread` arm of benchmarks/ablation.py practises the guidelines on every training
    # environment (6 × 3 tasks) instead of on the 3 the diagnosis names (3 × 6)
    targeted_envs: int = setting(0, "Training environments the diagnosed skills are practised "
                                 "on each round; 0: those the diagnosis names.")
    # benchmarks/ablation.py compares them
    resynthesis: str = setting("targeted", "How each round's new training tasks are chosen: "
                               "\"targeted\" by the diagnosis' guidelines; \"random\": as "
                               "many, on as many training environments drawn at random; "
                               "\"none\": no new tasks (more replay instead).")
    # with 8 beside 12 targeted tasks, round 2 of the default run forgot what round 1 learned
    # (held-out 17 % -> 4 %, its passes lost)
    replay: int = setting(16, "Earlier training tasks replayed each round.")
    # the diagnosis reads the fresh set, so the tasks that score a round are not the ones that
    # steered it
    fresh_heldout_tasks_per_env: int = setting(
        0, "Fresh held-out tasks per held-out environment each round (a new seed per round), "
        "beside the fixed set that compares rounds; 0: none (the diagnosis reads the fixed "
        "set).")
    # one more held-out evaluation per round
    eval_after_warm_start: bool = setting(
        False, "Evaluate the policy after the supervised warm start too, so the warm start's "
        "and GRPO's contributions show apart.")
    # 2 on the main job's budget (a step of SmolLM2 on two cores is ~100 s; with 3, the main
    # job ran 21 min)
    train_steps: int = setting(2, "GRPO steps per round, after the supervised warm start.")
    # a base model learns the tool-call format in round 1. The policy's default: 32 for a
    # tiny random model; on a CPU 16 for SmolLM2 from the base model, none from a checkpoint
    # (later rounds train by GRPO alone: supervised steps there undid round 1's gain)
    warm_start_steps: int | None = setting(
        None, "Supervised steps on the gold solutions of each round's training mix before its "
        "GRPO (never on held-out tasks); empty: the policy's default.")
    max_turns: int = setting(4, "Turns a policy gets per held-out task (a task whose gold "
                             "calls and answer need more gets those).")
    policy: str = setting("", "Starting policy (checkpoint or model id); empty: the default "
                          "policy.")
    review_before_train: bool = setting(False, "Pause before training for a person to review.")
    complexify: bool = setting(True, "Grow the databases the diagnosis names "
                               "(complexify_databases).")
    miner_model: str = model_field("miner")
    designer_model: str = model_field("tool designer")
    synthesizer_model: str = model_field("synthesizer")
    verifier_model: str = model_field("verifier")
    diagnoser_model: str = model_field("diagnoser")
    judge_model: str = model_field("rubric judge")
    # where mine, build and synthesize run their per-source / per-environment work
    # (agent_world.scaleout); this run's, not the thread's: a resumed run may choose others

    def corpus_count(self) -> int:
        """Corpus servers mined beside the sources (`corpus_sample`, or its default)."""
        if self.corpus_sample is not None:
            return self.corpus_sample
        return 0 if self.sources else DEFAULT_CORPUS_SAMPLE

    def heldout_quota(self, environments: int) -> int:
        """Held-out tasks asked of each of `environments` held-out environments."""
        if self.heldout_tasks_per_env:
            return self.heldout_tasks_per_env
        return max(HELDOUT_MIN_PER_ENV, -(-HELDOUT_TOTAL // max(1, environments)))


class EvolveInput(TypedDict, total=False):
    """What to run on this thread; everything else is the context (the settings of the
    thread's first round)."""

    goal_rounds: int  # rounds the thread should have done at the end (default: one more)


class EvolveOutput(TypedDict, total=False):
    """Where the thread stands after the run (rounds, their table, the current policy)."""

    rounds_done: int
    history: list[dict[str, Any]]  # one row per finished round: pass rates, targeted error
    policy: str  # the current policy checkpoint
    diagnosis: dict[str, Any]  # the last round's diagnosis
    last: dict[str, Any]  # the last held-out evaluation's summary
