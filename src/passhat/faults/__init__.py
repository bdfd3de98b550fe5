"""Fault injection between the agent and the tools: the failures production has, on purpose."""

from passhat.faults.injector import FaultInjector
from passhat.faults.plan import FAULT_CLASSES, parse_faults

__all__ = ["FAULT_CLASSES", "FaultInjector", "parse_faults"]
