-- The library backend: members, the catalogue, loans (with the late fees still owed on them) and holds.
-- Every table declares a PRIMARY KEY: passhat compares two backends row by row, by primary key.
-- Dates are ISO 8601 (YYYY-MM-DD); money is REAL, rounded to cents by the code that writes it.

CREATE TABLE members (
    id           TEXT PRIMARY KEY,           -- M-1001: the member's record number
    card_number  TEXT NOT NULL UNIQUE,       -- the 12 digits printed on the library card
    birth_date   TEXT NOT NULL,
    first_name   TEXT NOT NULL,
    last_name    TEXT NOT NULL,
    email        TEXT NOT NULL UNIQUE,
    home_branch  TEXT NOT NULL
);

-- One row per edition a member can borrow: a work in print and as an audiobook is two titles.
CREATE TABLE titles (
    id      TEXT PRIMARY KEY,                -- T-201
    name    TEXT NOT NULL,
    author  TEXT NOT NULL,
    format  TEXT NOT NULL CHECK (format IN ('book', 'audiobook', 'large print')),
    UNIQUE (name, format)
);

CREATE TABLE loans (
    id         TEXT PRIMARY KEY,             -- L-50101
    member_id  TEXT NOT NULL REFERENCES members(id),
    title_id   TEXT NOT NULL REFERENCES titles(id),
    due_date   TEXT NOT NULL,
    renewals   INTEGER NOT NULL DEFAULT 0,
    returned   INTEGER NOT NULL DEFAULT 0 CHECK (returned IN (0, 1)),
    fine       REAL NOT NULL DEFAULT 0       -- late fee still owed on this loan
);

-- A member holds a title at most once, so a hold is keyed by who and what: placing holds in any
-- sequence gives the same rows. A cancelled hold stays on record; holding the title again revives it.
CREATE TABLE holds (
    member_id  TEXT NOT NULL REFERENCES members(id),
    title_id   TEXT NOT NULL REFERENCES titles(id),
    branch     TEXT NOT NULL,                -- where the member picks it up
    status     TEXT NOT NULL CHECK (status IN ('waiting', 'ready', 'cancelled')),
    placed_on  TEXT NOT NULL,                -- the queue for a title is served by this date
    PRIMARY KEY (member_id, title_id)
);

CREATE TABLE referrals (
    id         INTEGER PRIMARY KEY,
    member_id  TEXT NOT NULL REFERENCES members(id),
    summary    TEXT NOT NULL                 -- written for the librarian, never compared
);

CREATE INDEX loans_by_member ON loans(member_id);
CREATE INDEX holds_by_title ON holds(title_id, status, placed_on);
