"""The datasets: downloads (pooch), generated stand-ins and built-in data,
prepared into one .npz each, sealed (data files are checked, never trusted);
the tests' offline fixtures.

Imports: catalog."""
