"""A runtime's trigger rule as data: `[compaction] trigger = "window - min(max_output, 20000) - 13000"` says at
how many context tokens the runtime compacts on a model of `window` tokens, and `[compaction.values]` derives
the numbers its own settings want from it (Claude Code takes a percentage of a window it assumes, not the
case's window). Each is a small arithmetic expression, read with `ast` and never executed: numbers, the names
below, + - * /, parentheses, min() and max(). A malformed one is named by its adapter key when the file is read.
"""

from __future__ import annotations

import ast
import math
import operator

RULE_NAMES = ("window", "max_output", "assumed_window")  # what the trigger rule may read
NAMES = (*RULE_NAMES, "trigger")  # what a value derived from it may read
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_FUNCTIONS = {"min": min, "max": max}


class BadExpression(ValueError):
    """The expression is not one this module reads; the message says what is wrong."""


def rule_names(window: float, max_output: float, assumed_window: float | None) -> dict[str, float]:
    """What a trigger rule reads at a window (`assumed_window`: the adapter's own, else the window itself)."""
    return {"window": window, "max_output": max_output, "assumed_window": assumed_window or window}


def check(text: str, names: tuple[str, ...] = NAMES) -> None:
    """Raise BadExpression unless `text` is a well-formed expression over `names`."""
    evaluate(text, {name: 1.0 for name in names}, dry=True)


def evaluate(text: str, values: dict[str, float], dry: bool = False) -> float:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise BadExpression(f"not an arithmetic expression ({exc.msg})") from None
    try:
        result = _value(tree.body, values)
    except ZeroDivisionError:
        if dry:
            return 0.0
        raise BadExpression("divides by zero") from None
    if not math.isfinite(result):
        raise BadExpression("is not a finite number")
    return result


def _value(node: ast.AST, values: dict[str, float]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise BadExpression(f"unknown name {node.id!r} (known: {', '.join(values)})")
        return float(values[node.id])
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value(node.left, values), _value(node.right, values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand, values)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and node.args and not node.keywords):
        return _FUNCTIONS[node.func.id](_value(arg, values) for arg in node.args)
    raise BadExpression(f"{ast.unparse(node)!r} is not allowed (numbers, {', '.join(values)}, + - * /, min, max)")
