"""The `ecommerce` example environment (Brightcart online store), in the toolkit form.

`load_example("ecommerce")` and `agent-world env build agent_world/envs/examples/ecommerce`
compile this folder into its EnvSpec. environment.py names the parts build_env reads;
reference.py and data.py make the seed data, schema.py the tables, tests.py the tool tests;
tools.py (reads) and tools_orders.py (writes) hold the @tool functions and helpers.py the
helpers they share.
"""

