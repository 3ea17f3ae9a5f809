"""Python source as text: reading, parsing with libcst, positions of nodes."""
