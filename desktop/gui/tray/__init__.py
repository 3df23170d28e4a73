"""The tray icon and the global shortcut (`desklens tray`, Settings > Tray)."""
