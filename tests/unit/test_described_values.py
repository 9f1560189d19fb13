"""Values a source describes: a column whose name does not tell its kind takes the examples,
choices and file types its source gives, not a random dictionary word."""

from __future__ import annotations

import csv
import io
import random
import re

import pytest

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.described_values import (
    described_choices,
    described_examples,
    described_file_types,
    described_value,
    like,
)
from agent_world.mining.offline.markup_values import markup_kind
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources


@pytest.mark.parametrize("text, examples", [
    ("e.g. 'A1:D20'. Default: the used range.", ["A1:D20"]),
    ("Font family (e.g., 'Helvetica', 'Times New Roman')", ["Helvetica", "Times New Roman"]),
    ("Font size in points (e.g., 14, 36)", ["14", "36"]),
    ("Exchange ID (e.g., binance, coinbase)", ["binance", "coinbase"]),
    # prose after a lead word is no example
    ("Search applications by name, like the name shown in the UI", []),
    ("The name of the table", []),
    # quoted values shaped like data are examples without a lead word; quoted words are not
    ("Range with sheet, 'Data!$B$2:$B$100', or a constant, '0.075'.",
     ["Data!$B$2:$B$100", "0.075"]),
    ("The sort order, 'asc' or 'desc'.", []),
])
def test_examples_are_read_from_descriptions(text, examples):
    assert described_examples(text) == examples


def test_choices_are_read_and_drawn():
    text = "Privacy setting of the project. Can be: public_to_workspace, private_to_team, private"
    assert described_choices(text) == ["public_to_workspace", "private_to_team", "private"]
    assert described_choices('Valid values: "pod", "node", "container". Else') == \
        ["pod", "node", "container"]
    rng = random.Random(0)
    assert {described_value(text, rng) for _ in range(50)} == \
        {"public_to_workspace", "private_to_team", "private"}


def test_a_structured_example_gives_values_of_its_shape():
    rng = random.Random(1)
    ranges = {like("A1:D20", rng) for _ in range(30)}
    assert len(ranges) > 20 and all(re.fullmatch(r"[A-Z]\d+:[A-Z]\d+", v) for v in ranges)
    # a range stays one: as tall and wide as the example, its sheet kept
    for v in ranges | {like("Data!B2:F2", rng) for _ in range(10)}:
        (c1, r1, c2, r2), = re.findall(r"([A-Z])(\d+):([A-Z])(\d+)", v)
        assert int(r2) >= int(r1) and c2 >= c1, v
    keys = {like("PROJ-123", rng) for _ in range(30)}
    assert all(re.fullmatch(r"PROJ-[1-9]\d\d", k) for k in keys) and len(keys) > 10
    sizes = {described_value("Font size in points (e.g., 14, 36)", rng, integer=True)
             for _ in range(40)}
    assert sizes <= set(range(14, 37)) and len(sizes) > 5


def test_an_endpoint_example_is_kept_with_its_placeholders_filled():
    text = ('The Jira API endpoint path. Examples: "/rest/api/3/project", '
            '"/rest/api/3/issue/{issueIdOrKey}"')
    values = {described_value(text, random.Random(i)) for i in range(20)}
    assert "/rest/api/3/project" in values
    assert all(re.fullmatch(r"/rest/api/3/(project|issue/\d+)", v) for v in values), values


def test_file_types_are_the_documents_a_source_names():
    assert described_file_types("Work with Excel workbooks (.xlsx, .xlsm). Save as .xlsx.") == \
        ["xlsx", "xlsm"]
    # an API's payload format is not what its users keep as files
    assert described_file_types("Returns the response as .json") == []


@pytest.mark.parametrize("name, type_, kind", [
    ("font_size", "integer", "font_size"), ("font_name", "text", "font_name"),
    ("message_id", "text", "text_id"), ("start_date", "text", "text_date"),
    ("sheet", "text", "sheet_name"), ("used_range", "text", "cell_ref"),
    ("password", "text", "password"), ("query", "text", "search_terms"),
    ("opt_fields", "text", "field_list"), ("limit", "integer", "page_size"),
    ("directory", "text", "dir_path"), ("script_name", "text", "slug_name"),
    ("cell", "text", "cell"), ("target_cell", "text", "cell"), ("cells", "text", "cell_ref"),
    ("width", "integer", "pixels"), ("viewport_height", "integer", "pixels"),
    ("line_width", "integer", "count"), ("year", "text", "year_text"),
])
def test_kinds_the_corpus_names_most(name, type_, kind):
    assert column_semantic("items", ColumnSpec(name=name, type=type_)) == kind


def test_rows_take_the_sources_examples_and_file_types():
    table = TableSpec(name="ranges", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="path", type="text", nullable=False),
        ColumnSpec(name="range", type="text", nullable=False, description="e.g. 'A1:D20'."),
        ColumnSpec(name="view", type="text", nullable=False,
                   description="One of: normal, page_layout"),
        ColumnSpec(name="sort_range", type="text", nullable=False)])
    f = RowFactory([table], None, seed=0, file_types=["xlsx"])
    rows = [f.make("ranges") for _ in range(20)]
    assert all(r["path"].endswith(".xlsx") and r["path"].startswith("/") for r in rows)
    assert all(re.fullmatch(r"[A-Z]\d+:[A-Z]\d+", r["range"]) for r in rows)
    assert {r["view"] for r in rows} <= {"normal", "page_layout"}
    # undescribed, a spreadsheet service's range is still an A1 range
    assert all(re.fullmatch(r"[A-Z]\d+:[A-Z]\d+", r["sort_range"]) for r in rows)


def test_a_window_is_sized_in_pixels():
    """A browser's resize_page(width, height) took 3 x 8: a page is 1280 wide, 720 high."""
    table = TableSpec(name="pages", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="width", type="integer"), ColumnSpec(name="height", type="integer")])
    f = RowFactory([table], None, seed=0)
    rows = [f.make("pages") for _ in range(20)]
    assert all(320 <= r["width"] <= 3840 and 240 <= r["height"] <= 2160 for r in rows), rows
    # a year kept as text, described by examples ("2025", "2024"), is a year
    years = TableSpec(name="videos", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="year", type="text", description='WWDC year ("2025", "2024", etc.)')])
    f = RowFactory([years], None, seed=0)
    assert all(2015 <= int(f.make("videos")["year"]) <= 2026 for _ in range(20))


def test_a_path_its_source_calls_a_directory_is_one():
    """claude-context's index_codebase(path) got '/home/.../sales.mp4' to index as a codebase:
    "ABSOLUTE path to the codebase directory to index" is a folder."""
    said = ColumnSpec(name="path", type="text",
                      description="ABSOLUTE path to the codebase directory to index.")
    assert column_semantic("codebases", said) == "dir_path"
    in_dir = ColumnSpec(name="path", type="text", description="Path to a file in the directory")
    assert column_semantic("files", in_dir) == "file_path"


def test_a_mined_spreadsheet_server_reads_like_one():
    """The shipped Excel server, mined offline: its workbooks are .xlsx/.xlsm files, its
    ranges A1 references, its sheets named as spreadsheets name them."""
    ref = next(r for r in corpus_sources() if r.name == "excel")
    spec = mine_theme(read_source(ref.spec), iterations=1, seed=0).spec
    paths = [r["path"] for r in spec.rows["workbooks"] if r.get("path")]
    assert paths and all(p.endswith((".xlsx", ".xlsm")) for p in paths)
    ranges = [r["range"] for r in spec.rows.get("csvs", []) if r.get("range")]
    assert ranges and all(re.fullmatch(r"[A-Z]+\d+:[A-Z]+\d+", v) for v in ranges)
    sheets = [r["sheet"] for r in spec.rows.get("csvs", []) if r.get("sheet")]
    assert sheets and all(" " not in s or s == "Raw data" for s in sheets)


def test_a_column_said_to_hold_a_document_holds_one_of_that_format():
    """draw.io's open_drawio_csv(content: "The CSV content following draw.io's CSV import
    format") had kept 'Looks good to me, approved.' as the CSV of a diagram; Hostinger's
    compose content and Kubernetes' manifests were chat messages too."""
    assert markup_kind({"content"}, "the csv content following draw.io's csv import format") \
        == "csv_text"
    assert markup_kind({"csv", "path"}, ".csv or .tsv file") is None  # where it is: a path
    expected = {"drawio": ("drawio_csvs", "content", "name,role,manager\n"),
                "hostinger": ("projects", "content", "services:\n"),
                "kubernetes": ("kubectl_applies", "manifest", "apiVersion: "),
                "aws-iac": ("cloudformation_templates", "template_content",
                            "AWSTemplateFormatVersion: ")}
    # draw.io's Mermaid and XML diagrams, CloudBase's class diagrams and Rego policies had been
    # chat messages too ("open the draw.io editor with a diagram generated from Mermaid.js
    # syntax with the content 'The budget is ready for review.'")
    more = {("drawio", "drawio_mermaids", "content"): "graph TD; ",
            ("drawio", "drawios", "content"): "<mxGraphModel>",
            ("cloudbase", "data_models", "mermaid_diagram"): "classDiagram\n",
            ("cloudbase", "permissions", "rego_content"): "package authz.user\n"}
    for server, (table, column, start) in expected.items():
        ref = next(r for r in corpus_sources() if r.name == server)
        spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
        held = [row[column] for row in spec.rows[table] if row.get(column) is not None]
        assert held and all(v.startswith(start) for v in held), (server, held[:2])
        if server == "drawio":
            assert all(len(r) == 3 for v in held for r in csv.reader(io.StringIO(v)))
    specs = {server: mine_theme(read_source(next(r for r in corpus_sources()
                                                 if r.name == server).spec),
                                iterations=0, seed=0).spec for server in ("drawio", "cloudbase")}
    for (server, table, column), start in more.items():
        held = [row[column] for row in specs[server].rows[table] if row.get(column) is not None]
        assert held and all(v.startswith(start) for v in held), (server, column, held[:2])


@pytest.mark.parametrize("text, family", [
    ("Provider namespace (e.g. 'hashicorp')", "hashicorp"),
    ("Trading pair symbol (e.g., BTC/USDT)", "BTC/USDT"),
    ("IATA code of departure airport (e.g., 'LHR')", "LHR"),
    ("Environment name (e.g., production)", "production"),
])
def test_a_lone_example_of_a_known_family_stands_for_the_family(text, family):
    # one example copied into every row made a column of one value: every Terraform provider
    # in 'hashicorp', every ticker 'BTC/USDT'; a filter on it matched every record
    rng = random.Random(3)
    values = [described_value(text, rng) for _ in range(40)]
    assert family in values
    assert len(set(values)) >= 4
    assert {described_value("Provider namespace (e.g. 'acme-internal')", rng)
            for _ in range(10)} == {"acme-internal"}  # outside every family: as given


@pytest.mark.parametrize("text", [
    # a quote closing one long example and opening the next
    'Question about the code. Good example: "Where does auth get handled, what are the '
    'different oauth methods supported?", "Trace all code that relates',
    # a code name in backticks is no example
    "The SKU for the hardware. Possible values can be retrieved from the `hardware.list` "
    "endpoint.",
    # a description cut off mid-word
    "HTML content. Inline CSS styles are also supported (e.g., font-",
])
def test_fragments_of_a_description_are_no_examples(text):
    assert described_examples(text) == []


def test_a_hyphenated_like_leads_no_example():
    said = ("Can be used to list objects in a directory-like structure. For example, using a "
            "delimiter of '/' will return")
    assert described_examples(said) == ["/"]


def test_a_path_is_of_the_place_its_source_says():
    """Dokploy's build paths "within repository" and routing paths, and Roblox's decal "image
    file on disk (PNG, JPG, BMP, or TGA)", had all been desktop documents
    ('/Users/danny/Projects/contract-2022.gif')."""
    table = TableSpec(name="applications", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="build_path", type="text", description="Build path within repository."),
        ColumnSpec(name="internal_path", type="text",
                   description="Internal path for routing within the container/service."),
        ColumnSpec(name="watch_paths", type="text",
                   description="Array of paths to watch for changes."),
        ColumnSpec(name="image_path", type="text",
                   description="Absolute path to the image file on disk (PNG, JPG, BMP, or TGA)")])
    assert [column_semantic("applications", c) for c in table.columns[1:4]] == \
        ["repo_dir", "route_path", "watch_glob"]
    f = RowFactory([table], None, seed=0, file_types=["docx"])
    rows = [f.make("applications") for _ in range(20)]
    builds = [r["build_path"] for r in rows if r["build_path"] is not None]  # nullable
    assert builds and all(not p.startswith("/") and "." not in p.strip(".") for p in builds)
    routes = [r["internal_path"] for r in rows if r["internal_path"] is not None]
    assert routes and all(p.startswith("/") and "." not in p for p in routes)
    images = [r["image_path"] for r in rows if r["image_path"]]
    assert images and all(p.rsplit(".", 1)[1] in ("png", "jpg") for p in images)
    assert len({r["build_path"] for r in rows}) > 3


@pytest.mark.parametrize("name, said, kind", [
    ("code", "Luau code to execute", "lua_code"),  # Roblox Studio's had been 'ZX-3460'
    ("content", "Code Snippet", "code_snippet"),  # code-runner's, a chat message
    ("content", "JavaScript code to execute in the browser", "js_expression"),  # Selenium's
    ("init_script", "A JavaScript script to be executed on each new document", "js_expression"),
    ("content", "The message to post", "sentence"),
    ("content", "The Mermaid.js diagram definition", "mermaid"),
])
def test_a_program_column_holds_a_program_in_its_language(name, said, kind):
    col = ColumnSpec(name=name, type="text", description=said)
    assert column_semantic("posts", col) == kind


def test_a_heading_is_a_title_not_a_message():
    """Word's add_heading(filename, text) headed documents 'Looks good to me, approved.'."""
    assert column_semantic("headings", ColumnSpec(name="text", type="text")) == "title"
    assert column_semantic("paragraphs", ColumnSpec(name="text", type="text")) == "sentence"


def test_a_project_root_is_a_directory_and_a_webpage_path_a_route():
    """TestSprite's projectPath ("Absolute path of current project root") had been
    '/Users/stephen/HR/release-notes-v4.flac'."""
    root = ColumnSpec(name="project_path", type="text",
                      description="Absolute path of current project root")
    assert column_semantic("test_plans", root) == "dir_path"
    page = ColumnSpec(name="pathname", type="text",
                      description="Webpage path (without domain).")
    assert column_semantic("bootstraps", page) == "route_path"
