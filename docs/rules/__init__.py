"""The rule books, shipped in the distribution as the resource package `service.rulebooks`.

This file only makes the folder a package, so an editable install finds it too; the books are
the Markdown files beside it (see `service/rulebook.py`).
"""
