"""Sources of the bundled example environments (see scripts/build_examples.py).

`<name>_tools.py` holds the tool functions as plain, lintable Python; `<name>.py` holds the
schema, the seed-data generator, the tool metadata and the tool tests.
"""
