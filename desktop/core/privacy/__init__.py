"""Redaction (issue 49): private spans found in the OCR's text (`patterns.py`), placed on the
page's ink (`boxes.py`), filled in the pixels and tagged in the text (`redact.py`), and the
user's own patterns (`user_patterns.py`). Qt-free."""
