"""The codes only `gradguard verify` reports (GV...), one module each: its docstring is its
documentation, read by `gradguard rule` and `scripts/generate_docs.py` as the rules' are."""
