from .schemes import *  # noqa: F401,F403
