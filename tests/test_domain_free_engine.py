"""The engine speaks no domain's language: retail's nouns live in its folder, and reach the engine only
through the domain contract (its task model and conversation kit).

Read as code, not as prose: identifiers and string literals are checked, docstrings and comments are not
(an example in a docstring may well be about an order)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import passhat

PACKAGE = Path(passhat.__file__).parent
# each built-in domain speaks its own language in its own folder (a payables domain may well say "products")
DOMAIN_FOLDERS = {p.parent for p in (PACKAGE / "domains").glob("*/__init__.py")}
REGISTRY = PACKAGE / "domains" / "__init__.py"  # names the built-in domains, and so the default one
RETAIL_WORDS = re.compile(
    r"(?<![a-z])(?:order_ids?|order_hint|orders?_id|item_ids?|new_items?|new_item_ids|zip(?:_?code)?|postal|products?"
    r"|retail|shopper|ordergoal|retailtask|gift_card|paypal)(?![a-z])",
    re.IGNORECASE,
)


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings."""
    owners = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
    return {
        id(body[0].value)
        for body in (o.body for o in owners)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    }


def _words_in_code(source: str) -> list[tuple[int, str]]:
    """(line, text) of every identifier and non-docstring string literal; the builtin zip() is not a zip code."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    builtin_calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not (node.id == "zip" and id(node) in builtin_calls):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.arg):
            found.append((node.lineno, node.arg))
        elif isinstance(node, ast.keyword) and node.arg:
            found.append((node.value.lineno, node.arg))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found.append((node.lineno, node.value))
    return found


def test_no_module_outside_the_domain_folders_uses_retail_vocabulary() -> None:
    offences = [
        f"{path.relative_to(PACKAGE)}:{line}: {RETAIL_WORDS.search(text).group()!r} in {text[:60]!r}"  # type: ignore[union-attr]
        for path in sorted(PACKAGE.rglob("*.py"))
        if not DOMAIN_FOLDERS & set(path.parents) and path != REGISTRY
        for line, text in _words_in_code(path.read_text(encoding="utf-8"))
        if RETAIL_WORDS.search(text)
    ]
    assert not offences, "retail's words outside the domain folders:\n" + "\n".join(offences)


def test_the_check_finds_retail_words_in_code_but_not_in_docstrings() -> None:
    """The check itself can fail: an identifier, a keyword and a string are caught; a docstring is not."""
    source = 'def f(order_id):\n    """About an order_id."""\n    return g(zip_code="1", x="retail")\n'
    caught = [text for _, text in _words_in_code(source) if RETAIL_WORDS.search(text)]
    assert sorted(caught) == ["order_id", "retail", "zip_code"]
    assert not [t for _, t in _words_in_code("pairs = zip(a, b)\n") if RETAIL_WORDS.search(t)]
