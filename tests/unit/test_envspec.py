"""Backend env files drive the venv mode and the check of existing
interpreters; interpreters are found or named."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from dlbench import catalog
from dlbench.environments import checks, env_files, interpreters, venvs
from dlbench.host import runtime
from dlbench.plan import import_graph
from dlbench.record import contract
from dlbench.run import supervise
from test_harness import spec_for
from testkit import REPO

ENV_FILES = sorted((REPO / "envs").glob("*.yaml"))
# CPU builds (<backend>.yaml) and CUDA builds (<backend>.cuda.yaml)
BACKEND_ENV_FILES = [path for path in ENV_FILES if path.stem.split(".")[0] in catalog.BACKENDS]


def test_every_backend_has_an_env_file():
    cpu_builds = {path.stem for path in ENV_FILES if not path.stem.endswith(".cuda")}
    gpu_only = {name for name, entry in catalog.BACKENDS.items() if "gpu_only" in entry}
    assert cpu_builds == set(catalog.BACKENDS) - gpu_only | {"main"}
    cuda_builds = {path.stem for path in ENV_FILES if path.stem.endswith(".cuda")}
    assert {name + ".cuda" for name in gpu_only} <= cuda_builds


def test_main_env_file_matches_the_project_pins():
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as handle:
        project = set(tomllib.load(handle)["project"]["dependencies"])
    main = env_files.read_spec(REPO / "envs" / "main.yaml")
    assert set(main["pip"]) <= project
    # what only the Snakemake process itself needs, not the rules' scripts
    driver_only = {"snakemake==9.27.1"}
    assert project - set(main["pip"]) == driver_only


@pytest.mark.parametrize("path", BACKEND_ENV_FILES, ids=lambda path: path.stem)
def test_env_files_pin_python_and_every_pip_package(path):
    spec = env_files.read_spec(path)
    assert spec["name"] == path.stem
    # Keras 3 on 3.11; the legacy systems (and their native counterparts) on
    # the last Python their wheels have
    legacy = {
        "keras2-theano": "3.9",
        "keras-mxnet": "3.9",
        "keras2-cntk": "3.6",
        "native-mxnet": "3.9",
        "native-pytensor": "3.9",
        "native-chainer": "3.7",
        "native-cntk": "3.6",
    }
    assert spec["python"] == legacy.get(path.stem.split(".")[0], "3.11")
    packages = [line for line in spec["pip"] if not line.startswith("--")]
    assert packages and all("==" in requirement for requirement in packages)
    # a Keras backend pins its Keras; a native one its framework
    family = catalog.BACKENDS[path.stem.split(".")[0]]
    if family["family"] == "keras":
        assert any(line.startswith(("keras==", "keras-mxnet==")) for line in spec["pip"])
    else:  # native-cudnn pins nvidia-cudnn-cu13
        assert any(family["framework"] in line.split("==")[0] for line in spec["pip"])


def test_find_python_of_the_running_version():
    version = "{}.{}".format(*sys.version_info[:2])
    found = interpreters.find_python(version)
    assert interpreters._version_of(found) == version


def test_configured_interpreter_comes_first():
    version = "{}.{}".format(*sys.version_info[:2])
    assert interpreters.find_python(version, {version: sys.executable}) == sys.executable


def test_missing_python_names_what_to_do():
    with pytest.raises(env_files.EnvironmentBuildError) as missing:
        interpreters.find_python("2.5", {"2.5": "/nowhere/python2.5"})
    message = str(missing.value)
    assert "no Python 2.5 found" in message and "/nowhere/python2.5" in message
    assert "python_interpreters" in message


def test_spec_without_python_pin_is_refused(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: broken\ndependencies:\n  - pip\n  - pip: [keras==3.15.1]\n")
    with pytest.raises(env_files.EnvironmentBuildError, match="no 'python=X.Y' pin"):
        env_files.read_spec(path)


def tiny_spec(folder, version=None):
    """An env file of this Python (or ``version``) and six, not a backend's."""
    spec = folder / "tiny.yaml"
    version = version or "{}.{}".format(*sys.version_info[:2])
    spec.write_text(
        "name: tiny\ndependencies:\n  - python={}\n  - pip\n  - pip:\n      - six==1.16.0\n".format(
            version
        )
    )
    return spec


def compiled_six(venv):
    return list(Path(venv).glob("lib/python*/site-packages/__pycache__/six.*"))


def pip_of(venv):
    return list(Path(venv).glob("lib/python*/site-packages/pip"))


@pytest.mark.parametrize("from_outside", [True, False], ids=["workflows_pip", "venvs_own_pip"])
def test_build_venv_installs_the_pins(tmp_path, monkeypatch, from_outside):
    """A real venv from a small spec; pip resolves from the local index/cache.
    The workflow's pip installs into it from outside where it can (this
    interpreter's pip does), and the venv has none of its own; otherwise
    (an old Python, a pip pinned in the env file) the venv's own pip does."""
    spec = tiny_spec(tmp_path)
    version = "{}.{}".format(*sys.version_info[:2])
    assert venvs.outside_pip(version) == [sys.executable, "-m", "pip"]
    if not from_outside:
        monkeypatch.setattr(venvs, "outside_pip", lambda python_version: None)
    with open(tmp_path / "log", "w") as log:
        python = venvs.build_venv(spec, tmp_path / "venv", tmp_path / "ready.json", log=log)
    out = subprocess.check_output([python, "-c", "import six; print(six.__version__)"])
    assert out.decode().strip() == "1.16.0"
    built = json.loads((tmp_path / "ready.json").read_text())
    assert "six==1.16.0" in built["pip_freeze"] and built["bytecode"] == "install"
    assert compiled_six(tmp_path / "venv")
    assert bool(pip_of(tmp_path / "venv")) is not from_outside
    assert built["installer"].startswith("pip ")
    assert (str(tmp_path / "venv") in built["installer"]) is not from_outside


def test_a_lent_venv_is_built_anew_and_the_lenders_is_kept(tmp_path):
    """A workflow copy links the venvs another checkout lends it; when it
    builds one again (its env file changed), the link gives way to a venv
    of its own and the lender's venv and record stay as they were (they were
    once overwritten through the link with the build's failure)."""
    spec = tiny_spec(tmp_path)
    with open(tmp_path / "log", "w") as log:
        venvs.build_venv(spec, tmp_path / "lender", tmp_path / "lender" / "ready.json", log=log)
        lent = (tmp_path / "lender" / "ready.json").read_text()
        (tmp_path / "borrower").symlink_to(tmp_path / "lender", target_is_directory=True)
        venvs.build_venv(spec, tmp_path / "borrower", tmp_path / "borrower" / "ready.json", log=log)
    assert not (tmp_path / "borrower").is_symlink()
    assert json.loads((tmp_path / "borrower" / "ready.json").read_text())["python"]
    assert (tmp_path / "lender" / "ready.json").read_text() == lent


def test_a_venv_with_its_own_pip_leaves_nothing_in_the_temporary_folder(tmp_path, monkeypatch):
    """ensurepip of Python 3.9 runs its bundled pip from the wheel, whose
    certifi unpacks its CA bundle into a temporary file that nothing removes
    (a /tmp/tmpXXXXXXXXcacert.pem after every test session): the venv's
    build gives it a folder of its own."""
    assert venvs.outside_pip("3.9") is None  # so the venv gets a pip of its own
    watched = tmp_path / "tmp"
    watched.mkdir()
    monkeypatch.setenv("TMPDIR", str(watched))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with open(tmp_path / "log", "w") as log:
        python = venvs.build_venv(
            tiny_spec(tmp_path, "3.9"), tmp_path / "venv", tmp_path / "ready.json", log=log
        )
    assert pip_of(tmp_path / "venv") and python.endswith("python")
    assert sorted(path.name for path in watched.iterdir()) == []


def test_the_workflows_pip_installs_only_for_pythons_it_supports():
    assert venvs.outside_pip("3.6") is None  # pip 22.3 needs 3.7; today's pip, 3.10
    assert venvs.outside_pip("{}.{}".format(*sys.version_info[:2]))


def test_a_venv_without_bytecode_keeps_what_its_first_import_compiles(tmp_path):
    """venv_bytecode first_import: pip compiles nothing; the venv asks its
    processes to write what they compile, whatever the caller's
    PYTHONDONTWRITEBYTECODE (set on the machines this suite runs on)."""
    spec = tiny_spec(tmp_path)
    with pytest.raises(ValueError, match="venv_bytecode: 'sometimes'"):
        venvs.build_venv(spec, tmp_path / "venv", tmp_path / "ready.json", bytecode="sometimes")
    with open(tmp_path / "log", "w") as log:
        python = venvs.build_venv(
            spec, tmp_path / "venv", tmp_path / "ready.json", log=log, bytecode="first_import"
        )
    built = json.loads((tmp_path / "ready.json").read_text())
    assert (built["bytecode"], built["warm_up"]) == ("first_import", None)  # no backend's venv
    assert not compiled_six(tmp_path / "venv")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.update(runtime.environment_additions(str(tmp_path / "venv"), env))
    subprocess.run([python, "-c", "import six"], env=env, check=True)
    assert compiled_six(tmp_path / "venv")


IMPORT_EACH = """
import importlib, json, sys
failed = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError as error:  # a framework this bare interpreter lacks is no failure
        if (error.name or "dlbench").startswith("dlbench"):
            failed[name] = repr(error)
    except Exception as error:
        failed[name] = repr(error)
print(json.dumps(failed))
"""


def test_backend_side_code_imports_on_python36():
    """What runs inside every backend env (run/ and what it imports, the
    workloads' implementations and the layers, read from the folders and
    the imports: dlbench.plan.import_graph) compiles and imports on the
    oldest Python an env file pins, CNTK's 3.6; only the frameworks this
    bare interpreter lacks may be missing."""
    try:
        python36 = interpreters.find_python("3.6")
    except env_files.EnvironmentBuildError as missing:
        pytest.skip(str(missing))
    package = import_graph.PACKAGE
    files = set(import_graph.in_environment())
    files |= set((package / "models").rglob("*.py"))
    assert len(files) > 60
    names = sorted(import_graph.module_name(path) for path in files)
    compiled = subprocess.run(
        [python36, "-m", "py_compile"] + sorted(str(path) for path in files),
        capture_output=True,
        text=True,
    )
    assert compiled.returncode == 0, compiled.stderr
    done = subprocess.run(
        [python36, "-c", IMPORT_EACH] + names,
        cwd=str(REPO / "src"),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}


def test_spec_pins_pip_and_the_cntk_env_reads():
    spec = env_files.read_spec(REPO / "envs" / "keras2-cntk.yaml")
    assert (spec["python"], spec["pip_version"]) == ("3.6", "21.3.1")
    assert "cntk==2.7.post2" in spec["pip"]
    assert env_files.read_spec(REPO / "envs" / "keras-jax.yaml")["pip_version"] is None


def test_environment_additions_go_in_front(tmp_path):
    from dlbench.host import runtime

    (tmp_path / runtime.ENVIRONMENT_ADDITIONS).write_text(
        json.dumps({"LD_LIBRARY_PATH": ["/env/compat", "/env/lib"], "OPAL_PREFIX": "/env"})
    )
    added = runtime.environment_additions(str(tmp_path), {"LD_LIBRARY_PATH": "/usr/local/lib"})
    assert added == {
        "LD_LIBRARY_PATH": "/env/compat:/env/lib:/usr/local/lib",
        "OPAL_PREFIX": "/env",
    }
    assert runtime.environment_additions(str(tmp_path / "none"), {}) == {}


def test_every_gpu_build_has_a_cuda_env_file_and_the_cpu_files_no_cuda():
    """GPU runs take envs/<backend>.cuda.yaml; a CPU machine never gets CUDA."""
    for backend, entry in catalog.BACKENDS.items():
        cuda = REPO / "envs" / "{}.cuda.yaml".format(backend)
        assert cuda.exists() == entry["gpu_build"], backend
        if entry["gpu_build"]:
            gpu = env_files.read_spec(cuda)
            assert gpu["name"] == backend + ".cuda"
        if "gpu_only" in entry:  # no CPU build
            continue
        cpu = env_files.read_spec(REPO / "envs" / "{}.yaml".format(backend))
        assert not [line for line in cpu["pip"] if "cuda" in line and "whl/cpu" not in line]
        if entry["gpu_build"]:
            assert gpu["python"] == cpu["python"]
    torch_cpu = env_files.read_spec(REPO / "envs" / "keras-torch.yaml")["pip"]
    assert "torch==2.13.0+cpu" in torch_cpu
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in torch_cpu


def write_spec(path, *pip, python="3.11", comment=""):
    lines = ["{}name: demo".format(comment), "dependencies:", "  - python={}".format(python)]
    lines += ["  - pip", "  - pip:"] + ["      - " + line for line in pip]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_identity_is_what_the_file_installs_not_how_it_is_written(tmp_path):
    plain = write_spec(tmp_path / "a.yaml", "torch==2.13.0+cpu", "numpy==2.4.6")
    annotated = write_spec(
        tmp_path / "b.yaml", "torch==2.13.0+cpu", "numpy==2.4.6", comment="# edited\n"
    )
    annotated.write_text(annotated.read_text().replace("  - pip:", "  - pip:   # the pins"))
    bumped = write_spec(tmp_path / "c.yaml", "torch==2.13.0+cpu", "numpy==2.4.7")
    other_python = write_spec(
        tmp_path / "d.yaml", "torch==2.13.0+cpu", "numpy==2.4.6", python="3.12"
    )
    assert venvs.identity(plain) == venvs.identity(annotated)
    assert venvs.identity(plain) != venvs.identity(bumped)
    assert venvs.identity(plain) != venvs.identity(other_python)
    assert venvs.identity(REPO / "envs" / "keras2-cntk.yaml")["setup_step"] == "keras2-cntk"


def held(python="3.11.7", **installed):
    return {"python_version": python, "installed": installed}


@pytest.mark.parametrize(
    "installed, python, expected",
    [
        ({"torch": "2.13.0+cpu", "numpy": "2.4.6"}, "3.11.7", []),
        (
            {"torch": "2.11.0+cu130", "numpy": "2.4.6"},
            "3.12.3",
            ["Python 3.12 (env file: 3.11)", "torch 2.11.0+cu130 (env file: ==2.13.0+cpu)"],
        ),
        (
            {"torch": "2.13.0", "numpy": None},
            "3.11.7",
            [
                "torch 2.13.0 (env file: ==2.13.0+cpu)",
                "numpy: not installed (env file: ==2.4.6)",
            ],
        ),
    ],
)
def test_what_an_interpreter_holds_is_compared_with_the_pins(tmp_path, installed, python, expected):
    spec = env_files.read_spec(
        write_spec(
            tmp_path / "e.yaml", "--extra-index-url https://x", "torch==2.13.0+cpu", "numpy==2.4.6"
        )
    )
    assert checks.compare_with_pins(spec, held(python, **installed)) == expected


def test_a_cpu_build_does_not_pass_for_the_cuda_pin():
    """PEP 440 lets ==2.13.0 admit 2.13.0+cpu; the CUDA env file means the
    CUDA build, so the local label must agree."""
    spec = env_files.read_spec(REPO / "envs" / "native-torch.cuda.yaml")
    nvml = {"nvidia-ml-py": "13.615.71"}
    found = checks.compare_with_pins(spec, held(torch="2.13.0+cpu", numpy="2.4.6", **nvml))
    assert found == ["torch 2.13.0+cpu (env file: ==2.13.0)"]
    assert checks.compare_with_pins(spec, held(torch="2.13.0", numpy="2.4.6", **nvml)) == []


def test_an_interpreter_without_the_framework_is_refused_with_the_reason(tmp_path):
    """This interpreter (the tests') has no Chainer: the check says so."""
    marker = tmp_path / "native-chainer.json"
    found = checks.check_existing(
        REPO / "envs" / "native-chainer.yaml",
        sys.executable,
        "native-chainer",
        marker,
        src=str(REPO / "src"),
        log_path=tmp_path / "log",
    )
    assert json.loads(marker.read_text()) == found
    assert found["status"] == "unavailable"
    assert (
        "cannot set up native-chainer: ModuleNotFoundError: No module named 'chainer'"
        in (found["reason"])
    )
    assert "chainer: not installed (env file: ==7.8.1)" in found["mismatches"]
    assert found["python_version"].startswith("{}.{}.".format(*sys.version_info[:2]))


def test_a_missing_interpreter_is_refused(tmp_path):
    found = checks.check_existing(
        REPO / "envs" / "native-torch.yaml",
        str(tmp_path / "nope"),
        "native-torch",
        tmp_path / "m.json",
        src=str(REPO / "src"),
    )
    assert found["status"] == "unavailable"
    assert found["reason"] == "interpreter {} not found or not executable".format(tmp_path / "nope")


def test_every_run_record_carries_the_check(tmp_path, digits_npz):
    """An unavailable environment's record says why; a run in an interpreter
    that differs from its pins carries the differences, even when it fails."""
    marker = tmp_path / "env.json"
    differs = ["torch 2.11.0+cu130 (env file: ==2.13.0+cpu)"]
    for status, backend in (("unavailable", "native-torch"), ("ok", "keras-none")):
        marker.write_text(
            json.dumps(
                {
                    "status": status,
                    "backend": backend,
                    "reason": "no torch here",
                    "python": "/opt/x/python",
                    "mismatches": differs,
                    "installed": {"torch": "2.11.0+cu130", "numpy": None},
                }
            )
        )
        record_path = tmp_path / "{}.json".format(status)
        supervise.supervise(
            spec_for(backend),
            str(digits_npz),
            str(record_path),
            str(tmp_path / "e.csv"),
            timeout_s=300,
            env_marker=str(marker),
            env_mode="existing",
        )
        record = json.loads(record_path.read_text())
        assert record["environment_check"] == {
            "mode": "existing",
            "python": "/opt/x/python",
            "mismatches": differs,
            "installed": {"torch": "2.11.0+cu130"},  # numpy: not installed there
        }
        assert record["record_version"] == contract.RECORD_VERSION
    assert json.loads((tmp_path / "unavailable.json").read_text())["reason"] == (
        "environment native-torch unavailable: no torch here"
    )
    assert json.loads((tmp_path / "ok.json").read_text())["status"] == "failed"


def test_installing_into_an_existing_interpreter_changes_its_fingerprint(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True
    )
    python = str(tmp_path / "env" / "bin" / "python")
    before = checks.interpreter_fingerprint.__wrapped__(python)
    assert checks.interpreter_fingerprint.__wrapped__(python) == before
    (site_packages,) = (tmp_path / "env" / "lib").glob("python*/site-packages")
    # a first import's bytecode is not an installation
    (site_packages / "six.py").write_text("")
    subprocess.run([python, "-c", "import six"], env={"PATH": os.environ["PATH"]}, check=True)
    assert (site_packages / "__pycache__").is_dir()
    assert checks.interpreter_fingerprint.__wrapped__(python) == before
    (site_packages / "newly_installed-1.0.dist-info").mkdir()
    installed = checks.interpreter_fingerprint.__wrapped__(python)
    assert installed != before
    (site_packages / "newly_installed-1.0.dist-info").rename(
        site_packages / "newly_installed-1.1.dist-info"
    )
    assert checks.interpreter_fingerprint.__wrapped__(python) not in (before, installed)
