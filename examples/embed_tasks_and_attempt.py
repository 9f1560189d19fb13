"""Embedding: put the airline example in a catalog, synthesize tasks for it, and run the
offline baseline agent on one; prints the check result.

    AGENT_WORLD_HOME=/tmp/arena python examples/embed_tasks_and_attempt.py
"""

from agent_world import (
    BaselineChatModel,
    Catalog,
    Task,
    load_example,
    run_attempt,
    synthesize_tasks,
)

catalog = Catalog.open()  # $AGENT_WORLD_HOME (default ~/.agent_world)
try:
    spec = load_example("airline")
    catalog.put_env(spec)
    task_ids = synthesize_tasks(["airline"], per_env=2, seed=0)
    print(f"synthesized {len(task_ids)} task(s): {task_ids}")
    task = Task.model_validate(catalog.get_task(task_ids[0])["payload"])
finally:
    catalog.close()

print(f"task {task.id}: {task.instruction}")
trajectory = run_attempt(task, BaselineChatModel(seed=0), spec=spec)
print(f"calls: {[s.tool for s in trajectory.steps]}")
print(f"passed={trajectory.meta['passed']} reward={trajectory.reward:.2f} "
      f"check={trajectory.meta['check']}")
