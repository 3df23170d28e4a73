"""Whole pages and dialogs: the chat page, the first-run panel, Settings and its prompts
editor."""
