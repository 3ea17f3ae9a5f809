"""gradguard: finds in-place tensor operations that break or silently corrupt autograd."""

__version__ = "0.1.0"
