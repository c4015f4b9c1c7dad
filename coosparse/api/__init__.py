"""Layer 3: the Array API namespace, a thin layer of names over the operations.

dtypes and data-type functions (:mod:`.dtypes`), constants and inspection
(:mod:`.constants`), creation functions (:mod:`.creation`), and the elementwise
functions of one and two arguments (:mod:`.unary`, :mod:`.binary`, and NumPy's
non-ufunc ones in :mod:`.numpy_elementwise`), the linear-algebra extension
(:mod:`.linalg`, bound as ``coosparse.linalg``) and the NumPy functions users call
on arrays (:mod:`.numpy_functions`). ``coosparse`` itself is the namespace: its
``__init__`` binds these names.
"""
from . import dtypes, constants, creation, unary, binary, numpy_elementwise, linalg, numpy_functions  # noqa: F401
