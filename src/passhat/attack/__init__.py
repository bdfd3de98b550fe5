"""The prompt-injection suite (`passhat attack`): what a stranger's text in a tool result makes an agent do.

    world.py           the suite's copy of a domain: the attacker's rows, reads that show an attack's text
    proof.py           proof that a declaration holds (columns, selectors, goals reachable and not yet reached)
    defenses.py        defenses on the agent's path: tool filter, spotlight, detector, repeated instructions
    config.py          a suite's configuration; runner.py runs it; store.py stores it
    figures.py         utility without and under attack, attack success (pure); report.py, terminal.py show them

What the layers below share with the suite lives in them, so that they never import it: what a domain declares
(injection vectors, attacker goals, the attacker's rows) in ``passhat.domains.injection``; the attack templates and
how their text is recognised, the marks defenses leave in what an agent reads, and how the injectable reference agent
obeys what it recognises in ``passhat.agents`` (``attack_templates``, ``attack_marks``, ``susceptibility``).
"""
