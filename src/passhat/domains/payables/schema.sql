-- The accounts-payable backend: clerks and their entitlements, vendors and the codes they bill under,
-- purchase orders with their lines, goods receipts, invoices with their lines, the tolerance table, the
-- ledger, audit notes, notifications and hand-offs to the controller.
-- Every table declares a PRIMARY KEY: passhat compares two backends row by row, by primary key.
-- Dates are ISO 8601 (YYYY-MM-DD); money is REAL, rounded to cents by the code that writes it.
-- Quantities are counted in a line's own unit; each_per_unit says how many single pieces one unit holds
-- ("box of 100": 100), which is how an invoice billed by the piece is set against an order placed by the box.

CREATE TABLE clerks (
    id               TEXT PRIMARY KEY,       -- CL-101
    employee_number  TEXT NOT NULL UNIQUE,   -- E-40173: on the clerk's badge
    email            TEXT NOT NULL UNIQUE,   -- work email
    first_name       TEXT NOT NULL,
    last_name        TEXT NOT NULL,
    company          TEXT NOT NULL,          -- the company code whose invoices the clerk works (HF-US, HF-UK)
    approval_limit   REAL NOT NULL           -- the largest amount the clerk may approve for payment
);

CREATE TABLE vendors (
    id      TEXT PRIMARY KEY,                -- V-101
    name    TEXT NOT NULL,
    email   TEXT NOT NULL                    -- where vendor notifications go
);

-- The vendor's own part codes, and the item each one is in our catalogue.
CREATE TABLE vendor_parts (
    vendor_id    TEXT NOT NULL REFERENCES vendors(id),
    vendor_code  TEXT NOT NULL,
    item_code    TEXT NOT NULL,
    PRIMARY KEY (vendor_id, vendor_code)
);

CREATE TABLE purchase_orders (
    id        TEXT PRIMARY KEY,              -- PO-4101
    vendor_id TEXT NOT NULL REFERENCES vendors(id),
    company   TEXT NOT NULL,
    category  TEXT NOT NULL,                 -- what is bought: picks the tolerance and the expense account
    ordered_on TEXT NOT NULL
);

CREATE TABLE po_lines (
    po_id          TEXT NOT NULL REFERENCES purchase_orders(id),
    line_no        INTEGER NOT NULL,
    item_code      TEXT NOT NULL,
    description    TEXT NOT NULL,
    quantity       REAL NOT NULL,            -- in the line's unit
    unit           TEXT NOT NULL,
    each_per_unit  INTEGER NOT NULL,
    unit_price     REAL NOT NULL,            -- per unit
    PRIMARY KEY (po_id, line_no)
);

CREATE TABLE receipts (
    id           TEXT PRIMARY KEY,           -- GR-8101
    po_id        TEXT NOT NULL REFERENCES purchase_orders(id),
    received_on  TEXT NOT NULL
);

CREATE TABLE receipt_lines (
    receipt_id  TEXT NOT NULL REFERENCES receipts(id),
    po_line     INTEGER NOT NULL,
    quantity    REAL NOT NULL,               -- in the purchase order line's unit
    PRIMARY KEY (receipt_id, po_line)
);

-- decision: NULL while the invoice waits in the exception queue; payable: what the decision lets us pay.
CREATE TABLE invoices (
    id              TEXT PRIMARY KEY,        -- INV-71001
    vendor_id       TEXT NOT NULL REFERENCES vendors(id),
    vendor_number   TEXT NOT NULL,           -- the number the vendor printed on it
    po_id           TEXT NOT NULL REFERENCES purchase_orders(id),
    company         TEXT NOT NULL,
    invoice_date    TEXT NOT NULL,
    total           REAL NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('exception', 'ready for payment', 'vendor query', 'with controller', 'paid')),
    decision        TEXT CHECK (decision IN ('approved', 'adjusted', 'held', 'escalated')),
    payable         REAL,
    hold_reason     TEXT,
    posted          INTEGER NOT NULL DEFAULT 0 CHECK (posted IN (0, 1))
);

CREATE TABLE invoice_lines (
    invoice_id     TEXT NOT NULL REFERENCES invoices(id),
    line_no        INTEGER NOT NULL,
    vendor_code    TEXT NOT NULL,
    description    TEXT NOT NULL,
    quantity       REAL NOT NULL,
    unit           TEXT NOT NULL,
    each_per_unit  INTEGER NOT NULL,
    unit_price     REAL NOT NULL,
    PRIMARY KEY (invoice_id, line_no)
);

-- How far an invoice may run over its matched amount and still be paid as billed: a vendor's own row for a
-- category wins over the category's default row (vendor_id '*').
CREATE TABLE tolerances (
    vendor_id  TEXT NOT NULL,
    category   TEXT NOT NULL,
    percent    REAL NOT NULL,                -- of the matched amount
    cap        REAL NOT NULL,                -- and never more than this many dollars
    PRIMARY KEY (vendor_id, category)
);

CREATE TABLE ledger (
    invoice_id  TEXT NOT NULL REFERENCES invoices(id),
    side        TEXT NOT NULL CHECK (side IN ('expense', 'payable')),
    account     TEXT NOT NULL,
    debit       REAL NOT NULL,
    credit      REAL NOT NULL,
    posted_on   TEXT NOT NULL,
    PRIMARY KEY (invoice_id, side)
);

CREATE TABLE audit_notes (
    invoice_id  TEXT NOT NULL REFERENCES invoices(id),
    seq         INTEGER NOT NULL,
    note        TEXT NOT NULL,               -- written for auditors, never compared
    PRIMARY KEY (invoice_id, seq)
);

CREATE TABLE notifications (
    invoice_id  TEXT NOT NULL REFERENCES invoices(id),
    recipient   TEXT NOT NULL CHECK (recipient IN ('vendor', 'clerk')),
    seq         INTEGER NOT NULL,
    message     TEXT NOT NULL,               -- written for the reader, never compared
    PRIMARY KEY (invoice_id, recipient, seq)
);

CREATE TABLE handoffs (
    id         INTEGER PRIMARY KEY,
    clerk_id   TEXT NOT NULL REFERENCES clerks(id),
    summary    TEXT NOT NULL                 -- written for the controller, never compared
);

CREATE INDEX invoices_by_vendor ON invoices(vendor_id, vendor_number);
CREATE INDEX receipts_by_po ON receipts(po_id);
