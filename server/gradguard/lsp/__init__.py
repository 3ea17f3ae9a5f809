"""The language server: pygls wiring only; the analysis is the engine's."""
