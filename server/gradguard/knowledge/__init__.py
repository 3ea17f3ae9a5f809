"""What autograd saves: the generated ATen op table, the Python surface map and module facts.

This package imports nothing else of gradguard's and never imports torch.
"""
