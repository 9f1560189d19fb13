"""Rollouts: tool-call parsing, malformed calls as error observations, token masks, rewards,
environment-fault exclusion."""

from __future__ import annotations

import json

import pytest

from agent_world.rollout.chat_policy import ChatModelPolicy
from agent_world.rollout.engine import RolloutConfig, each, run_rollouts, spec_index
from agent_world.rollout.policy import EpisodeState
from agent_world.rollout.toolcall import format_call, parse_reply
from agent_world.training.drills import drill_tasks
from agent_world.training.policies import HFPolicy


class Scripted:
    """A policy that replies from a fixed script (the same for every episode)."""

    name = "scripted"

    def __init__(self, script: list[str]):
        self.script = script

    def act(self, states: list[EpisodeState]) -> list[str]:
        return [self.script[sum(m["role"] == "assistant" for m in s.messages)] for s in states]


@pytest.fixture(scope="module")
def cancel_tasks(runtime):
    return drill_tasks("cancel", limit=3, runtime=runtime)


def test_parse_reply_kinds():
    assert parse_reply('<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>').kind == "call"
    bad = parse_reply('<tool_call>{"name": "a", "arguments": {x: 1}}</tool_call>')
    assert bad.kind == "malformed" and "not valid JSON" in bad.error
    assert parse_reply('<tool_call>{"arguments": {}}</tool_call>').kind == "malformed"
    assert parse_reply('<tool_call>{"name": "a", "arguments": [1]}</tool_call>').kind == "malformed"
    as_string = parse_reply('<tool_call>{"name": "a", "arguments": "{\\"x\\": 2}"}</tool_call>')
    assert as_string.kind == "call" and as_string.arguments == {"x": 2}
    assert parse_reply("<answer>42</answer>").answer == 42
    assert parse_reply("the flight is late").answer == "the flight is late"


def test_malformed_calls_are_error_observations_and_the_episode_goes_on(runtime, cancel_tasks):
    task = cancel_tasks[0]
    rid = task.chain[0].arguments["reservation_id"]
    script = [
        '<tool_call>{"name": "cancel_reservation", "arguments": {reservation_id: 1}}</tool_call>',
        format_call("book_reservation", {"customer_id": 1}),  # exists, but not in the view
        format_call("cancel_reservation", {"reservation_id": 123456}),  # wrong type
        format_call("cancel_reservation", {"reservation_id": rid}),
        "<answer>cancelled</answer>",
    ]
    [r] = run_rollouts(Scripted(script), [task], spec_index([task]), runtime=runtime)
    t = r.trajectory
    assert [s.error_kind for s in t.steps] == ["malformed_tool_call", "unknown_tool",
                                               "invalid_arguments", None, None]
    assert all(s.fault == "agent" for s in t.steps[:3])
    assert "cancel_reservation" in t.steps[1].error_message  # lists the visible tools
    assert "book_reservation" not in t.steps[1].error_message.split("available:")[1]
    assert t.steps[3].ok and t.finished and t.final_answer == "cancelled"
    tool_msgs = [m["content"] for m in t.messages if m["role"] == "tool"]
    assert tool_msgs[0].startswith("Error (malformed_tool_call)") and len(tool_msgs) == 4
    # the state change is right; one malformed call costs the format penalty
    assert t.reward_components["check.state"] == 1.0
    assert t.reward_components["format_penalty"] == pytest.approx(-0.1)
    assert t.reward == pytest.approx(0.9)


def test_a_task_gets_the_turns_its_gold_solution_needs(runtime, cancel_tasks):
    """A turn limit below a task's gold calls and its answer makes it impossible, not hard:
    with max_turns 2, a task of three gold calls still gets four replies, and no more."""
    task = cancel_tasks[2]
    long = task.model_copy(update={"chain": [task.chain[0]] * 3})
    rid = task.chain[0].arguments["reservation_id"]
    read = format_call("get_reservation", {"reservation_id": rid})
    [r] = run_rollouts(Scripted([read, read, read, "<answer>done</answer>"]), [long],
                       spec_index([long]), RolloutConfig(max_turns=2), runtime=runtime)
    assert r.trajectory.finished and len(r.trajectory.steps) == 4
    [r] = run_rollouts(Scripted([read] * 5), [long], spec_index([long]),
                       RolloutConfig(max_turns=2), runtime=runtime)
    assert not r.trajectory.finished and len(r.trajectory.steps) == 4
    assert r.trajectory.meta["stop"] == "max_turns"


def test_turn_limit_ends_unfinished_with_penalty(runtime, cancel_tasks):
    task = cancel_tasks[1]
    script = [format_call("get_reservation", {"reservation_id": "ZZZZZZ"})] * 3
    [r] = run_rollouts(Scripted(script), [task], spec_index([task]),
                       RolloutConfig(max_turns=3), runtime=runtime)
    t = r.trajectory
    assert not t.finished and t.meta["stop"] == "max_turns" and len(t.steps) == 3
    assert t.steps[0].error_kind == "tool_error"
    # nothing changed (state 0), unfinished, and the failed call repeated twice: capped
    assert t.reward_components["format.unfinished"] == pytest.approx(-0.1)
    assert t.reward_components["format.repeat"] == pytest.approx(-0.2)
    assert t.reward == pytest.approx(-0.3)


def test_answering_a_tool_task_without_a_call_is_never_better_than_calling(runtime,
                                                                          cancel_tasks):
    task = cancel_tasks[2]
    other = cancel_tasks[1].chain[0].arguments["reservation_id"]  # a well-formed wrong call
    scripts = {
        "no call": ["<answer>cancelled</answer>"],
        "malformed only": ['<tool_call>{"name": oops}</tool_call>', "<answer>x</answer>"],
        "wrong call": [format_call("cancel_reservation", {"reservation_id": other}),
                       "<answer>cancelled</answer>"],
        "malformed, then wrong call": ['<tool_call>{"name": oops}</tool_call>',
                                       format_call("get_reservation", {"reservation_id": other}),
                                       "<answer>x</answer>"],
    }
    got = {}
    for name, script in scripts.items():
        [r] = run_rollouts(Scripted(script), [task], spec_index([task]), runtime=runtime)
        got[name] = r.trajectory
    assert got["no call"].reward == pytest.approx(-0.3)
    assert got["no call"].reward_components["format.no_call"] == pytest.approx(-0.3)
    assert got["malformed only"].reward == pytest.approx(-0.3)  # capped at the maximum
    assert got["wrong call"].reward == 0.0
    assert got["wrong call"].reward_components["format.no_call"] == 0.0
    assert got["malformed, then wrong call"].reward == pytest.approx(-0.1)
    assert max(t.reward for t in got.values()) == got["wrong call"].reward


def test_repeating_a_failed_call_costs_what_trying_something_else_does_not(runtime,
                                                                          cancel_tasks):
    task = cancel_tasks[2]
    bad = format_call("get_reservation", {"reservation_id": "NOPE"})
    right = format_call("cancel_reservation", task.chain[0].arguments)
    scripts = {"loop": [bad, bad, bad, "<answer>x</answer>"],
               "retry": [bad, format_call("get_reservation", {"reservation_id": "NOPE2"}),
                         bad.replace("get_reservation", "cancel_reservation"),
                         "<answer>x</answer>"],
               "recover": [bad, right, "<answer>cancelled</answer>"]}
    got = {}
    for name, script in scripts.items():
        [r] = run_rollouts(Scripted(script), [task], spec_index([task]), runtime=runtime)
        got[name] = r.trajectory
    assert [s.ok for s in got["loop"].steps[:3]] == [False, False, False]
    assert got["loop"].reward_components["format.repeat"] == pytest.approx(-0.2)
    assert got["retry"].reward_components["format.repeat"] == 0.0  # other arguments, other tool
    assert got["loop"].reward < got["retry"].reward
    assert got["recover"].reward_components["format.repeat"] == 0.0
    assert got["recover"].reward > got["retry"].reward


def test_environment_faults_are_excluded_not_punished(runtime, cancel_tasks):
    from agent_world.training.grpo_batch import make_batch

    task = cancel_tasks[0]
    specs = spec_index([task])
    spec = specs[task.env_fingerprint].model_copy(deep=True)
    for tool in spec.tools:
        if tool.name == "get_reservation":
            tool.source = "def get_reservation(ctx, reservation_id):\n    return 1 / 0\n"
    broken = task.model_copy(update={"env_fingerprint": spec.fingerprint})
    script = [format_call("get_reservation", {"reservation_id": "ABCDEF"}), "<answer>x</answer>"]
    [r] = run_rollouts(Scripted(script), [broken], {spec.fingerprint: spec}, runtime=runtime)
    assert r.trajectory.steps[0].error_kind == "tool_exception"
    assert r.trajectory.env_fault and r.trajectory.reward_components == {"env_fault": 1.0}
    assert make_batch([r], pad_id=0) is None


def test_judge_refines_a_passing_graph_task_when_configured(runtime, cancel_tasks):
    """The judge's verdict scales a deterministic pass (never below half of it); the check
    stays in the reward."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from agent_world.rollout.reward import JUDGE_WEIGHT, score

    task = cancel_tasks[0]
    rid = task.chain[0].arguments["reservation_id"]
    script = [format_call("cancel_reservation", {"reservation_id": rid}), "<answer>ok</answer>"]
    judge = FakeListChatModel(responses=['{"score": 0.75}'])
    [r] = run_rollouts(Scripted(script), [task], spec_index([task]), runtime=runtime,
                       reward=lambda t, traj, ep: score(t, traj, ep, judge=judge))
    assert r.trajectory.reward_components["judge"] == 0.75
    assert r.trajectory.reward_components["check"] == 1.0
    assert r.trajectory.reward == pytest.approx(1.0 - JUDGE_WEIGHT * 0.25)


def test_chat_model_policy_runs_the_baseline(runtime, cancel_tasks):
    from agent_world.rollout.baseline_agent import BaselineChatModel

    policy = ChatModelPolicy(BaselineChatModel(seed=0), name="baseline")
    rollouts = run_rollouts(policy, cancel_tasks, spec_index(cancel_tasks),
                            RolloutConfig(max_turns=4), runtime=runtime)
    assert len(rollouts) == 3
    for r in rollouts:
        calls = [s for s in r.trajectory.steps if s.tool]
        assert calls and calls[0].tool in r.task.tool_view
        assert r.trajectory.messages[2]["tool_calls"]  # native call ids kept for the next turn


def test_hf_policy_trace_masks_prompt_and_observations(runtime, cancel_tasks):
    import torch

    from agent_world.training.lm import tiny_model, tiny_tokenizer

    corpus = [t.instruction for t in cancel_tasks] + ['<tool_call>{"name": "x"}</tool_call>']
    tok = tiny_tokenizer(corpus, vocab_size=300)
    torch.manual_seed(0)
    policy = HFPolicy(tiny_model(tok), tok, max_new_tokens=12, temperature=1.0)
    rollouts = run_rollouts(policy, cancel_tasks[:2], spec_index(cancel_tasks),
                            RolloutConfig(max_turns=3, group_size=2), runtime=runtime)
    assert len(rollouts) == 4 and [r.group for r in rollouts] == [0, 0, 1, 1]
    for r in rollouts:
        trace = r.state.trace
        assert len(trace.ids) == len(trace.mask)
        replies = [m["content"] for m in r.trajectory.messages if m["role"] == "assistant"]
        generated = tok.decode([i for i, m in zip(trace.ids, trace.mask, strict=True) if m],
                               skip_special_tokens=True)
        assert generated == "".join(replies)
        masked = tok.decode([i for i, m in zip(trace.ids, trace.mask, strict=True) if not m])
        assert r.task.instruction in masked and "<|im_start|>assistant" in masked
        for m in r.trajectory.messages:
            if m["role"] == "tool":
                assert m["content"][:20] in masked  # observations are never policy tokens
        # the trace is exactly the chat template's rendering of the conversation
        full = tok.apply_chat_template([{"role": m["role"], "content": m["content"]}
                                        for m in r.trajectory.messages], tokenize=False)
        if r.trajectory.finished:
            assert tok.decode(trace.ids) == full.rstrip("\n")
    assert json.dumps(rollouts[0].trajectory.model_dump(mode="json"))  # serializable


def test_compact_tool_listing_describes_only_obscured_tools(cancel_tasks):
    from agent_world.envs.examples import load_example
    from agent_world.rollout.toolcall import system_prompt

    spec = load_example("airline")
    task = cancel_tasks[0]
    compact = system_prompt(task, spec, compact=True)
    assert "cancel_reservation(reservation_id, reason)\n" in compact
    assert len(compact) < len(system_prompt(task, spec)) / 4
    # an obscured name comes with the first sentence of what the tool does (≤ 60 chars)
    hidden = task.model_copy(update={"tool_view": {"tool_1a2b3c": "cancel_reservation",
                                                   "get_reservation": "get_reservation"}})
    lines = system_prompt(hidden, spec, compact=True).splitlines()
    line = next(x for x in lines if x.startswith("tool_1a2b3c("))
    head, description = line.split(": ", 1)
    assert head == "tool_1a2b3c(reservation_id, reason)"
    assert description.startswith("Cancel a confirmed reservation") and len(description) <= 60
    assert "get_reservation(reservation_id)" in lines


def test_shared_prefixes_generate_what_separate_prefills_do(cancel_tasks):
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    corpus = [t.instruction for t in cancel_tasks] + ['<tool_call>{"name": "x"}</tool_call>']
    tok = tiny_tokenizer(corpus, vocab_size=300)
    model = tiny_model(tok, seed=4)
    listing = "Tools: cancel_reservation(reservation_id, reason) " * 6

    def episodes() -> list[EpisodeState]:
        # one environment's two tasks x two attempts share its listing; a third task's two
        # attempts have another listing, shorter, so the rows are left-padded
        return [EpisodeState(task=t, tools=[], messages=[
            {"role": "system", "content": listing if i < 2 else "Other tools: get_user"},
            {"role": "user", "content": t.instruction}])
            for i, t in enumerate(cancel_tasks[:3]) for _ in range(2)]

    def replies(share: bool) -> list[str]:
        policy = HFPolicy(model, tok, max_new_tokens=10, temperature=0.0, share_prefill=share)
        states = episodes()
        out = policy.act(states)
        assert all(s.trace is not None and sum(s.trace.mask) > 0 for s in states)
        return out

    policy = HFPolicy(model, tok)
    states = episodes()
    for s in states:
        policy.sync(s)
    policy.share_prefixes(states)
    carried = [policy._carried[id(s)] for s in states]
    listed = len(policy.encode(policy.render(states[0].messages[:1], False)))
    # the listing's four rows share one cache of at least the listing's tokens, not their
    # requests; the third task's attempts share their whole prompt but its last token
    assert len({id(c.layers) for c in carried[:4]}) == 1
    assert listed <= carried[0].length < len(states[0].trace.ids) - 1
    assert carried[4].layers is carried[5].layers is not carried[0].layers
    assert carried[4].length == len(states[4].trace.ids) - 1
    assert replies(True) == replies(False)


def test_each_keeps_order_and_raises_what_a_call_raised():
    from concurrent.futures import ThreadPoolExecutor

    def square(x):
        return x * x

    with ThreadPoolExecutor(4) as pool:
        assert each(pool, 4, square, range(200)) == [x * x for x in range(200)]
        assert each(pool, 4, square, []) == []
        with pytest.raises(ZeroDivisionError):
            each(pool, 3, lambda x: 1 // (x - 7), list(range(20)))


def test_decoding_batches_split_only_around_long_rows(cancel_tasks):
    from agent_world.training.lm import tiny_model, tiny_tokenizer
    from agent_world.training.policies import PAD_RATIO, by_length

    # rows within PAD_RATIO of each other: one batch, exactly as given
    assert by_length([3, 1, 2], {1: 100, 2: 150, 3: 200}) == [[3, 1, 2]]
    # a long outlier decodes apart; each group keeps the given order
    lengths = {0: 600, 1: 3500, 2: 580, 3: 900, 4: 2000}
    assert by_length([0, 1, 2, 3, 4], lengths) == [[0, 2, 3], [1, 4]]
    assert all(max(lengths[i] for i in g) <= PAD_RATIO * min(lengths[i] for i in g)
               for g in by_length([0, 1, 2, 3, 4], lengths))
    assert by_length([], {}) == []

    corpus = [t.instruction for t in cancel_tasks] + ['<tool_call>{"name": "x"}</tool_call>']
    tok = tiny_tokenizer(corpus, vocab_size=300)
    model = tiny_model(tok, seed=4)
    policy = HFPolicy(model, tok, max_new_tokens=6, temperature=0.0)

    def states(padding: list[int]) -> list[EpisodeState]:
        return [EpisodeState(task=cancel_tasks[0], tools=[], messages=[
            {"role": "system", "content": "Tools: cancel_reservation" * n},
            {"role": "user", "content": cancel_tasks[0].instruction}]) for n in padding]

    mixed = states([1, 40, 1])  # the middle row is many times longer than the others
    together = policy.act(mixed)
    assert len({len(s.trace.ids) for s in mixed}) == 2  # type: ignore[union-attr]
    # every reply lands on its own row: the same as decoding each row alone
    alone = [policy.act(states([n]))[0] for n in (1, 40, 1)]
    assert together == alone


def test_later_turns_start_from_the_previous_turns_cache(cancel_tasks):
    import torch

    from agent_world.training.lm import tiny_model, tiny_tokenizer

    corpus = [t.instruction for t in cancel_tasks] + ['<tool_call>{"name": "x"}</tool_call>']
    tok = tiny_tokenizer(corpus, vocab_size=300)
    model = tiny_model(tok, seed=4)
    fed: list[int] = []  # tokens each forward pass runs (prefill: many, decoding: 1 per row)
    hook = model.get_input_embeddings().register_forward_hook(
        lambda _m, args, _out: fed.append(args[0].size(1)))

    def conversation(carry: bool) -> tuple[list[list[str]], list[list[int]], list[int]]:
        policy = HFPolicy(model, tok, max_new_tokens=8, temperature=0.0)
        # three episodes, prompts of different lengths; observations of different lengths
        states = [EpisodeState(task=t, tools=[], messages=[
            {"role": "system", "content": "Tools: cancel_reservation " * (1 + 3 * i)},
            {"role": "user", "content": t.instruction}]) for i, t in enumerate(cancel_tasks)]
        replies, prefills = [], []
        for turn in range(3):
            if not carry:
                policy.forget()
            fed.clear()
            replies.append(policy.act(states))
            prefills.append(fed[0])
            for i, (s, text) in enumerate(zip(states, replies[-1], strict=True)):
                s.messages.append({"role": "assistant", "content": text})
                s.messages.append({"role": "tool", "content": f"result {turn} " * (2 + 5 * i)})
        return replies, [s.trace.ids for s in states], prefills  # type: ignore[union-attr]

    try:
        with torch.no_grad():
            carried, carried_ids, carried_fed = conversation(True)
            plain, plain_ids, plain_fed = conversation(False)
    finally:
        hook.remove()
    # the same replies and token traces as prefilling the whole conversation every turn
    assert carried == plain and carried_ids == plain_ids
    # turn 1 is the same prefill; later turns run only what was appended since
    assert carried_fed[0] == plain_fed[0]
    assert all(c < p / 2 for c, p in zip(carried_fed[1:], plain_fed[1:], strict=True))


def test_a_reply_ends_at_its_closing_tag(cancel_tasks):
    """A policy that would write `</answer>` over and over stops after the first one: the rest
    of its turn is never generated, and the turn is closed."""
    import torch

    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer(["<answer>yes</answer> done"] * 50 + [t.instruction for t in
                                                              cancel_tasks], vocab_size=300)
    parts = tok("</answer>", add_special_tokens=False)["input_ids"]
    model = tiny_model(tok, layers=1)
    # no layer adds anything to the residual stream: the next token depends on the last one
    # only, through an embedding and an untied head that map each part of the tag to the next
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        hidden = model.config.hidden_size
        emb = torch.zeros(len(tok), hidden)
        emb[:, 0] = 1.0  # any token leads to the tag's first part
        head = torch.zeros(len(tok), hidden)
        for k, t in enumerate(parts):
            emb[t] = 0.0
            emb[t, k + 1] = 1.0  # part k ...
            head[parts[(k + 1) % len(parts)], k + 1] = 10.0  # ... leads to part k + 1
        head[parts[0], 0] = 10.0
        model.model.embed_tokens.weight.copy_(emb)
        model.lm_head.weight = torch.nn.Parameter(head)
    policy = HFPolicy(model, tok, max_new_tokens=40, temperature=0.0)
    def fresh() -> EpisodeState:
        return EpisodeState(task=cancel_tasks[0], tools=[], messages=[
            {"role": "user", "content": cancel_tasks[0].instruction}])

    state = fresh()
    assert policy.act([state]) == ["</answer>"]
    assert state.trace.ids[-1] == policy.eos_id and state.trace.mask[-1] == 0
    policy.min_new_tokens = 40  # fixed-length turns (benchmarks) are not cut
    assert policy.act([fresh()])[0].count("</answer>") > 3


def test_a_react_tool_and_a_rollout_read_the_same_step(runtime, cancel_tasks):
    """One rollout step: a LangChain tool of an attempt and the training rollout run a call the
    same way and read back the same text, under the names the agent sees (an obscured view's
    errors never name the real tool)."""
    from agent_world.envs.examples import load_example
    from agent_world.rollout.engine import observation_text, observe_call
    from agent_world.rollout.react_attempt import task_tools

    task = cancel_tasks[0]
    spec = load_example(task.env_name)
    real = task.chain[0].tool
    hidden = task.model_copy(update={"tool_view": {"tool_x1": real}})
    for arguments in (task.chain[0].arguments, {"nope": 1}):
        texts = []
        for how in ("react", "rollout"):
            ep = runtime.open(spec, seed=task.seed)
            try:
                if how == "react":
                    steps: list = []
                    texts.append(task_tools(hidden, spec, ep, steps)[0].invoke(arguments))
                else:
                    step = observe_call(ep, hidden, ["tool_x1"], "tool_x1", arguments)
                    texts.append(observation_text(step, hidden))
            finally:
                ep.close()
        assert texts[0] == texts[1]
        assert real not in texts[0]
    assert texts[0].startswith("Error (")


def test_decoding_cache_with_room_equals_concatenation(monkeypatch, cancel_tasks):
    import torch

    from agent_world.training import decoding
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    # the layer alone: growing past its room, dropping rows, as DynamicLayer's concatenation
    gen = torch.Generator().manual_seed(0)
    parts = [torch.randn(3, 2, n, 4, generator=gen) for n in (5, 1, 1, 3, 1)]
    layer = decoding.RoomyLayer(parts[0], parts[0] * 2, room=2)
    plain = decoding.DynamicLayer()
    plain.update(parts[0], parts[0] * 2)
    for i, part in enumerate(parts[1:]):
        part = part[:plain.keys.size(0)]  # the rows left
        got, want = layer.update(part, part * 2), plain.update(part, part * 2)
        assert all(torch.equal(a, b) for a, b in zip(got, want, strict=True))
        if i == 1:
            for cache in (layer, plain):
                cache.batch_select_indices(torch.tensor([0, 2]))
    assert layer.get_seq_length() == plain.get_seq_length() == 11

    # decoding with it: the same replies and carried caches, rows ending at different steps
    tok = tiny_tokenizer([t.instruction for t in cancel_tasks], vocab_size=300)
    model = tiny_model(tok, seed=5)
    ids = torch.randint(3, len(tok), (4, 12), generator=gen)
    attn = torch.ones_like(ids)

    def run() -> list[decoding.Decoded]:
        with torch.inference_mode():
            return decoding.decode(model, ids, attn, None, max_new=12, eos_id=-1,
                                   stopped=lambda toks: len(toks) >= 3 + toks[0] % 7)

    roomy = run()
    monkeypatch.setattr(decoding, "with_room", lambda cache, room: cache)
    concatenated = run()
    assert len({len(d.tokens) for d in roomy}) > 1  # rows left the batch at different steps
    assert [d.tokens for d in roomy] == [d.tokens for d in concatenated]
    for a, b in zip(roomy, concatenated, strict=True):
        assert all(torch.equal(x, y) for la, lb in zip(a.layers, b.layers, strict=True)
                   for x, y in zip(la, lb, strict=True))
