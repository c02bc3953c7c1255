"""A config validated before any job is planned: against the schema, then
by the matrix's own rules (``config_rules.validate``), then against what this machine
has (``config_rules.validate_machine``). Each mistake is told in at most three lines:
where, the value, and what is allowed there.

jsonschema's own answer prints the schema fragment and the whole config (for
this schema about 1,500 lines, the useful line lost among them); it goes to a
log file instead, named in the message's last line.
"""

import difflib
import json
from pathlib import Path
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, Union

import yaml
from jsonschema import exceptions, validators

from dlbench.environments import newest
from dlbench.plan import config_rules, matrix
from dlbench.plan.config_sources import Config
from dlbench.plan.paths import PathLike
from dlbench.record.contract import Schema

# The workflow's env files (src/dlbench/plan/ -> the repository's envs/).
ENVS_DIR = Path(__file__).resolve().parents[3] / "envs"
# Keys and values listed after "allowed:" are cut at this many characters:
# the message stays readable on a terminal, and the log has them all.
LISTING_WIDTH = 240
VALUE_WIDTH = 60


def load_schema(path: PathLike) -> Schema:
    return yaml.safe_load(Path(path).read_text())


def validate_config(
    config: Config,
    schema: Schema,
    schema_path: PathLike,
    machine: Optional[Callable[[Config], Tuple[Any, Any]]] = None,
    log_path: Optional[PathLike] = None,
    envs_dir: PathLike = ENVS_DIR,
) -> Optional[Tuple[Any, Any]]:
    """Refuse a config that cannot run, with ``matrix.ConfigError``; fill in
    the schema's defaults of one that can. ``schema`` is the schema at
    ``schema_path``, loaded; ``machine(config)`` says (CPUs, GPUs) where this
    machine runs the jobs, and they are returned (None otherwise).
    ``envs_dir``: the env files ``newest`` versions are resolved for."""
    from snakemake.utils import validate

    config_rules.check_renamed_keys(config)  # before the schema: it would only say "no such key"
    problem = schema_problem(config, schema, log_path)
    if problem:
        raise matrix.ConfigError(problem)
    validate(config, str(schema_path))  # its defaults, into the config
    try:  # "newest" into exact versions, before the variants are checked
        newest.resolve(config, envs_dir, refresh=config["refresh_newest"])
    except ValueError as error:
        raise matrix.ConfigError(str(error)) from None
    config_rules.validate(config)
    if machine is None:
        return None
    limits = machine(config)
    config_rules.validate_machine(config, *limits)
    return limits


def schema_problem(
    config: Config, schema: Schema, log_path: Optional[PathLike] = None
) -> Optional[str]:
    """None for a config the schema accepts; otherwise the message (at most
    three lines) for the error that best explains the refusal, after writing
    every error in jsonschema's words to ``log_path`` (where given)."""
    validator = validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda error: list(error.absolute_path))
    if not errors:
        return None
    best = exceptions.best_match(errors)
    lines = describe(best, schema)
    if log_path is not None:
        log = Path(log_path)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("\n\n".join(str(error) for error in errors) + "\n")
        lines.append("(the schema's whole answer: {})".format(log_path))
    return "\n".join(lines)


def describe(error: exceptions.ValidationError, schema: Schema) -> List[str]:
    """[what is wrong, where; what is allowed] for one jsonschema error."""
    where = location(error.absolute_path)
    kind = error.validator
    if kind == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        key = join(where, missing[0] if missing else "?")
        about = describe_key(error.schema, missing[0] if missing else None)
        return ["{}: missing; the config must set it".format(key)] + (
            ["it is: " + about] if about else []
        )
    if kind == "additionalProperties" and error.validator_value is False:
        known = sorted(error.schema.get("properties", {}))
        extra = [name for name in error.instance if name not in known]
        name = extra[0] if extra else "?"
        close = difflib.get_close_matches(str(name), known, n=1)
        return [
            "{}: no such key here{}".format(
                join(where, name), "; did you mean '{}'?".format(close[0]) if close else ""
            ),
            "allowed: " + listing(known),
        ]
    if kind == "enum":
        value = error.instance
        options = [str(option) for option in error.validator_value]
        close = difflib.get_close_matches(str(value), options, n=1)
        return [
            "{}: {} is not allowed{}".format(
                where, short(value), "; did you mean '{}'?".format(close[0]) if close else ""
            ),
            "allowed: " + listing(options),
        ]
    if kind == "type":
        return [
            "{}: {} is {}".format(where, short(error.instance), json_type(error.instance)),
            "allowed: {}".format(" or ".join(as_list(error.validator_value))),
        ]
    if kind in ("oneOf", "anyOf"):
        return [
            "{}: {} is not allowed".format(where, short(error.instance)),
            "allowed: " + alternatives(error.validator_value),
        ]
    return ["{}: {}".format(where, cut(error.message, LISTING_WIDTH))]


def describe_key(schema: Schema, name: Optional[str]) -> str:
    entry = schema.get("properties", {}).get(name, {}) if name else {}
    return cut(" ".join(str(entry.get("description", "")).split()), LISTING_WIDTH)


def alternatives(options: Sequence[Schema]) -> str:
    """What a oneOf of simple schemas allows, in words."""
    words = []
    for option in options:
        if "const" in option:
            words.append(short(option["const"]))
        elif "enum" in option:
            words.append(" | ".join(str(value) for value in option["enum"]))
        elif "$ref" in option:
            words.append(option["$ref"].rsplit("/", 1)[-1])
        elif "type" in option:
            words.append(
                " or ".join(as_list(option["type"]))
                + (" of " + alternatives([option["items"]]) if "items" in option else "")
            )
    return cut("; ".join(words), LISTING_WIDTH) or "see the schema"


def location(path: Iterable[Union[str, int]]) -> str:
    parts = ""
    for part in path:
        parts += "[{}]".format(part) if isinstance(part, int) else ("." if parts else "") + part
    return parts or "config"


def join(where: str, key: str) -> str:
    return key if where == "config" else "{}.{}".format(where, key)


def listing(names: Iterable[Any]) -> str:
    """The names, as many as fit the width, then how many more."""
    names = [str(name) for name in names]
    shown: List[str] = []
    for name in names:
        if len(", ".join(shown + [name])) > LISTING_WIDTH:
            return "{} and {} more (config/README.md)".format(
                ", ".join(shown), len(names) - len(shown)
            )
        shown.append(name)
    return ", ".join(shown)


def short(value: Any) -> str:
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return cut(text, VALUE_WIDTH)


def cut(text: Any, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def as_list(value: Any) -> List[Any]:
    return list(value) if isinstance(value, list) else [value]


def json_type(value: Any) -> str:
    """The value's JSON type, with its article."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
    }.get(type(value), "an object")
