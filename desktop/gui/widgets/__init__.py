"""Widgets: the message bubbles, the composer, the sidebar, the status bar and their small
parts (basics.py). No widget owns a worker or writes to disk."""
