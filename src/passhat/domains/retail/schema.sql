-- The retail backend: an online shop's customers, catalogue, orders and their money movements.
-- Every table declares a PRIMARY KEY: passhat diffs two backends row by row, by primary key.
-- Money is REAL, always rounded to cents by the code that writes it.

CREATE TABLE customers (
    id          TEXT PRIMARY KEY,            -- C-123456
    first_name  TEXT NOT NULL,
    last_name   TEXT NOT NULL,
    email       TEXT NOT NULL UNIQUE,
    address1    TEXT NOT NULL,
    address2    TEXT NOT NULL DEFAULT '',
    city        TEXT NOT NULL,
    state       TEXT NOT NULL,
    zip         TEXT NOT NULL,
    country     TEXT NOT NULL
);

CREATE TABLE payment_methods (
    id           TEXT PRIMARY KEY,           -- card_1234, gift_123456, paypal_98765
    customer_id  TEXT NOT NULL REFERENCES customers(id),
    kind         TEXT NOT NULL CHECK (kind IN ('credit_card', 'gift_card', 'paypal')),
    brand        TEXT,                       -- credit cards only
    last_four    TEXT,                       -- credit cards only
    balance      REAL                        -- gift cards only
);

CREATE TABLE products (
    id        TEXT PRIMARY KEY,              -- P-123
    name      TEXT NOT NULL UNIQUE,
    category  TEXT NOT NULL
);

CREATE TABLE variants (
    id          TEXT PRIMARY KEY,            -- V-12345: the "item id" customers and agents quote
    product_id  TEXT NOT NULL REFERENCES products(id),
    options     TEXT NOT NULL,               -- JSON object, e.g. {"color": "black", "size": "M"}
    price       REAL NOT NULL,
    available   INTEGER NOT NULL CHECK (available IN (0, 1))
);

CREATE TABLE orders (
    id                 TEXT PRIMARY KEY,     -- #R1234567
    customer_id        TEXT NOT NULL REFERENCES customers(id),
    status             TEXT NOT NULL CHECK (status IN ('pending', 'processed', 'delivered', 'cancelled',
                                                       'return requested', 'exchange requested')),
    payment_method_id  TEXT NOT NULL REFERENCES payment_methods(id),  -- the method the order is billed to
    address1           TEXT NOT NULL,
    address2           TEXT NOT NULL DEFAULT '',
    city               TEXT NOT NULL,
    state              TEXT NOT NULL,
    zip                TEXT NOT NULL,
    country            TEXT NOT NULL,
    created_at         TEXT NOT NULL,        -- ISO 8601, UTC
    items_modified     INTEGER NOT NULL DEFAULT 0 CHECK (items_modified IN (0, 1)),
    cancel_reason      TEXT
);

CREATE TABLE order_items (
    order_id             TEXT NOT NULL REFERENCES orders(id),
    variant_id           TEXT NOT NULL REFERENCES variants(id),
    price                REAL NOT NULL,      -- what the customer paid for it
    status               TEXT NOT NULL DEFAULT 'ordered'
                         CHECK (status IN ('ordered', 'return requested', 'exchange requested')),
    exchange_variant_id  TEXT REFERENCES variants(id),  -- set when an exchange is requested
    PRIMARY KEY (order_id, variant_id)
);

-- Keyed per order (not by a global counter) so that writes to different orders, done in any order,
-- produce identical rows.
CREATE TABLE payments (
    order_id           TEXT NOT NULL REFERENCES orders(id),
    seq                INTEGER NOT NULL,     -- 1 is the original payment
    kind               TEXT NOT NULL CHECK (kind IN ('payment', 'refund')),
    payment_method_id  TEXT NOT NULL REFERENCES payment_methods(id),
    amount             REAL NOT NULL CHECK (amount > 0),
    PRIMARY KEY (order_id, seq)
);

CREATE TABLE shipments (
    tracking_id  TEXT PRIMARY KEY,
    order_id     TEXT NOT NULL UNIQUE REFERENCES orders(id),
    carrier      TEXT NOT NULL
);

CREATE TABLE handoffs (
    id           INTEGER PRIMARY KEY,
    customer_id  TEXT NOT NULL REFERENCES customers(id),
    summary      TEXT NOT NULL
);

CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE INDEX methods_by_customer ON payment_methods(customer_id);
CREATE INDEX variants_by_product ON variants(product_id);
CREATE INDEX customers_by_name ON customers(last_name, first_name);
