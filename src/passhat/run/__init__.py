"""Running evaluations: the orchestrator of one trial, and runs of many trials."""
