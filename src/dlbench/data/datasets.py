"""The datasets' functions by the one name the workflow, the campaign's
estimate and the tests import them by (``dlbench.data.datasets``); each is
its own module's: ``downloads`` (a raw file fetched and verified),
``unfetched`` (the reason left where one could not be), ``raw_formats`` (the
original formats read) and ``preparation`` (the prepared .npz)."""

from dlbench.data.downloads import ChecksumError, fetch
from dlbench.data.preparation import (
    check_inputs,
    encode_sequences,
    load_imagenet_synthetic,
    prepare,
    vectorize_stories,
)
from dlbench.data.raw_formats import (
    BABI_MEMBERS,
    CIFAR_MEMBERS,
    parse_stories,
    read_idx,
    read_npz_ragged,
)
from dlbench.data.unfetched import (
    UNFETCHED,
    discard_unfetched,
    fetch_or_say_why,
    records_without_data,
    unfetched_reason,
)

__all__ = [
    "BABI_MEMBERS",
    "CIFAR_MEMBERS",
    "UNFETCHED",
    "ChecksumError",
    "check_inputs",
    "discard_unfetched",
    "encode_sequences",
    "fetch",
    "fetch_or_say_why",
    "load_imagenet_synthetic",
    "parse_stories",
    "prepare",
    "read_idx",
    "read_npz_ragged",
    "records_without_data",
    "unfetched_reason",
    "vectorize_stories",
]
