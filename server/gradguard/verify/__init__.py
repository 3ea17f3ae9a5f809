"""Runtime verification: the user's code run in a child process under a tracer (`runner.py`,
`child.py`, `tracer.py`), merged with the static findings (`merge.py`, `pipeline.py`)."""
