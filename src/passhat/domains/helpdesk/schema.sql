-- The service-desk backend: staff and what they are entitled to, configuration items (devices, systems
-- and the groups that own them), known errors with their workarounds, incidents with their assignment
-- history, and change requests with their approval.
-- Every table declares a PRIMARY KEY: passhat compares two backends row by row, by primary key.

CREATE TABLE employees (
    id            TEXT PRIMARY KEY,          -- U-2001: the directory record
    staff_number  TEXT NOT NULL UNIQUE,      -- the six digits on the staff badge
    birth_date    TEXT NOT NULL,
    first_name    TEXT NOT NULL,
    last_name     TEXT NOT NULL,
    email         TEXT NOT NULL UNIQUE,
    department    TEXT NOT NULL
);

-- The services an employee holds a licence or an access right for.
CREATE TABLE entitlements (
    employee_id  TEXT NOT NULL REFERENCES employees(id),
    service      TEXT NOT NULL,
    PRIMARY KEY (employee_id, service)
);

CREATE TABLE config_items (
    id           TEXT PRIMARY KEY,           -- CI-301
    name         TEXT NOT NULL,
    kind         TEXT NOT NULL,              -- laptop, scanner, printer, vpn, ...: what known errors are filed under
    owner_group  TEXT NOT NULL,              -- the resolver group that supports it
    critical     INTEGER NOT NULL DEFAULT 0 CHECK (critical IN (0, 1)),  -- business-critical system
    assigned_to  TEXT REFERENCES employees(id)
);

CREATE TABLE known_errors (
    id          TEXT PRIMARY KEY,            -- KE-11
    ci_kind     TEXT NOT NULL,
    symptom     TEXT NOT NULL,
    workaround  TEXT NOT NULL,
    retired     INTEGER NOT NULL DEFAULT 0 CHECK (retired IN (0, 1))  -- fixed for good: its workaround no longer applies
);

CREATE TABLE incidents (
    id              TEXT PRIMARY KEY,        -- INC-1042
    caller_id       TEXT NOT NULL REFERENCES employees(id),
    ci_id           TEXT NOT NULL REFERENCES config_items(id),
    summary         TEXT NOT NULL,
    category        TEXT CHECK (category IN ('hardware', 'software', 'network', 'access')),
    priority        TEXT NOT NULL CHECK (priority IN ('low', 'medium', 'high', 'critical')),
    users_affected  INTEGER NOT NULL DEFAULT 1,
    status          TEXT NOT NULL CHECK (status IN ('new', 'assigned', 'workaround', 'resolved')),
    assigned_group  TEXT,
    workaround_id   TEXT REFERENCES known_errors(id)
);

-- Every time an incident was given to a group, in sequence; a group that sent it back is 'rejected'.
CREATE TABLE assignments (
    incident_id  TEXT NOT NULL REFERENCES incidents(id),
    seq          INTEGER NOT NULL,
    group_name   TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('active', 'rejected', 'closed')),
    PRIMARY KEY (incident_id, seq)
);

CREATE TABLE changes (
    id            TEXT PRIMARY KEY,          -- CHG-5101
    requester_id  TEXT NOT NULL REFERENCES employees(id),
    ci_id         TEXT NOT NULL REFERENCES config_items(id),
    service       TEXT NOT NULL,             -- the entitlement the change needs
    description   TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('standard', 'normal')),  -- normal: the change board decides
    approval      TEXT NOT NULL CHECK (approval IN ('not requested', 'pending', 'approved')),
    status        TEXT NOT NULL CHECK (status IN ('planned', 'implemented'))
);

CREATE TABLE transfers (
    id           INTEGER PRIMARY KEY,
    employee_id  TEXT NOT NULL REFERENCES employees(id),
    summary      TEXT NOT NULL               -- written for the specialist, never compared
);

CREATE INDEX incidents_by_caller ON incidents(caller_id);
CREATE INDEX changes_by_requester ON changes(requester_id);
