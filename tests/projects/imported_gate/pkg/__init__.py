from .blocks import Gate
