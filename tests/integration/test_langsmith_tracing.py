"""With LANGSMITH_TRACING=true a graph run is traced through the real langsmith client; here the
endpoint is a local stand-in that records what it receives."""

from __future__ import annotations

import email.parser
import email.policy
import gzip
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


class _Recorder(BaseHTTPRequestHandler):
    received: list[dict] = []

    def log_message(self, *args):  # keep test output quiet
        pass

    def _reply(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        if self.path.startswith("/info"):
            self._reply({"version": "stand-in"})
        else:
            self._reply({})

    def do_POST(self):  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            if self.headers.get("Content-Encoding", "") == "gzip":
                raw = gzip.decompress(raw)
            ctype = self.headers.get("Content-Type", "")
            runs = []
            if ctype.startswith("multipart/"):
                message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                    f"Content-Type: {ctype}\r\n\r\n".encode() + raw)
                by_id: dict[str, dict] = {}
                for part in message.iter_parts():
                    field = part.get_param("name", header="content-disposition") or ""
                    kind, _, rest = field.partition(".")
                    run_id, _, key = rest.partition(".")
                    if kind not in ("post", "patch") or not run_id:
                        continue
                    run = by_id.setdefault(f"{kind}.{run_id}", {"id": run_id})
                    value = json.loads(part.get_payload(decode=True))
                    # "post.<run id>" is the run itself, "post.<run id>.extra" etc. its fields
                    if key:
                        run[key] = value
                    else:
                        run.update(value)
                runs = list(by_id.values())
            else:
                body = json.loads(raw)
                runs = body.get("post", []) + body.get("patch", [])
            _Recorder.received.append({"path": self.path, "runs": runs})
        except Exception as exc:  # a stand-in must answer anyway, or the client retries
            _Recorder.received.append({"path": self.path, "error": repr(exc)})
        self._reply({})


def _traced(code: str, timeout: float, home: Path | None = None) -> tuple[str, dict[str, dict]]:
    """Run `code` in a fresh interpreter with tracing sent to the recording stand-in; its
    stdout and the runs that arrived (a run's post and later patches merged, by run id)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Recorder.received = []
    env = dict(os.environ, LANGSMITH_TRACING="true",
               LANGSMITH_ENDPOINT=f"http://127.0.0.1:{server.server_port}",
               LANGSMITH_API_KEY="test-key", LANGSMITH_PROJECT="agent-world-tests")
    if home is not None:
        env["AGENT_WORLD_HOME"] = str(home)
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=timeout, cwd=ROOT)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    merged: dict[str, dict] = {}
    for req in _Recorder.received:
        for run in req.get("runs", []):
            merged.setdefault(run["id"], {}).update(run)
    return done.stdout, merged


def test_mine_graph_is_traced_to_langsmith(tmp_path):
    source = f"file:{ROOT / 'agent_world/data/sources/clinic_booking_openapi.yaml'}"
    code = ("from agent_world.graphs.mine_graph import graph; "
            f"out = graph.invoke({{'sources': [{source!r}], 'iterations': 1}}, "
            f"{{'configurable': {{'home': {str(tmp_path)!r}}}}}); "
            "print(out['summary']); "
            "from agent_world.graphs.runner import flush_traces; flush_traces()")
    stdout, runs = _traced(code, timeout=60)
    assert "'mined': 1" in stdout
    names = {run.get("name") for run in runs.values()}
    assert {"start", "mine_source", "taxonomy"} <= names, (names, _Recorder.received[:3])


def test_attempt_and_graph_runs_carry_metadata(tmp_path):
    """An embedded app synthesizes tasks (graph run + verifier attempts) and runs the baseline
    policy on one; each run arrives named and with its task, environment, role and model."""
    code = (
        "from agent_world import BaselineChatModel, Catalog, Task, load_example, run_attempt, "
        "synthesize_tasks\n"
        "from agent_world.graphs.runner import flush_traces\n"
        "spec = load_example('airline'); cat = Catalog.open(); cat.put_env(spec)\n"
        "ids = synthesize_tasks(['airline'], per_env=1, seed=0)\n"
        "task = Task.model_validate(cat.get_task(ids[0])['payload'])\n"
        "run_attempt(task, BaselineChatModel(seed=0), spec=spec)\n"
        "print(task.id, task.env_fingerprint); flush_traces()\n")
    stdout, merged = _traced(code, timeout=120, home=tmp_path)
    task_id, fingerprint = stdout.split()[-2:]
    runs = {run["name"]: run for run in merged.values() if run.get("name")}

    policy = runs.get(f"policy:{task_id}")
    assert policy is not None, sorted(runs)
    meta = policy["extra"]["metadata"]
    assert {k: meta.get(k) for k in ("role", "task_id", "env_name", "env_fingerprint", "model")
            } == {"role": "policy", "task_id": task_id, "env_name": "airline",
                  "env_fingerprint": fingerprint, "model": "BaselineChatModel"}
    assert {"role:policy", "env:airline", f"task:{task_id}"} <= set(policy["tags"])

    verifier = [r for name, r in runs.items() if name.startswith("verifier:")]
    assert verifier and all(r["extra"]["metadata"]["role"] == "verifier" for r in verifier)

    graph = runs.get("synthesize")
    assert graph is not None, sorted(runs)
    assert graph["extra"]["metadata"]["graph"] == "synthesize"
    assert graph["extra"]["metadata"]["thread_id"]
    assert "graph:synthesize" in graph["tags"]


def test_evolve_round_runs_carry_round_policy_and_thread(tmp_path):
    """An embedded app runs one self-evolution round (paused for review before training, so
    no model is trained here): the round's graph run arrives with its round, policy, thread."""
    data = ROOT / "agent_world" / "data" / "sources"
    code = (
        "from agent_world import EvolveContext, evolve_round\n"
        "from agent_world.graphs.runner import flush_traces\n"
        f"ctx = EvolveContext(sources=['file:{data / 'book_lending_prd.md'}', "
        f"'file:{data / 'clinic_booking_openapi.yaml'}'], iterations=0, policy='baseline', "
        "tasks_per_env=1, heldout_tasks_per_env=1, targeted_tasks_per_env=1, max_turns=2, "
        "review_before_train=True, complexify=False)\n"
        "out = evolve_round('traced', context=ctx)\n"
        "print(out['round'], out['rounds_done']); flush_traces()\n")
    stdout, merged = _traced(code, timeout=240, home=tmp_path)
    assert stdout.split()[-2:] == ["1", "0"]  # round 1 paused before training
    [evolve] = [r for r in merged.values() if r.get("name") == "evolve"]
    meta = evolve["extra"]["metadata"]
    assert {k: meta.get(k) for k in ("graph", "thread_id", "round", "policy")} == {
        "graph": "evolve", "thread_id": "traced", "round": 1, "policy": "baseline"}
    assert {"graph:evolve", "round:1"} <= set(evolve["tags"])
    # the round's nodes are its children in the trace, with the round's metadata
    diagnose = [r for r in merged.values() if r.get("name") == "diagnose"]
    assert diagnose and diagnose[0]["extra"]["metadata"]["round"] == 1
