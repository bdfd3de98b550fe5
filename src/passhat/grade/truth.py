"""Nothing false told: the values the agent states about the records of the conversation, checked against the backend.

A task lists the facts a customer must hear; a real agent says many more ("you're booked for 11:30"), and a false
one misleads the customer as surely as a missing one. So every value said of a record is checked against what
the record held, the trial's writes replayed in order.

A sentence is about a record when it names the record's id (a value goes to the id nearest before it), or,
naming none, when it says right the date or time of a record the agent's writes since the customer last spoke
touched ("Booked: 18 June at 11:30": the date anchors the time). It states a column's value with a date or a time
(the column named by the kind's word, ``date`` or ``time``, or the record's only column of the kind a write set;
any other named beside the value: "date of birth"), an amount labelled with the column's name ("the total is
$3,870.00"), or a word of the column's declared values said as what the record is ("is cancelled").

Only what is clearly false counts. A value asked, hedged, denied, set aside, attributed to the customer, put
forward ("I can move it to 14:00") or in a data dump states nothing; nor does a sentence that also says the
column's value right (the other value is about something else: "AP-5101 is at 11:00; the next opening is at
12:00"). A value is true when the column held it at any time of the trial: before ("was"), when said, or after a
write the agent proposed and made. The last word counts: a false value corrected later is not misinformed, a
right one restated wrongly later is.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

from passhat.dialogue.dumps import dump_spans, in_dump
from passhat.dialogue.questions import answered, asks_yes
from passhat.dialogue.reading import read_message
from passhat.dialogue.text import (
    clause_at_keeping_labels,
    contrasted_at,
    hedged_at,
    is_question,
    negated_at,
    plain,
    sentences,
)
from passhat.dialogue.values import (
    Mention,
    dates_in,
    money_in,
    names_person,
    names_phrase,
    same_amount,
    same_date,
    same_time,
    times_in,
    unrounded,
)
from passhat.domains.model import Domain
from passhat.env import Environment
from passhat.env.backend import CHANGELOG, RowKey, read_row
from passhat.trajectory import Event

Row = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Misstatement:
    """A value the agent said of a record's column that the column never held during the trial."""

    event: int
    table: str
    key: str  # the record's primary key, as a JSON array
    column: str
    said: str  # canonical: "11:30", "2025-06-18", "3870.00", "approved"
    held: tuple[str, ...]  # what the column held during the trial
    quote: str


@dataclasses.dataclass(frozen=True)
class _Columns:
    """What the engine knows of a table's columns from the schema: declared types and declared values."""

    types: dict[str, str]
    values: dict[str, tuple[str, ...]]  # CHECK (column IN (...)) lists of words
    references: dict[str, str]  # column -> the table its REFERENCES clause names
    key: tuple[str, ...]  # the primary key's columns
    names: dict[str, dict[Any, str]]  # a reference column -> the name of each row it may point to (vendor, clinician)
    holders: frozenset[str] = frozenset()  # columns of ``values`` read from the data: who or what has the record

    @property
    def companion_of(self) -> str | None:
        """The table this one's rows are one-to-one companions of: its one-column key references that table's."""
        return self.references.get(self.key[0]) if len(self.key) == 1 else None


@dataclasses.dataclass(frozen=True)
class _Statement:
    """What one sentence says of one column of one record: right, or a false value."""

    record: RowKey
    column: str
    said: str | None  # None: the sentence said the column's value right
    start: int
    end: int


# ---------------------------------------------------------------------------------------------- the trial's records


@dataclasses.dataclass
class _Timeline:
    """What each record of interest held during the trial, which columns writes set, and what each turn wrote."""

    held: dict[RowKey, list[Row]]  # the record's row before the trial (when it existed), then after each write
    set_by_writes: dict[RowKey, set[str]]  # the columns a write of the trial set (all of a record it added)
    written: dict[int, set[RowKey]]  # agent message's event index -> records the writes since the customer spoke touched


def misstatements(domain: Domain, events: list[Event]) -> list[Misstatement]:
    """The false values the agent told, the last word on each record's column counting, and those it wrote for
    someone else (a hand-off summary, a note, a notice): each text of those stands alone, as its reader sees only it."""
    said = [(i, e.text) for i, e in enumerate(events) if e.kind == "agent" and e.text]
    written = _free_texts(domain, events)
    if not said and not written:
        return []
    subjects = {event: _subject(events[event], text) for event, text in written}
    timeline = _replayed(domain, events, [text for _, text in said + written] + list(subjects.values()))
    columns = _schema(domain)
    last: dict[tuple[RowKey, str, int], tuple[int, str, _Statement]] = {}
    for event, text in said + written:
        alone = event if events[event].kind == "tool" else -1
        about = subjects.get(event, "")
        for statement in _statements(domain, claims_only(domain, plain(text)), timeline, columns, event, about):
            last[(statement.record, statement.column, alone)] = (event, text, statement)
    return [
        Misstatement(
            event, s.record[0], s.record[1], s.column, s.said, _held(timeline, s, columns[s.record[0]]), text[s.start : s.end]
        )
        for event, text, s in last.values()
        if s.said is not None
    ]


def _free_texts(domain: Domain, events: list[Event]) -> list[tuple[int, str]]:
    """(event, text) of each prose argument of a write that took effect (see ``ToolMeta.free_text``)."""
    prose = _prose_arguments(domain)
    return [
        (i, str(e.args[arg]))
        for i, e in enumerate(events)
        if e.kind == "tool" and e.took_effect and isinstance(e.args, dict)
        for arg in prose.get(e.name or "", ())
        if isinstance(e.args.get(arg), str) and e.args[arg].strip()
    ]


def _subject(write: Event, text: str) -> str:
    """What a written text is about, in words: the write's other arguments ("invoice_id": the note's invoice)."""
    args = write.args if isinstance(write.args, dict) else {}
    return " ".join(str(v) for v in args.values() if isinstance(v, str) and v != text)


@functools.cache
def _prose_arguments(domain: Domain) -> dict[str, tuple[str, ...]]:
    env = Environment(domain)
    try:
        return {name: spec.meta.free_text for name, spec in env.tools.items() if spec.meta.write and spec.meta.free_text}
    finally:
        env.close()


_QUOTED = re.compile(r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d')


def claims_only(domain: Domain, text: str) -> str:
    """The message with what it does not claim blanked out, offsets kept: the sentences of what a yes to it would
    agree to that offer an action (an offer to "refund $46.25" says nothing refunded yet; a finding recapped before
    "Shall I approve it?" is still a claim) and quoted text (a note's proposed wording: "Held as a duplicate")."""
    spans = [m.span() for m in _QUOTED.finditer(text)]
    actions = domain.lexicon.actions
    if actions is not None and read_message(text, domain.lexicon).proposal:  # the offers, not the findings recapped
        spans += [(s, e) for s, e in answered(text, actions) if actions.search(text, s, e) or asks_yes(text[s:e], actions)]
    spans += _options(text, actions)
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


# what opens a list item or an option before its verb: "2) ", "- **", "or 2. ", "Option B: "
_ITEM_OPENING = re.compile(r"[\s*_>#-]*(?:(?:or|either|then)\s+)?(?:(?:option\s+)?(?:\d+|[a-z])[.):]\s*)?[\s*_]*", re.I)


def _options(text: str, actions: re.Pattern[str] | None) -> list[tuple[int, int]]:
    """Sentences, list items and the parts of an either/or that open with an action in the imperative ("2) classify
    INC-1361 as hardware and assign it to endpoint", "- **Assign INC-1391 to Applications**"): options put to the
    customer, which say nothing of what the records hold, whether or not the message asks for a yes ("Which?").
    "Assigned to endpoint ✅" reports, and stays."""
    if actions is None:
        return []
    out = []
    for start, end in sentences(text):
        for opening in [start, *(m.end() for m in _OPTION_BREAK.finditer(text, start, end))]:
            at = _ITEM_OPENING.match(text, opening).end()
            verb = actions.match(text, at)
            if verb and not text[verb.end() : verb.end() + 1].isalpha() and not _PAST.search(verb.group()):
                out.append((at, end))
    return out


_PAST = re.compile(r"(?:ed|held|sent|paid|made|done)$", re.I)  # "Held as duplicate of INV-60313 …" reports
_OPTION_BREAK = re.compile(r";\s*|\bor\s+(?=\d+[.)])", re.I)  # "…; or 2) classify …"


def _replayed(domain: Domain, events: list[Event], texts: list[str]) -> _Timeline:
    """The trial's writes replayed in order on a fresh fork, keeping each touched record's row after each, beside
    a fork never written (the records as they were before the trial)."""
    env, before = Environment(domain), Environment(domain)
    try:
        ids = _id_index(domain)
        named = {ids[k] for text in texts for k, _ in _ids_in(domain, text) if k in ids}
        originals = {key: read_row(before.db, before.template, key) for key in named}
        timeline = _Timeline({key: [row] for key, row in originals.items() if row is not None}, {}, {})
        turn: set[RowKey] = set()
        for i, e in enumerate(events):
            if e.kind == "user":
                turn = set()
            elif e.kind == "agent":
                timeline.written[i] = set(turn)
            elif e.took_effect and (spec := env.tools.get(e.name or "")) and spec.meta.write:
                for key in _touched_by(env, e):
                    turn.add(key)
                    _keep(timeline, key, read_row(before.db, before.template, key), read_row(env.db, env.template, key))
        return timeline
    finally:
        env.close()
        before.close()


def _keep(timeline: _Timeline, key: RowKey, original: Row | None, now: Row | None) -> None:
    """Add a record's row after a write, and the columns the write set."""
    rows = timeline.held.setdefault(key, [original] if original else [])
    previous = rows[-1] if rows else {}
    if now is not None:
        timeline.set_by_writes.setdefault(key, set()).update(c for c, v in now.items() if c not in previous or previous[c] != v)
        rows.append(now)


def _touched_by(env: Environment, event: Event) -> set[RowKey]:
    """The records one write touched: the change log's entries it added."""
    (mark,) = env.db.execute(f"SELECT coalesce(max(seq), 0) FROM {CHANGELOG}").fetchone()
    env.execute(event.name or "", dict(event.args or {}))
    return {(t, pk) for t, pk in env.db.execute(f"SELECT DISTINCT tbl, pk FROM {CHANGELOG} WHERE seq > ?", (mark,))}


@functools.cache
def _id_index(domain: Domain) -> dict[str, RowKey]:
    """The records of the seeded backend that a one-column text key names (see ``_by_id``)."""
    env = Environment(domain)
    try:
        keys = env.template.primary_keys
        return _by_id(
            (
                (table, json.dumps([value]))
                for table, key in keys.items()
                if len(key) == 1
                for (value,) in env.db.execute(f"SELECT {key[0]} FROM {table}")
            ),
            _schema(domain),
        )
    finally:
        env.close()


def _by_id(records: Iterable[RowKey], columns: dict[str, _Columns]) -> dict[str, RowKey]:
    """Records by their one-column text key written as in text (letters and digits, upper case). A key a row shares
    with its one-to-one companion of another table (a charge and the adjustment keyed by its id) names the row, not
    the companion: the id is the row's own. A key two unrelated records share names neither."""
    found: dict[str, list[RowKey]] = {}
    for table, key in records:
        value = json.loads(key)
        if len(value) == 1 and isinstance(value[0], str):
            found.setdefault(_id_core(value[0]), []).append((table, key))
    named = {}
    for core, rows in found.items():
        tables = {table for table, _ in rows}
        owners = [r for r in rows if columns[r[0]].companion_of not in tables]
        if len(owners) == 1:
            named[core] = owners[0]
    return named


def _ids_in(domain: Domain, text: str) -> list[tuple[str, int]]:
    """The ids a text names, written as in the index, and where."""
    return [(_id_core(m.group()), m.start()) for m in re.finditer(domain.id_pattern, plain(text))]


def _id_core(value: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", value).upper()


@functools.cache
def _schema(domain: Domain) -> dict[str, _Columns]:
    """Each table's declared column types, and the words a CHECK (column IN (...)) allows."""
    env = Environment(domain)
    try:
        out = {}
        keys = env.template.primary_keys
        for table in keys:
            sql = env.db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0]
            types = {r[1]: str(r[2]).upper() for r in env.db.execute(f"PRAGMA table_info({table})")}
            values = {}
            for m in re.finditer(r"\b(\w+)\s+TEXT\b[^,]*?CHECK\s*\(\s*\1\s+IN\s*\(([^)]*)\)", sql, re.I):
                values[m.group(1)] = tuple(re.findall(r"'([^']*)'", m.group(2)))
            references = {r[3]: r[2] for r in env.db.execute(f"PRAGMA foreign_key_list({table})")}
            names = {c: named for c, t in references.items() if (named := _row_names(env, t, keys[t]))}
            holders = _holders(env, table, set(values) | set(references) | set(keys[table]))
            out[table] = _Columns(types, values | holders, references, tuple(keys[table]), names, frozenset(holders))
        return out
    finally:
        env.close()


HOLDER_WORDS = 8  # the most distinct values a column of who has a record (a resolver group) holds


def _holders(env: Environment, table: str, declared: set[str]) -> dict[str, tuple[str, ...]]:
    """The words of the table's columns that say who or what has a record, read from the seeded data: a text column
    that may be empty (the record is given one during its life: an incident's resolver group), holding few
    distinct one-word values, each on several rows."""
    out = {}
    for _, column, kind, not_null, *_ in env.db.execute(f"PRAGMA table_info({table})"):
        if column in declared or not_null or str(kind).upper() != "TEXT":
            continue
        counts = env.db.execute(f"SELECT {column}, count(*) FROM {table} WHERE {column} IS NOT NULL GROUP BY 1").fetchall()
        words = [v for v, _ in counts if isinstance(v, str) and re.fullmatch(r"[a-z]+", v)]
        if 0 < len(words) == len(counts) <= HOLDER_WORDS and sum(n for _, n in counts) >= 2 * len(counts):
            out[column] = tuple(words)
    return out


def _row_names(env: Environment, table: str, key: tuple[str, ...]) -> dict[Any, str]:
    """What each row of a table is called, when its rows are named: a ``name`` column, or ``first_name`` and
    ``last_name`` (a vendor, a clinician, a person); none for a table of things without names."""
    columns = {r[1] for r in env.db.execute(f"PRAGMA table_info({table})")}
    called = "name" if "name" in columns else "first_name || ' ' || last_name" if {"first_name", "last_name"} <= columns else None
    if called is None or len(key) != 1:
        return {}
    return {k: n for k, n in env.db.execute(f"SELECT {key[0]}, {called} FROM {table}") if isinstance(n, str) and n.strip()}


def _held(timeline: _Timeline, statement: _Statement, columns: _Columns) -> tuple[str, ...]:
    """What the column held during the trial, as the report shows it: a reference by the name of its row."""
    rows = timeline.held.get(statement.record, ())
    if statement.column == _AMOUNTS:
        return tuple(dict.fromkeys(str(v) for row in rows for v in row.values() if isinstance(v, float)))
    names = columns.names.get(statement.column, {})
    return tuple(dict.fromkeys(str(names.get(row.get(statement.column), row.get(statement.column))) for row in rows))


# ---------------------------------------------------------------------------------------------- what a sentence says


def _statements(
    domain: Domain, text: str, timeline: _Timeline, columns: dict[str, _Columns], event: int, about: str = ""
) -> Iterator[_Statement]:
    """What each sentence of one message states of the records it is about (``about``: the words naming the
    record a written text is on, the note's invoice)."""
    dumps = dump_spans(text, (), domain.id_pattern)
    by_id = _by_id(timeline.held, columns)
    subjects = [r for core, _ in _ids_in(domain, about) if (r := by_id.get(core)) is not None]
    previous: list[RowKey] = []
    for start, end in sentences(text):
        words = text[start:end]
        ids = tuple((at, by_id.get(core)) for core, at in _ids_in(domain, words))
        sentence = _Sentence(words, start, [(s - start, e - start) for s, e in dumps if s < end and e > start], ids)
        named = [r for _, r in ids if r is not None]
        if not ids:
            named = [r for r in timeline.written.get(event, ()) if _anchored(words, timeline.held[r], columns[r[0]])]
        for record in dict.fromkeys(named):
            for statement in _said_of(sentence, record, timeline, columns[record[0]]):
                if not _of_another(sentence, statement, subjects, timeline, columns):
                    yield statement
        if not ids:
            yield from _carried(sentence, [r for r in previous if r not in named], timeline, columns)
        previous = named or previous


def _carried(
    sentence: _Sentence, records: list[RowKey], timeline: _Timeline, columns: dict[str, _Columns]
) -> Iterator[_Statement]:
    """What a sentence naming no id says of the records the sentence before named: the values it labels with their
    column ("- Time: 2:00 pm" under "AP-5101:"), and, correcting ("Sorry, I mean 09:30."), a right value, which takes
    the last false one back."""
    correcting = bool(_CORRECTION.match(sentence.text))
    for record in records:
        for statement in _said_of(sentence, record, timeline, columns[record[0]], labelled=not correcting):
            if statement.said is None or not correcting:
                yield statement


def _of_another(
    sentence: _Sentence, statement: _Statement, subjects: list[RowKey], timeline: _Timeline, columns: dict[str, _Columns]
) -> bool:
    """Whether an amount false of the record named nearest before it is true of another the sentence gives it to:
    the id a bracket follows or one inside it ("duplicate of INV-60313 (POG-3402, PO-4113, $141.00)": the
    invoices' total, not the PO's), or the record a written text is on. Said of the one record alone, it is its."""
    if statement.column != _AMOUNTS or statement.said is None:
        return False
    at = statement.start - sentence.offset
    said = next((m for m in money_in(sentence.text) if m.start == at), None)
    others = [r for r in dict.fromkeys(sentence.grouped(at) + subjects) if r != statement.record]
    return said is not None and any(
        _matches(_AMOUNTS, said, row, columns[record[0]]) for record in others for row in timeline.held.get(record, ())
    )


@dataclasses.dataclass(frozen=True)
class _Sentence:
    """One sentence of a message, read on its own (offsets are the sentence's: reading a long message stays linear)."""

    text: str  # plain
    offset: int  # where it starts in the message
    dumps: list[tuple[int, int]]
    ids: tuple[tuple[int, RowKey | None], ...]  # where the sentence names an id, and its record when known

    def mentions(self, kind: _Kind, record: RowKey) -> list[Mention]:
        """The kind's values said in the sentence of ``record``, stated as facts."""
        return [m for m in kind.finder(self.text) if self.of(m, record) and claimed(self.text, m, self.dumps)]

    def beside(self, mention: Mention, record: RowKey) -> bool:
        """Whether a value stands in the clause of the record's id, or in the brackets after it ("AP-5102 (Dr Okafor,
        2025-07-30)"): a name further off is of someone else the sentence is about ("I've noted you, Lena, as caller")."""
        clause = clause_at_keeping_labels(self.text, mention.start)
        for at, named in self.ids:
            if named == record and (clause[0] <= at < clause[1] or _BRACKETED.match(self.text[at : mention.start])):
                return True
        return False

    def attached_amounts(self, record: RowKey) -> list[Mention]:
        """Amounts said right after the record's id, as what it is for: "INV-71014 (Brookvale Cable, $3,870.00)",
        "CH-50201 for $46.25", "INV-71014: $3,870.00". Not a sum ("$7,740.00 in all"), a step or a refund said of it."""
        out = []
        for m in money_in(self.text):
            ats = [at for at, _ in self.ids if at < m.start]
            if not ats or dict(self.ids).get(ats[-1]) != record or not _ATTACHED.fullmatch(self.text, ats[-1], m.start):
                continue
            if (
                m.direction is None
                and m.step is None
                and not _SUMMED.match(self.text, m.end)
                and claimed(self.text, m, self.dumps)
            ):
                out.append(m)
        return out

    def grouped(self, at: int) -> list[RowKey]:
        """The records named with a value said in brackets: the id the brackets follow and each id inside them."""
        opened = self.text.rfind("(", 0, at)
        if opened < 0 or ")" in self.text[opened:at]:
            return []
        closed = self.text.find(")", at)
        closed = len(self.text) if closed < 0 else closed
        owner = [r for p, r in self.ids if p < opened and _OWNS_BRACKET.fullmatch(self.text, p, opened)]
        inside = [r for p, r in self.ids if opened < p < closed]
        return [r for r in owner + inside if r is not None]

    def of(self, mention: Mention, record: RowKey) -> bool:
        """Whether a value is said of ``record``: the id nearest before it (else the first after it) is the
        record's ("INV-1 duplicates INV-2, which is paid": paid is INV-2's); any, in a sentence naming none."""
        if not self.ids:
            return True
        before = [r for at, r in self.ids if at < mention.start]
        return (before[-1] if before else self.ids[0][1]) == record


_AMOUNTS = "*amounts"  # a pseudo-column: an amount said of a record without its column's name, true if any column held it
_BRACKETED = re.compile(r"[^\s()]+\s*\([^()]*$")  # the id, then an open bracket
_OWNS_BRACKET = re.compile(r"[^\s()]+\s*")  # an id right before an open bracket
_ATTACHED = re.compile(r"[^\s()]+(?:\s*[(:–—,-]\s*|\s+(?:for|of|at|worth)\s+)(?:[^()$€£.;:\d]{1,40},\s*)?")
# an amount that is a sum or a difference, not one the record holds: "$7,740.00 in all", "$30.00 over its PO", or
# a unit price in a recap ("INV-71014: $22.40 × 80 = $1,792.00"), a line's amount, not the record's
_SUMMED = re.compile(
    r"\s*(?:[×x*/=+]|(?:in\s+all|in\s+total|total|combined|together|altogether|between\s+them|over|under|more|less"
    r"|short|above|below|off|higher|lower|than|difference|variance|apart|each|per|apiece|a\s+unit)\b)",
    re.I,
)


def _names_said(sentence: _Sentence, names: dict[Any, str]) -> list[Mention]:
    """The names of a table's rows said in a sentence: in full or with initials (:func:`names_person`), or a
    surname after a title ("Dr Okafor") when no other row has it."""
    surnames: dict[str, list[str]] = {}
    for name in names.values():
        surnames.setdefault(name.split()[-1].lower(), []).append(name)
    found: dict[tuple[int, int], Mention] = {}
    said = sentence.text.lower()
    for name in names.values():
        if name.split()[-1].lower() not in said:
            continue  # cheap: a long directory, a short sentence
        spans = names_person(sentence.text, name) if " " in name.strip() else names_phrase(sentence.text, name)
        last = name.split()[-1]
        if len(surnames[last.lower()]) == 1:
            spans += [m.span() for m in re.finditer(rf"\b(?:{_TITLES})\.?\s+{re.escape(last)}\b", sentence.text, re.I)]
        for s, e in spans:
            found.setdefault((s, e), Mention("phrase", name, s, e))
    return sorted(found.values(), key=lambda m: m.start)


_TITLES = r"dr|doctor|mr|mrs|ms|mx|miss|prof|professor"


def _anchored(sentence: str, rows: list[Row], columns: _Columns) -> bool:
    """Whether a sentence that names no id says a just-written record's date or time right (so is about it)."""
    return bool(rows) and any(
        kind.holds(column, value, columns) and any(kind.same(m, value) for m in kind.finder(sentence))
        for kind in (_DATE, _CLOCK_TIME)
        for column, value in rows[-1].items()
    )


def _said_of(
    sentence: _Sentence, record: RowKey, timeline: _Timeline, columns: _Columns, labelled: bool = False
) -> Iterator[_Statement]:
    """What one sentence states of one record's columns (``labelled``: only values labelled with their column),
    per column right when any value it states is right."""
    rows = timeline.held[record]
    verdicts: dict[str, _Statement] = {}
    written = timeline.set_by_writes.get(record, set())
    for column, said in _stated(sentence, record, rows[-1], columns, written, labelled):
        start, end = sentence.offset + said.start, sentence.offset + said.end
        if any(_matches(column, said, row, columns) for row in rows):
            verdicts[column] = _Statement(record, column, None, start, end)
        elif column not in verdicts:
            verdicts[column] = _Statement(record, column, said.value.lstrip("~"), start, end)
    yield from verdicts.values()


def _stated(
    sentence: _Sentence, record: RowKey, row: Row, columns: _Columns, written: set[str], labelled: bool
) -> Iterator[tuple[str, Mention]]:
    """(column, value) for each value the sentence states as the column's: named beside it, or a column that may
    go unnamed (see ``_Kind.implicit``); a word of the column's values said as what the record is."""
    for kind in _KINDS:
        own = [c for c, v in row.items() if kind.holds(c, v, columns)]
        for m in sentence.mentions(kind, record) if own else ():
            named = [c for c in own if _column_named(sentence.text, m, c)]
            implicit = [c for c in own if kind.implicit and not labelled and (c == kind.word or (own == [c] and c in written))]
            for column in named or implicit:
                yield column, m
    said = [(c, at) for c, names in columns.names.items() if c in row for at in _names_said(sentence, names)]
    for column, at in said:
        inside = any(o.start <= at.start and at.end <= o.end and (o.start, o.end) != (at.start, at.end) for _, o in said)
        if inside:
            continue  # a name within a longer one ("Laptop of Alba Moreau") names the thing, not its own row
        if sentence.of(at, record) and sentence.beside(at, record) and claimed(sentence.text, at, sentence.dumps):
            yield column, at
    if not labelled:
        for at in sentence.attached_amounts(record):
            if not any(_column_named(sentence.text, at, c) for c in row):
                yield _AMOUNTS, at
    for column, words in columns.values.items():
        for word in words if column in row else ():
            for s, e in names_phrase(sentence.text, word):
                at = Mention("status", word, s, e)
                predicate = _said_of_field(sentence.text, at, column) or (
                    column in columns.holders and _HANDED.search(sentence.text, 0, at.start)
                )
                stated = sentence.of(at, record) and predicate
                stated = stated and not _VERB_USE.match(sentence.text, at.end)
                stated = stated and not (labelled and not _column_named(sentence.text, at, column))
                if stated and claimed(sentence.text, at, sentence.dumps):
                    yield column, at


def _matches(column: str, said: Mention, row: Row, columns: _Columns) -> bool:
    if column == _AMOUNTS:
        return any(_MONEY.holds(c, v, columns) and _MONEY.same(said, str(v)) for c, v in row.items())
    value = row.get(column)
    if column in columns.names:
        return columns.names[column].get(value) == said.value
    if column in columns.values:
        return str(value).casefold() == said.value.casefold()
    return any(kind.holds(column, value, columns) and kind.same(said, str(value)) for kind in _KINDS)


# ---------------------------------------------------------------------------------------------- kinds of values


@dataclasses.dataclass(frozen=True)
class _Kind:
    """A kind of value a column holds: how to find it in words, whether a stored value is of it, when two are equal."""

    finder: Callable[[str], list[Mention]]
    holds: Callable[[str, Any, _Columns], bool]  # (column, stored value, the table's columns)
    same: Callable[[Mention, str], bool]  # (said, stored)
    implicit: bool  # a column of the kind may go unnamed: one named by the kind's word, or the only one a write set
    word: str = ""


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}")


_DATE = _Kind(
    dates_in,
    lambda c, v, cols: isinstance(v, str) and bool(_ISO_DATE.fullmatch(v)),
    lambda said, stored: same_date(said.value, stored),
    implicit=True,
    word="date",
)
_CLOCK_TIME = _Kind(
    times_in,
    lambda c, v, cols: isinstance(v, str) and bool(_TIME.fullmatch(v)),
    lambda said, stored: same_time(said.value, stored),
    implicit=True,
    word="time",
)
_MONEY = _Kind(
    money_in,
    lambda c, v, cols: cols.types.get(c) == "REAL" and isinstance(v, (int, float)),
    lambda said, stored: same_amount(said, abs(Decimal(stored))),  # the sign is the way money moves, said apart
    implicit=False,
)
_KINDS = (_DATE, _CLOCK_TIME, _MONEY)


# ---------------------------------------------------------------------------------------------- stated, not proposed

# a word of a column's values said as what the record is: "is cancelled", "has been approved", "Status: paid"
# ("they are paid into" says it of someone else)
_PREDICATE = re.compile(
    r"(?<!\bthey)(?<!\bhe)(?<!\bshe)(?:\s+(?:is|are|was|were|been|now|remains?|stays?|marked(?:\s+as)?|have|has|had)\b"
    r"|'s|'re|'ve)\s+(?:(?:now|already|just|currently|still|also)\s+)*[\"'“]?$",
    re.I,
)
# a value given as a label gives it, after a colon or a dash: "Status: paid", "INC-1081: hardware", "INC-1081 — network"
_SEPARATOR = re.compile(r"(?::|\s-|[—–])\s*(?:(?:now|already|just|currently|still|also)\s+)*[\"'“]?$")
# the value as the subject of a clause of its own, so a word of another field: "…: network rejected it" (the group
# that did), "— network won't take it"; or said of another record named right after it
_OWN_CLAUSE = re.compile(
    r"\s+(?:[a-z]+ed|has|have|had|is|are|was|were|will|would|can|could|did|does|do|says|said|sent|gave|took"
    r"|put|kept|left|sees|saw|thinks|thought|won't|can't|didn't|doesn't|isn't|wasn't)\b"
    r"|\s+[A-Za-z]+\s+(?=#?[A-Z]{2,}-?\d)",  # or as a word of another record: "INV-71011 — paid invoice INV-60311 …"
    re.I,
)


# who has a record, said as where it went: "INC-1201 is with the network team", "has gone to endpoint"
_HANDED = re.compile(r"\b(?:with|to)\s+(?:the\s+)?$", re.I)
# a word of the values used as a verb of something else: "is assigned to the network team" says no status
_VERB_USE = re.compile(r"\s+(?:to|by|into|with|for|from|under|through)\b", re.I)
# a value given as a limit, not as what the record holds: "high priority at most", "10:30 or later"
_BOUND = re.compile(
    r"(?:\s+[A-Za-z]+)?\s+(?:at\s+(?:most|least|the\s+latest|the\s+earliest)|max(?:imum)?|min(?:imum)?"
    r"|or\s+(?:higher|lower|above|below|more|less|later|earlier|sooner))\b",
    re.I,
)
# a value put forward rather than stated: a new value, a possibility, what is to come, what it was moved from
_PROPOSED = re.compile(
    r"\b(?:from|can|could|would|will|might|may|shall|should|let\s+me|let's|propos\w*|suggest\w*|offer\w*|plan\w*"
    r"|available|open(?:ing)?s?|slots?|free|instead|option\w*|alternatively)\b|'(?:ll|d)\b",
    re.I,
)
_CORRECTION = re.compile(r"\W*(?:sorry|apologies|correction|my\s+mistake|oops|i\s+mean|i\s+meant|that\s+should\s+be)\b", re.I)
_ATTRIBUTED = re.compile(
    r"\byou(?:'ve|\s+have)?\s+(?:said|mentioned|wrote|thought|asked|told|gave|remembered|believed?)\b|\baccording\s+to\s+you\b",
    re.I,
)


def _said_of_field(text: str, at: Mention, column: str) -> bool:
    """Whether a word of the column's values is said as what the record holds for that column: after a verb of
    being ("is cancelled"), after the column's own name ("category network"), or after a colon or a dash when
    it is not the subject of a clause of its own ("INC-1081: network" says the category; "INC-1081, sticking
    keys: network rejected it" says who rejected it). A possessive ("network's queue") names an owner, not a value."""
    before = text[: at.start]
    if re.search(r"['’]s$", text[at.start : at.end]):
        return False
    if _PREDICATE.search(before) or re.search(rf"\b{re.escape(column.replace('_', ' '))}\s+$", before, re.I):
        return True
    return bool(_SEPARATOR.search(before)) and not _OWN_CLAUSE.match(text, at.end)


def claimed(text: str, at: Mention, dumps: list[tuple[int, int]]) -> bool:
    """Whether the value is stated as what the record holds: not asked, denied, hedged, proposed, quoted or dumped.
    A rounded amount ("about $1,800") is stated, to its step: "about" is no hedge of it."""
    text = unrounded(text, at)
    c_start, _ = clause_at_keeping_labels(text, at.start)
    before = text[c_start : at.start]
    return not (
        in_dump(at.start, at.end, dumps)
        or is_question(text, at.start, at.end)
        or negated_at(text, at.start, at.end)
        or hedged_at(text, at.start, at.end)
        or contrasted_at(text, at.start, at.end)
        or _PROPOSED.search(before)
        or _ATTRIBUTED.search(before)
        or _BOUND.match(text, at.end)
    )


_WORD = re.compile(r"[A-Za-z]+")
_LINK = re.compile(  # linking words, and the record's id between label and value ("total of INV-1 is")
    r"(?:\s|[:=*\-–—#~]|\b(?:is|was|are|were|be|been|has|had|of|for|on|at|to|now|currently|still|the|set|stands|comes"
    r"|about|around|roughly|approximately)\b"
    r"|\b[A-Za-z]*+-?\d[\w-]*+)*+",  # possessive: no backtracking through a long run of ids
    re.I,
)


def _column_named(text: str, at: Mention, column: str) -> bool:
    """Whether the value's clause names the column as the value's label: every word of its name there (a price
    also as what a thing costs), the last one before the value joined to it by linking words only ("total is
    $3,870.00", "Date of birth: 1984-02-11", "which costs $84.47"), or the first word after it ("$46.25 fee").
    A label that only says what a difference is of is none: "the price difference of $16.36", "the $84.47 price
    difference", "the difference in price is $84.47", "costs $84.47 more" name no price."""
    c_start, c_end = clause_at_keeping_labels(text, at.start)
    words = [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text, c_start, c_end)]
    parts = [part for part in column.lower().split("_") if len(part) > 2]
    stems = [tuple(_stem(w) for w in (part, *_LABEL_WORDS.get(part, ()))) for part in parts]
    labels = [(s, e) for w, s, e in words if any(w.startswith(forms[0]) for forms in stems) or _costs(text, w, s, stems)]
    if not stems or not all(any(w.startswith(forms) for w, _, _ in words) for forms in stems):
        return False
    before = [(s, e) for s, e in labels if e <= at.start]
    after = [(s, e) for s, e in labels if s >= at.end]
    if before and _LINK.fullmatch(text, before[-1][1], at.start):
        return not (_DIFFERENCE_OF.search(text, c_start, before[-1][0]) or _DIFFERENCE.match(text, at.end))
    return bool(after and not text[at.end : after[0][0]].strip() and not _DIFFERENCE.match(text, after[0][1]))


def _costs(text: str, word: str, at: int, stems: list[tuple[str, ...]]) -> bool:
    """Whether ``word`` at ``at`` names a column in other words, said of the id right before it: "V-18451, which
    costs", "(item V-18451) cost". What a swap *for* a thing costs ("swapping it for V-18451 costs") is no price of it."""
    others = [stem for forms in stems for stem in forms[1:]]
    return any(word.startswith(stem) for stem in others) and bool(_COSTING_THING.search(text, 0, at))


# other words a column's name is said in: what a thing costs is its price
_LABEL_WORDS = {"price": ("cost",)}
_COSTING_THING = re.compile(
    r"(?<!\bfor\s)(?<!\bto\s)(?<!\binto\s)(?<!\bwith\s)(?<![\w-])[A-Za-z]*-?\d[\w-]*\)?(?:,?\s+(?:which|that))?"
    r"\s+(?:\w+ly\s+|now\s+|also\s+|only\s+)?$",
    re.I,
)
# words that make an amount a difference, not the labelled value: "$84.47 price difference", "costs $84.47 more"
_MOVED = r"difference|variance|change|increase|decrease|reduction|rise|drop|gap|adjustment|more|less|extra|higher|lower"
_DIFFERENCE = re.compile(rf"\s+(?:{_MOVED})\b", re.I)
_DIFFERENCE_OF = re.compile(rf"\b(?:{_MOVED})\s+(?:in|of|on)\s+(?:the\s+|its\s+|their\s+)?$", re.I)


def _stem(word: str) -> str:
    return word[: max(4, len(word) - 2)]
