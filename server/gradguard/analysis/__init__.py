"""The analysis: abstract tensor values, the interpreter over each scope, and its events."""
