"""Embedding: open an episode of the bundled airline environment, call tools, read the diff.

    python examples/embed_episode.py
"""

from agent_world import EnvRuntime, load_example

spec = load_example("airline")
with EnvRuntime() as runtime, runtime.open(spec, seed=0) as episode:
    print(f"environment {spec.name}: {len(spec.tools)} tools")
    for tool, arguments in [
        ("get_reservation", {"reservation_id": "MGX7Q2"}),
        ("add_baggage", {"reservation_id": "MGX7Q2", "passenger_id": 2, "bags": 1,
                         "payment_method_id": "pm_sf47agza"}),
        ("cancel_reservation", {"reservation_id": "NOPE00", "reason": "typo"}),
    ]:
        obs = episode.step(tool, arguments)
        print(f"{tool}: {'ok' if obs.ok else 'refused'} | {obs.to_text()[:100]}")
    print("changed rows:", episode.diff().counts())
