"""The window's use cases: each flow wires widgets to a worker's controller through queued
signals (asking, reading ahead, rewinding, extraction, Save as, chat export, capture, own
prompts, the open session)."""
