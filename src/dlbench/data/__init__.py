"""The datasets: downloads (pooch), generated stand-ins and built-in data,
prepared into one .npz each, sealed (data files are checked, never trusted).
One module per job: ``downloads``, ``unfetched`` (a download that failed),
``raw_formats``, ``preparation``, and ``stand_ins`` (the generated raw files
the smoke config and the tests run offline); callers import the module that
holds what they use.

Imports: catalog."""
