"""The miner's offline strategy: evidence-driven schema derivation and seeded data generation.

No LLM and no network: everything is derived from what the source document says (tool names,
argument schemas and descriptions, features, entity hints) plus optional web-search snippets.
The same functions serve the LLM path for filling volumes (see `RowFactory`).

Algorithm
=========

1. **Evidence** (`collect_evidence`). One record per tool (name, read-only flag, argument list),
   per tool argument (JSON type and format seen through anyOf/nullable, enum — from the schema,
   or from quoted lower-case values in the description unless they are examples ("e.g.") —,
   required flag, item schema; request-body objects are flattened), per feature sentence, per
   entity hint, plus up to 3 web snippets per question from `search(question)` when configured
   (a failing search is recorded, not raised). Each record is linked to the research question
   it shares most words with.

2. **Entities** (`derive_model`), singular snake_case names; tables are their plurals:
   a. entity hints (PRD entities, OpenAPI components) give entities and fields directly
      (request/response/error schemas such as ``AppointmentRequest`` or ``Error`` are skipped);
      a PRD without hints is mined sentence by sentence: known nouns (order, project, ...),
      objects of verbs ("upload models" -> model) and the person subject that owns them;
   b. a tool name is split (snake/camel/REST path) into an optional verb, an object phrase and
      a context after a qualifier (``list_appointments_by_doctor``): the namespace prefix shared
      by the tools (``git_``) is dropped, modifiers (``current``, ``staged``) and id words are
      removed; phrasal verbs (``checkInAppointment``) are kept whole; trailing *value nouns*
      (time, status, diff, log, balance, ...) are no entity; a noun-verb alone (``git_commit``,
      ``transfer``) is one; a compound is resolved against known entities
      (``listPatientAppointments`` -> appointment in the context of a patient, ``retire_copy``
      -> an unlisted verb on copy, ``suspend_member_account`` -> member); an argument-less
      read of an unknown noun (``search_catalogue``, ``read_graph``) is a view, not an entity;
   c. identifier-like arguments name entities: ``X_id`` always, ``X_path``/``X_name``/``X_key``/
      ``X_code``/``X_slug`` when X is a known entity or alias (``repo_path`` -> repository,
      ``revision`` -> commit.sha), a known entity after a role prefix (``captain_employee_id``,
      ``source_timezone``), reference nouns (timezone, currency, country, language), person
      roles (``assignee_id``, ``owner_id``, ``lead_id`` -> the person entity), and descriptions
      that say ``"<entity> sha|id|name|..."``.
3. **Primary entity of a tool**: its object noun; else, for transform verbs (convert, fetch,
   send, ...), an *activity* entity named value noun + nominalised verb (``convert_time`` ->
   time_conversion) recording each call; else the last entity-referencing argument. The
   qualifier context becomes a parent (``reply_to_thread`` -> replies.thread_id); a value noun
   read from a referenced entity becomes its attribute (``get_balance(account_id)`` ->
   accounts.balance).
4. **Fields and relations** on the primary entity: a reference to another entity becomes a
   foreign key ``<role>_<entity>_id`` (NOT NULL when a creating tool requires it), a reference
   to itself with a role a nullable self-FK (``base_branch`` -> branches.base_branch_id), its own
   identifier a unique column (``repo_path`` -> repositories.path, ``branch_name`` ->
   branches.name unique per repository); an argument named like the entity is its content
   (``write_query(query)``); arrays of ids and description-detected references become join
   tables (many-to-many), arrays of scalars/objects child tables (``attendees[]`` ->
   event_attendees), an array of the entity itself (``create_entities(entities=[...])``) its
   columns; scalar arguments become typed columns (JSON type + format + name semantics) when a
   tool writes them or reads its own object by them (``listDoctors(specialty)``), never for
   derived views (``git_diff(target)``), filters (limit, max_count, cursor, ...) or ranges
   (start_*, since). An FK that would close a cycle becomes a join table instead. Entity-hint
   fields ``X_id`` become FKs the same way. Feature sentences add what their verbs imply
   (comment -> E_comments, attach/upload -> E_attachments, invite -> E_members, review ->
   E_reviews, assign -> E.assignee_id, tag -> E_tags).
5. **States**: enums of ``status``/``state`` arguments, state verbs of tools and features
   (cancel -> cancelled, archive -> archived, check_out -> checked_out, "suspend a member"),
   and state words attributed to the entity they are said of (the noun right after an
   adjective, else the nearest preceding mention, else the sentence's only entity; a lifecycle
   sentence naming several wins) give a ``status`` CHECK enum with the initial state first
   (``active`` when none was named); a status field with no known values gets
   active/inactive/archived.
6. **Completion**: every table gets an integer ``id``; person entities name + unique email;
   root entities without a label column get ``name`` (marked ``ADDED_LABEL``: no task names a
   record by it or asks for it); core entities created_at (+ updated_at
   when written), activity records created_at, joins created_at; reference entities use curated
   real-world values (IANA time zones with offsets, ISO currencies, countries, languages).
7. **Rows** (`RowFactory`): seeded Faker + `random.Random`, tables in FK order, values by column
   semantics (names, emails derived from them, phone numbers, URLs, file paths with a matching
   MIME type, SHAs, commit messages, money, HH:MM times, IANA zones, ...), temporal consistency
   (child created after parent, end after start, updated after created), uniqueness (columns
   and unique_together) and enums respected. Volumes by role: roots 15-20, children ~3 per
   parent, activity logs 40, joins ~1.5x, reference tables their curated size.

Rows follow the source's meaning: foreign keys are picked along routes (an appointment takes its
slot's clinician; a branch's commits and base branch are in its own repository), each row's
status is chosen first and its timestamps follow one lifecycle (created <= started <= ended,
a state's ``X_at`` set exactly when the status has reached X), declared enums, ranges, formats
and patterns (field hints) drive values, and values fit the column's meaning (ISBN-13,
barcodes, MRNs, IANA zones with their real offsets from ``zoneinfo``, SQL over the database
itself, ...).

Complexification (`complexify_offline`) adds, per iteration, at most two pieces of structure the
source implies and the database still lacks (`implied`): columns for the fields of tools the
coverage map leaves uncovered, fields an entity schema declares, and what a named entity
implies (commit authors, parents and file changes; a working tree with staged changes; pages
with status code, content type, body and links; a business dataset for a database-of-tables
server; DST transitions and conversions computed with ``zoneinfo``). Generic structure (audit
history, tags, notes, lookup tables) is added only where the source speaks of it. Then every
table grows by ~30% with Zipf-skewed parent popularity, and edge cases are added without
breaking meaning: a row with its free nullable columns NULL, duplicate-by-name rows, a row in
the table's own final state (no enum is widened with a state nobody named), creation at boundary dates (leap
day, year end, the episode clock) where the record's lifecycle allows it.

Modules
=======

``vocabulary`` (word lists), ``naming`` (tokens, singular/plural, identifiers),
``reference_data`` (curated time zones, currencies, countries, languages; value pools),
``evidence`` (step 1), ``domain`` (the `DomainModel` of entities), ``signatures`` (tool names
and arguments read as shapes and roles, column types), ``lifecycle`` (step 5), ``features``
(what feature sentences add), ``derivation`` (steps 2-6: `derive_model`), ``tables``
(TableSpecs, FK order, table kinds), ``column_semantics`` (what kind of value a column
holds), ``row_times`` and ``row_values`` (the time and value mixins of `RowFactory`),
``rows`` (step 7: `RowFactory`), ``drafting`` (volumes, the offline draft, LLM-path top-ups),
``implied`` (source-driven structure), ``complexify_ops`` (the structural operations mixed into
the complexifier), ``complexify`` (`complexify_offline`), ``questions`` (offline research
questions). Each module imports only
from those listed before it (plus `mining.semantics` and `mining.coverage`); this package
re-exports nothing, so importing one step never imports the others.
"""
