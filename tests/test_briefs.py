"""Briefs for people: every built-in task renders one from the scripted customer's own words, under every persona,
and `passhat check` fails a task whose brief gives the ground truth away (a tool's name, a value the agent must tell)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from passhat.cli import main
from passhat.customers.brief import render_brief, task_brief_problems
from passhat.customers.personas import PERSONAS
from passhat.domains import domain_names, load_domain
from passhat.domains.model import Task


@pytest.mark.parametrize("name", domain_names())
def test_every_built_in_task_renders_a_brief_that_gives_nothing_away(name: str):
    domain = load_domain(name)
    for task in domain.tasks.values():
        assert task_brief_problems(domain, task) == [], task.id
        text = render_brief(domain, task, PERSONAS["baseline"]).text()
        assert all(goal.request[0] in text for goal in task.goals), task.id
        assert "Who you are:" in text and PERSONAS["baseline"].description in text


def test_a_brief_is_worded_the_same_every_time_in_the_personas_voice():
    retail = load_domain("retail")
    task = retail.tasks["retail-001"]
    calm, upset = (render_brief(retail, task, PERSONAS[p]).text() for p in ("baseline", "emotional"))
    assert calm == render_brief(retail, task, PERSONAS["baseline"]).text()
    assert PERSONAS["emotional"].description in upset and PERSONAS["baseline"].description not in upset
    assert "nikolaipre243@example.org" in calm and "#R3042198" in calm


def test_a_brief_names_an_order_the_customer_cannot_number_only_by_its_hint():
    """retail-002's customer does not know the order's id: the brief must not hand it to the person."""
    retail = load_domain("retail")
    text = render_brief(retail, retail.tasks["retail-002"], PERSONAS["baseline"]).text()
    assert "#R7928167" not in text and "white Bluetooth bookshelf speakers" in text


def leaky(domain: str, task_id: str, request: str) -> Task:
    """The built-in task as a task file of another id whose first goal's request is ``request``."""
    task = load_domain(domain).tasks[task_id]
    goal = task.goals[0].model_copy(update={"request": [request]})
    return task.model_copy(update={"id": "leaky-1", "goals": [goal, *task.goals[1:]]})


def checked(tmp_path: Path, domain: str, task: Task) -> tuple[int, str]:
    (tmp_path / f"{task.id}.yaml").write_text(
        yaml.safe_dump(task.model_dump(by_alias=True, exclude_defaults=True)), encoding="utf-8"
    )
    result = CliRunner().invoke(main, ["check", "--domain", domain, "--tasks-dir", str(tmp_path), "--tasks", task.id])
    return result.exit_code, " ".join(result.output.split())


def test_check_fails_a_task_whose_brief_names_a_tool(tmp_path: Path):
    code, output = checked(tmp_path, "retail", leaky("retail", "retail-001", "Please run cancel_order on #R3042198."))
    assert code == 1, output
    assert "leaky-1: DOES NOT HOLD task leaky-1: the customer's brief (persona baseline, impatient" in output
    assert "gives away the tool name 'cancel_order', in goals[0].request[0]" in output


def test_check_fails_a_task_whose_brief_tells_the_answer_the_agent_must_find(tmp_path: Path):
    code, output = checked(
        tmp_path, "payables", leaky("payables", "pay-025", "The variance on INV-71028 is $8.00, is it within tolerance?")
    )
    assert code == 1, output
    assert "gives away the value '$8.00' the agent must tell, in goals[0].request[0]" in output


def test_passhat_tasks_brief_prints_the_brief_and_refuses_an_unknown_persona():
    shown = CliRunner().invoke(main, ["tasks", "brief", "benefits-001", "--domain", "benefits", "--persona", "incoherent"])
    benefits = load_domain("benefits")
    assert shown.exit_code == 0, shown.output
    assert shown.output.strip() == render_brief(benefits, benefits.tasks["benefits-001"], PERSONAS["incoherent"]).text()
    refused = CliRunner().invoke(main, ["tasks", "brief", "benefits-001", "--domain", "benefits", "--persona", "grumpy"])
    assert refused.exit_code == 2
    assert "unknown persona 'grumpy' in --persona" in refused.output
