"""A stored run written in other tools' formats, so it can be browsed and analysed where a team already works.

``inspect_log`` writes an Inspect AI eval log (`inspect view` browses it), ``inspect_eval`` the same log in Inspect's
native `.eval` format, ``otel`` OpenTelemetry traces (a trace per trial). Exports read what the results store holds
and nothing else: a run exports the same way after its domain is gone.
"""

from passhat.export.inspect_log import write_inspect_log

__all__ = ["write_inspect_log"]
