"""Prompts of the tool designer (LLM path)."""

SYSTEM = """You design the tools of a simulated software environment backed by a SQLite
database, and unit tests for them. Write one Python module in the toolkit form:

    from typing import Annotated, Literal
    from pydantic import Field
    from agent_world.envs.toolkit import Ctx, ToolError, tool

    def _loan(ctx, loan_id):                     # helpers: plain module functions
        row = ctx.one('SELECT * FROM "loans" WHERE "id" = ?', (loan_id,))
        if row is None:
            raise ToolError(f"No loan with id {loan_id}.")
        return row

    @tool(write=True)
    def renew_loan(ctx: Ctx, loan_id: int, days: Annotated[int, Field(ge=1, le=28)] = 14) -> dict:
        '''Renew a loan by some days; refused when the loan is already returned.

        Args:
            loan_id: Id of the loan.
            days: Days to add.
        '''

Rules: every tool is a typed function whose first parameter is `ctx` (ctx.query(sql, params)
-> list of dicts, ctx.one(sql, params) -> dict or None, ctx.execute(sql, params) -> cursor,
ctx.now() -> ISO time, ctx.today(), ctx.new_id(prefix)); tag it @tool (read) or
@tool(write=True) (changes the database); document it with a docstring and an Args: section;
refuse invalid requests with `raise ToolError("...")` naming the rule (an unknown id names the
kind of record: "No loan with id 7."); import only the standard
library; never use the clock or randomness except through ctx. Read tools must not write.
Audit logs (`<entity>_history` tables of field_name/old_value/new_value) are written by the
engine on every change of their records: tools do not write them and tests need not list them.

Tests: each is {"name", "tool", "arguments", "expect"}; expect has `ok` (false for a refusal),
`error_kind` ("tool_error" for refusals), `error_contains` (words the refusal's message
holds), `equals` (the whole result), `contains` (keys of a
dict result), `pluck` + `equals` (compare [item[pluck] for item in result] to equals),
`changes` (the exact database change: [{"table", "op": "insert"|"update"|"delete", "count",
"key": {...}, "values": {...}}], [] for none). Derive every expected value from the seed rows
shown to you, never from what you think your code returns. Every tool needs at least two tests,
including a refusal; write tools need a test with `changes`. The clock starts at {clock}."""

DESIGN = """Environment: {name} — {theme}
{description}

Tables (columns: type, flags):
{schema}

Seed rows (first rows of each table):
{rows}

Source tools to implement, each with the exact signature shown and the behaviour contract
under it (derived from the source: the entity, the verb, every table and column it changes and
how, including the coupled rows, what it refuses and what it returns). The tests of these
tools are written from the contracts, not from your code: a tool that changes other rows, skips
a coupled change or returns something else is rejected, and so is one whose code never reads
an argument it requires (find the record by every argument that names it).

{coverage}

Write about {count} tools: every source tool above, then lookups, filters, aggregates and
state-changing actions the scenario needs (at least 30 % write tools). Write tests only for
the tools you add; the source tools already have theirs."""

RETRY = """That answer could not be used: {error}
Answer again with the whole module and all tests, fixing this."""

REPAIR = """The tool `{tool}` failed cross-validation: {error}

Its behaviour contract:
{contract}

Its current code:
{source}

Its tests:
{tests}

Rewrite the function `{tool}` (and any helper it needs) so it compiles and meets its tests.
Answer with the Python source of the function and its helpers only."""
