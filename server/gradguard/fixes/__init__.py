"""Edit builders the rules use to offer fixes; the rules decide whether and how safely."""
