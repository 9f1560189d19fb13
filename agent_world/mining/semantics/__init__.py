"""Semantic validation of a mined database: do the rows mean what the source says?

`validate_database` (miner) proves a database *builds*; `check_semantics` proves it makes
sense. Rules, each reported as a `Violation` with the offending table, column and row id:

* ``fk_route`` - foreign-key routes agree. When a table reaches the same parent twice, once
  directly and once through the parent it belongs to (an FK named after its table) that
  carries the same column
  (``appointments.clinician_id`` and ``appointments.slot_id -> slots.clinician_id``), both
  routes name the same row; two parents of one row that both belong to a container
  (``branch_commits``: its branch and its commit each have a ``repository_id``) belong to the
  same one; a self reference stays inside its container (a base branch is in its own
  repository).
* ``time_order`` - time columns follow one lifecycle: birth before creation; creation before
  every later event (updated, cancelled, started, due, ...); start before end (checked out
  before returned, starts before ends); start before due; records are not created after the
  episode clock; a record is not created before a parent it requires.
* ``lifecycle`` - the status agrees with its timestamps: a row in state S has ``S_at`` set;
  a row whose ``S_at`` is set has reached at least S (a loan with ``returned_at`` set is not
  ``active``) and did not end in another terminal state.
* ``enum`` - values within the column's enum and within the enum the source declared.
* ``type`` - values have the column's type; a column keeps the type the source declared
  (a boolean field is not stored as text).
* ``format`` - values match the declared format (email, uri, date, date-time, uuid, time,
  ipv4), pattern and length.
* ``range`` - values within the declared minimum/maximum.
* ``unique`` - unique columns, declared-unique fields and ``unique_together`` groups hold
  no duplicates.
* ``invariant`` - cross-table invariants (`derive_invariants`, declared in
  ``spec.provenance.stats["invariants"]``): a parent is in its held state exactly when a live
  record of the child that holds it exists (a copy is ``on_loan`` iff it has an active loan, a
  slot is booked iff it has a live appointment); a parent holds at most one live record (a
  slot, one live appointment); a field named for a state is set only in that state (a fine's
  ``waived_reason``); a time zone belongs to the row's country (its ``country`` column or the
  country of its postal address). `invariant_violations(spec, db_path)` checks a database
  after writes.

Declared facts come from the field hints the miner stores in
``spec.provenance.stats["field_hints"]`` (``{table: {column: {"type", "format", "enum",
"minimum", "maximum", "unique", ...}}}``); pass ``hints=`` to check against others.

Modules, each importing only from those listed before it: ``violations`` (`Violation`,
`RULES`, `summarize`), ``columns`` (how a column is read: FK containment, time stems and
values), ``times`` (lifecycle groups of time columns; the time_order rule), ``routes``
(`fk_routes`; the fk_route rule), ``lifecycle_rule`` (state ranks, `lifecycle_columns`; the
lifecycle rule), ``values`` (the enum, type, format, range and unique rules), ``zones`` (IANA
zones per country, `address_country`), ``invariants`` (`derive_invariants`,
`invariant_violations`), ``checker`` (`check_semantics`, every rule) and ``repair``
(`repair_semantics`).
"""
