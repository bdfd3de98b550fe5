-- The {{name}} backend: a fitness studio's members, its classes and the members' bookings.
--
-- To make this your domain: replace these tables with the ones your tools read and write. Keep to
-- three rules passhat relies on:
--   * every table declares a PRIMARY KEY: passhat compares two backends row by row, by primary key,
--     so a grader can say exactly which rows an agent changed;
--   * ids are TEXT with a recognisable shape (M-1001, B-7001): the conversation finds them in what
--     people write (see ID_PATTERN in conversation.py);
--   * nothing depends on the wall clock or on AUTOINCREMENT counters shared across rows, so the same
--     calls on the same data always leave the same rows.

CREATE TABLE members (
    id          TEXT PRIMARY KEY,            -- M-1001
    first_name  TEXT NOT NULL,
    last_name   TEXT NOT NULL,
    email       TEXT NOT NULL UNIQUE,        -- how members identify themselves
    plan        TEXT NOT NULL CHECK (plan IN ('basic', 'unlimited'))
);

CREATE TABLE classes (
    id         TEXT PRIMARY KEY,             -- CL-201
    title      TEXT NOT NULL,                -- Yoga Flow
    starts_at  TEXT NOT NULL,                -- ISO 8601 local time, e.g. 2025-06-05T18:00
    capacity   INTEGER NOT NULL CHECK (capacity > 0)
);

CREATE TABLE bookings (
    id         TEXT PRIMARY KEY,             -- B-7001: the number in the member's confirmation email
    member_id  TEXT NOT NULL REFERENCES members(id),
    class_id   TEXT NOT NULL REFERENCES classes(id),
    status     TEXT NOT NULL CHECK (status IN ('booked', 'waitlisted', 'cancelled', 'attended'))
);

CREATE INDEX bookings_by_member ON bookings(member_id);
