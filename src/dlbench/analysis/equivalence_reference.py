"""What an equivalence verdict is set against: the backends at their pinned
versions (a version variant is compared, never part of the reference), and
the verdict where there is no reference."""

PINNED = "pinned"  # dlbench.environments.variants.PINNED: the env file's own versions


def no_reference(reference, what):
    """The verdict where there is nothing to compare with: fewer than three
    of ``what`` for a median, or no result of the backend named."""
    if reference == "median":
        return "not compared: no reference (fewer than 3 {}, for a median)".format(what)
    return "not compared: no reference ({})".format(reference)
