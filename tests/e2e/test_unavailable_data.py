"""A dataset that cannot be downloaded (its mirror, a real HTTP server on
loopback, has no such file) makes its cells unavailable with the reason;
the other workload's run, every table and plot, and the report are still
made; the download is tried again when asked (retry_downloads)."""

import functools
import http.server
import json
import re
import threading

import pandas as pd
import pytest
import yaml

from testkit import REPO, copy_workflow, run_json, run_snakemake, write_config
from workflows import load_test_config

BACKEND = "keras-torch"
THREADS = 1
OFFLINE = run_json("mnist", "mlp", BACKEND, threads=THREADS)
ONLINE = run_json("digits", "mlp", BACKEND, threads=THREADS)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    """A web server on loopback that holds no file: every download gets 404."""
    root = tmp_path_factory.mktemp("empty-mirror")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:{}/".format(server.server_address[1])
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, built_workflow, mirror):
    built_workflow.venv(BACKEND)
    workdir = copy_workflow(
        tmp_path_factory.mktemp("offline") / "workflow", built_workflow.path, [BACKEND]
    )
    smoke = yaml.safe_load((REPO / "config" / "smoke-full.yaml").read_text())
    (mlp,) = [entry for entry in smoke["workloads"] if entry["model"] == "mlp"]
    mlp = dict(mlp, epochs=2, repeats=1, backends=[BACKEND])
    mlp.pop("trained_weights", None)
    config = dict(
        smoke,
        threads=THREADS,
        backends={BACKEND: load_test_config()["backends"][BACKEND]},
        custom_models={},
        initial_weights="own",
        equivalence_check={"steps": 0},
        probe_largest_size=load_test_config()["probe_largest_size"],
        data_mirror=mirror,
        workloads=[mlp, dict(mlp, dataset="mnist")],
    )
    write_config(workdir / "config" / "offline.yaml", config)
    run_snakemake(workdir, "--configfile", "config/offline.yaml", "-j2")
    run_snakemake(workdir, "--configfile", "config/offline.yaml", "--report", "report.html")
    return workdir


def test_its_cells_are_unavailable_with_the_reason_and_the_rest_is_made(workdir):
    offline = json.loads((workdir / OFFLINE).read_text())
    assert offline["status"] == "unavailable"
    assert "dataset mnist unavailable: could not fetch" in offline["reason"]
    assert "404" in offline["reason"]
    online = json.loads((workdir / ONLINE).read_text())
    assert online["status"] == "ok", online.get("error")
    summary = pd.read_csv(workdir / "results/summary.csv").set_index("dataset")
    assert summary.loc["mnist", "status"] == "unavailable"
    assert summary.loc["digits", "status"] == "ok"
    assert "unavailable" in (workdir / "results/tables/mnist_mlp.md").read_text()
    assert (workdir / "results/tables/digits_mlp.md").exists()
    assert (workdir / "report.html").stat().st_size > 0


def test_a_retry_asked_for_tries_the_download_again(workdir):
    planned = run_snakemake(workdir, "--configfile", "config/offline.yaml", "-n")
    assert re.search(r"^download\s+1$", planned.stdout + planned.stderr, re.M) is None
    planned = run_snakemake(
        workdir, "--configfile", "config/offline.yaml", "--config", "retry_downloads=true", "-n"
    )
    said = planned.stdout + planned.stderr
    assert "not fetched last time, tried again" in said
    assert re.search(r"^download\s+1$", said, re.M)  # the job counts of the dry run
