"""Source documents mirroring real servers (time, git, a clinic OpenAPI, a PRD, fetch, a
calendar, offices), for the miner's tests."""

from __future__ import annotations

from typing import Any

from agent_world.mining.sources.base import EntityHint, SourceDocument, ToolDescription

# ---------------------------------------------------------------------------------------------
# Source documents mirroring real servers
# ---------------------------------------------------------------------------------------------


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


_TZ = ("IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'UTC' as local "
       "timezone if no timezone provided by the user.")
_OPT = {"anyOf": [{"type": "string"}, {"type": "null"}]}


def time_doc(name: str = "time") -> SourceDocument:
    """The tools of the MCP reference time server (mcp-server-time)."""
    return SourceDocument(
        name=name, kind="mcp", reference="uvx mcp-server-time", title="mcp-time",
        description="Time and timezone conversion capabilities",
        tools=[
            ToolDescription(name="get_current_time", read_only=True,
                            description="Get current time in a specific timezone",
                            input_schema=_obj({"timezone": {"type": "string", "description": _TZ}},
                                              ("timezone",))),
            ToolDescription(name="convert_time", read_only=True,
                            description="Convert time between timezones",
                            input_schema=_obj({
                                "source_timezone": {"type": "string", "description": "Source " + _TZ},
                                "time": {"type": "string",
                                         "description": "Time to convert in 24-hour format (HH:MM)"},
                                "target_timezone": {"type": "string", "description": "Target " + _TZ},
                            }, ("source_timezone", "time", "target_timezone"))),
        ])


def git_doc() -> SourceDocument:
    """The tools of the MCP reference git server (mcp-server-git)."""
    rp = {"repo_path": {"type": "string", "title": "Repo Path"}}
    ctx = {"context_lines": {"type": "integer", "default": 3}}

    def tool(name: str, desc: str, props: dict, req: tuple, ro: bool) -> ToolDescription:
        return ToolDescription(name=name, description=desc, read_only=ro,
                               input_schema=_obj({**rp, **props}, ("repo_path", *req)))

    return SourceDocument(name="git", kind="mcp", reference="uvx mcp-server-git",
                          title="mcp-git", tools=[
        tool("git_status", "Shows the working tree status", {}, (), True),
        tool("git_diff_unstaged", "Shows changes in the working directory that are not yet "
             "staged", ctx, (), True),
        tool("git_diff_staged", "Shows changes that are staged for commit", ctx, (), True),
        tool("git_diff", "Shows differences between branches or commits",
             {"target": {"type": "string"}, **ctx}, ("target",), True),
        tool("git_commit", "Records changes to the repository", {"message": {"type": "string"}},
             ("message",), False),
        tool("git_add", "Adds file contents to the staging area",
             {"files": {"type": "array", "items": {"type": "string"}}}, ("files",), False),
        tool("git_reset", "Unstages all staged changes", {}, (), False),
        tool("git_log", "Shows the commit logs",
             {"max_count": {"type": "integer", "default": 10},
              "start_timestamp": {**_OPT, "description": "Start timestamp for filtering commits. "
                                  "Accepts: ISO 8601 format (e.g., '2024-01-15T14:30:25')"},
              "end_timestamp": _OPT}, (), True),
        tool("git_create_branch", "Creates a new branch from an optional base branch",
             {"branch_name": {"type": "string"}, "base_branch": _OPT}, ("branch_name",), False),
        tool("git_checkout", "Switches branches", {"branch_name": {"type": "string"}},
             ("branch_name",), False),
        tool("git_show", "Shows the contents of a commit", {"revision": {"type": "string"}},
             ("revision",), True),
        tool("git_branch", "List Git branches", {
            "branch_type": {"type": "string", "description": "Whether to list local branches "
                            "('local'), remote branches ('remote') or all branches('all')."},
            "contains": {**_OPT, "description": "The commit sha that branch should contain. Do "
                         "not pass anything to this param if no commit sha is specified"},
            "not_contains": {**_OPT, "description": "The commit sha that branch should NOT "
                             "contain."}}, ("branch_type",), True),
    ])


def clinic_doc() -> SourceDocument:
    """An OpenAPI-like clinic service: operations + component schemas."""
    T = ToolDescription
    return SourceDocument(
        name="clinic", kind="openapi", reference="specs/clinic.yaml", title="Clinic API",
        description="Book and manage patient appointments with doctors",
        tools=[
            T(name="listPatients", description="List patients", read_only=True,
              input_schema=_obj({"limit": {"type": "integer"}})),
            T(name="createPatient", description="Register a patient", read_only=False,
              input_schema=_obj({"body": {"type": "object", "required": ["first_name", "last_name"],
                                          "properties": {
                                              "first_name": {"type": "string"},
                                              "last_name": {"type": "string"},
                                              "email": {"type": "string", "format": "email"},
                                              "phone": {"type": "string"},
                                              "date_of_birth": {"type": "string", "format": "date"}}}})),
            T(name="listDoctors", description="List doctors, optionally by specialty",
              read_only=True, input_schema=_obj({"specialty": {"type": "string"}})),
            T(name="createAppointment", description="Book an appointment", read_only=False,
              input_schema=_obj({"patient_id": {"type": "integer"}, "doctor_id": {"type": "integer"},
                                 "start_time": {"type": "string", "format": "date-time"},
                                 "end_time": {"type": "string", "format": "date-time"},
                                 "reason": {"type": "string"}},
                                ("patient_id", "doctor_id", "start_time"))),
            T(name="cancelAppointment", description="Cancel an appointment", read_only=False,
              input_schema=_obj({"appointment_id": {"type": "integer"}}, ("appointment_id",))),
            T(name="listAppointments", description="List appointments", read_only=True,
              input_schema=_obj({"doctor_id": {"type": "integer"},
                                 "status": {"type": "string", "enum": [
                                     "scheduled", "confirmed", "completed", "cancelled"]}})),
        ],
        entities=[
            EntityHint(name="Patient", fields=["id", "first_name", "last_name", "email", "phone",
                                               "date_of_birth"]),
            EntityHint(name="Doctor", fields=["id", "name", "specialty", "email"]),
            EntityHint(name="Appointment", fields=["id", "patient_id", "doctor_id", "start_time",
                                                   "end_time", "status", "reason"]),
        ])


def prd_doc() -> SourceDocument:
    """A Markdown product requirements document: features + entities."""
    return SourceDocument(
        name="team-tasks", kind="prd", reference="docs/tasks_prd.md", title="Team task tracker",
        description="A lightweight task tracker for small teams",
        features=["Users create projects and invite members to them.",
                  "Tasks belong to a project and can be assigned to a user.",
                  "Tasks move through todo, in progress, review and done.",
                  "Users can comment on tasks and attach files.",
                  "Each task has a due date and a priority."],
        entities=[EntityHint(name="users", fields=["name", "email"]),
                  EntityHint(name="projects", fields=["name", "description", "owner_id"]),
                  EntityHint(name="tasks", fields=["title", "status", "due_date", "priority",
                                                   "project_id", "assignee_id"])])


def fetch_doc() -> SourceDocument:
    """A single-tool server (mcp-server-fetch): the smallest reasonable source."""
    return SourceDocument(name="fetch", kind="mcp", reference="uvx mcp-server-fetch", tools=[
        ToolDescription(name="fetch", description="Fetches a URL from the internet and "
                        "optionally extracts its contents as markdown.",
                        input_schema=_obj({"url": {"type": "string", "format": "uri"},
                                           "max_length": {"type": "integer"},
                                           "start_index": {"type": "integer"},
                                           "raw": {"type": "boolean"}}, ("url",)))])


def calendar_doc() -> SourceDocument:
    return SourceDocument(name="calendar", kind="tool-list", reference="calendar_tools.json",
                          tools=[
        ToolDescription(name="create_event", description="Create an event in a calendar",
                        input_schema=_obj({
                            "calendar_id": {"type": "string"}, "title": {"type": "string"},
                            "start": {"type": "string", "format": "date-time"},
                            "end": {"type": "string", "format": "date-time"},
                            "attendees": {"type": "array",
                                          "items": {"type": "string", "format": "email"}}},
                            ("calendar_id", "title", "start", "end"))),
        ToolDescription(name="list_calendars", description="List calendars", read_only=True,
                        input_schema=_obj({}))])


def offices_doc() -> SourceDocument:
    """People reference the central table (employees.office_id): ownership FKs added by
    complexification must not close a cycle; team.lead_id is a person role."""
    return SourceDocument(
        name="offices", kind="prd", reference="offices.md",
        entities=[EntityHint(name="Office", fields=["name", "address"]),
                  EntityHint(name="Employee", fields=["full_name", "email", "office_id",
                                                      "manager_id"]),
                  EntityHint(name="Team", fields=["name", "office_id", "lead_id"]),
                  EntityHint(name="Error", fields=["code", "message"])])


DOCS = {"time": time_doc, "git": git_doc, "clinic": clinic_doc, "prd": prd_doc,
        "fetch": fetch_doc, "calendar": calendar_doc, "offices": offices_doc}
