"""An .npz written one array at a time, an array in parts where it is large
(a folder of images, decoded image by image): memory holds one part, never
the whole array. The file is what ``numpy.savez`` writes (uncompressed
members in NumPy's own format), read back by ``numpy.load``."""

import zipfile
from typing import Iterable, Sequence

import numpy as np


class NpzWriter(object):
    """``with NpzWriter(path) as out: out.add(name, array); out.stream(...)``."""

    def __init__(self, path):
        self._zip = zipfile.ZipFile(str(path), "w", zipfile.ZIP_STORED, allowZip64=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._zip.close()

    def add(self, name: str, array) -> None:
        """One array, whole."""
        with self._zip.open(name + ".npy", "w", force_zip64=True) as handle:
            np.lib.format.write_array(handle, np.asanyarray(array), allow_pickle=False)

    def stream(self, name: str, shape: Sequence[int], dtype, parts: Iterable) -> None:
        """One array of ``shape`` and ``dtype`` from ``parts``, consecutive
        blocks of its rows, each written as it comes."""
        dtype = np.dtype(dtype)
        shape = tuple(int(n) for n in shape)
        header = {
            "descr": np.lib.format.dtype_to_descr(dtype),
            "fortran_order": False,
            "shape": shape,
        }
        rows = 0
        with self._zip.open(name + ".npy", "w", force_zip64=True) as handle:
            np.lib.format.write_array_header_1_0(handle, header)
            for part in parts:
                part = np.ascontiguousarray(part, dtype=dtype)
                if part.shape[1:] != shape[1:]:
                    raise ValueError(
                        "{}: a part of shape {} in an array of {}".format(name, part.shape, shape)
                    )
                handle.write(part.tobytes())
                rows += len(part)
        if rows != shape[0]:
            raise ValueError("{}: {} rows written of {}".format(name, rows, shape[0]))
