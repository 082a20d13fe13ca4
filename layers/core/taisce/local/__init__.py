"""Running Taisce on one machine: the same Lambda handlers behind a local gateway."""
