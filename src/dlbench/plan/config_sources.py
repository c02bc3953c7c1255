"""How the config files and ``--config`` combine into the config the
workflow plans (config/README.md says it to users):

- ``config/config.yaml`` is the default; ``--configfile FILE`` replaces it
  whole (several files merge into each other, in order, as Snakemake merges
  them; nothing of the default is kept);
- ``--config key=value`` replaces that top-level key whole, a mapping
  included (Snakemake would merge it into the file's mapping, so that
  ``backends={keras-jax: {}}`` kept every other backend);
- a value on the command line is read as YAML where the key does not take a
  string: Snakemake reads nested values (and ``false``, ``null``) as strings.
"""

import copy
import math
import re
from typing import Any, Dict, List, Mapping

import yaml

from dlbench.record.contract import Schema

# A config as the workflow plans it (config/config.yaml, after the schema):
# {key: value} of the config's top level; what the plan modules take.
Config = Dict[str, Any]

DEFAULT_CONFIG_FILE = "config/config.yaml"


def combine(files: List[Config], command_line: Mapping[str, Any], schema: Schema) -> Config:
    """The config from ``files`` (a list of loaded config files, the default
    when none was named) and ``command_line`` ({key: value} as Snakemake
    parsed ``--config``), each command-line key replacing the files' own."""
    config: Config = {}
    for loaded in files:
        merge_into(config, copy.deepcopy(loaded))
    for key, value in command_line.items():
        config[key] = as_yaml(copy.deepcopy(value), property_schema(schema, key), schema)
    return config


def merge_into(config: Dict[str, Any], other: Mapping[str, Any]) -> None:
    """Snakemake's merge of config files: mappings recursively, the rest
    replaced."""
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            merge_into(config[key], value)
        else:
            config[key] = value


def property_schema(schema: Schema, key: str) -> Schema:
    entry = schema.get("properties", {}).get(key)
    if entry is None:
        for pattern, found in schema.get("patternProperties", {}).items():
            if re.search(pattern, key):
                return found
        entry = schema.get("additionalProperties")
    return entry if isinstance(entry, dict) else {}


def as_yaml(value: Any, node: Schema, root: Schema) -> Any:
    """``value`` with every string that its place in the schema does not
    take as a string read as a YAML scalar instead (``"false"`` -> False,
    ``"null"`` -> None, ``"2"`` -> 2)."""
    node = resolved(node, root)
    if isinstance(value, dict):
        return {
            key: as_yaml(item, member_schema(node, key, root), root) for key, item in value.items()
        }
    if isinstance(value, list):
        return [as_yaml(item, item_schema(node, root), root) for item in value]
    if isinstance(value, str) and not takes_string(node, root, value):
        return scalar(value)
    return value


def scalar(text: str) -> Any:
    """A YAML scalar's value (Python's reprs of None and of floats too, as
    Snakemake hands a cluster job its config), or the text itself."""
    if text == "None":
        return None
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if parsed is None or isinstance(parsed, (bool, int, float)):
        return parsed
    try:
        number = float(text)  # 1e-07, which YAML 1.1 reads as a string
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def resolved(node: Any, root: Schema) -> Schema:
    """``node`` with its local ``$ref`` ("#/$defs/name", a pointer into
    ``root``) replaced by what it points to, the node's own keywords kept
    over the target's."""
    while isinstance(node, dict) and str(node.get("$ref", "")).startswith("#/"):
        target = root
        for part in node["$ref"][2:].split("/"):
            target = target.get(part, {})
        node = {**target, **{key: value for key, value in node.items() if key != "$ref"}}
    return node if isinstance(node, dict) else {}


def options_of(node: Schema, root: Schema) -> List[Schema]:
    """The node and the schemas of its oneOf / anyOf / allOf, resolved."""
    found = [node]
    for keyword in ("oneOf", "anyOf", "allOf"):
        for option in node.get(keyword, []):
            found.extend(options_of(resolved(option, root), root))
    return found


def takes_string(node: Schema, root: Schema, value: str) -> bool:
    """Whether some alternative of ``node`` takes the string ``value`` as it
    is (an untyped one does: nothing is known against it)."""
    for option in options_of(node, root):
        kinds = option.get("type")
        if kinds is None and "enum" not in option and "const" not in option:
            if not any(keyword in option for keyword in ("oneOf", "anyOf", "allOf")):
                return True
        if kinds == "string" or (isinstance(kinds, list) and "string" in kinds):
            return True
        if value in option.get("enum", []) or option.get("const", None) == value:
            return True
    return False


def member_schema(node: Schema, key: str, root: Schema) -> Schema:
    for option in options_of(node, root):
        if option.get("type") in ("object", None) and (
            "properties" in option
            or "additionalProperties" in option
            or "patternProperties" in option
        ):
            found = property_schema(option, key)
            if found:
                return found
    return {}


def item_schema(node: Schema, root: Schema) -> Schema:
    for option in options_of(node, root):
        if isinstance(option.get("items"), dict):
            return option["items"]
    return {}
