"""The prompt-injection suite (`passhat attack`): what a stranger's text in a tool result makes an agent do.

    model.py           what a domain declares: injection vectors, attacker goals, the attacker's rows
    templates.py       the attack templates, and how their text is recognised
    world.py           the suite's copy of a domain: the attacker's rows, reads that show an attack's text
    proof.py           proof that a declaration holds (columns, selectors, goals reachable and not yet reached)
    marks.py           the marks defenses leave in what an agent reads
    defenses.py        defenses on the agent's path: tool filter, spotlight, detector, repeated instructions
    susceptibility.py  how the injectable reference agent reads results for instructions and obeys them
    config.py          a suite's configuration; runner.py runs it; store.py stores it
    figures.py         utility without and under attack, attack success (pure); report.py, terminal.py show them

Nothing is imported here: the reference agents import ``susceptibility`` while the agents package loads.
"""
