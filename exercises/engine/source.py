"""Read exercise YAML into plain Python data while remembering the line of every field.

PyYAML's composed node tree knows where each node starts; we keep a map from the field
path (a tuple of keys and list indexes) to its 1-based line so that validation errors
can point the author at the exact line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from .errors import SpecError, SpecIssue

Path = tuple  # of str keys and int list indexes
MAX_NESTING = 20  # no exercise needs more; PyYAML recurses once per level


@dataclass
class SourceMap:
    lines: dict[Path, int] = field(default_factory=dict)
    block_scalars: set[Path] = field(default_factory=set)

    def line(self, path: Path) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)

    def line_within(self, path: Path, text: str, position: int) -> int | None:
        """The line of character ``position`` inside the string value at ``path``."""
        start = self.line(path)
        if start is None or path not in self.block_scalars:
            return start
        return start + 1 + text[:position].count("\n")


def render_path(path: Path) -> str:
    rendered = ""
    for part in path:
        if isinstance(part, int):
            rendered += f"[{part}]"
        else:
            rendered += f".{part}" if rendered else str(part)
    return rendered


def read_yaml(text: str) -> tuple[object, SourceMap]:
    """Parse YAML text into plain data and its source map; syntax errors become SpecError."""
    if not isinstance(text, str):
        raise SpecError([SpecIssue(None, "", "the exercise source must be text")])
    source_map = SourceMap()
    depth_problem = _nesting_problem(text)
    if depth_problem:
        raise SpecError([depth_problem])
    try:
        loader = yaml.SafeLoader(text)  # the reader refuses control characters here, before parsing
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise SpecError(
            [SpecIssue(line, "", f"character #x{exc.character:04x} is not allowed in YAML; remove it")]
        ) from None
    try:
        root = loader.get_single_node()
        if root is None:
            raise SpecError([SpecIssue(1, "", "the file is empty")])
        data = _to_python(loader, root, (), source_map, set())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise SpecError([SpecIssue(line, "", f"YAML syntax error: {exc.problem}")]) from None
    except yaml.YAMLError as exc:
        raise SpecError([SpecIssue(None, "", f"YAML error: {exc}")]) from None
    except (RecursionError, MemoryError):  # the pre-check should have caught it; never a 500
        raise SpecError([SpecIssue(None, "", f"the file is nested too deeply (at most {MAX_NESTING} levels)")]) from None
    except (ValueError, ArithmeticError, UnicodeError) as exc:  # e.g. a 5,000-digit number
        raise SpecError([SpecIssue(None, "", f"the file could not be read: {exc}")]) from None
    finally:
        loader.dispose()
    return data, source_map


def _nesting_problem(text: str) -> SpecIssue | None:
    """A collection nested deeper than MAX_NESTING, found before PyYAML's composer recurses
    into it (it recurses once per level, so thousands of "[" or "- " exhaust the stack).

    PyYAML's scanner and parser are loops, not recursion: their events are walked here and
    every opened list or mapping counted, so only real nesting counts — a "[" in a block
    scalar (``|``, ``>``), in quotes, in a comment or inside plain text is just a character.
    A source PyYAML cannot read is left to the reading that follows, which says why (it
    stops at the same place, before any nesting deeper than counted here).
    """
    frames: list[_Frame] = []
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                path = _next_entry_path(frames)
                if len(frames) > MAX_NESTING:
                    return _too_deep(event, path)
                _advance(frames, event)
                frames.append(_Frame(path=path, mapping=isinstance(event, yaml.MappingStartEvent)))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                frames.pop()
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                _advance(frames, event)
    except yaml.YAMLError:
        return None
    return None


@dataclass
class _Frame:
    """An open list or mapping while walking parse events, and where its next entry goes."""

    path: Path
    mapping: bool
    entries: int = 0  # items (of a list), or keys and values (of a mapping), read so far
    key: str = ""  # a mapping's latest key


def _advance(frames: list[_Frame], event) -> None:
    if not frames:
        return
    frame = frames[-1]
    if frame.mapping and frame.entries % 2 == 0:
        frame.key = str(event.value) if isinstance(event, yaml.ScalarEvent) else "?"
    frame.entries += 1


def _next_entry_path(frames: list[_Frame]) -> Path:
    """The field path of the next entry, as ``_to_python`` names it (a mapping's key is
    named by the mapping's own path)."""
    if not frames:
        return ()
    frame = frames[-1]
    if not frame.mapping:
        return frame.path + (frame.entries,)
    if frame.entries % 2 == 0:
        return frame.path
    return frame.path + (frame.key,)


def _too_deep(event, path: Path) -> SpecIssue:
    line = event.start_mark.line + 1
    if event.flow_style:
        return SpecIssue(line, "", f"brackets nested more than {MAX_NESTING} levels deep")
    return SpecIssue(line, _display(path), f"nested more than {MAX_NESTING} levels deep")


def _to_python(loader, node, path: Path, source_map: SourceMap, seen: set):
    # YAML aliases make the node graph shared or even cyclic ("a: &a [*a]"), which could
    # recurse forever or expand exponentially; exercise files never need them.
    if id(node) in seen:
        raise SpecError(
            [SpecIssue(node.start_mark.line + 1, _display(path), "YAML anchors and aliases (&name, *name) are not supported; write the value out")]
        )
    seen.add(id(node))
    if len(path) > MAX_NESTING:
        raise SpecError(
            [SpecIssue(node.start_mark.line + 1, _display(path), f"nested more than {MAX_NESTING} levels deep")]
        )
    source_map.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int)):
                raise SpecError(
                    [SpecIssue(key_node.start_mark.line + 1, _display(path), "keys must be plain names")]
                )
            key = str(key)
            if key in result:
                raise SpecError(
                    [SpecIssue(key_node.start_mark.line + 1, _display(path + (key,)), "duplicate key")]
                )
            result[key] = _to_python(loader, value_node, path + (key,), source_map, seen)
            # A key's line is where the key is written, which is what authors look for.
            source_map.lines[path + (key,)] = key_node.start_mark.line + 1
            if isinstance(value_node, yaml.ScalarNode) and value_node.style in ("|", ">"):
                source_map.block_scalars.add(path + (key,))
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _to_python(loader, item, path + (index,), source_map, seen)
            for index, item in enumerate(node.value)
        ]
    return loader.construct_object(node, deep=True)


def _display(path: Path) -> str:
    return render_path(path) or "(top level)"
