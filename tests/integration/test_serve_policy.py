"""`agent-world serve-policy`: a policy saved to disk, served over loopback by the real command,
driven by the `openai` client and by verifiers' own evaluation of the arena environment.

The policy is a tiny model that has memorised one task's gold conversation as the server shows
it (tools in the arena's system prompt, its call as `<tool_call>` text, the observation, the
answer), so greedy replies are known: a call in OpenAI's format, then the answer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

openai = pytest.importorskip("openai", reason="the openai client is not installed")
pytestmark = pytest.mark.integration

TOKEN = "serve-policy-test-token-0123456789"
NAME = "arena-policy"
ANSWER = "Done."


@pytest.fixture(scope="module")
def task():
    from agent_world.training.drills import drill_tasks

    return drill_tasks("cancel", limit=1)[0]


@pytest.fixture(scope="module")
def spec(task):
    from agent_world.rollout.engine import spec_index

    return spec_index([task])[task.env_fingerprint]


def _tools(task, spec):
    from agent_world.rollout.toolcall import tool_views

    return [{"type": "function", "function": v} for v in tool_views(task, spec)]


def _turns(task, spec, observation, system=None):
    """The request of the answering turn: (system,) user, the call, its observation."""
    call = task.chain[0]
    head = [{"role": "system", "content": system}] if system else []
    return {"model": NAME, "tools": _tools(task, spec), "messages": head + [
        {"role": "user", "content": task.instruction},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {
                "name": call.tool, "arguments": json.dumps(call.arguments)}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": observation}]}


@pytest.fixture(scope="module")
def observation(task, spec):
    """What the gold call returns on a fresh episode (verifiers' tool message)."""
    from agent_world.envs.episode import EnvRuntime
    from agent_world.rollout.library_attempt import TaskAttempt

    runtime = EnvRuntime(workers=1)
    try:
        attempt = TaskAttempt.open(task, spec, runtime)
        try:
            return attempt.call(task.chain[0].tool, task.chain[0].arguments)
        finally:
            attempt.close()
    finally:
        runtime.close()


@pytest.fixture(scope="module")
def checkpoint(task, spec, observation, tmp_path_factory):
    """A tiny policy saved by save_pretrained, with the settings training writes, that has
    memorised the conversation as the server renders it: with no system prompt of the client
    (the arena's layout) and with verifiers' system prompt."""
    import torch

    from agent_world.integrations.policy_server import ChatCompletionRequest, ServedPolicy
    from agent_world.rollout.prompts import TOOL_AGENT_PROMPT
    from agent_world.rollout.toolcall import format_answer
    from agent_world.training.lm import tiny_model, tiny_tokenizer
    from agent_world.training.policies import write_policy_settings

    draft = tiny_tokenizer(["x"])
    shown = ServedPolicy(model=None, tokenizer=draft, name=NAME, compact_tools=True)
    texts = []
    for system in (None, TOOL_AGENT_PROMPT):
        request = ChatCompletionRequest.model_validate(_turns(task, spec, observation, system))
        conversation = shown.conversation(request) + [
            {"role": "assistant", "content": format_answer(ANSWER)}]
        texts.append(draft.apply_chat_template(conversation, tokenize=False))
    tok = tiny_tokenizer(texts, vocab_size=600)
    model = tiny_model(tok, seed=0, hidden=64, layers=2, max_positions=1024)
    batch = [torch.tensor(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny ops on a shared machine: threads wait on each other
    try:
        for _ in range(300):
            loss = sum(model(input_ids=b[None], labels=b[None]).loss
                       for b in batch) / len(batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if loss.item() < 0.02:
                break
    finally:
        torch.set_num_threads(threads)
    out = tmp_path_factory.mktemp("policy") / "checkpoints" / "step-000001"
    model.save_pretrained(out / "model")
    tok.save_pretrained(out / "model")
    write_policy_settings(out / "model", compact_tools=True, max_new_tokens=64,
                          max_total_tokens=1024)
    return out


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(checkpoint, tmp_path_factory):
    """`agent-world serve-policy CHECKPOINT` (the step directory: it finds model/ in it)."""
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "stderr.txt"
    env = {**os.environ, "AGENT_WORLD_TOKEN": TOKEN}
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_world.cli", "--home",
             str(tmp_path_factory.mktemp("home")), "serve-policy", str(checkpoint),
             "--port", str(port), "--served-model-name", NAME, "--device", "cpu"],
            stdout=subprocess.DEVNULL, stderr=err, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/models", timeout=2,
                             headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_policy_sees_a_request_as_the_arena_shows_an_episode(task, spec, observation):
    from agent_world.integrations.policy_server import ChatCompletionRequest, ServedPolicy
    from agent_world.rollout.toolcall import format_call, system_prompt

    call = task.chain[0]
    request = ChatCompletionRequest.model_validate(
        _turns(task, spec, observation, system="Be brief."))
    for compact in (True, False):
        shown = ServedPolicy(model=None, tokenizer=None, name=NAME, compact_tools=compact)
        assert shown.conversation(request) == [
            {"role": "system", "content": system_prompt(task, spec, compact=compact)
             + "\n\nBe brief."},
            {"role": "user", "content": task.instruction},
            {"role": "assistant", "content": format_call(call.tool, call.arguments)},
            {"role": "tool", "content": observation}]
    # with tool_choice "none" no tools are offered: the client's system prompt alone
    plain = request.model_copy(update={"tool_choice": "none"})
    assert shown.conversation(plain)[0] == {"role": "system", "content": "Be brief."}


def test_openai_client_gets_a_tool_call_then_the_answer(server, task, spec, observation):
    client = openai.OpenAI(base_url=server, api_key=TOKEN)
    assert [m.id for m in client.models.list().data] == [NAME]
    call = task.chain[0]
    messages = [{"role": "user", "content": task.instruction}]
    first = client.chat.completions.create(model=NAME, messages=messages,
                                           tools=_tools(task, spec), temperature=0, seed=1)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.content is None
    (made,) = choice.message.tool_calls
    assert made.type == "function" and made.id.startswith("call_")
    assert made.function.name == call.tool
    assert json.loads(made.function.arguments) == call.arguments
    usage = first.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens

    # the client sends the call back as OpenAI's assistant message, then the tool's result
    messages += [choice.message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": made.id, "content": observation}]
    second = client.chat.completions.create(model=NAME, messages=messages,
                                            tools=_tools(task, spec), temperature=0,
                                            max_tokens=32)
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content == ANSWER
    assert second.choices[0].message.tool_calls is None
    cut = client.chat.completions.create(model=NAME, messages=messages, tools=_tools(task, spec),
                                         temperature=0, stop=".", n=2)
    assert [(c.message.content, c.finish_reason) for c in cut.choices] == [("Done", "stop")] * 2

    # streamed: the same call, in chunks
    stream = client.chat.completions.create(model=NAME, messages=messages[:1],
                                            tools=_tools(task, spec), temperature=0,
                                            stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    calls = [c for ch in chunks for choice in ch.choices for c in choice.delta.tool_calls or []]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        (call.tool, call.arguments)]
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == "tool_calls"
    assert chunks[-1].usage.completion_tokens == usage.completion_tokens


def test_requests_need_the_token_and_a_well_formed_body(server, task, spec):
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server, api_key="wrong-token-wrong-token").models.list()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    user = [{"role": "user", "content": task.instruction}]

    def post(body):
        return httpx.post(f"{server}/chat/completions", json=body, headers=headers, timeout=60)

    refused = {
        "messages: Field required": {"model": NAME},
        "temperature": {"model": NAME, "messages": user, "temperature": 7},
        "tool_choice": {"model": NAME, "messages": user, "tools": _tools(task, spec),
                        "tool_choice": "required"},
        "maximum context length": {"model": NAME, "messages": user, "max_tokens": 100_000},
        "not JSON": {"model": NAME, "tools": _tools(task, spec), "messages": user + [
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {
                "name": "cancel_reservation", "arguments": "{oops"}}]}]},
    }
    for expected, body in refused.items():
        reply = post(body)
        assert reply.status_code == 400, (expected, reply.text)
        assert expected in reply.json()["error"]["message"], reply.text
    unknown = post({"model": "gpt-4o", "messages": user})
    assert unknown.status_code == 404 and NAME in unknown.json()["error"]["message"]


def test_vf_eval_scores_the_arena_environment_through_the_server(server, task, tmp_path):
    """verifiers' own command line, rollouts and rubric against serve-policy, as a user runs
    it on an `agent-world export verifiers` directory: the policy's calls run in arena
    episodes and the episodes are scored."""
    import shutil

    pytest.importorskip("verifiers", reason="verifiers is not installed (see README)")
    vf_eval = shutil.which("vf-eval", path=os.path.dirname(sys.executable)) or \
        shutil.which("vf-eval")
    if vf_eval is None:
        pytest.skip("verifiers is installed without its vf-eval command")
    from typer.testing import CliRunner

    from agent_world.cli import app

    (tmp_path / "tasks.jsonl").write_text(task.model_dump_json() + "\n")
    out = tmp_path / "export"
    done = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "export", "verifiers",
                                    str(out), "--tasks", str(tmp_path / "tasks.jsonl")])
    assert done.exit_code == 0, done.output
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(out), *filter(None, [os.environ.get("PYTHONPATH")])]), "POLICY_TOKEN": TOKEN}
    ran = subprocess.run(
        [vf_eval, "agent-world-arena", "--model", NAME, "--api-base-url", server,
         "--api-key-var", "POLICY_TOKEN", "--num-examples", "1", "--rollouts-per-example",
         "2", "--temperature", "0", "--env-args", '{"max_turns": 3}', "--disable-tui",
         "--save-results", "--output-dir", str(tmp_path / "vf")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    (results,) = (tmp_path / "vf").rglob("results.jsonl")
    meta = json.loads((results.parent / "metadata.json").read_text())
    assert meta["base_url"] == server and meta["model"] == NAME
    assert meta["avg_metrics"]["check_passed"] == 1.0
    outputs = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(outputs) == 2
    for o in outputs:
        assert not o.get("error"), o.get("error")
        call = o["completion"][0]["tool_calls"][0]
        assert "call_" in str(call) and task.chain[0].tool in str(call)
        assert '"status":"cancelled"' in str(o["completion"][1])  # ran in the episode
        assert o["completion"][-1]["content"] == ANSWER
        assert o["reward"] == pytest.approx(1.0)


def test_a_bad_checkpoint_is_one_error_line(tmp_path):
    from typer.testing import CliRunner

    from agent_world.cli import app

    (tmp_path / "empty").mkdir()
    for ref, expected in ((tmp_path / "missing", "no policy at"),
                          (tmp_path / "empty", "is not a policy directory")):
        done = CliRunner().invoke(app, ["serve-policy", str(ref), "--no-token"])
        assert done.exit_code == 1
        lines = done.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], \
            done.output


# ---- LoRA adapters ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lora_run(tmp_path_factory):
    """A LoRA training run as `agent-world train --lora` lays it out: the tiny 2-layer model
    as RUN/base, a peft adapter (non-zero, so it changes the outputs) with the tokenizer and
    the policy settings in RUN/checkpoints/step-000001/model. Returns the run, a prompt and the
    logits of the adapted and of the bare model on it."""
    import torch

    from agent_world.training.grpo import _with_lora
    from agent_world.training.lm import tiny_model, tiny_tokenizer
    from agent_world.training.policies import write_policy_settings

    tok = tiny_tokenizer(['<tool_call>{"name": "x"}</tool_call> <answer>Done.</answer>'])
    model = tiny_model(tok, seed=0, hidden=32, layers=2, max_positions=256)
    run = tmp_path_factory.mktemp("lora-run")
    model.save_pretrained(run / "base")
    adapted = _with_lora(model, 4)
    torch.manual_seed(1)
    with torch.no_grad():
        for param_name, param in adapted.named_parameters():
            if "lora_B" in param_name:
                param.normal_(0, 0.5)
    adapter = run / "checkpoints" / "step-000001" / "model"
    adapted.save_pretrained(adapter)
    tok.save_pretrained(adapter)
    write_policy_settings(adapter, compact_tools=True, max_new_tokens=32, max_total_tokens=256)
    ids = torch.tensor([tok("<answer>Done.</answer>", add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        with adapted.disable_adapter():
            bare = adapted(input_ids=ids).logits
        return run, ids, adapted(input_ids=ids).logits, bare


def _logits(served, ids):
    import torch

    with torch.no_grad():
        return served.model(input_ids=ids).logits


def test_serve_policy_loads_a_lora_checkpoint_merged_into_the_runs_base(lora_run):
    """Was refused ('holds a LoRA adapter, not a whole model')."""
    import torch

    from agent_world.integrations.policy_server import load_served

    run, ids, adapted, bare = lora_run
    served = load_served(str(run / "checkpoints" / "step-000001"), device="cpu")
    assert type(served.model).__name__ == "LlamaForCausalLM"  # merged: no peft wrapper
    assert torch.allclose(_logits(served, ids), adapted, atol=1e-4)
    assert not torch.allclose(adapted, bare, atol=1e-2)
    assert (served.compact_tools, served.max_total_tokens) == (True, 256)


def test_a_lora_adapter_elsewhere_takes_the_base_its_config_names_or_base(lora_run, tmp_path):
    """An adapter outside a run (what TRL's save_model writes): the base its config names,
    --base when that is gone, and one error line when there is none."""
    import shutil

    import torch
    from typer.testing import CliRunner

    from agent_world.cli import app
    from agent_world.integrations.policy_server import load_served

    run, ids, adapted, _ = lora_run
    adapter = tmp_path / "trl-output"
    shutil.copytree(run / "checkpoints" / "step-000001" / "model", adapter)
    config = json.loads((adapter / "adapter_config.json").read_text())
    (adapter / "adapter_config.json").write_text(json.dumps(
        {**config, "base_model_name_or_path": str(run / "base")}))
    assert torch.allclose(_logits(load_served(str(adapter), device="cpu"), ids), adapted,
                          atol=1e-4)

    (adapter / "adapter_config.json").write_text(json.dumps(
        {**config, "base_model_name_or_path": str(tmp_path / "moved-base")}))
    served = load_served(str(adapter), device="cpu", base=str(run / "base"))
    assert torch.allclose(_logits(served, ids), adapted, atol=1e-4)
    done = CliRunner().invoke(app, ["serve-policy", str(adapter), "--no-token"])
    lines = done.output.strip().splitlines()
    assert done.exit_code == 1 and len(lines) == 1, done.output
    assert lines[0].startswith("error: ") and "needs its base model" in lines[0] \
        and "--base" in lines[0]
