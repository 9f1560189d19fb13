"""What a PRD's feature sentences add to the model: without entity hints, the entities they name
(known nouns, objects of verbs, the person subject owning them: `feature_entities`), and for
any source the child records or relations their verbs imply (comment, attach/upload,
invite/share, review/rate, assign, tag: `feature_relations`).
"""

from __future__ import annotations

from agent_world.mining.offline.domain import Col, DomainModel
from agent_world.mining.offline.lifecycle import states_in
from agent_world.mining.offline.naming import is_person, plural, singular_word, tokens
from agent_world.mining.offline.vocabulary import (
    ANSWER_VERBS,
    COMMON_ENTITIES,
    PERSON_NOUNS,
    QUALIFIERS,
    READ_VERBS,
    STATE_SET,
    VALUE_NOUNS,
    VERBS,
)

_ARTICLES = {"a", "an", "the", "their", "its", "his", "her", "our", "your", "new", "multiple",
             "several", "all", "any", "each", "every", "own", "them", "it", "they", "and", "or",
             "can", "be", "more", "many", "some", "one", "other", "also"}


def feature_entities(m: DomainModel, features: list[str]) -> None:
    """Without entity hints, a PRD's feature sentences name the entities: known nouns
    (customer, order, ...), objects of verbs ("upload models" -> model) and the person
    subject who owns them ("Customers upload models" -> models.customer_id)."""
    for sentence in features:
        if len(states_in(sentence)) >= 2:
            words0 = [singular_word(w) for w in tokens(sentence)]
            for w in words0:
                if w in COMMON_ENTITIES:
                    m.ensure(w)
            continue
        words = tokens(sentence)
        subject = None
        if words and singular_word(words[0]) in PERSON_NOUNS:
            subject = m.ensure(singular_word(words[0]))
        for i, w in enumerate(words):
            sw = singular_word(w)
            if sw in COMMON_ENTITIES and sw not in PERSON_NOUNS:
                m.ensure(sw)
            base = w[:-1] if w.endswith("s") and w[:-1] in VERBS else w
            if base not in VERBS or base in READ_VERBS or base in ANSWER_VERBS:
                continue
            rest = [x for x in words[i + 1:] if x not in _ARTICLES]
            if not rest:
                continue
            noun = rest[0]
            if noun in VERBS or noun in QUALIFIERS or noun in STATE_SET or len(noun) < 3 or \
                    singular_word(noun) in VALUE_NOUNS:
                continue
            obj = m.ensure(singular_word(noun))
            if subject is not None and obj.name != subject.name and not is_person(obj.name) \
                    and not any(c.fk == subject.name for c in obj.cols.values()):
                m.link(obj, f"{subject.name}_id", subject.name, False)


FEATURE_VERBS = {"comment": "comments", "attach": "attachments", "upload": "attachments",
                 "invite": "members", "share": "members", "review": "reviews",
                 "rate": "reviews", "assign": "assignee", "tag": "tags"}


def feature_relations(m: DomainModel, features: list[str]) -> None:
    """Feature sentences: '<verb> ... <entity>' adds the child record or relation the verb
    implies (comment -> E_comments, attach/upload -> E_attachments, invite/share ->
    E_members, review/rate -> E_reviews, assign -> E.assignee_id, tag -> E_tags)."""
    for sentence in features:
        if len(states_in(sentence)) >= 2:
            continue  # a lifecycle sentence: "review" there is a state, not an action
        words = [singular_word(w) for w in tokens(sentence)]
        mentions = [(i, w) for i, w in enumerate(words)
                    if w in m.entities and m.entities[w].kind in ("core", "activity")]
        for i, w in enumerate(words):
            verb = w if w in FEATURE_VERBS else w[:-1] if w[:-1] in FEATURE_VERBS else \
                w[:-2] if w[:-2] in FEATURE_VERBS else None
            if verb is None:
                continue
            after = [e for j, e in mentions if j > i and not is_person(e)]
            before = [e for j, e in mentions if j < i and not is_person(e)]
            target_name = (after or before[::-1] or [None])[0]
            if verb in ("invite", "share") and before:
                target_name = before[-1]
            if target_name is None:
                continue
            target = m.entities[target_name]
            what = FEATURE_VERBS[verb]
            person = m.person()
            if what == "assignee":
                if any(c.declared for c in target.cols.values()):
                    continue  # the source declares this entity's fields: no guessed FK
                if not any(c.fk == person.name for c in target.cols.values()) and \
                        target.name != person.name:
                    m.link(target, "assignee_id", person.name, False)
                continue
            if what == "tags":
                tags = m.ensure("tag", "core", "labels shared across records")
                m.join(target.name, tags.name)
                continue
            child = m.raw(f"{target.name}_{what}", "child", f"{what} on {plural(target.name)}")
            child.add(Col(f"{target.name}_id", "integer", nullable=False, fk=target.name))
            if what == "members":
                child.add(Col(f"{person.name}_id", "integer", nullable=False, fk=person.name))
                child.add(Col("role", "text", nullable=False,
                              enum=["owner", "editor", "viewer"]))
                child.add(Col("joined_at", "datetime", nullable=False))
                group = [f"{target.name}_id", f"{person.name}_id"]
                if group not in child.unique_together and target.name != person.name:
                    child.unique_together.append(group)
            elif what == "attachments":
                child.add(Col("file_name", "text", nullable=False))
                child.add(Col("file_path", "text", nullable=False, unique=True))
                child.add(Col("mime_type", "text"))
                child.add(Col("size_bytes", "integer"))
                child.add(Col("uploaded_at", "datetime", nullable=False))
            else:
                if person.name != target.name:
                    child.add(Col("author_id", "integer", fk=person.name))
                if what == "reviews":
                    child.add(Col("rating", "integer", nullable=False))
                child.add(Col("body", "text", nullable=what == "reviews"))
                child.add(Col("created_at", "datetime", nullable=False))
