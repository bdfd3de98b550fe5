"""Acceptance records: `passhat certify` signs what exactly a run accepted, `passhat verify` re-derives it.

record.py   what a record holds of a stored run (digests of the agent, domain, tasks, simulator and trials; the
            run's settings; the gate and every figure of the JSON report) and how two records differ
signing.py  the signature: HMAC-SHA256 under the audit key, or Ed25519 with a PEM key (the optional
            ``cryptography`` package)
"""
