"""Bridges to other libraries: ``coosparse.interop.scipy`` and ``coosparse.interop.torch``.

Each bridge imports its library lazily, on first use.
"""
