"""What an environment's own record says it holds: a venv's marker
(``.venvs/<environment>/ready.json``, its ``pip freeze``) or the check of an
existing interpreter (``results/environments/<environment>.json``). Read by
the supervisor (into each run record) and by the versions table.
Importable on Python 3.6."""


def installed_distributions(marker):
    """{distribution: version} an environment's marker says it holds: a
    venv's ``pip freeze``, or what the check of an existing interpreter
    found of the distributions its env file pins."""
    if marker.get("installed"):
        return {
            name.lower(): str(version)
            for name, version in marker["installed"].items()
            if version is not None
        }
    held = {}
    for line in marker.get("pip_freeze") or []:
        name, _, version = line.partition("==")
        if version:
            held[name.lower().replace("_", "-")] = version
    return held
