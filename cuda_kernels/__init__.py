"""CUDA C sources of the GPU kernel layer (shipped as package data).

``KERNELS`` is the one table of kernel files and their template
instantiations, read by the loader (``name_expressions``) and by the
NVRTC compile test.
"""
KERNELS = {}
