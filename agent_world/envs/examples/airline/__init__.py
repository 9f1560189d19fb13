"""The `airline` example environment (Northwind Airlines reservations), in the toolkit form.

`load_example("airline")` and `agent-world env build agent_world/envs/examples/airline`
compile this folder into its EnvSpec. environment.py names the parts build_env reads;
reference.py and data.py make the seed data, schema.py the tables, tests.py the tool tests;
tools.py (reads), tools_bookings.py and tools_passengers.py (writes) hold the @tool functions
and helpers.py the helpers they share.
"""

