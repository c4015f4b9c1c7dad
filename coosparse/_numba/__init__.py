"""CPU kernel layer (Numba). Plain arrays in, plain arrays out; see ``backend``."""
