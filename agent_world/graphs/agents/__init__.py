"""Each agent as its own LangGraph graph (listed in `langgraph.json`): miner, tool designer,
synthesizer, verifier, diagnoser. They run one agent alone on one input so LangGraph Studio
shows its steps; the pipeline graphs (`mine`, `build`, `synthesize`, `evaluate`, `evolve`)
call the same agent code. Each module has the template's parts: a context (Studio's
configuration: `home`, `model`, sizes), input/output/state schemas, nodes, `build_graph()` and
`graph` (compiled without a checkpointer, for the server). Each agent's prompts live in its
stage's `*_prompts` module (`mining.miner_prompts`, `design.designer_prompts`,
`synthesis.synthesizer_prompts`, `evolution.diagnosis_prompts`)."""
