"""Tool coverage: every source tool's arguments and outputs mapped to tables and columns,
stored in the mined spec for the tool designer; uncovered tools say what is missing."""

from __future__ import annotations

from agent_world.mining import coverage
from agent_world.mining.coverage import (
    coverage_line,
    field_hints_from_coverage,
    tool_coverage,
    uncovered_reasons,
)
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources import DATA_DIR, read_openapi, read_source
from agent_world.mining.sources.base import SourceDocument, ToolDescription
from agent_world.mining.sources.harvest_corpus import corpus_sources


def test_clinic_openapi_tools_map_to_tables_and_columns():
    doc = read_openapi(DATA_DIR / "clinic_booking_openapi.yaml")
    mined = mine_theme(doc, iterations=1, seed=0)
    cov = mined.spec.provenance.stats["tool_coverage"]
    assert cov["total"] == len(doc.tools) and cov["ratio"] >= 0.9
    book = cov["tools"]["bookAppointment"]
    assert book["table"] == "appointments" and book["covered"] and book["read_only"] is False
    assert book["arguments"]["patientId"] == {
        "role": "reference", "table": "patients", "column": "id",
        "via": "appointments.patient_id", "type": "integer", "required": True,
        "description": "References Patient.id"}  # the source's words, shown to the agent
    assert book["arguments"]["reason"]["table"] == "appointments"
    slots = cov["tools"]["listAvailableSlots"]
    assert slots["arguments"]["fromDate"]["role"] == "filter"
    assert slots["arguments"]["fromDate"]["column"] == "starts_at"
    # what the source declares about mapped columns is kept for the designer and the checks
    hints = mined.spec.provenance.stats["field_hints"]
    assert hints["clinicians"]["accepting_new_patients"]["type"] == "boolean"
    assert set(hints["appointments"]["visit_type"]["enum"]) >= {"new_patient", "follow_up"}
    assert coverage_line(cov).startswith(f"{cov['covered']}/{cov['total']} tools")


def test_uncovered_tool_names_what_the_database_lacks():
    doc = read_openapi(DATA_DIR / "clinic_booking_openapi.yaml")
    spec = mine_theme(doc, iterations=0, seed=0).spec
    odd = SourceDocument(name="x", kind="tool-list", reference="x", tools=[
        ToolDescription(name="calibrate_flux_capacitor", description="Tune it.",
                        input_schema={"type": "object", "properties": {
                            "gigawatts": {"type": "number"}}}),
        ToolDescription(name="get_patient", input_schema={"type": "object", "properties": {
            "patient_id": {"type": "integer"}, "limit": {"type": "integer"}}})])
    cov = tool_coverage(odd, spec)
    assert cov["covered"] == 1 and cov["total"] == 2
    assert cov["tools"]["get_patient"]["arguments"]["limit"]["role"] == "control"
    [(tool, lacks)] = uncovered_reasons(cov)
    assert tool == "calibrate_flux_capacitor"
    assert "gigawatts" in lacks
    assert field_hints_from_coverage(odd, cov) == {}


def test_a_long_description_is_cut_at_a_sentence_or_a_word():
    """fetch's description was cut mid-word at 300 characters ("let the user kno")."""
    sentences = "Fetches a URL and returns its text. " * 8 + "Now you can let the user know."
    cut = coverage._brief(sentences)
    assert len(cut) <= 300 and cut.endswith("its text.")
    words = coverage._brief("word " * 100)
    assert len(words) <= 301 and words.endswith("word…")
    assert coverage._brief("Short.") == "Short."


def test_a_date_argument_is_no_reference_the_tool_description_names():
    """pg_manage_users(username, validUntil): the tool "manages PostgreSQL users", but a
    password's expiry date names no user; the tool's own key is its username."""
    doc = SourceDocument(name="pg", kind="tool-list", reference="pg", tools=[
        ToolDescription(name="create_user", description="Create a PostgreSQL user.",
                        input_schema={"type": "object", "properties": {
                            "username": {"type": "string"}}, "required": ["username"]}),
        ToolDescription(name="pg_manage_users", description="Manage PostgreSQL users.",
                        input_schema={"type": "object", "properties": {
                            "username": {"type": "string", "description": "Username"},
                            "validUntil": {"type": "string", "description":
                                           "Password expiration date YYYY-MM-DD"}}})])
    spec = mine_theme(doc, iterations=0, seed=0).spec
    args = tool_coverage(doc, spec)["tools"]["pg_manage_users"]["arguments"]
    assert args["validUntil"].get("role") != "reference", args["validUntil"]


def test_a_return_value_wrapped_whole_is_no_field_of_the_record():
    """FastMCP wraps a plain return as {"result": "..."} (`x-fastmcp-wrap-result`): Airflow's
    variables, DAGs and pools and AWS IaC's templates had a column 'result' of success /
    failed values, asked as "Which result does the variable have?". A wrapped object's
    fields are still the record's."""
    wrapped = {"properties": {"result": {"type": "string"}}, "required": ["result"],
               "type": "object", "x-fastmcp-wrap-result": True}
    tool = ToolDescription(name="get_variable", output_schema=wrapped)
    assert coverage._output_fields(tool) == {}
    plain = {"properties": {"data": {"type": "string"}}, "type": "object"}
    assert coverage._output_fields(ToolDescription(name="get_x", output_schema=plain)) == {}
    fields = {"properties": {"result": {"type": "object", "properties": {
        "key": {"type": "string"}, "value": {"type": "string"}}}}, "type": "object",
        "x-fastmcp-wrap-result": True}
    assert set(coverage._output_fields(ToolDescription(name="get_y", output_schema=fields))) \
        == {"key", "value"}
    ref = next(r for r in corpus_sources() if r.name == "airflow")
    spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    assert not [t.name for t in spec.tables if any(c.name == "result" for c in t.columns)]
