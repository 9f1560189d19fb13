"""Prompts of the deep-research miner (kept apart from its code). User prompts are templates
filled with `str.format`; literal JSON braces are doubled."""

SCHEMA_RULES = (
    "Rules: snake_case identifiers; table names plural; every table has a primary key (prefer "
    "an integer column 'id'); foreign_key is 'table.column' naming an existing table; column "
    "types are integer, real, text, boolean, date (YYYY-MM-DD), datetime (YYYY-MM-DDTHH:MM:SS) "
    "or json; 'enum' lists the allowed values of a status-like column (a CHECK); use "
    "nullable=false, unique and unique_together where the domain requires them. Rows must "
    "satisfy every constraint, and foreign keys must point at rows that exist."
)

PLAN_SYSTEM = ("You are a deep-research agent preparing to model a tool ecosystem as a "
               "relational database. Plan research questions.")

PLAN_USER = ("Source '{name}' ({kind}):\n{brief}\n\nList 6-15 research "
             "questions: which entities exist, their attributes and identifiers, how they "
             "relate (one-to-many, many-to-many), which states/lifecycles they go through, "
             'realistic volumes and edge cases. Answer as JSON {{"questions": [...]}}.')

DRAFT_SYSTEM = ("You are a database architect. From research evidence about a tool ecosystem, "
                "design the relational database its tools would operate on, with realistic "
                "seed rows. " + SCHEMA_RULES)

DRAFT_USER = ("Source '{name}' ({kind}):\n{brief}\n\nResearch questions:\n{questions}"
              "\n\nEvidence:\n{evidence}\n\n"
              "Answer with JSON {{\"tables\": [TableSpec...], \"rows\": [{{\"table\": ..., "
              "\"columns\": [...], \"values\": [[...], ...]}}], \"notes\": \"...\"}}. "
              "A TableSpec is {{name, description, columns: [{{name, type, primary_key, "
              "nullable, unique, foreign_key, enum, description}}], unique_together}}. Give 3-8 "
              "tables and a few realistic rows per table.")

COMPLEXIFY_SYSTEM = (
    "You are a database architect making an environment database more realistic and "
    "harder: add the tables, columns and relations that the source's tools and "
    "entities imply and the database still lacks (no generic users/tags/notes "
    "tables the source does not speak of), skewed data and edge cases (NULLs, "
    "duplicate names with different ids, terminal states the source names, boundary "
    "dates) that keep every row consistent: foreign-key routes agree, timestamps "
    "follow each record's lifecycle, values stay within declared enums and types. "
    "Never remove or rename anything. " + SCHEMA_RULES)

COMPLEXIFY_USER = (
    "Theme: {theme} - {description}\nIteration {iteration}.\n"
    "Current tables:\n{tables}\n"
    "Row counts: {counts}\n"
    "Sample rows: {samples}\n"
    "{gaps}\n"
    "Answer with JSON {{\"summary\", \"new_tables\": [TableSpec...], \"new_columns\": "
    "[{{\"table\", \"column\": ColumnSpec}}], \"widen_enums\": [{{\"table\", \"column\", "
    "\"add_values\"}}], \"new_rows\": [{{\"table\", \"columns\", \"values\"}}]}}. New "
    "columns on existing tables must be nullable or have a default. Add at least one "
    "table with a foreign key.")
