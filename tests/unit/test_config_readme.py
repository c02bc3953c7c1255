"""config/README.md documents every key of the config's schema, at every
level, each with an example, and nothing the schema does not have.

The convention the page keeps and these tests check:

- Every object of the schema that has keys (the top level, a workload, its
  trained weights, an optimizer, a backend's settings, ...) has a section: a
  heading that ends in the object's paths in code, in parentheses, e.g.
  ``## A workload (`.workloads[]`)``. A path is written as jq writes one:
  ``.`` is the top level, ``.key`` a key, ``[]`` an item of a list and
  ``.<name>`` any key of a mapping (``.backends.<backend>``). One section may
  stand for several paths with the same keys.
- A section's keys are rows of its table, whose columns are ``key``,
  ``type and values``, ``default``, ``what it sets`` and ``example``; a key's
  row starts with ``| `key` |``. The section ends at the next heading.
- Each row's example holds at least one code span that is the key with a
  value, in YAML (``warmup: 10``) or, at the top level, as the command line
  gives it (``--config op_profile=false``); every such value must be one the
  schema accepts there.
- The default cell gives the schema's default in code where the schema has
  one, and says "required" where the object requires the key.
- The description cell holds the key's schema description verbatim (its
  whitespace collapsed, ``|`` written ``\\|``) where the schema gives one.
- The type cell names, in code, each value an enum or const allows.

The walk over the schema resolves ``$ref``, and follows ``properties``,
``items``, ``additionalProperties``, ``oneOf``/``anyOf``/``allOf`` and the
``then``/``else`` of a condition (its ``if`` only tests keys the object has).
"""

import copy
import json
import re
import shlex

import pytest
import yaml
from jsonschema import validators

from dlbench.plan.config_sources import resolved
from testkit import REPO

README = REPO / "config" / "README.md"
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
COLUMNS = ["key", "type and values", "default", "what it sets", "example"]
HEADING = re.compile(r"^#{1,6} .*?\(((?:`[^`]+`(?:, )?)+)\)\s*$")
ROW = re.compile(r"^\| `([^`]+)` \|")
CODE = re.compile(r"`([^`]+)`")
UNREADABLE = object()  # an example's value that is not YAML


# The schema, walked


def key_path(path, key):
    """The path of ``key`` in the object at ``path``: ``.workloads[].warmup``."""
    return path.rstrip(".") + "." + key


def objects(root):
    """{path: {"properties": {key: entry}, "required": [key, ...]}} for every
    object of the schema that has keys, its path as jq writes it with ``*``
    for any key of a mapping (``.backends.*``)."""
    found = {}

    def walk(entry, path):
        entry = resolved(entry, root)
        if not isinstance(entry, dict):
            return
        properties = entry.get("properties") or {}
        if properties or path in found:  # then/else may add required keys
            known = found.setdefault(path, {"properties": {}, "required": []})
            known["properties"].update(properties)
            known["required"] += [
                key for key in entry.get("required", []) if key not in known["required"]
            ]
        for key, child in properties.items():
            walk(child, key_path(path, key))
        if isinstance(entry.get("items"), dict):
            walk(entry["items"], path + "[]")
        if isinstance(entry.get("additionalProperties"), dict):
            walk(entry["additionalProperties"], key_path(path, "*"))
        for keyword in ("oneOf", "anyOf", "allOf"):
            for alternative in entry.get(keyword, []):
                walk(alternative, path)
        for keyword in ("then", "else"):
            if isinstance(entry.get(keyword), dict):
                walk(entry[keyword], path)

    walk(root, ".")
    return found


def allowed_values(entry, root):
    """The values an enum or const allows for the key itself (a list's items
    aside), through ``$ref`` and ``oneOf``/``anyOf`` alternatives."""
    entry = resolved(entry, root)
    if "enum" in entry:
        return list(entry["enum"])
    if "const" in entry:
        return [entry["const"]]
    found = []
    for alternative in entry.get("oneOf", []) + entry.get("anyOf", []):
        found += [value for value in allowed_values(alternative, root) if value not in found]
    return found


def written(value):
    """A value as YAML writes it inline: true, null, 4096, float32."""
    return value if isinstance(value, str) else json.dumps(value)


def described(entry):
    return " ".join(str(entry.get("description", "")).split()).replace("|", "\\|")


def accepts(entry, value, root):
    """Whether the schema's ``entry`` (its ``$ref``s into ``root``) accepts ``value``."""
    schema = {**entry, "$defs": root.get("$defs", {})}
    return validators.validator_for(root)(schema).is_valid(value)


# The page, read


def cells(row):
    """A table row's cells, split at its unescaped |."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def sections(text):
    """[(heading, [path, ...], [line, ...])] for every heading that names
    schema paths; ``<name>`` in a path read as ``*``."""
    found = []
    current = None
    for line in text.splitlines():
        if line.startswith("#"):
            current = None
            match = HEADING.match(line)
            if match:
                paths = [re.sub(r"<[^>]+>", "*", path) for path in CODE.findall(match.group(1))]
                current = (line, paths, [])
                found.append(current)
        elif current is not None:
            current[2].append(line)
    return found


def rows_of(lines):
    """{key: [cells]} of a section's rows, in the page's order."""
    return {ROW.match(line).group(1): cells(line) for line in lines if ROW.match(line)}


def documented(text):
    """{path: (heading, {key: [cells]}, [header cells])} of the page."""
    found = {}
    for heading, paths, lines in sections(text):
        headers = [cells(line) for line in lines if line.startswith("| key |")]
        for path in paths:
            found[path] = (heading, rows_of(lines), headers)
    return found


def example_values(cell, key, top_level):
    """[(code, value)] of the example cell's code spans that give ``key`` a
    value: ``key: value`` in YAML, or ``--config key=value`` at the top level.
    ``UNREADABLE`` as the value where the span names the key but is not YAML."""
    found = []
    for code in CODE.findall(cell):
        if code.startswith("--config ") and top_level:
            words = shlex.split(code)[1:]
            for word in words:
                name, _, value = word.partition("=")
                if name == key:
                    try:
                        found.append((code, yaml.safe_load(value)))
                    except yaml.YAMLError:
                        found.append((code, UNREADABLE))
        elif code.startswith(key + ":"):
            try:
                parsed = yaml.safe_load(code)
            except yaml.YAMLError:
                parsed = None
            if isinstance(parsed, dict) and list(parsed) == [key]:
                found.append((code, parsed[key]))
            else:
                found.append((code, UNREADABLE))
    return found


# The checks, each a list of what is wrong (empty when nothing is)


def missing_sections(text, root):
    return sorted(set(objects(root)) - set(documented(text)))


def missing_keys(text, root):
    """The paths of the keys the page has no row for."""
    pages = documented(text)
    return [
        key_path(path, key)
        for path, shape in objects(root).items()
        for key in shape["properties"]
        if path not in pages or key not in pages[path][1]
    ]


def stale_entries(text, root):
    """Sections of paths the schema lacks, rows of keys their object lacks,
    and a path or a key documented twice."""
    schema_objects = objects(root)
    stale = []
    named = [path for _, paths, _ in sections(text) for path in paths]
    stale += [
        "{} has two sections".format(path) for path in sorted(set(named)) if named.count(path) > 1
    ]
    for heading, _, lines in sections(text):
        keys = [ROW.match(line).group(1) for line in lines if ROW.match(line)]
        stale += [
            "{} has two rows in {!r}".format(key, heading)
            for key in sorted(set(keys))
            if keys.count(key) > 1
        ]
    for path, (heading, rows, _) in documented(text).items():
        if path not in schema_objects:
            stale.append("{} (no such object in the schema)".format(heading))
            continue
        stale += [
            "{} in {!r} (no such key in the schema)".format(key, heading)
            for key in rows
            if key not in schema_objects[path]["properties"]
        ]
    return stale


def bad_rows(text, root):
    """Rows whose columns, example, default, description or values are not
    as the convention says."""
    problems = []
    pages = documented(text)
    for path, shape in objects(root).items():
        if path not in pages:
            continue
        heading, rows, headers = pages[path]
        if not headers or any(header != COLUMNS for header in headers):
            problems.append("{}: its table's columns are not {}".format(heading, COLUMNS))
        for key, entry in shape["properties"].items():
            if key not in rows:
                continue
            where = "{} {}".format(path, key)
            row = rows[key]
            if len(row) != len(COLUMNS):
                problems.append("{}: {} cells, not {}".format(where, len(row), len(COLUMNS)))
                continue
            _, kind, default, description, example = row
            problems += check_example(where, key, entry, example, path == ".", root)
            if not kind:
                problems.append("{}: no type".format(where))
            for value in allowed_values(entry, root):
                if "`{}`".format(written(value)) not in kind:
                    problems.append("{}: the type does not name `{}`".format(where, written(value)))
            target = resolved(entry, root)
            if "default" in target:
                shown = CODE.findall(default)
                if not shown or yaml.safe_load(shown[0]) != target["default"]:
                    problems.append(
                        "{}: default {!r}, the schema's is {!r}".format(
                            where, default, target["default"]
                        )
                    )
            elif key in shape["required"] and "required" not in default:
                problems.append("{}: required, and its default cell does not say so".format(where))
            elif not default:
                problems.append("{}: the default cell is empty".format(where))
            if described(entry) not in description:
                problems.append("{}: not in the schema's words: {}".format(where, described(entry)))
    return problems


def check_example(where, key, entry, example, top_level, root):
    values = example_values(example, key, top_level)
    if not values:
        return ["{}: no example (`{}: ...` in code)".format(where, key)]
    return [
        "{}: the example `{}` is not a value the schema accepts".format(where, code)
        for code, value in values
        if value is UNREADABLE or not accepts(entry, value, root)
    ]


TEXT = README.read_text()
OBJECTS = objects(SCHEMA)


# The tests


def test_the_walk_reaches_every_kind_of_nested_object():
    schema = {
        "$defs": {"leaf": {"type": "object", "properties": {"deep": {"type": "integer"}}}},
        "type": "object",
        "properties": {
            "listed": {"type": "array", "items": {"properties": {"a": {}}}},
            "mapped": {
                "additionalProperties": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/leaf"}]}
            },
            "either": {"anyOf": [{"type": "string"}, {"properties": {"b": {}}}]},
            "referred": {"description": "kept", "$ref": "#/$defs/leaf"},
        },
        "if": {"properties": {"only_tested": {"const": 1}}},
        "then": {"properties": {"c": {}}, "required": ["c"]},
    }
    found = objects(schema)
    assert found["."]["required"] == ["c"]
    assert {path: sorted(shape["properties"]) for path, shape in found.items()} == {
        ".": ["c", "either", "listed", "mapped", "referred"],
        ".listed[]": ["a"],
        ".mapped.*": ["deep"],
        ".either": ["b"],
        ".referred": ["deep"],
    }
    assert allowed_values({"oneOf": [{"enum": ["x", True]}, {"const": 4}]}, schema) == [
        "x",
        True,
        4,
    ]


def test_the_schema_has_keys_below_the_top_level():
    """The checks below check something: the schema's nested objects are found."""
    assert len(OBJECTS) >= 8
    assert {".", ".workloads[]", ".workloads[].trained_weights.optimizer", ".backends.*"} <= set(
        OBJECTS
    )
    assert sum(len(shape["properties"]) for shape in OBJECTS.values()) > 80


def test_every_object_of_the_schema_has_its_section():
    assert missing_sections(TEXT, SCHEMA) == []


@pytest.mark.parametrize("path", sorted(OBJECTS))
def test_every_key_of_each_object_has_its_row(path):
    documented_rows = documented(TEXT).get(path, (None, {}, []))[1]
    missing = [
        key_path(path, key) for key in OBJECTS[path]["properties"] if key not in documented_rows
    ]
    assert missing == [], "config/README.md does not document: {}".format(", ".join(missing))


def test_no_section_or_row_documents_what_the_schema_lacks():
    assert stale_entries(TEXT, SCHEMA) == []


def test_every_row_gives_its_type_default_description_and_an_example_the_schema_accepts():
    assert bad_rows(TEXT, SCHEMA) == []


def undescribed_keys(root):
    """The schema's keys whose entry (its ``$ref`` followed) has no description."""
    return [
        key_path(path, key)
        for path, shape in objects(root).items()
        for key, entry in shape["properties"].items()
        if not resolved(entry, root).get("description") and not entry.get("description")
    ]


def test_every_key_of_the_schema_is_described():
    """The schema's description is what a refusal and config/README.md show a user."""
    assert undescribed_keys(SCHEMA) == []


def test_a_key_without_a_description_is_found():
    spoilt = copy.deepcopy(SCHEMA)
    del spoilt["properties"]["equivalence_check"]["properties"]["steps"]["description"]
    assert undescribed_keys(spoilt) == [".equivalence_check.steps"]


def test_a_row_taken_out_or_an_example_spoilt_is_reported():
    """The checks fail where the page falls behind: the last row of each
    section, deleted, is reported missing by its path; an example that the
    schema refuses, and a row of a key the schema lacks, are reported."""
    lines = TEXT.splitlines()
    for heading, paths, section in sections(TEXT):
        key = list(rows_of(section))[-1]
        start = lines.index(heading)
        index = next(
            i for i in range(start, len(lines)) if lines[i].startswith("| `{}` |".format(key))
        )
        cut = "\n".join(lines[:index] + lines[index + 1 :])
        for path in paths:
            assert key_path(path, key) in missing_keys(cut, SCHEMA)
            assert key_path(path, key) not in missing_keys(TEXT, SCHEMA)
    for heading, _, section in sections(TEXT):
        key, row = next(iter(rows_of(section).items()))
        line = next(line for line in section if line.startswith("| `{}` |".format(key)))
        spoilt = TEXT.replace(line, "| " + " | ".join(["`{}`".format(key), *row[1:4], ""]) + " |")
        assert any("no example" in problem for problem in bad_rows(spoilt, SCHEMA)), heading
        unparsable = "`{}: [`".format(key)
        spoilt = TEXT.replace(
            line, "| " + " | ".join(["`{}`".format(key), *row[1:4], unparsable]) + " |"
        )
        assert any(unparsable in problem for problem in bad_rows(spoilt, SCHEMA)), heading
        renamed = TEXT.replace(line, line.replace("`{}`".format(key), "`{}_x`".format(key), 1))
        assert any(key + "_x" in problem for problem in stale_entries(renamed, SCHEMA)), heading
        doubled = TEXT.replace(line, line + "\n" + line)
        assert any("two rows" in problem for problem in stale_entries(doubled, SCHEMA)), heading
