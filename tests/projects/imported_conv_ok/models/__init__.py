from .stem import Stem

__all__ = ["Stem"]
