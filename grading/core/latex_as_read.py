"""LaTeX of an answer exactly as it was read, without simplifying anything.

A preview must show the student how their text was understood, not what it equals:
typesetting the simplified value of ``Var(dot(q, k))`` would print ``d_k`` and give the
derivation away. This printer walks the checked AST from ``safe_expr`` and writes each
node as typed.
"""

from __future__ import annotations

import ast

GREEK = set(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa mu nu xi pi rho sigma tau "
    "upsilon phi chi psi omega Gamma Delta Theta Xi Pi Sigma Phi Psi Omega".split()
) | {"lamda", "Lamda"}
OPERATOR_NAMES = {"exp", "log", "ln", "sin", "cos", "tan"}
MOMENTS = {"E": r"\mathbb{E}", "Var": r"\operatorname{Var}", "Cov": r"\operatorname{Cov}"}
PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.MatMult: 2, ast.Pow: 4}


def latex_as_read(node: ast.AST, literals: dict | None = None) -> str:
    return _Printer(literals or {}).visit(node)


def symbol_latex(name: str) -> str:
    """d_k -> d_{k}, sigma_q -> \\sigma_{q}, W_Q -> W_{Q}."""
    base, _, subscript = name.partition("_")
    base = _greek(base)
    if not subscript:
        return base
    return f"{base}_{{{_greek(subscript)}}}"


def _greek(word: str) -> str:
    if word in GREEK:
        return "\\" + ("lambda" if word == "lamda" else "Lambda" if word == "Lamda" else word)
    return word


def _juxtaposition_misreads(left: str, right: str) -> bool:
    """Whether writing the factors side by side would read as another number: 2 3 as 23,
    2 .5 as 2.5, 2 -3 as 2 - 3, and 2 \\frac{1}{2} as the mixed number two and a half."""
    if right[:1].isdigit() or right.startswith(("-", ".")):
        return True
    return left[-1:].isdigit() and right.startswith(r"\frac")


class _Printer:
    def __init__(self, literals: dict):
        self.literals = literals

    def visit(self, node: ast.AST) -> str:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            return r"\;?\;"
        return method(node)

    def visit_Expression(self, node: ast.Expression) -> str:
        return self.visit(node.body)

    def visit_Constant(self, node: ast.Constant) -> str:
        text = self.literals.get(getattr(node, "col_offset", None))
        return str(text if text is not None else node.value)

    def visit_Name(self, node: ast.Name) -> str:
        return symbol_latex(node.id)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> str:
        sign = "-" if isinstance(node.op, ast.USub) else "+"
        return sign + self._operand(node.operand, 3)

    def visit_BinOp(self, node: ast.BinOp) -> str:
        level = PRECEDENCE.get(type(node.op), 2)
        if isinstance(node.op, ast.Div):
            return rf"\frac{{{self.visit(node.left)}}}{{{self.visit(node.right)}}}"
        if isinstance(node.op, ast.Pow):
            return f"{self._power_base(node.left, level + 1)}^{{{self.visit(node.right)}}}"
        right_level = level + 1 if isinstance(node.op, ast.Sub) else level
        left, right = self._operand(node.left, level), self._operand(node.right, right_level)
        symbol = {ast.Add: " + ", ast.Sub: " - ", ast.Mult: " ", ast.MatMult: " "}[type(node.op)]
        if isinstance(node.op, ast.Mult) and _juxtaposition_misreads(left, right):
            symbol = r" \cdot "
        return left + symbol + right

    def _power_base(self, node: ast.AST, level: int) -> str:
        """A fraction raised to a power is bracketed: \\frac{1}{2}^{2} reads as 1 over 2²."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return rf"\left({self.visit(node)}\right)"
        return self._operand(node, level)

    def visit_Call(self, node: ast.Call) -> str:
        name = node.func.id if isinstance(node.func, ast.Name) else "?"
        args = [self.visit(arg) for arg in node.args]
        if name == "sqrt" and len(args) == 1:
            return rf"\sqrt{{{args[0]}}}"
        if name in ("abs", "Abs") and len(args) == 1:
            return rf"\left|{args[0]}\right|"
        if name in MOMENTS:
            return rf"{MOMENTS[name]}\left[{', '.join(args)}\right]"
        if name == "Sum" and len(args) == 4:
            term, index, low, high = args
            return rf"\sum_{{{index}={low}}}^{{{high}}} {term}"
        if name == "dot" and len(args) == 2:
            return rf"{args[0]} \cdot {args[1]}"
        if name in ("transpose", "T") and len(args) == 1:
            return rf"{args[0]}^{{\top}}"
        function = rf"\{name}" if name in OPERATOR_NAMES else rf"\operatorname{{{name}}}"
        return rf"{function}\left({', '.join(args)}\right)"

    def visit_Subscript(self, node: ast.Subscript) -> str:
        # E[X] / Var[X] are read as subscripts of the moment names.
        base = node.value.id if isinstance(node.value, ast.Name) else ""
        inner = self.visit(node.slice)
        if base in MOMENTS:
            return rf"{MOMENTS[base]}\left[{inner}\right]"
        return f"{self.visit(node.value)}_{{{inner}}}"

    def visit_Attribute(self, node: ast.Attribute) -> str:
        if node.attr == "T":
            return rf"{self._operand(node.value, 4)}^{{\top}}"
        return self.visit(node.value)

    def _operand(self, node: ast.AST, level: int) -> str:
        text = self.visit(node)
        inner = PRECEDENCE.get(type(node.op), 5) if isinstance(node, ast.BinOp) else 5
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            inner = 5  # a \frac is already grouped
        if isinstance(node, ast.UnaryOp) and level > 1:
            inner = 0
        return rf"\left({text}\right)" if inner < level else text
