"""Held-out evaluations reach LangSmith through the real `langsmith` client: the held-out set
as a dataset, the evaluation as an experiment on it, each attempt's reward components as
feedback. The endpoint is a local stand-in on 127.0.0.1 that answers like LangSmith and
records every request."""

from __future__ import annotations

import gzip
import json
import threading
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langsmith import Client

from agent_world.evolution.scores import publish_evaluation
from agent_world.tasks.evaluation import attempt
from agent_world.tasks.model import Difficulty, Step, Task, ToolCall, Trajectory

pytestmark = pytest.mark.integration


class _LangSmith(BaseHTTPRequestHandler):
    received: list[dict] = []

    def log_message(self, *args):  # keep test output quiet
        pass

    def _reply(self, body) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        _LangSmith.received.append({"method": "GET", "path": self.path})
        if self.path.startswith("/info"):
            self._reply({"version": "stand-in"})
        else:
            self._reply([])  # no dataset of that name, no examples yet

    def do_POST(self):  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding", "") == "gzip":
            raw = gzip.decompress(raw)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"raw": raw.decode("utf-8", "replace")}  # multipart run uploads
        _LangSmith.received.append({"method": "POST", "path": self.path, "body": body})
        now = datetime.now(UTC).isoformat()
        path = self.path.split("?")[0]
        if path == "/datasets":
            self._reply({**body, "id": str(uuid.uuid4()), "created_at": now})
        elif path == "/sessions":
            self._reply({**body, "id": str(uuid.uuid4()), "tenant_id": str(uuid.uuid4()),
                         "start_time": now})
        elif path == "/feedback":
            self._reply({**body, "created_at": now, "modified_at": now,
                         "trace_id": body.get("trace_id") or body.get("run_id")})
        elif path == "/examples/bulk":  # the client's JSON path (no multipart support here)
            self._reply([{"id": e.get("id") or str(uuid.uuid4())} for e in body])
        else:
            self._reply({})


def _evaluation():
    tasks, trajs = [], []
    for i, ok in enumerate([True, False, False]):
        t = Task(kind="graph", env_name="fetch", env_fingerprint="fp",
                 instruction=f"What does page {i} say?", reference_answer=f"text {i}",
                 chain=[ToolCall(tool="fetch", arguments={"url": f"u{i}"})],
                 difficulty=Difficulty(level=1)).with_id()
        step = Step(tool="fetch", arguments={"url": f"u{i}"}, ok=True, result=f"text {i}")
        tasks.append(t)
        trajs.append(Trajectory(task_id=t.id, steps=[step] if ok else [], finished=True,
                                final_answer=f"text {i}" if ok else "?",
                                reward=1.0 if ok else 0.0,
                                reward_components={"check": 1.0 if ok else 0.0,
                                                   "format.repeat": 0.0}))
    attempts = [attempt(t, tr, f"th/r1/after/{i:04d}") for i, (t, tr)
                in enumerate(zip(tasks, trajs, strict=True))]
    return tasks, trajs, attempts


def test_evaluation_is_a_dataset_an_experiment_and_feedback(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LangSmith)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _LangSmith.received = []
    try:
        client = Client(api_url=f"http://127.0.0.1:{server.server_port}", api_key="test-key")
        tasks, trajs, attempts = _evaluation()
        links = publish_evaluation("th/r1/after", "th/heldout", tasks, trajs, attempts,
                                   client=client, metadata={"round": 1})
        client.flush()
    finally:
        server.shutdown()
    posts = [{**r, "path": r["path"].split("?")[0]} for r in _LangSmith.received
             if r["method"] == "POST"]
    [dataset] = [r["body"] for r in posts if r["path"] == "/datasets"]
    assert dataset["name"] == "th/heldout"
    examples = [e for r in posts if "examples" in r["path"]
                for e in (r["body"] if isinstance(r["body"], list) else
                          r["body"].get("examples", []))]
    assert sorted(e["metadata"]["task_id"] for e in examples) == sorted(t.id for t in tasks)
    assert {e["outputs"]["reference_answer"] for e in examples} == {"text 0", "text 1",
                                                                   "text 2"}
    [experiment] = [r["body"] for r in posts if r["path"] == "/sessions"]
    assert experiment["name"] == "th/r1/after" and experiment["reference_dataset_id"]
    assert experiment["extra"]["metadata"]["round"] == 1
    # one run per attempt arrived (batched or multipart), and feedback on each
    runs_text = json.dumps([r["body"] for r in posts if r["path"].startswith("/runs")])
    for t in tasks:
        assert f"attempt:{t.id}" in runs_text
    feedback = [r["body"] for r in posts if r["path"] == "/feedback"]
    by_key: dict[str, list[float]] = {}
    for f in feedback:
        by_key.setdefault(f["key"], []).append(f["score"])
    assert sorted(by_key) == ["check", "format.repeat", "passed", "reward"]
    assert sorted(by_key["reward"]) == [0.0, 0.0, 1.0] and sorted(by_key["passed"]) == [
        0.0, 0.0, 1.0]
    assert len({f["run_id"] for f in feedback}) == 3
    assert "/datasets/" in links["dataset"] and "selectedSessions=" in links["experiment"]
