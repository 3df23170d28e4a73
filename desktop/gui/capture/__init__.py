"""Screen-region capture: freeze the screens (`grab`), let the user pick a region over them
(`overlay`), and hand the crop, in the screen's device pixels, to whoever asked."""
