"""A graph on a running LangGraph server, used like a local one through `RemoteGraph`.

    langgraph dev --no-browser           # in the project folder: serves every graph
    python examples/remote_graph.py [URL] # default http://127.0.0.1:2024

Streams the `synthesizer` agent's steps on a new thread (candidate tasks for the bundled
airline environment and their trust gates), then reads the thread's persisted state, then uses
the same remote graph as a node of a local graph.
"""

import sys

from langgraph.graph import START, StateGraph
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_sync_client
from typing_extensions import TypedDict

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:2024"
remote = RemoteGraph("synthesizer", url=url)
thread = get_sync_client(url=url).threads.create()
config = {"configurable": {"thread_id": thread["thread_id"]}}

for update in remote.stream({"env": "airline", "count": 2, "level": 2}, config,
                            stream_mode="updates"):
    for node, values in update.items():
        print(f"{node}: {len(values.get('candidates', []))} candidate(s)")

state = remote.get_state(config)  # persisted on the server's thread
for c in state.values["candidates"]:
    gates = ", ".join(f"{g['name']}={'ok' if g['passed'] else 'failed'}" for g in c["gates"])
    print(f"{c['id']} level {c['level']}: {c['instruction'][:70]}... [{gates}]")


class Local(TypedDict, total=False):
    env: str
    count: int
    candidates: list


app = StateGraph(Local).add_node("synthesizer", remote).add_edge(START, "synthesizer").compile()
out = app.invoke({"env": "ecommerce", "count": 1})
print(f"local graph, remote node: {len(out['candidates'])} candidate(s) for ecommerce")
