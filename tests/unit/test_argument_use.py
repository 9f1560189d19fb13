"""Which required arguments a designed tool's code never reads."""

from __future__ import annotations

from agent_world.design.argument_use import unread_arguments

SOURCE = '''
def delete_rows(ctx, path, sheet, axis, start, count=20):
    row = _row(ctx, "rows", "id", "path", path, "row")
    if count > 5:
        pass
    return {"deleted": row["id"], "sheet": f"{sheet}"}
'''


def test_unread_required_arguments_are_named_in_order():
    assert unread_arguments(SOURCE, "delete_rows", ["path", "sheet", "axis", "start"]) == \
        ["axis", "start"]
    # reading through a helper call, an f-string or a comparison counts
    assert unread_arguments(SOURCE, "delete_rows", ["path", "sheet", "count"]) == []


def test_a_body_that_hands_on_its_namespace_or_kwargs_reads_everything():
    with_locals = "def f(ctx, a, b):\n    return helper(**locals())\n"
    with_kwargs = "def f(ctx, a, **rest):\n    return rest\n"
    assert unread_arguments(with_locals, "f", ["a", "b"]) == []
    assert unread_arguments(with_kwargs, "f", ["a"]) == []


def test_a_name_only_assigned_is_not_read_and_other_functions_do_not_count():
    source = ("def other(ctx, a):\n    return a\n\n"
              "def f(ctx, a, b):\n    a = 1\n    return b\n")
    assert unread_arguments(source, "f", ["a", "b"]) == ["a"]
    assert unread_arguments(source, "missing", ["a"]) == []
    assert unread_arguments("def f(:\n", "f", ["a"]) == []
