"""gradguard: finds in-place tensor operations that break or silently corrupt autograd."""

__version__ = "0.1.0"
REPOSITORY = "https://github.com/gradguard/gradguard"  # as [project.urls] in pyproject.toml declares it
# PyTorch's own words when backward meets a saved tensor changed in place: every GG001 message, found by
# the static analysis or at run time, quotes them, so that searching a traceback finds the rule
SAVED_TENSOR_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"
PYTHON_VARIABLE = "GRADGUARD_PYTHON"  # the project's interpreter when no one names it (`check --python` sets it)


def rule_url(code: str) -> str:
    """Where a rule's documentation page is published (docs/rules/ in the repository)."""
    return f"{REPOSITORY}/blob/main/docs/rules/{code}.md"
