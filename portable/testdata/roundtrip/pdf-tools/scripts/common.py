"""Helpers shared by the scripts (not executable on its own)."""

PAGE_SIZES = {"a4": (595, 842), "letter": (612, 792)}
