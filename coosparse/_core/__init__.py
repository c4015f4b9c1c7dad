"""Layer 1: the ``COO`` array and its invariants.

dtypes and their accumulation types (:mod:`.dtypes`), fill values
(:mod:`.fill`), shapes (:mod:`.shapes`), linear keys (:mod:`.keys`), flag
verification (:mod:`.flags`), devices (:mod:`.device`), array helpers shared
by the operations (:mod:`.arrays`), the tables through which ``COO`` reaches
its operations (:mod:`.dispatch`), the generated operators
(:mod:`.operators`) and the type itself (:mod:`.coo`). Imports only
``coosparse._kernels`` (layer 0) and NumPy.
"""
