"""A small filter language over a frame's rows: `score < 0.5 and format == "completion_open" and has_image`.

Why: a researcher narrows the score frame to a slice (one model's failures on one format) and shares
it as a link or a `show --where` line. The expression comes from a URL or a command line, so it is
data, never code: a tokenizer and a recursive-descent parser build a small tree, and the tree is
evaluated as pandas operations on named columns. Nothing is passed to `eval`, `exec` or `ast`, and a
name can only ever be a column of the frame.

Grammar (lowest precedence first)::

    expr       := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | comparison
    comparison := "(" expr ")" | COLUMN [op literal | ["not"] "in" "[" literals "]" | "~" STRING]
    op         := "==" | "!=" | "<" | "<=" | ">" | ">="
    literal    := STRING | NUMBER | true | false

A bare column must hold true/false values (``has_image``). A missing value (NaN, None) matches no
comparison. ``~`` is a regular-expression search (Python ``re``). Every mistake is a `FilterError`:
one line that starts with the 1-based position of the mistake in the expression.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

import pandas as pd

from .errors import UserError

MAX_CHARS = 2000  # a URL-carried expression longer than this is no filter anyone typed
MAX_DEPTH = 40  # nested parentheses / "not"s: bounds the parser's recursion
MAX_PATTERN = 200  # characters of one regular expression
MAX_LIST = 500  # values in one `in [...]` list
ALIASES = {"format": "type"}  # the issue's and the pages' word for the score frame's `type` column

KEYWORDS = {"and", "or", "not", "in", "true", "false"}
COMPARISONS = ("==", "!=", "<=", ">=", "<", ">")
_SYMBOLS = ("==", "!=", "<=", ">=", "<", ">", "~", "(", ")", "[", "]", ",")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class FilterError(UserError):
    """A mistake in a filter expression; ``position`` is 1-based (0: the expression as a whole)."""

    def __init__(self, position: int, message: str):
        super().__init__(f"position {position}: {message}" if position else message)
        self.position = position


# ---------------------------------------------------------------- tokens
@dataclass(frozen=True)
class Token:
    kind: str  # "name", "keyword", "string", "number", "symbol", "end"
    value: object
    pos: int  # 1-based position of the token's first character
    text: str  # as written, for messages


def _found(tok: Token) -> str:
    return "the end" if tok.kind == "end" else repr(tok.text)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``. An unknown character or an unterminated string ends the list with an
    "error" token, raised when the parser reaches it: the first mistake from the left is the one named."""
    if len(text) > MAX_CHARS:
        raise FilterError(MAX_CHARS + 1, f"the expression is longer than {MAX_CHARS} characters")
    out: list[Token] = []
    try:
        _scan(text, out)
    except FilterError as exc:
        out.append(Token("error", str(exc).split(": ", 1)[1], exc.position, ""))
        return out
    out.append(Token("end", None, len(text) + 1, "the end"))
    return out


def _scan(text: str, out: list[Token]) -> None:
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "\"'":
            i = _string(text, i, out)
        elif (m := _NUMBER.match(text, i)) and (ch != "-" or _expects_value(out)):
            raw = m.group()
            if _NAME.match(text, m.end()):  # 12abc: neither a number nor a name
                raise FilterError(i + 1, f"unexpected {text[i:m.end() + 1]!r}: a number runs into a name")
            out.append(Token("number", float(raw) if any(c in raw for c in ".eE") else int(raw), i + 1, raw))
            i = m.end()
        elif name_match := _NAME.match(text, i):
            word = name_match.group()
            kind = "keyword" if word.lower() in KEYWORDS else "name"
            out.append(Token(kind, word.lower() if kind == "keyword" else word, i + 1, word))
            i += len(word)
        else:
            sym = next((s for s in _SYMBOLS if text.startswith(s, i)), None)
            if sym is None:
                hint = " (use == to compare)" if ch == "=" else ""
                raise FilterError(i + 1, f"unexpected character {ch!r}{hint}")
            out.append(Token("symbol", sym, i + 1, sym))
            i += len(sym)


def _expects_value(tokens: list[Token]) -> bool:
    """A minus sign starts a negative number only where a value is expected (after an operator or a bracket)."""
    return bool(tokens) and tokens[-1].kind == "symbol" and tokens[-1].value in (*COMPARISONS, "[", ",")


def _string(text: str, start: int, out: list[Token]) -> int:
    quote, i, chars = text[start], start + 1, []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            chars.append({"n": "\n", "t": "\t"}.get(nxt, nxt if nxt in "\"'\\" else "\\" + nxt))
            i += 2
        elif ch == quote:
            out.append(Token("string", "".join(chars), start + 1, text[start:i + 1]))
            return i + 1
        else:
            chars.append(ch)
            i += 1
    raise FilterError(start + 1, f"unterminated string: the {quote} opened here is never closed")


# ---------------------------------------------------------------- the tree
@dataclass(frozen=True)
class Column:
    name: str
    pos: int


@dataclass(frozen=True)
class Compare:
    column: Column
    op: str  # one of COMPARISONS, "in", "not in", "~"
    value: object  # a literal, a tuple of literals, or a compiled pattern
    pos: int  # of the operator


@dataclass(frozen=True)
class Not:
    operand: object


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" / "or"
    operands: tuple


class _Parser:
    def __init__(self, tokens: list[Token]):
        self.tokens, self.i, self.depth = tokens, 0, 0

    @property
    def tok(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind == "error":  # the scanner's mistake, reached before any mistake of the grammar
            raise FilterError(tok.pos, str(tok.value))
        return tok

    def take(self) -> Token:
        tok = self.tok
        self.i += 1
        return tok

    def at(self, kind: str, value: object = None) -> bool:
        return self.tok.kind == kind and (value is None or self.tok.value == value)

    def deeper(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FilterError(pos, f"nested deeper than {MAX_DEPTH} levels (parentheses and 'not')")

    def parse(self):
        if self.at("end"):
            raise FilterError(0, "the expression is empty")
        node = self.expr()
        if not self.at("end"):
            raise FilterError(self.tok.pos, f"unexpected {_found(self.tok)}: expected 'and', 'or' or the end"
                              + (" (a closing parenthesis without its opening one)" if self.tok.value == ")" else ""))
        return node

    def expr(self):
        parts = [self.and_expr()]
        while self.at("keyword", "or"):
            self.take()
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else BoolOp("or", tuple(parts))

    def and_expr(self):
        parts = [self.not_expr()]
        while self.at("keyword", "and"):
            self.take()
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else BoolOp("and", tuple(parts))

    def not_expr(self):
        if self.at("keyword", "not"):
            tok = self.take()
            self.deeper(tok.pos)
            node = Not(self.not_expr())
            self.depth -= 1
            return node
        return self.comparison()

    def comparison(self):
        tok = self.tok
        if self.at("symbol", "("):
            self.take()
            self.deeper(tok.pos)
            node = self.expr()
            self.depth -= 1
            if not self.at("symbol", ")"):
                raise FilterError(self.tok.pos, f"expected ')' to close the '(' at position {tok.pos}, "
                                                f"found {_found(self.tok)}")
            self.take()
            return node
        if tok.kind != "name":
            what = "a keyword" if tok.kind == "keyword" else ("a value" if tok.kind in ("string", "number") else "")
            raise FilterError(tok.pos, f"expected a column name, found {_found(tok)}"
                              + (f" ({what}: a comparison starts with the column, as in score < 0.5)" if what else ""))
        column = Column(self.take().value, tok.pos)
        op = self.tok
        if op.kind == "symbol" and op.value in COMPARISONS:
            self.take()
            return Compare(column, op.value, self.literal(op.text), op.pos)
        if op.kind == "symbol" and op.value == "~":
            self.take()
            return Compare(column, "~", self.pattern(), op.pos)
        if self.at("keyword", "in"):
            self.take()
            return Compare(column, "in", self.values("in"), op.pos)
        if self.at("keyword", "not") and self.tokens[self.i + 1].kind == "keyword" and self.tokens[self.i + 1].value == "in":
            self.take(), self.take()
            return Compare(column, "not in", self.values("not in"), op.pos)
        if op.kind == "symbol" and op.value == "(":
            raise FilterError(op.pos, f"unexpected '(' after {column.name!r}: the filter language has no functions")
        if op.kind in ("end", "keyword") or (op.kind == "symbol" and op.value == ")"):
            return column  # a bare true/false column
        raise FilterError(op.pos, f"unexpected {op.text!r} after {column.name!r}: expected a comparison "
                                  "(== != < <= > >=), 'in', 'not in', '~', 'and', 'or' or the end")

    def literal(self, after: str):
        tok = self.tok
        if tok.kind in ("string", "number"):
            self.take()
            return tok.value
        if tok.kind == "keyword" and tok.value in ("true", "false"):
            self.take()
            return tok.value == "true"
        found = _found(tok)
        raise FilterError(tok.pos, f"expected a value after {after!r} (a \"string\", a number, true or false), "
                                   f"found {found}")

    def values(self, after: str) -> tuple:
        if not self.at("symbol", "["):
            raise FilterError(self.tok.pos, f"expected '[' after {after!r} (found {_found(self.tok)}), as in model in [\"A\", \"B\"]")
        self.take()
        out: list[object] = []
        while not self.at("symbol", "]"):
            if out:
                if not self.at("symbol", ","):
                    raise FilterError(self.tok.pos, f"expected ',' or ']' in the list, found {_found(self.tok)}")
                self.take()
            out.append(self.literal("," if out else "["))
            if len(out) > MAX_LIST:
                raise FilterError(self.tok.pos, f"a list holds at most {MAX_LIST} values")
        self.take()
        return tuple(out)

    def pattern(self) -> re.Pattern:
        tok = self.tok
        if tok.kind != "string":
            found = _found(tok)
            raise FilterError(tok.pos, f"expected a \"quoted\" regular expression after '~', found {found}")
        self.take()
        source = str(tok.value)  # a string token's value is its text
        if len(source) > MAX_PATTERN:
            raise FilterError(tok.pos, f"the regular expression is longer than {MAX_PATTERN} characters")
        try:
            compiled = re.compile(source)
        except re.error as exc:
            raise FilterError(tok.pos, f"invalid regular expression {tok.text}: {exc.msg}") from None
        if _nested_repeat(source):
            raise FilterError(tok.pos, f"the regular expression {tok.text} repeats a group that itself repeats, "
                                       "as in (a+)+: that can take exponential time; write it without the nesting")
        return compiled


def _nested_repeat(pattern: str) -> bool:
    """True when a repeated group holds a repetition, as in ``(a+)+`` or ``(\\w*x)*``: Python's ``re``
    can backtrack exponentially on those, and a URL may carry any pattern. Escapes and character
    classes are skipped; a group counts as repeated when ``*``, ``+`` or ``{`` follows it."""
    repeats = [False]  # one flag per open group: does it hold a repetition?
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                i += 1
        elif ch == "(":
            repeats.append(False)
        elif ch == ")" and len(repeats) > 1:
            inner = repeats.pop()
            follows = pattern[i + 1:i + 2]
            if follows in ("*", "+", "{"):
                if inner:
                    return True
                repeats[-1] = True
            elif inner:
                repeats[-1] = True
        elif ch in "*+{":
            repeats[-1] = True
        i += 1
    return False


def parse(text: str):
    """The tree of an expression (no frame needed: syntax mistakes are found before any data is read)."""
    return _Parser(tokenize(str(text))).parse()


# ---------------------------------------------------------------- evaluation
def _kind(series: pd.Series) -> str:
    """"bool", "number", "string" or "empty" (no value to judge by): what a column may be compared with."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return "bool"
    if pd.api.types.is_numeric_dtype(series.dtype):
        return "number"
    inferred = pd.api.types.infer_dtype(series, skipna=True)
    if inferred == "boolean":
        return "bool"
    if inferred in ("integer", "floating", "mixed-integer-float", "decimal"):
        return "number"
    if inferred == "empty":
        return "empty"
    return "string"


def _literal_kind(value: object) -> str:
    return "bool" if isinstance(value, bool) else "number" if isinstance(value, int | float) else "string"


_KIND_WORDS = {"bool": "true/false", "number": "number", "string": "text"}


def _resolve(frame: pd.DataFrame, column: Column) -> pd.Series:
    name = column.name
    if name not in frame.columns and ALIASES.get(name) in frame.columns:
        name = ALIASES[name]
    if name not in frame.columns:
        shown = ", ".join(map(str, frame.columns[:30])) + (", ..." if len(frame.columns) > 30 else "")
        raise FilterError(column.pos, f"no column {column.name!r} here (columns: {shown})")
    return frame[name]


def _check(series: pd.Series, column: Column, node: Compare) -> str:
    kind = _kind(series)
    listed = cast(tuple, node.value)  # `in` and `not in` hold the tuple `values` parsed
    values = listed if node.op in ("in", "not in") else (() if node.op == "~" else (node.value,))
    if node.op == "~":
        if kind not in ("string", "empty"):
            raise FilterError(node.pos, f"'~' matches text, and {column.name!r} holds {_KIND_WORDS[kind]} values")
        return kind
    for value in values:
        vk = _literal_kind(value)
        if kind != "empty" and vk != kind:
            raise FilterError(node.pos, f"{column.name!r} holds {_KIND_WORDS[kind]} values; it cannot be "
                                        f"compared with {_KIND_WORDS[vk]} {value!r}")
    if kind == "bool" and node.op not in ("==", "!=", "in", "not in"):
        raise FilterError(node.pos, f"{column.name!r} holds true/false values: use == or != with it, not {node.op!r}")
    return kind


def _evaluate(node, frame: pd.DataFrame) -> pd.Series:
    if isinstance(node, BoolOp):
        masks = [_evaluate(n, frame) for n in node.operands]
        out = masks[0]
        for m in masks[1:]:
            out = (out & m) if node.op == "and" else (out | m)
        return out
    if isinstance(node, Not):
        return ~_evaluate(node.operand, frame)
    if isinstance(node, Column):
        series = _resolve(frame, node)
        if _kind(series) not in ("bool", "empty"):
            raise FilterError(node.pos, f"{node.name!r} holds {_KIND_WORDS[_kind(series)]} values, not true/false: "
                                        f"compare it (e.g. {node.name} == ...)")
        return series.astype("boolean").fillna(False).astype(bool)
    series = _resolve(frame, node.column)
    _check(series, node.column, node)
    present = series.notna()
    if node.op == "~":
        hits = series.astype("string").str.contains(node.value, regex=True, na=False)
        return hits.astype(bool) & present
    if node.op in ("in", "not in"):
        hits = series.isin(list(node.value))
        return (hits if node.op == "in" else ~hits) & present
    ops = {"==": series.__eq__, "!=": series.__ne__, "<": series.__lt__, "<=": series.__le__,
           ">": series.__gt__, ">=": series.__ge__}
    return ops[node.op](node.value).fillna(False).astype(bool) & present


def mask(frame: pd.DataFrame, text: str) -> pd.Series:
    """The rows of ``frame`` the expression keeps, as a boolean Series aligned with the frame."""
    tree = parse(text)
    try:
        out = _evaluate(tree, frame)
    except FilterError:
        raise
    except (TypeError, ValueError) as exc:  # a column whose values pandas cannot compare: one line
        raise FilterError(0, f"cannot evaluate the filter on these columns: {str(exc).splitlines()[0][:160]}") from None
    return out.reindex(frame.index, fill_value=False).astype(bool)


def apply(frame: pd.DataFrame, text: str) -> pd.DataFrame:
    """The rows of ``frame`` the expression keeps (the frame's attrs carried over)."""
    kept = frame[mask(frame, text)]
    kept.attrs.update(frame.attrs)
    return kept
