"""The package's defaults, built once when it is imported: a call into another file of the package."""
from .acts import make_act

DEFAULT_ACT = make_act("relu")
HIDDEN = 8
