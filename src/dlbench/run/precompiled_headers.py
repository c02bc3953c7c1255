"""g++ with the leading #include block of Theano's and PyTensor's ops
precompiled (the backend setting ``precompiled_headers``).

Every op these frameworks compile starts with the same #include lines
(Python.h, their helper, NumPy's headers): at -O1 parsing them is about
half of each op's compile. This stands in for g++ (their ``cxx`` flag):
a compile of a shared module whose source starts with #include lines, the
second time the same lines come with the same flags, gets those lines
precompiled once (``-x c++-header``) and passed with ``-include``; the
source's own #include lines then find their headers' guards defined. The
op is compiled with its own flags and its code is the same; anything else
(version queries, BLAS probes, a header that fails to precompile) goes to
g++ unchanged. The headers are kept by their flags and lines, not by
their files' contents: the store is in the environment's ops cache, which
is rebuilt with it. Standard library only, run as a script: it imports on
Python 3.6 and needs no dlbench on the path of the compiler's process.

    precompiled_headers.py --compiler g++ --store DIR -- ARGS...
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

HEADER = "leading_includes.h"
# What links, or names the output or the source, is not part of what a
# precompiled header is built with; every other argument is, in its place
# (``--param`` and its value, say).
LINK_PREFIXES = ("-l", "-L", "-Wl,")
WITH_A_VALUE = ("-o", "-Xlinker")


def leading_includes(source):
    """The #include lines a source starts with (a list, maybe empty)."""
    lines = []
    with open(source) as handle:
        for line in handle:
            if not line.startswith("#include"):
                break
            lines.append(line.rstrip("\n"))
    return lines


def header_flags(arguments):
    """The compile flags of a ``-shared`` compile of one .cpp source, which
    its precompiled header needs alike (g++ refuses a header built with
    other -O, -f or -m flags); None when the call is not one."""
    sources = [a for a in arguments if a.endswith(".cpp")]
    if "-shared" not in arguments or len(sources) != 1:
        return None, None
    flags, skip = [], False
    for argument in arguments:
        if skip:
            skip = False
        elif argument in WITH_A_VALUE:
            skip = True
        elif argument not in ("-shared", sources[0]) and not argument.startswith(LINK_PREFIXES):
            flags.append(argument)
    return sources[0], flags


def precompiled(compiler, store, flags, includes):
    """The header to ``-include`` for these ``includes`` and ``flags``:
    None the first time they come (a header used once costs more to
    precompile than it saves) and where it could not be precompiled."""
    key = hashlib.sha256("\0".join([compiler] + flags + includes).encode()).hexdigest()[:24]
    folder = os.path.join(store, key)
    header = os.path.join(folder, HEADER)
    if os.path.exists(header + ".gch"):
        return header
    failed = os.path.join(store, key + ".failed")
    if os.path.exists(failed):
        return None
    seen = os.path.join(store, key + ".seen")
    if not os.path.exists(seen):
        os.makedirs(store, exist_ok=True)
        with open(seen, "w") as handle:  # what the header would be made of
            handle.write("\n".join([compiler] + flags + includes) + "\n")
        return None
    building = tempfile.mkdtemp(prefix=key + ".", dir=store)
    try:
        with open(os.path.join(building, HEADER), "w") as handle:
            handle.write("\n".join(includes) + "\n")
        made = subprocess.call(
            [compiler] + flags + ["-x", "c++-header", HEADER, "-o", HEADER + ".gch"],
            cwd=building,
        )
        if made != 0:
            open(failed, "w").close()  # tried once: every op compiles as it would
            return None
        try:
            os.rename(building, folder)  # atomic: a concurrent compile may have won
        except OSError:
            pass
        return header if os.path.exists(header + ".gch") else None
    finally:
        shutil.rmtree(building, ignore_errors=True)


def main(argv):
    separator = argv.index("--")
    options, arguments = argv[:separator], argv[separator + 1 :]
    compiler = options[options.index("--compiler") + 1]
    store = options[options.index("--store") + 1]
    source, flags = header_flags(arguments)
    includes = leading_includes(source) if source else []
    header = precompiled(compiler, store, flags, includes) if includes else None
    command = [compiler] + (["-include", header] if header else []) + arguments
    os.execvp(compiler, command)


if __name__ == "__main__":
    main(sys.argv[1:])
