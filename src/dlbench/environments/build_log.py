"""A build's commands, each written to the build's log before the output
it makes there: the log is what says why a build failed (build_or_report)."""

import subprocess


def run_logged(command, log, env=None):
    print("$ " + " ".join(command), file=log, flush=True)
    subprocess.run(command, check=True, stdout=log, stderr=subprocess.STDOUT, env=env)
