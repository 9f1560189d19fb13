"""Escape attempts against the sandboxed engine and the code sandbox, shared by the tests
(`test_sandbox_escapes.py`, one test each) and `benchmarks/sandbox_bench.py` (the table).

An `Arena` is what an attacker faces: an EnvRuntime (sandbox on, one worker, so environments
take turns on it) with an attacker environment whose tools run whatever code they are given,
a victim environment with an episode whose state must not change, an arena home with a
catalog file, a second home chosen as `--home` does inside a directory on the import path
(bound into the sandbox), an API key in the host's environment and a TCP listener on
127.0.0.1. Each attempt returns an `Outcome`: contained or not, and what the host saw.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_world.config import resolve_home
from agent_world.envs.database import state_hash
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.sandbox import LocalSandbox

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SECRET_ENV = "AGENT_WORLD_TEST_API_KEY"
SECRET = "sk-test-0123456789abcdef"
RUN_SOURCE = ("def {name}(ctx, code):\n"
              "    scope = {{'ctx': ctx, 'result': None}}\n"
              "    exec(code, scope)\n"
              "    return scope['result']\n")


@dataclass
class Outcome:
    contained: bool
    host_saw: str


def attacker_spec() -> EnvSpec:
    raw = json.loads((FIXTURES / "notes_env.json").read_text())
    raw["name"] = "attacker"
    for name, mutates in (("run", True), ("run_read", False)):
        raw["tools"].append({
            "name": name, "description": "Run the given Python code as the tool's body.",
            "mutates": mutates,
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}},
                           "required": ["code"]},
            "source": RUN_SOURCE.format(name=name)})
    return EnvSpec.from_dict(raw)


class Arena:
    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="aw-escape-"))
        self.home = self.tmp / "home"
        self.home.mkdir()
        self.catalog = self.home / "catalog.sqlite"
        self.catalog.write_bytes(b"CATALOG-SECRET")
        self._saved_env = {k: os.environ.get(k) for k in ("AGENT_WORLD_HOME", SECRET_ENV)}
        os.environ["AGENT_WORLD_HOME"] = str(self.home)
        os.environ[SECRET_ENV] = SECRET
        # `python -m` from a project directory puts it on the import path: the sandbox binds it
        self.import_dir = self.tmp / "project"
        self.flag_home = resolve_home(self.import_dir / "arena")  # as `--home` resolves it
        (self.flag_home / "catalog.sqlite").write_bytes(b"CATALOG-SECRET")
        sys.path.insert(0, str(self.import_dir))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()
        self.runtime = EnvRuntime(workers=1, tool_timeout_s=2.0, sandbox=True)
        self.spec = attacker_spec()
        self.victim_spec = EnvSpec.load(FIXTURES / "notes_env.json")
        self.victim = self.runtime.open(self.victim_spec, seed=1)
        assert self.victim.step("add_note", {"user_id": 1, "body": "victim's note"}).ok
        self.victim_hash = self.victim.state_hash()
        self.attacker = self.runtime.open(self.spec, seed=2)
        self.other = self.runtime.open(self.spec, seed=3)  # another episode, same environment
        assert self.other.step("add_note", {"user_id": 2, "body": "other's note"}).ok
        self.other_hash = self.other.state_hash()
        self.template_hash = state_hash(self.spec, self.attacker.template)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def run(self, code: str, read: bool = False, **fmt: object):
        return self.attacker.step("run_read" if read else "run", {"code": code.format(**fmt)})

    def intact(self) -> tuple[bool, str]:
        """Host-side checks every attempt ends with."""
        problems = []
        if self.victim.state_hash() != self.victim_hash:
            problems.append("victim episode changed")
        if self.other.state_hash() != self.other_hash:
            problems.append("other episode changed")
        if state_hash(self.spec, self.attacker.template) != self.template_hash:
            problems.append("template changed")
        if self.catalog.read_bytes() != b"CATALOG-SECRET":
            problems.append("catalog changed")
        victim_obs = self.victim.step("list_notes", {"user_id": 1})
        if not victim_obs.ok or victim_obs.result[-1]["body"] != "victim's note":
            problems.append(f"victim environment answers wrongly: {victim_obs.to_text()[:80]}")
        self.victim_hash = self.victim.state_hash()
        return not problems, "; ".join(problems)

    def close(self) -> None:
        self.runtime.close()
        self.listener.close()
        sys.path.remove(str(self.import_dir))
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _obs(o) -> str:
    return ("ok: " + json.dumps(o.result)[:70]) if o.ok else f"{o.error.kind}: {o.error.message[:70]}"


def _finish(arena: Arena, contained: bool, saw: str) -> Outcome:
    ok, problems = arena.intact()
    return Outcome(contained and ok, saw + (f" | {problems}" if problems else ""))


# -- the attempts ------------------------------------------------------------------------------

def network_connect(a: Arena) -> Outcome:
    before = a.connections
    o = a.run("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
              "result = 'connected'", port=a.port)
    time.sleep(0.1)
    return _finish(a, a.connections == before and not o.ok,
                   f"listener connections +{a.connections - before}; tool got {_obs(o)}")


def read_host_files(a: Arena) -> Outcome:
    targets = ["/etc/shadow", str(a.catalog), str(a.flag_home / "catalog.sqlite"),
               str(a.victim.path), str(a.other.path), str(a.attacker.template),
               str(Path.home())]
    o = a.run("import os\nresult = {{}}\nfor p in {targets!r}:\n"
              "    try:\n        result[p] = (os.listdir(p) if os.path.isdir(p)\n"
              "                     else open(p, 'rb').read(64).hex())\n"
              "    except OSError as e:\n        result[p] = type(e).__name__\n",
              targets=targets)
    # the home directory may exist inside only as the path to an interpreter installed there
    home, allowed = Path.home(), set()
    for prefix in (sys.base_prefix, sys.prefix):
        if Path(prefix).is_relative_to(home):
            allowed.add(Path(prefix).relative_to(home).parts[0])
    leaked = [p for p, v in (o.result or {}).items()
              if v not in ("FileNotFoundError", "PermissionError")
              and not (isinstance(v, list) and set(v) <= allowed)]
    return _finish(a, o.ok and not leaked,
                   f"readable: {leaked or 'none'} of {len(targets)} host paths")


def read_api_key(a: Arena) -> Outcome:
    o = a.run("import os\nresult = sorted(os.environ)")
    leaked = SECRET_ENV in (o.result or []) or SECRET in json.dumps(o.result)
    return _finish(a, o.ok and not leaked, f"tool saw variables {o.result}")


def write_outside_workdir(a: Arena) -> Outcome:
    target = a.tmp / "pwned.txt"
    a.run("result = []\nfor p in {paths!r}:\n    try:\n        open(p, 'w').write('x')\n"
              "        result.append(p)\n    except OSError as e:\n        pass\n",
              paths=[str(target), "/usr/pwned", "/pwned", "/etc/pwned"])
    host_files = [p for p in (target, Path("/usr/pwned"), Path("/pwned"), Path("/etc/pwned"))
                  if p.exists()]
    return _finish(a, not host_files, f"host files created: {host_files or 'none'}")


def write_other_databases(a: Arena) -> Outcome:
    paths = [str(a.victim.path), str(a.other.path), str(a.attacker.template)]
    o = a.run("import sqlite3\nresult = []\nfor p in {paths!r}:\n    try:\n"
              "        c = sqlite3.connect(p)\n        c.execute('DELETE FROM notes')\n"
              "        c.commit()\n        result.append(p)\n    except Exception:\n"
              "        pass\n", paths=paths)
    return _finish(a, True, f"tool reports wrote: {o.result if o.ok else _obs(o)}")


def lift_sqlite_guard(a: Arena) -> Outcome:
    before = a.attacker.state_hash()
    # a read tool lifts the guard and writes; a write tool commits half its work, then fails
    o1 = a.run("ctx.db._conn.set_authorizer(None)\n"
               "ctx.db.execute(\"UPDATE users SET name = 'hacked'\")\n"
               "ctx.db.execute('COMMIT')\nresult = 'wrote'", read=True)
    o2 = a.run("ctx.db._conn.set_authorizer(None)\n"
               "ctx.db.execute(\"UPDATE users SET name = 'hacked'\")\n"
               "ctx.db.execute('COMMIT')\nraise RuntimeError('after commit')")
    after = a.attacker.state_hash()
    return _finish(a, before == after,
                   f"episode {'unchanged' if before == after else 'CHANGED'}; read tool "
                   f"{_obs(o1)}; write tool {_obs(o2)}")


def forge_reply_frame(a: Arena) -> Outcome:
    o = a.run("import os, json\n"
              "frame = json.dumps({{'ok': True, 'result': 'FORGED'}}).encode()\n"
              "msg = len(frame).to_bytes(4, 'big') + frame\n"
              "for fd in range(3, 64):\n    try:\n        os.write(fd, msg * 3)\n"
              "    except OSError:\n        pass\nresult = 'sent'")
    later = [a.other.step("list_notes", {"user_id": 2}),
             a.victim.step("list_notes", {"user_id": 1})]
    forged = [x for x in later if not x.ok or x.result == "FORGED"]
    return _finish(a, not forged, f"forging call {_obs(o)}; later calls forged: {len(forged)}")


def signal_parent(a: Arena) -> Outcome:
    o = a.run("import os, signal\nresult = []\nfor pid in (os.getppid(), 1, -1):\n    try:\n"
              "        os.kill(pid, signal.SIGKILL)\n        result.append(pid)\n"
              "    except OSError as e:\n        pass\n")
    return _finish(a, True, f"host pid {os.getpid()} alive; tool {_obs(o)}")


def monkeypatch_worker(a: Arena) -> Outcome:
    o = a.run("import gc\nn = 0\nfor obj in gc.get_objects():\n"
              "    if type(obj).__name__ == 'Worker':\n"
              "        obj.call = lambda req: {{'ok': True, 'result': 'PATCHED'}}\n"
              "        n += 1\nresult = n")
    v = a.victim.step("list_notes", {"user_id": 1})
    patched = v.ok and v.result == "PATCHED"
    for client in a.runtime.pool.clients_of(a.attacker.fingerprint):
        client.stop()  # episodes of one environment share its worker: the next attempts start
        # from an unpatched one
    return _finish(a, not patched, f"patched {o.result} worker(s); victim env then "
                   f"{'answered PATCHED' if patched else 'answered normally'}; "
                   f"workers recycled so far {a.runtime.pool.recycled}")


def lingering_thread(a: Arena) -> Outcome:
    """A thread the tool leaves running waits for a later call of another episode of the same
    environment and sends its own statement into that call."""
    a.run("import gc, threading, time\n"
          "ch = next(o for o in gc.get_objects() if type(o).__name__ == 'HostChannel')\n"
          "mine = ch.call_id\n"
          "def loop():\n"
          "    end = time.time() + 3\n"
          "    while time.time() < end:\n"
          "        if ch.call_id not in (None, mine):\n"
          "            try:\n"
          "                ch.statement(\"UPDATE notes SET body = 'pwned'\", [], False)\n"
          "            except Exception:\n"
          "                pass\n"
          "        time.sleep(0.0002)\n"
          "threading.Thread(target=loop, daemon=True).start()\nresult = 'planted'")
    later = []
    for i in range(20):  # the other episode's own write calls, each a chance for the thread
        later.append(a.other.step("add_note", {"user_id": 2, "body": f"later {i}"}).ok)
    bodies = [n["body"] for n in a.other.step("list_notes", {"user_id": 2}).result]
    a.other.reset()  # back to what the arena expects of it
    assert a.other.step("add_note", {"user_id": 2, "body": "other's note"}).ok
    a.other_hash = a.other.state_hash()
    return _finish(a, all(later) and "pwned" not in bodies,
                   f"other episode's notes afterwards: {'PWNED' if 'pwned' in bodies else 'own'}"
                   f"; workers recycled so far {a.runtime.pool.recycled}")


def fork_bomb(a: Arena) -> Outcome:
    t = time.perf_counter()
    o = a.run("import os\nkids = 0\nfor _ in range(10000):\n    try:\n"
              "        if os.fork() == 0:\n            import time\n            time.sleep(30)\n"
              "            os._exit(0)\n        kids += 1\n    except OSError:\n        break\n"
              "result = kids")
    took = time.perf_counter() - t
    return _finish(a, not o.ok or (o.result or 0) < 64,
                   f"forks before refusal: {o.result if o.ok else _obs(o)}; {took:.1f}s")


def memory_bomb(a: Arena) -> Outcome:
    o = a.run("x = bytearray(8 << 30)\nresult = len(x)")
    return _finish(a, not o.ok, f"tool got {_obs(o)}")


def memory_hoarding(a: Arena) -> Outcome:
    before = a.runtime.pool.recycled
    a.run("import builtins\nbuiltins.HOARD = bytearray(400 << 20)\nresult = 1")
    o = a.run("import builtins\nresult = hasattr(builtins, 'HOARD')")
    recycled = a.runtime.pool.recycled - before
    return _finish(a, o.ok and o.result is False,
                   f"workers recycled: {recycled}; next call still holds the memory: {o.result}")


def infinite_loop(a: Arena) -> Outcome:
    t = time.perf_counter()
    o1 = a.run("while True:\n    pass")
    o2 = a.run("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
               "while True:\n    pass")
    took = time.perf_counter() - t
    return _finish(a, not o1.ok and not o2.ok and o2.error.kind == "timeout",
                   f"{o1.error.kind if not o1.ok else 'ok'} and {_obs(o2)[:40]}; {took:.1f}s")


def huge_output(a: Arena) -> Outcome:
    o1 = a.run("print('x' * (100 << 20))\nresult = 'printed'")
    o2 = a.run("result = 'x' * (100 << 20)")
    return _finish(a, not o2.ok, f"print: {_obs(o1)[:30]}; return: {_obs(o2)[:60]}")


def children_survive_close(a: Arena) -> Outcome:
    marker = "424242.5"
    with EnvRuntime(workers=1, sandbox=True) as rt:  # a runtime of its own, closed here
        o = rt.open(a.spec).step("run", {"code": (
            "import subprocess\n"
            f"subprocess.Popen(['/bin/sleep', '{marker}'], start_new_session=True)\n"
            "result = 'spawned'")})
    time.sleep(0.2)
    left = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    left.append(int(pid))
            except OSError:
                pass
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return _finish(a, o.ok and not left,
                   f"tool {_obs(o)}; processes left after close: {len(left)}")


def sandbox_code_escapes(a: Arena) -> Outcome:
    """The same attempts through the code sandbox (`run_code`)."""
    with LocalSandbox(timeout=5) as sbx:
        net = sbx.run_code(f"import socket\nsocket.create_connection(('127.0.0.1', {a.port}), "
                           "timeout=1)").error
        shadow = sbx.run_code("open('/etc/shadow').read()").error
        home = sbx.run_code(f"open({str(a.catalog)!r}).read()").error
        flag_home = sbx.run_code(f"open({str(a.flag_home / 'catalog.sqlite')!r}).read()").error
        key = sbx.run_code(f"import os\nos.environ.get({SECRET_ENV!r})").value
        out = sbx.run_code("print('x' * (100 << 20))")
        loop = sbx.run_code("while True:\n    pass", timeout=1).error
    contained = (net is not None and shadow is not None and home is not None
                 and flag_home is not None and key is None
                 and len(out.logs.stdout[0]) < (2 << 20) and loop is not None)
    return _finish(a, contained, f"net {net.name if net else 'OPEN'}, /etc/shadow "
                   f"{shadow.name if shadow else 'READ'}, catalog {home.name if home else 'READ'}"
                   f", --home catalog {flag_home.name if flag_home else 'READ'}"
                   f", key {key!r}, 100 MB print kept {len(out.logs.stdout[0]) >> 10} KiB, "
                   f"loop {loop.name if loop else 'ran'}")


ATTEMPTS: list[tuple[str, Callable[[Arena], Outcome]]] = [
    ("network connect to a 127.0.0.1 listener", network_connect),
    ("read /etc/shadow, catalogs, other episodes, template, home", read_host_files),
    ("read an API key from the host environment", read_api_key),
    ("write outside the work dir", write_outside_workdir),
    ("write another episode's database or the template", write_other_databases),
    ("lift the SQLite guard (read tool writes; commit then fail)", lift_sqlite_guard),
    ("forge a reply frame", forge_reply_frame),
    ("signal the parent / pid 1 / everyone", signal_parent),
    ("monkeypatch the worker, attack a second environment", monkeypatch_worker),
    ("a thread left behind writes into another episode's call", lingering_thread),
    ("fork bomb", fork_bomb),
    ("memory bomb (8 GiB)", memory_bomb),
    ("memory hoarding across calls", memory_hoarding),
    ("infinite loop (and one ignoring SIGALRM)", infinite_loop),
    ("100 MB output (printed and returned)", huge_output),
    ("forked children outlive the runtime's close", children_survive_close),
    ("run_code: network, host files, catalogs, key, 100 MB print, loop",
     sandbox_code_escapes),
]

