-- The intake desk's backend: the people on file, who may act for whom, the clinicians and their
-- appointments, service records (requests for copies of records) and hand-offs to staff.
-- No clinical data lives here: the intake desk never sees diagnoses, medications or notes.
-- Every table declares a PRIMARY KEY: passhat compares two backends row by row, by primary key.
-- Dates are ISO 8601 (YYYY-MM-DD); times are 24-hour HH:MM.

CREATE TABLE people (
    id          TEXT PRIMARY KEY,            -- P-1001: the person's file number
    first_name  TEXT NOT NULL,
    last_name   TEXT NOT NULL,
    birth_date  TEXT NOT NULL,
    phone       TEXT UNIQUE                  -- ten digits; NULL for a child, who never calls
);

-- Who may act for a patient besides the patient: a guardian (while the patient is a minor), a caregiver
-- (as far as a recorded authorization goes, until it expires), or an emergency contact (never).
CREATE TABLE links (
    caller_id   TEXT NOT NULL REFERENCES people(id),
    patient_id  TEXT NOT NULL REFERENCES people(id),
    role        TEXT NOT NULL CHECK (role IN ('guardian', 'caregiver', 'emergency contact')),
    scope       TEXT NOT NULL CHECK (scope IN ('none', 'appointments', 'records')),  -- records covers appointments
    expires_on  TEXT,                        -- a caregiver's authorization ends after this day; NULL: no end
    PRIMARY KEY (caller_id, patient_id)
);

CREATE TABLE clinicians (
    id          TEXT PRIMARY KEY,            -- D-11
    name        TEXT NOT NULL UNIQUE,        -- as patients say it: Ilse Varga
    service     TEXT NOT NULL,
    weekdays    TEXT NOT NULL                -- the days they see patients: 0 Monday ... 4 Friday, e.g. '024'
);

CREATE TABLE appointments (
    id            TEXT PRIMARY KEY,          -- AP-5101
    patient_id    TEXT NOT NULL REFERENCES people(id),
    clinician_id  TEXT NOT NULL REFERENCES clinicians(id),
    date          TEXT NOT NULL,
    time          TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('booked', 'cancelled'))
);

-- A request for a copy of part of a patient's records: what, for whom, by whom, how it is delivered.
CREATE TABLE service_records (
    id            INTEGER PRIMARY KEY,
    patient_id    TEXT NOT NULL REFERENCES people(id),
    requester_id  TEXT NOT NULL REFERENCES people(id),
    records       TEXT NOT NULL,
    delivery      TEXT NOT NULL CHECK (delivery IN ('portal', 'mail')),
    status        TEXT NOT NULL CHECK (status IN ('awaiting review', 'released', 'declined')),
    opened_on     TEXT NOT NULL
);

CREATE TABLE handoffs (
    id         INTEGER PRIMARY KEY,
    caller_id  TEXT NOT NULL REFERENCES people(id),
    summary    TEXT NOT NULL                 -- written for the staff member, never compared
);

CREATE INDEX appointments_by_patient ON appointments(patient_id, status);
CREATE INDEX appointments_by_clinician ON appointments(clinician_id, date, time);
