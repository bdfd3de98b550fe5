-- The motor club backend: members, the plans and what each covers, membership periods, payment methods,
-- charges (callouts, late fees, annual dues), benefit adjustments, and cases escalated to staff.
-- Every table declares a PRIMARY KEY: passhat compares two backends row by row, by primary key.
-- Dates are ISO 8601 (YYYY-MM-DD); money is REAL, rounded to cents by the code that writes it.

CREATE TABLE members (
    id             TEXT PRIMARY KEY,          -- M-3001: the record number
    member_number  TEXT NOT NULL UNIQUE,      -- NW and seven digits, printed on the membership card
    first_name     TEXT NOT NULL,
    last_name      TEXT NOT NULL,
    email          TEXT NOT NULL UNIQUE
);

CREATE TABLE plans (
    id     TEXT PRIMARY KEY,                  -- basic, classic, plus, premier
    name   TEXT NOT NULL,
    price  REAL NOT NULL                      -- a year's dues; basic is free
);

-- The share of a callout's fee a plan pays, per service.
CREATE TABLE benefits (
    plan_id  TEXT NOT NULL REFERENCES plans(id),
    service  TEXT NOT NULL,
    covered  INTEGER NOT NULL CHECK (covered BETWEEN 0 AND 100),   -- percent
    PRIMARY KEY (plan_id, service)
);

-- A member's plan over time: what they were entitled to on a day is the period that covers it.
CREATE TABLE memberships (
    id         TEXT PRIMARY KEY,              -- MS-4001
    member_id  TEXT NOT NULL REFERENCES members(id),
    plan_id    TEXT NOT NULL REFERENCES plans(id),
    starts     TEXT NOT NULL,
    ends       TEXT NOT NULL
);

CREATE TABLE payment_methods (
    id         TEXT PRIMARY KEY,              -- PM-30011
    member_id  TEXT NOT NULL REFERENCES members(id),
    kind       TEXT NOT NULL CHECK (kind IN ('card', 'club_credit')),
    brand      TEXT,                          -- a card's brand
    last_four  TEXT,
    balance    REAL NOT NULL DEFAULT 0        -- club credit only
);

-- Everything the club charged: a callout (fee is its list price), a late fee, a year's dues.
CREATE TABLE charges (
    id                 TEXT PRIMARY KEY,      -- CH-50101
    member_id          TEXT NOT NULL REFERENCES members(id),
    service            TEXT NOT NULL,         -- tow, jump_start, lockout, fuel_delivery, tyre_change, late_fee, annual_dues
    service_date       TEXT NOT NULL,
    fee                REAL NOT NULL,
    amount             REAL NOT NULL,         -- what was charged
    payment_method_id  TEXT NOT NULL REFERENCES payment_methods(id),
    refunded           REAL NOT NULL DEFAULT 0,
    bank_dispute       INTEGER NOT NULL DEFAULT 0 CHECK (bank_dispute IN (0, 1)),  -- a chargeback is open at the bank
    job_note           TEXT NOT NULL DEFAULT ''   -- what the roadside contractor wrote on the job: a third party's text
);

-- A charge is adjusted once: a plan's benefit applied after the fact, or a late fee waived.
CREATE TABLE adjustments (
    charge_id          TEXT PRIMARY KEY REFERENCES charges(id),
    kind               TEXT NOT NULL CHECK (kind IN ('benefit', 'waiver')),
    plan_id            TEXT,
    refund             REAL NOT NULL,
    payment_method_id  TEXT NOT NULL REFERENCES payment_methods(id),
    made_on            TEXT NOT NULL
);

CREATE TABLE cases (
    id         INTEGER PRIMARY KEY,
    member_id  TEXT NOT NULL REFERENCES members(id),
    owner      TEXT NOT NULL,                 -- who has it, by the policy
    priority   TEXT NOT NULL,                 -- by the policy
    status     TEXT NOT NULL,
    history    TEXT NOT NULL,                 -- JSON list of {status, by, note}
    summary    TEXT NOT NULL                  -- the internal note for staff, never compared
);

CREATE INDEX charges_by_member ON charges(member_id);
CREATE INDEX memberships_by_member ON memberships(member_id, starts);
