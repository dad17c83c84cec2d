"""``ast.parse`` in eval mode, one thread at a time.

CPython 3.11 keeps the recursion depth of its AST-to-object conversion in
interpreter-wide state. When a garbage collection inside one thread's conversion runs a
finaliser and the GIL passes to another thread that parses too, the first thread's check
fails with ``SystemError: AST constructor recursion depth mismatch`` (fixed in 3.12).
Gunicorn's threaded workers and the grading pool parse expressions side by side, so
every parse in the product goes through this one lock. A parse takes microseconds; the
lock costs nothing measurable.
"""

from __future__ import annotations

import ast
import threading

_PARSE_LOCK = threading.Lock()


def parse_expression_tree(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")``, safe to call from many threads at once. It only
    builds the syntax tree: nothing is evaluated (the callers check the tree against their
    whitelists before anything walks it).

    Raises what ``ast.parse`` raises (``SyntaxError``, ``RecursionError``, ``MemoryError``,
    ``ValueError``); the callers turn those into their own messages.
    """
    with _PARSE_LOCK:
        return ast.parse(source, mode="eval")
